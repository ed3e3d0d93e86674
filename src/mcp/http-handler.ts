// MCP over Streamable HTTP as a web-standard handler (Request in, Response out): one SDK
// transport and one Server per session, kept in a map, ended by DELETE or by idleness.
import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { refusedBySecFetchSite } from '../fetch-site.js';
import { leaseRefusal } from '../lease-bound.js';
import { parseJsonBytes } from '../index.js';
import type { LiveToolSet, ToolPolicy } from '../index.js';
import { MAX_MESSAGE_DEPTH, boundedBatchReply, invalidMessage, isObject } from './json-rpc.js';
import { checkSessionOptions, createMcpServer, invalidParamsOf, timerMs } from './tool-server.js';
import type { McpServerOptions } from './tool-server.js';

/** The default time after which a session nobody used is ended: 10 minutes. */
export const DEFAULT_SESSION_IDLE_MS = 600_000;
/** The largest POST body read by default (the SDK transport's own default). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Sessions open at once by default, as `serve --max-sessions`. */
const DEFAULT_MAX_SESSIONS = 1000;
/** Seconds a client refused for the session bound should wait, as the server's limits say. */
const SESSION_LIMIT_RETRY_AFTER_SECONDS = 5;

/** Options of `createMcpHttpHandler`; the session options apply to every session. */
export interface McpHttpHandlerOptions extends Omit<McpServerOptions, 'policy'> {
  /** A session with no request for this long (none in flight, no notification stream open) is ended. Default 600,000 (10 min). */
  readonly sessionIdleMs?: number;
  /**
   * Origins (`https://app.example`) whose browser requests are served; a request with any
   * other `Origin` header is refused with 403 (DNS rebinding, CSRF), its own page's included:
   * the handler cannot know its own origin (the `Host` header is the attacker's to choose).
   * Each as a browser sends it (`https://app.example`: lowercase, no path, no default port);
   * one no `Origin` header can equal (`https://App.example/`, `*`) is a TypeError.
   * Requests without `Origin` (non-browser clients) are served, but a POST or DELETE whose
   * `Sec-Fetch-Site` is other than `same-origin` or `none` is 403 too. Mounted in the server
   * (`mcpMount`), the server's Origin check decides instead.
   */
  readonly allowedOrigins?: readonly string[];
  /** The largest POST body (413 above). Default 4 MiB; `mcpMount` leaves it to the server's `maxBodyBytes`. */
  readonly maxBodyBytes?: number;
  /**
   * Sessions open at once (an `initialize` past it is 503); one `principal` may hold half,
   * rounded up (429). Both with Retry-After. Default 1000; `mcpMount` leaves it to the server's `maxSessions`.
   */
  readonly maxSessions?: number;
}

/** Who is asking: decided by the caller (the server's bearer token), never by the handler. */
export interface McpRequestContext {
  /**
   * The persona the session opened by this request lists and may call. Given for a request of
   * an existing session, it must be the policy the session was opened with (equal content): a
   * changed one ends the session (404, as for an unknown session), so the client opens a new
   * session under it. Not given, the session keeps its own.
   */
  readonly policy?: ToolPolicy;
  /**
   * Who opened the session (a token's id): later requests for the session must come from
   * the same principal, else they are answered as for an unknown session (404).
   */
  readonly principal?: string;
  /** The token's name, for the session's call records (`onCall`'s `token`). Ignored for an existing session. */
  readonly tokenName?: string;
  /** The caller checked the request's `Origin` already (the server does, for its mounts): `allowedOrigins` is not consulted. */
  readonly originChecked?: boolean;
  /**
   * Called before a session opens (the server's `openSession`): may throw to refuse it (a
   * limit); the session ends when the returned signal aborts (its token was revoked or
   * changed), and `release` is called when it ends.
   */
  readonly admit?: () => { readonly signal: AbortSignal; release(): void };
}

/** An MCP endpoint: hand it every request for its path (POST, GET, DELETE). */
export interface McpHttpHandler {
  handle(request: Request, context?: McpRequestContext): Promise<Response>;
  /** Open sessions. */
  readonly sessionCount: number;
  /** Ends every session and refuses every request after it (503, Retry-After: 1, a JSON-RPC error). */
  close(): Promise<void>;
}

interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly principal: string | undefined;
  /** `policyKey` of the policy the session was opened with. */
  readonly policy: string;
  inFlight: number;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** By request id, what to tell the POST waiting for its answer when the client cancels it. */
  readonly cancels: Map<RequestId, () => void>;
}

/**
 * Seconds a client should wait before trying again after the endpoint's own 503 (it is
 * closing: a server stopping, or a namespace's endpoint retired and opened again by the next
 * request). Every 503 and 429 carries Retry-After, as the server's own do (issue 40).
 */
export const CLOSING_RETRY_AFTER_SECONDS = 1;

/**
 * A policy by what decides it (persona, permissions, allowlist; order and repeats aside), so a
 * copy of equal content, read again from a token file, is the same policy. Anything that is not
 * plain JSON is a key of its own: never equal to a session's.
 */
function policyKey(policy: ToolPolicy | undefined): string {
  if (policy === undefined) return 'none';
  const names = (list: unknown): unknown => (Array.isArray(list) && list.every((name) => typeof name === 'string') ? [...new Set(list)].sort() : list);
  try {
    const tools = names(policy.allowed_tools);
    return JSON.stringify([policy.persona, names(policy.allowed_permissions ?? []), Array.isArray(tools) && tools.length === 0 ? null : (tools ?? null)]);
  } catch {
    return `unreadable ${randomUUID()}`;
  }
}

export function rpcError(status: number, code: number, message: string, id: RequestId | null = null): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 503 || status === 429) headers['retry-after'] = String(CLOSING_RETRY_AFTER_SECONDS);
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }), { status, headers });
}

/**
 * A body's bytes, read no further than `limit`: a chunked body (no Content-Length) was read
 * whole before its size was looked at, so one endless POST held as much memory as it sent.
 */
async function bytesWithin(request: Request, limit: number): Promise<Uint8Array | 'over' | 'unreadable'> {
  if (request.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    // Inside: a body already read (the server's attempt, its client gone) cannot be read again.
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.byteLength;
      if (length > limit) {
        await reader.cancel().catch(() => {});
        return 'over';
      }
      chunks.push(value);
    }
  } catch {
    return 'unreadable';
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Reads a POST body within the size limit as the command reads JSON (UTF-8, every number
 * exact: an argument of 18446744073709551616 is refused, not rounded); a Response for what
 * cannot be read.
 */
async function readBody(request: Request, limit: number): Promise<{ body: unknown } | Response> {
  // The bytes are read as UTF-8 (JSON's only encoding): JSON said to be in another charset would be read as other text.
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers.get('content-type') ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) return rpcError(415, -32000, `Unsupported Media Type: the body must be UTF-8 JSON, got charset ${JSON.stringify(charset)}`);
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > limit) return rpcError(413, -32000, `Request body over ${limit} bytes`);
  const bytes = await bytesWithin(request, limit);
  if (bytes === 'unreadable') return rpcError(400, -32700, 'Parse error: the body could not be read');
  if (bytes === 'over') return rpcError(413, -32000, `Request body over ${limit} bytes`);
  try {
    return { body: parseJsonBytes(bytes, { name: 'the body', refuseRepeatedKeys: true, maxDepth: MAX_MESSAGE_DEPTH }) };
  } catch (error) {
    return rpcError(400, -32700, `Parse error: ${(error as Error).message}`);
  }
}

/** Whether a request that is not a POST came with a body (a length above 0, or chunked). */
function carriesBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  return request.body !== null && ((length !== null && length.trim() !== '0') || request.headers.has('transfer-encoding'));
}

function messagesOf(body: unknown): unknown[] {
  return Array.isArray(body) ? body : [body];
}

/** The ids of the requests in a POST's body (notifications and responses have none to answer). */
function requestIdsOf(body: unknown): RequestId[] {
  return body === undefined ? [] : messagesOf(body).filter((message) => isJSONRPCRequest(message)).map((message) => (message as { id: RequestId }).id);
}

/** The request ids a body's `notifications/cancelled` name. */
function cancelledIdsOf(body: unknown): RequestId[] {
  if (body === undefined) return [];
  return messagesOf(body).flatMap((message) => {
    const { method, id, params } = message as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
    const requestId = params?.requestId;
    return method === 'notifications/cancelled' && id === undefined && (typeof requestId === 'string' || typeof requestId === 'number') ? [requestId] : [];
  });
}

/** The error a request gets when its session ended before answering it. */
const SESSION_ENDED = 'The session ended before this request was answered (the server is stopping, the session was deleted, or its token was revoked or changed)';

/** Why a request is refused for where it comes from (403), or undefined when it may be served. */
function originRefusal(request: Request, allowed: ReadonlySet<string>): string | undefined {
  const origin = request.headers.get('origin');
  if (origin !== null) return allowed.has(origin) ? undefined : `Forbidden: Origin ${JSON.stringify(origin)} is not allowed`;
  // No Origin, yet a browser says a page of another site (or an unknown one) sent this POST or DELETE: as a foreign Origin (the server's originCheck).
  const site = request.headers.get('sec-fetch-site');
  return refusedBySecFetchSite(request.method, site) ? `Forbidden: Sec-Fetch-Site ${JSON.stringify(site)} without Origin is not allowed` : undefined;
}

/**
 * Why an `allowedOrigins` entry can never equal an `Origin` header (they are compared as
 * strings), or undefined: `https://App.example/` or `*` let no browser in, and said nothing.
 */
function originMistake(origin: string): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const sent = url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') ? url.origin : undefined;
  if (sent === origin) return undefined;
  // Another scheme (a browser extension's chrome-extension://ID) is compared as it is given.
  if (url !== undefined && sent === undefined && /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s]+$/.test(origin)) return undefined;
  const meant = sent === undefined ? '' : ` (${JSON.stringify(sent)}?)`;
  return `must be an origin as a browser sends it in Origin (scheme://host[:port], lowercase, no path or default port), got ${JSON.stringify(origin)}${meant}: it would match no request`;
}

/** Whether a JSON-RPC message is a response (a result or an error for a request id). */
function isResponse(message: unknown): boolean {
  return typeof message === 'object' && message !== null && 'id' in message && ('result' in message || 'error' in message);
}

/**
 * A POST's answer (an SSE stream from the SDK's transport) as one JSON body when it carries
 * only responses, as clients got before calls could talk; once a handler sends anything else
 * first (progress, a log message, a sampling or elicitation request), the stream, what was
 * read so far included. A body that is not SSE comes back untouched. A request of
 * `requestIds` the stream ended without answering (its session ended meanwhile) gets an error
 * reply, never an empty body that leaves its client waiting. A `batch` (the POST's body was a
 * JSON array) is answered with an array, one reply in it included, as JSON-RPC 2.0 answers a batch;
 * its replies are held to `maxAnswerBytes` as over stdio (boundedBatchReply), in a JSON answer and
 * in a stream alike. Either way it ends once every request is answered or cancelled by the client (`cancels`).
 */
async function jsonUnlessStreamed(
  response: Response,
  requestIds: readonly RequestId[],
  batch: boolean,
  maxAnswerBytes: number,
  cancels: Map<RequestId, () => void>,
  cancelled = new Set<RequestId>(),
  forget: (ids: readonly RequestId[]) => void = () => {},
): Promise<Response> {
  const release = (): void => {
    for (const id of requestIds) cancels.delete(id);
  };
  if (response.body === null || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    release();
    return response;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  /** A JSON answer's replies so far, each as JSON (those read before anything else came). */
  const responses: string[] = [];
  /** The bytes of the answer's replies so far: a batch's are held to maxAnswerBytes, as JSON and as a stream. */
  let held = 0;
  const bounded = (message: unknown): string => {
    const text = batch ? boundedBatchReply(message as object, JSON.stringify(message), held, maxAnswerBytes) : JSON.stringify(message);
    held += Buffer.byteLength(text, 'utf8') + 1;
    return text;
  };
  const hold = (message: unknown): void => {
    responses.push(bounded(message));
  };
  /** A reply as the stream's event, held to the batch's bound as in a JSON answer. */
  const replyEvent = (text: string): string => `event: message\ndata: ${text}\n\n`;
  let pending = '';
  /**
   * The events `chunk` completes: each as its text and its message (none for a comment, the
   * SDK's keep-alive). Read event by event, not kept as chunks: a batch's stream held every
   * chunk it read until its end, and passed on replies past maxAnswerBytes.
   */
  const eventsIn = (chunk: Uint8Array): { text: string; message: unknown }[] => {
    pending += decoder.decode(chunk, { stream: true });
    const events: { text: string; message: unknown }[] = [];
    let end: number;
    while ((end = pending.indexOf('\n\n')) !== -1) {
      const event = pending.slice(0, end + 2);
      pending = pending.slice(end + 2);
      const data = event
        .slice(0, -2)
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      events.push({ text: event, message: data === '' ? undefined : JSON.parse(data) });
    }
    return events;
  };
  // A request the client cancels is owed no answer (MCP), and the SDK sends none: the POST
  // waited for it as long as the connection stayed, and its session was never idle. It ends
  // once every request of the body is answered or cancelled (`cancelled`: those cancelled already).
  const answeredIds = new Set<RequestId>();
  let wake!: () => void;
  const settled = new Promise<'settled'>((resolve) => {
    wake = () => resolve('settled');
  });
  const settle = (): void => {
    if (cancelled.size > 0 && requestIds.every((id) => cancelled.has(id) || answeredIds.has(id))) wake();
  };
  const answered = (message: unknown): void => {
    if (!isResponse(message)) return;
    answeredIds.add((message as { id: RequestId }).id);
    settle();
  };
  for (const id of requestIds) {
    cancels.set(id, () => {
      cancelled.add(id);
      settle();
    });
  }
  settle();
  /** An error reply for each request the stream ended without answering (its session ended meanwhile). */
  const unanswered = (): unknown[] => requestIds.filter((id) => !answeredIds.has(id) && !cancelled.has(id)).map((id) => ({ jsonrpc: '2.0', id, error: { code: -32000, message: SESSION_ENDED } }));
  /** An event as the stream passes it on: a batch's reply bounded, anything else as it came. */
  const passed = ({ text, message }: { text: string; message: unknown }): string => {
    answered(message);
    return batch && isResponse(message) ? replyEvent(bounded(message)) : text;
  };
  let streamed = false;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), settled]);
      if (next === 'settled') {
        await reader.cancel().catch(() => {});
        forget([...cancelled]);
        break;
      }
      if (next.done) break;
      const events = eventsIn(next.value);
      const first = events.findIndex(({ message }) => message !== undefined && !isResponse(message));
      for (const { message } of first === -1 ? events : events.slice(0, first)) {
        if (message === undefined) continue;
        hold(message);
        answered(message);
      }
      if (first === -1) continue;
      streamed = true;
      // Passed on event by event: the replies held so far first; it still ends when what is left of it is answered or cancelled.
      const start = responses.map(replyEvent).join('') + events.slice(first).map(passed).join('');
      responses.length = 0;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode(start));
        },
        async pull(controller) {
          // Until something is passed on: a pull that enqueues nothing (a chunk ending inside an event) is not called again.
          for (;;) {
            const more = await Promise.race([reader.read(), settled]);
            if (more === 'settled' || more.done) {
              if (more === 'settled') {
                await reader.cancel().catch(() => {});
                forget([...cancelled]);
              } else {
                // The session ended before it answered: said on the stream, as in a JSON body (the client waited until its timeout).
                const ended = unanswered().map((message) => replyEvent(bounded(message))).join('');
                if (ended !== '') controller.enqueue(encoder.encode(ended));
              }
              release();
              controller.close();
              return;
            }
            const text = eventsIn(more.value).map(passed).join('');
            if (text !== '') return controller.enqueue(encoder.encode(text));
          }
        },
        cancel: (reason) => {
          release();
          return reader.cancel(reason);
        },
      });
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    }
  } finally {
    if (!streamed) release();
  }
  // The session ended before it answered (the server stopping, DELETE, its token revoked): the SDK's stream just ends.
  for (const message of unanswered()) hold(message);
  const headers = new Headers(response.headers);
  headers.delete('cache-control');
  headers.delete('connection');
  // Nothing left to answer (every request was cancelled): accepted, as a body of notifications is.
  if (responses.length === 0) {
    headers.delete('content-type');
    return new Response(null, { status: 202, headers });
  }
  headers.set('content-type', 'application/json');
  return new Response(!batch && responses.length === 1 ? responses[0] : `[${responses.join(',')}]`, { status: response.status, headers });
}

/**
 * A Streamable HTTP endpoint over a live tool set, as a web-standard handler: mount
 * `handle` at a path of any server (Hono, node:http through @hono/node-server, a worker).
 * POST `initialize` without `Mcp-Session-Id` opens a session (one SDK transport and one
 * `createMcpServer` with the context's `policy`); its id comes back in `Mcp-Session-Id`;
 * later POSTs carry it; GET opens the stream that carries `notifications/tools/list_changed`;
 * DELETE ends the session. A session idle for `sessionIdleMs` is ended. A client that goes
 * away in the middle of a call (its request aborted) cancels the call. POST responses are
 * JSON unless the call sends something first (progress, a log, a request to the client):
 * then the answer is that call's SSE stream. Authentication is the caller's: pass `policy` and `principal`.
 */
export function createMcpHttpHandler(live: LiveToolSet, options: McpHttpHandlerOptions = {}): McpHttpHandler {
  const { sessionIdleMs: idle, allowedOrigins = [], maxBodyBytes = MAX_BODY_BYTES, maxSessions = DEFAULT_MAX_SESSIONS, ...sessionOptions } = options;
  const sessionIdleMs = timerMs('createMcpHttpHandler', 'sessionIdleMs', idle, DEFAULT_SESSION_IDLE_MS);
  if (typeof maxBodyBytes !== 'number' || !(maxBodyBytes > 0)) {
    throw new TypeError(`createMcpHttpHandler(): maxBodyBytes must be a number > 0, got ${JSON.stringify(maxBodyBytes)}`);
  }
  if (!Array.isArray(allowedOrigins) || allowedOrigins.some((origin) => typeof origin !== 'string')) {
    throw new TypeError('createMcpHttpHandler(): allowedOrigins must be an array of strings');
  }
  for (const [index, origin] of allowedOrigins.entries()) {
    const wrong = originMistake(origin);
    if (wrong !== undefined) throw new TypeError(`createMcpHttpHandler(): allowedOrigins[${index}] ${wrong}`);
  }
  // Checked once here (a bad option is the caller's bug, not a failed request).
  const { maxResultBytes } = checkSessionOptions(live, sessionOptions);
  if (!(Number.isInteger(maxSessions) && maxSessions > 0) && maxSessions !== Number.POSITIVE_INFINITY) {
    throw new TypeError(`createMcpHttpHandler(): maxSessions must be a whole number > 0, got ${JSON.stringify(maxSessions)}`);
  }
  const origins = new Set(allowedOrigins);
  /** Sessions admitted (opening or open), and of them by principal: one principal may hold half of `maxSessions`, rounded up (the server's rule, src/lease-bound.ts). */
  let admitted = 0;
  const admittedBy = new Map<string, number>();
  const admitOwn = (principal: string | undefined): Response | { release(): void } => {
    const held = principal === undefined ? 0 : (admittedBy.get(principal) ?? 0);
    const over = leaseRefusal(maxSessions, admitted, principal === undefined ? undefined : held);
    const refusal =
      over === 'bound'
        ? rpcError(503, -32000, `Too many sessions: this endpoint has ${admitted} open, its limit (maxSessions); retry once one ends`)
        : over === 'share'
          ? rpcError(429, -32000, `Too many sessions: this principal has ${held} open, its share (half of maxSessions ${maxSessions}); end one (DELETE) or retry once one ends`)
          : undefined;
    if (refusal !== undefined) {
      refusal.headers.set('retry-after', String(SESSION_LIMIT_RETRY_AFTER_SECONDS));
      return refusal;
    }
    admitted += 1;
    if (principal !== undefined) admittedBy.set(principal, held + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        admitted -= 1;
        if (principal === undefined) return;
        const left = (admittedBy.get(principal) ?? 1) - 1;
        if (left === 0) admittedBy.delete(principal);
        else admittedBy.set(principal, left);
      },
    };
  };
  const sessions = new Map<string, Session>();
  let closed = false;

  /**
   * Tells the SDK's transport that requests it will never answer (cancelled by the client, or
   * whose client went away) are done, once their stream is cancelled: it keeps the stream each
   * request came on until its response is sent (the SDK's Server sends none for a cancelled
   * one), so a session that cancelled 50 calls with 64 KB ids held 3.9 MiB until it ended.
   * The reply goes nowhere (its stream is gone); the transport then drops the request's entries.
   */
  const forget = (session: Session, ids: readonly RequestId[]): void => {
    for (const id of ids) session.transport.send({ jsonrpc: '2.0', id, error: { code: -32800, message: 'Request cancelled' } }).catch(() => {});
  };

  const expire = (session: Session): void => {
    if (session.idleTimer !== undefined) clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => {
      session.idleTimer = undefined;
      if (session.inFlight === 0) void session.transport.close();
    }, sessionIdleMs);
    session.idleTimer.unref?.();
  };

  /** Counts a request as in flight until its response ends (a stream: until it closes) or its client goes away. */
  const track = (session: Session, request: Request, response: Response, requestIds: readonly RequestId[]): Response => {
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      request.signal.removeEventListener('abort', onAbort);
      session.inFlight -= 1;
      if (session.inFlight === 0 && sessions.has(session.transport.sessionId ?? '')) expire(session);
    };
    const onAbort = (): void => {
      // The client went away: stop its calls (the Server aborts each handler's signal).
      for (const requestId of requestIds) {
        session.transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the client went away' } });
        // The POST's wait for its answer ends too (none comes): it held the SDK's stream and its entries until the session ended.
        session.cancels.get(requestId)?.();
      }
      finish();
    };
    if (request.signal.aborted) onAbort();
    else request.signal.addEventListener('abort', onAbort, { once: true });
    // Only a stream (the GET stream of notifications) stays in flight after the answer; a
    // JSON answer is complete, and passing it on as it is lets the server write it at once.
    if (response.body === null || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      finish();
      return response;
    }
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done: ended, value } = await reader.read();
          if (ended) {
            controller.close();
            finish();
          } else controller.enqueue(value);
        } catch (error) {
          controller.error(error);
          finish();
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  /**
   * Waits for the transport's answer, or answers at once when the client has gone away
   * meanwhile: the answer that comes later is read by nobody, so its stream is cancelled and
   * `discarded` hears it (its requests are forgotten).
   */
  const answer = (request: Request, pending: Promise<Response>, discarded: () => void = () => {}): Promise<Response> => {
    const gone = (): Response => {
      pending.then(
        async (late) => {
          await late.body?.cancel().catch(() => {});
          discarded();
        },
        () => {},
      );
      return new Response(null, { status: 499 });
    };
    if (request.signal.aborted) return Promise.resolve(gone());
    return new Promise((resolve, reject) => {
      const onAbort = (): void => resolve(gone());
      request.signal.addEventListener('abort', onAbort, { once: true });
      pending.then(
        (response) => {
          request.signal.removeEventListener('abort', onAbort);
          resolve(response);
        },
        (error: unknown) => {
          request.signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  };

  /**
   * A session's GET: its notification stream. One the session holds already is replaced (ended,
   * the new one registered): a stream that died unnoticed (a network cut, a proxy dropping it)
   * stayed registered, and the SDK's transport answered the client's new GET 409, so it never
   * heard `list_changed` again. Only the session's own principal gets here; a GET the transport
   * refuses for anything else (406, a bad protocol version) leaves the old stream alone.
   */
  const openStream = async (session: Session, request: Request): Promise<Response> => {
    const opened = await session.transport.handleRequest(request);
    if (opened.status !== 409) return opened;
    session.transport.closeStandaloneSSEStream();
    return session.transport.handleRequest(request);
  };

  const handleSession = async (session: Session, request: Request, parsedBody: unknown): Promise<Response> => {
    // An id still unanswered in this session (MCP: a request id is never reused in a session): the
    // SDK's transport sent the answer of either to the last POST, and the first POST waited forever.
    const ids = requestIdsOf(parsedBody);
    const reused = ids.find((id, index) => session.cancels.has(id) || ids.indexOf(id) !== index);
    if (reused !== undefined) return rpcError(400, -32600, `Invalid Request: request id ${JSON.stringify(reused)} is already in use by a request of this session not yet answered; give each request a new id`, reused);
    session.inFlight += 1;
    if (session.idleTimer !== undefined) {
      clearTimeout(session.idleTimer);
      session.idleTimer = undefined;
    }
    const requestIds = requestIdsOf(parsedBody);
    // Cancelled before the answer is read (the SDK runs the call meanwhile): noted for it.
    const cancelled = new Set<RequestId>();
    for (const id of requestIds) session.cancels.set(id, () => cancelled.add(id));
    let response: Response;
    try {
      const pending = request.method === 'GET' ? openStream(session, request) : session.transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
      response = await answer(request, pending, () => forget(session, requestIds));
    } catch (error) {
      for (const id of requestIds) session.cancels.delete(id);
      track(session, request, new Response(null), requestIds);
      throw error;
    }
    const tracked = track(session, request, response, requestIds);
    for (const id of cancelledIdsOf(parsedBody)) session.cancels.get(id)?.();
    if (request.method !== 'POST') {
      for (const id of requestIds) session.cancels.delete(id);
      return tracked;
    }
    return jsonUnlessStreamed(tracked, requestIds, Array.isArray(parsedBody), maxResultBytes, session.cancels, cancelled, (ids) => forget(session, ids));
  };

  const open = async (request: Request, body: unknown, context: McpRequestContext): Promise<Response> => {
    const own = admitOwn(context.principal);
    if (own instanceof Response) return own;
    let given: ReturnType<NonNullable<McpRequestContext['admit']>> | undefined;
    try {
      given = context.admit?.();
    } catch (error) {
      own.release();
      throw error;
    }
    const lease = {
      signal: given?.signal,
      release: (): void => {
        own.release();
        given?.release();
      },
    };
    let server;
    try {
      server = createMcpServer(live, {
        ...sessionOptions,
        ...(context.policy === undefined ? {} : { policy: context.policy }),
        ...(context.tokenName === undefined ? {} : { tokenName: context.tokenName }),
      });
    } catch (error) {
      lease.release();
      throw error;
    }
    let session: Session | undefined;
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      // Answers stream (SSE) so a call's progress, logs and requests to the client ride its
      // own response; jsonUnlessStreamed turns an answer that carries nothing else into JSON.
      onsessioninitialized: (id) => {
        session = { transport, principal: context.principal, policy: policyKey(context.policy), inFlight: 0, idleTimer: undefined, cancels: new Map() };
        sessions.set(id, session);
      },
    });
    const endOnRevoke = (): void => void transport.close();
    transport.onclose = () => {
      lease.signal?.removeEventListener('abort', endOnRevoke);
      lease.release();
      const id = transport.sessionId;
      const known = id === undefined ? undefined : sessions.get(id);
      if (known !== undefined) {
        if (known.idleTimer !== undefined) clearTimeout(known.idleTimer);
        sessions.delete(id as string);
      }
    };
    let response: Response;
    try {
      await server.connect(transport);
      response = await jsonUnlessStreamed(await answer(request, transport.handleRequest(request, { parsedBody: body })), requestIdsOf(body), Array.isArray(body), maxResultBytes, new Map());
    } catch (error) {
      lease.release();
      await server.close();
      throw error;
    }
    if (session === undefined) {
      // The initialize failed (a bad request): no session to keep.
      lease.release();
      await server.close();
      return response;
    }
    if (closed) {
      // close() ran while this session opened: it ended the sessions it found, and this one outlived it (its place held).
      await transport.close();
      return rpcError(503, -32000, 'The MCP endpoint is shutting down');
    }
    // Its token revoked or changed: the session ends (its notification stream too); the next request is a 404.
    if (lease.signal?.aborted === true) void transport.close();
    else lease.signal?.addEventListener('abort', endOnRevoke, { once: true });
    expire(session);
    return response;
  };

  return {
    get sessionCount() {
      return sessions.size;
    },

    async handle(request: Request, context: McpRequestContext = {}): Promise<Response> {
      if (closed) return rpcError(503, -32000, 'The MCP endpoint is shutting down');
      const refusal = context.originChecked === true ? undefined : originRefusal(request, origins);
      if (refusal !== undefined) return rpcError(403, -32000, refusal);
      // The endpoint takes no query parameter: one is refused whatever its name, as the server's routes refuse unknown ones.
      const query = new URL(request.url).searchParams.keys().next();
      if (query.done !== true) return rpcError(400, -32000, `Bad Request: unknown query parameter ${JSON.stringify(query.value)} (the MCP endpoint takes none)`);
      // Before the session is looked up: a method the endpoint never takes is 405 whatever the session.
      if (request.method !== 'POST' && request.method !== 'GET' && request.method !== 'DELETE') {
        const refused = rpcError(405, -32000, `Method not allowed: ${request.method} (the MCP endpoint takes GET, POST and DELETE)`);
        refused.headers.set('allow', 'GET, POST, DELETE');
        return refused;
      }
      const id = request.headers.get('mcp-session-id');
      let body: unknown;
      if (request.method === 'POST') {
        const read = await readBody(request, maxBodyBytes);
        if (read instanceof Response) return read;
        body = read.body;
        // JSON that is not a JSON-RPC message (an object id, "jsonrpc": "1.0") is -32600 saying why, as over stdio (the SDK said -32700).
        const wrong = messagesOf(body).map(invalidMessage).find((refusal) => refusal !== undefined);
        if (wrong !== undefined) return rpcError(400, wrong.code, wrong.message, wrong.id);
        if (Array.isArray(body) && body.length === 0) return rpcError(400, -32600, 'Invalid Request: an empty batch');
        // The SDK's transport opened a session for an initialize without an id and answered 202
        // without its id: a place under --max-sessions nobody could use or end until it idled out.
        if (messagesOf(body).some((message) => isObject(message) && message.method === 'initialize' && !('id' in message))) {
          return rpcError(400, -32600, 'Invalid Request: initialize must be a request (with an "id"), not a notification; it opens no session');
        }
        // As over stdio, with its id: the SDK's transport said "Only one initialization request is
        // allowed" with id null to a batch holding one initialize, and opened a session for [initialize].
        const batched = Array.isArray(body) ? body.find((message) => isObject(message) && message.method === 'initialize') : undefined;
        if (batched !== undefined) return rpcError(400, -32600, 'Invalid Request: initialize must not be part of a batch', (batched as { id: RequestId }).id);
      } else if (carriesBody(request)) {
        // A DELETE reads no body, but one that came is checked as a POST's: it does not end the session when it cannot be read.
        const read = await readBody(request, maxBodyBytes);
        if (read instanceof Response) return read;
      }
      if (id !== null) {
        const session = sessions.get(id);
        if (session === undefined || session.principal !== context.principal) return rpcError(404, -32001, 'Session not found');
        if (context.policy !== undefined && policyKey(context.policy) !== session.policy) {
          // The caller narrowed (or changed) the persona: what the session lists and may call must not outlive it.
          await session.transport.close();
          return rpcError(404, -32001, 'Session not found');
        }
        // The SDK's transport refused it with id null, so a client waited for its request's answer; said with its id, as over stdio.
        const again = request.method === 'POST' ? messagesOf(body).find((message) => isInitializeRequest(message as JSONRPCMessage)) : undefined;
        if (again !== undefined) return rpcError(400, -32600, 'Invalid Request: the session is already initialized; initialize once per session', (again as { id: RequestId }).id);
        return handleSession(session, request, body);
      }
      if (request.method === 'POST' && messagesOf(body).some((message) => isInitializeRequest(message as JSONRPCMessage))) {
        return open(request, body, context);
      }
      // An initialize whose params are wrong: -32602 saying what is wrong, not "no Mcp-Session-Id".
      for (const message of request.method === 'POST' ? messagesOf(body) : []) {
        const invalid = (message as { method?: unknown }).method === 'initialize' ? invalidParamsOf(message as { method: string }) : undefined;
        if (invalid !== undefined) return rpcError(400, -32602, invalid, (message as { id: RequestId }).id);
      }
      return rpcError(400, -32000, 'Bad Request: no Mcp-Session-Id header (open a session with an initialize request first)');
    },

    async close(): Promise<void> {
      closed = true;
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      sessions.clear();
    },
  };
}
