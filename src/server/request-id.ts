// Request ids: every response carries `X-Request-Id`, and the request's log line the same id.
// A caller's own id (a proxy's, a client's trace id) is kept when it is a plain token of at
// most 64 characters of `A-Z a-z 0-9 . _ -`; anything else is replaced by a fresh UUID, so a
// log line never carries what a client made up beyond that (no newlines, quotes or lengths).
import { randomUUID } from 'node:crypto';

export const REQUEST_ID_HEADER = 'x-request-id';
const ACCEPTED = /^[A-Za-z0-9._-]{1,64}$/;

/** The request's id: its own `X-Request-Id` when that is acceptable, else a new UUID. */
export function requestIdOf(request: Request): string {
  const given = request.headers.get(REQUEST_ID_HEADER);
  return given !== null && ACCEPTED.test(given) ? given : randomUUID();
}

/** Responses made with their id and a JSON type (never an event stream): the edge leaves them as they are. */
const stamped = new WeakSet<Response>();

/**
 * A 200 JSON response that already carries its request id: the edge then neither reads nor
 * sets its headers, which the Node adapter keeps as the plain object given here (reading
 * `headers` would build a web Headers, and the adapter convert it back).
 */
export function jsonWithRequestId(text: string, id: string): Response {
  const response = new Response(text, { status: 200, headers: { 'content-type': 'application/json', [REQUEST_ID_HEADER]: id } });
  stamped.add(response);
  return response;
}

/** Whether `response` came from `jsonWithRequestId`. */
export function hasRequestId(response: Response): boolean {
  return stamped.has(response);
}

/** `response` with the id in its headers (a response whose headers cannot change is left as it is). */
export function withRequestId(response: Response, id: string): Response {
  try {
    response.headers.set(REQUEST_ID_HEADER, id);
  } catch {
    // Immutable headers (a fetch passthrough): the log line still has the id.
  }
  return response;
}
