// The route table: every route once, with its scope, its parameters, its body and its
// responses as zod schemas. The Hono app is built from it, and so is the OpenAPI document.
// A route is thin: parse, call the library, map the result; no rule lives here.
import type { z } from 'zod';
import { jsonStream } from './json-stream.js';
import type { ToolRegistry } from '../index.js';
import type { Lease } from './limits.js';
import type { AuthenticatedToken, TokenScope } from './tokens.js';

export type HttpMethod = 'get' | 'put' | 'post' | 'delete';

/** What a route handler receives: the parsed request and the namespace's registry. */
export interface RouteContext {
  readonly request: Request;
  /** The namespace's registry; routes with `namespaced: false` must not use it (they resolve what they need). */
  readonly registry: ToolRegistry;
  readonly namespace: string;
  /** Path parameters, decoded and checked (`name` is a valid tool name). */
  readonly params: Readonly<Record<string, string>>;
  /** Query parameters checked by the route's `query` schema; repeatable ones as arrays. */
  readonly query: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body (routes with a `body` only). */
  readonly body: unknown;
  readonly token: AuthenticatedToken | null;
  /** The server's `toolPermissions` option: what a tool's code requires, when this process has that code. */
  readonly toolPermissions?: (toolName: string) => readonly string[] | undefined;
  /** Aborted when the client goes away or the server shuts down. */
  readonly signal: AbortSignal;
  /** How often an event stream sends a heartbeat comment. */
  readonly heartbeatMs: number;
  /** How many bytes an event stream lets queue behind a slow reader before it cuts the stream off. */
  readonly streamBacklogBytes: number;
  /** Admits an event stream (counted against the server's limits). @throws HttpProblem 503/429 past a limit */
  readonly openStream: () => Lease;
  /** The response's `X-Request-Id` (the server adds it to any response that lacks it). */
  readonly requestId: string;
}

export interface ResponseDoc {
  readonly description: string;
  /** The JSON body; absent for a body-less response. */
  readonly schema?: z.ZodType;
  /** Default application/json. */
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface RouteDefinition {
  readonly method: HttpMethod;
  /** OpenAPI path syntax (`/v1/tools/{name}`), without the namespace prefix. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: string;
  /** The scope a token needs; `token`: any valid token; `optional`: a token is read when given (an invalid one is 401); `null`: no token read. */
  readonly scope: TokenScope | 'token' | 'optional' | null;
  /** A request from a loopback address needs no token (GET /metrics: a local scraper), but one it sends is read (no scope needed; its namespaces apply); others need `scope`. */
  readonly loopbackWithoutToken?: boolean;
  /** Also served under `/v1/namespaces/{ns}` (with the namespace's registry). */
  readonly namespaced: boolean;
  readonly query?: z.ZodObject;
  /** Path parameters beyond `name` and `format` (documented with these schemas). */
  readonly pathParams?: Readonly<Record<string, z.ZodType>>;
  /** Query parameters that may be repeated (`?tag=a&tag=b`). */
  readonly repeatable?: readonly string[];
  /** `kind`: what JSON text the body must be is refused as (VALIDATION_FAILED by default, SNAPSHOT_INVALID). */
  readonly body?: { readonly schema: z.ZodType; readonly description: string; readonly kind?: 'spec' | 'snapshot' };
  /** Request headers the route reads (documented as parameters). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly responses: Readonly<Record<number, ResponseDoc>>;
  /** The error codes this route itself may answer (beyond the ones every route may). */
  readonly errors: readonly string[];
  readonly handle: (context: RouteContext) => Promise<Response>;
}

/**
 * A JSON response. Text longer than V8's longest string (a snapshot past about 512 MiB) is
 * streamed in pieces, the same bytes, instead of failing with a RangeError (a 500).
 */
export function json(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  let body: string | ReadableStream<Uint8Array>;
  try {
    body = JSON.stringify(value);
  } catch (error) {
    const stream = error instanceof RangeError ? jsonStream(value) : undefined;
    if (stream === undefined) throw error;
    body = stream;
  }
  return new Response(body, { status, headers: { 'content-type': 'application/json', ...headers } });
}
