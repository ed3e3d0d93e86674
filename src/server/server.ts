// The server: a web-standard handler `(Request) => Promise<Response>` over one or more
// registries (namespaces), built on Hono's router from the route table. Authentication,
// namespaces, limits and the problem edge live here, once; the routes stay thin.
import { constants } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { MAX_TIMER_MS, TOOL_NAME_PATTERN, UPSTREAM_NAME_PATTERN, jsonDepth, parseJsonBytes } from '../index.js';
import type { ToolRegistry } from '../index.js';
import { hostCheck, parseHostEntry } from './host-check.js';
import { isJsonType, jsonOnly, mediaType, unsupportedMediaType } from './json-only.js';
import { DEFAULT_NAMESPACE, fixedNamespaces } from './namespaces.js';
import type { NamespaceSource } from './namespaces.js';
import { buildOpenApiDocument } from './openapi.js';
import { corsOption, originCheck } from './origin-check.js';
import { HttpProblem, knownProblem, problemResponse } from './problems.js';
import type { RouteContext, RouteDefinition } from './route-table.js';
import { CALL_ROUTES } from './call-routes.js';
import { REGISTRY_ROUTES, readBeforeWrite } from './routes.js';
import { upstreamRoutes } from './upstream-routes.js';
import type { UpstreamGovernance } from './upstream-routes.js';
import { serviceRoutes } from './service-routes.js';
import { HEARTBEAT_MS } from './sse.js';
import { DEFAULT_STREAM_BACKLOG_BYTES, Leases, defaultLimits, openFileLimit, outOfFileHandles, refuseNearFileLimit, LIMIT_RETRY_AFTER_SECONDS } from './limits.js';
import type { Lease } from './limits.js';
import { ServerMetrics, isLoopbackAddress, isLoopbackName, metricsRoute } from './metrics.js';
import { hasRequestId, requestIdOf, withRequestId } from './request-id.js';
import { serveStatic } from './static-files.js';
import { NAMESPACE_PATTERN, TOKEN_SCOPES, namespaceRuleMessage } from './tokens.js';
import type { AuthenticatedToken, TokenScope, TokenVerifier } from './tokens.js';

/** What a mounted handler (the MCP endpoint) gets besides the request. */
export interface MountContext {
  /** The namespace of the request: `default` at `/{mount}`, `ns` at `/v1/namespaces/{ns}/{mount}`. */
  readonly namespace: string;
  readonly registry: ToolRegistry;
  /** The authenticated token; `null` on a server without tokens. */
  readonly token: AuthenticatedToken | null;
  /** Aborted when the server shuts down. */
  readonly signal: AbortSignal;
  /**
   * Admits a session (counted against `maxSessions` and the token's share of it; it holds
   * the namespace open). Its signal aborts when the token is revoked or changed: end the
   * session then. @throws HttpProblem 503 or 429 past a limit (let it propagate)
   */
  readonly openSession: () => Lease;
  /**
   * Keeps the namespace open (never closed as the least recently used one) until the returned
   * function is called, without counting as a session: for work a session leaves behind (the
   * MCP endpoint's call records still to be written). Optional, so that a context built by a
   * caller of `Mount.handle` outside this server (before this field) still type-checks.
   */
  readonly hold?: () => () => void;
}

/** A web-standard handler mounted at `/{name}` and `/v1/namespaces/{ns}/{name}` (and every path below them). */
export interface Mount {
  readonly handle: (request: Request, context: MountContext) => Promise<Response>;
  /** The scope a token needs for every method (default `read`). */
  readonly scope?: TokenScope;
  /** Called when the server closes (end sessions); awaited before the registries close. */
  readonly close?: () => Promise<void>;
  /** Sessions open now (the MCP endpoint), for GET /metrics. */
  readonly sessionCount?: () => number;
  /**
   * The statuses the handler answers itself, each with a description, for /openapi.json (the
   * server's own problems, 401, 403, 413, 429, 503 and the rest, are declared beside them).
   * Absent: the document declares them as `default`.
   */
  readonly responses?: Readonly<Record<string, string>>;
  /** Status to the headers (name to description) the handler's answers of that status carry, for /openapi.json. */
  readonly headers?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /**
   * Method (lower case) to the statuses of `responses` the handler answers with no body, for
   * /openapi.json (the MCP endpoint's DELETE 200 and POST 202): declared without content there.
   */
  readonly noContent?: Readonly<Record<string, readonly string[]>>;
  /** The mount's audit log writer (the MCP endpoint's call records), for GET /metrics: rows written, failed writes, rows dropped (counters), rows waiting now. */
  readonly auditStats?: () => { readonly written: number; readonly failedWrites: number; readonly dropped: number; readonly buffered: number };
}

/** One line per request (`log` option): never the token itself. */
export interface RequestLogEntry {
  readonly time: string;
  /** Also the response's `X-Request-Id` (the request's own when it sent an acceptable one). */
  readonly request_id: string;
  readonly method: string;
  /** The route's pattern (`/v1/tools/{name}`), or the path when no route matched. */
  readonly route: string;
  readonly namespace: string | null;
  readonly status: number;
  readonly ms: number;
  /** The token's name; null without a token. */
  readonly token: string | null;
  /** A 500's id (the response carries it), with its error. */
  readonly error_id?: string;
  readonly error?: string;
}

export interface ToolRegistryServerOptions {
  /**
   * The registries: one (namespace `default` only), a record of namespace to registry (fixed),
   * or a `NamespaceSource` (`memoryNamespaces()`, `sqliteNamespaces(dir)`, `postgresNamespaces(...)`).
   * The server closes them in `close()`.
   */
  readonly registries: ToolRegistry | Readonly<Record<string, ToolRegistry>> | NamespaceSource;
  /** Bearer tokens (`tokenFileVerifier(file)`); absent: no tokens, every request may do everything. */
  readonly tokens?: TokenVerifier;
  /** Largest request body in bytes (413 above). Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Deepest JSON nesting of a body (400 deeper). Default 64. */
  readonly maxJsonDepth?: number;
  /**
   * Answer browsers from this origin (`*` for any); absent: no CORS headers. A request with
   * another `Origin` than this one or the server's own may not change anything (403
   * ORIGIN_NOT_ALLOWED) nor use a mount; `*` lets every origin write only on a server with
   * tokens, and never opens the mounts. Nor may a write without `Origin` whose
   * `Sec-Fetch-Site` is other than `same-origin` or `none` (a page of another site).
   * `scheme://host[:port]` (case and a trailing slash forgiven) or `*`; else a TypeError.
   */
  readonly cors?: string;
  /**
   * Host names the server answers besides `localhost`, `127.0.0.1` and `[::1]` with the port
   * the request came in on (`name` for any port, `name:port`); any other `Host` is 403
   * HOST_NOT_ALLOWED (DNS rebinding). The check is on for a server without tokens, and for
   * one with tokens when this is given.
   */
  readonly allowedHosts?: readonly string[];
  /** Heartbeat of event streams. Default 15 s. */
  readonly heartbeatMs?: number;
  /**
   * SSE change-feed streams open at once (503 past it; one token: half, rounded up, then 429).
   * Default 1000, lower when the process may open few files (a quarter of its limit).
   */
  readonly maxStreams?: number;
  /** Sessions of mounts (MCP) open at once, with the same share per token. Default as `maxStreams`. */
  readonly maxSessions?: number;
  /** Bytes an event stream lets queue behind a slow reader before cutting it off. Default 1 MiB. */
  readonly streamBacklogBytes?: number;
  /** Extra handlers by path segment, such as `{ mcp: mcpMount }` (`/mcp`, `/v1/namespaces/{ns}/mcp`). */
  readonly mounts?: Readonly<Record<string, Mount>>;
  /**
   * The permissions a tool's code requires (its `Tool.permissions.required`), `undefined` for a
   * tool this process has no code for; `serve --tools MODULE` gives it from the module. Given,
   * `GET /v1/exports/{format}` under a token's policy leaves out exactly what that token's MCP
   * sessions would not list: a tool it has code for is judged by the code's permissions
   * (`checkToolPermission`, as `ToolSet.forPolicy`), also when it is tagged `upstream:NAME` (the
   * gateway serves the local tool, not the upstream's of that name). Absent, or `undefined` for a
   * tool: a registered spec names no permissions, so the policy's `allowed_tools` and an
   * upstream row's `permissions` decide. A function, else a TypeError; an answer that is neither
   * `undefined` nor an array of strings is a 500.
   */
  readonly toolPermissions?: (toolName: string) => readonly string[] | undefined;
  /**
   * The gateway the upstream routes (`/v1/upstreams...`) connect and approve with
   * (`upstreamGovernance()` of 'tool-registry/mcp'). Without it the upstreams are listed with
   * their registered counts only and the live routes answer 501 GATEWAY_UNAVAILABLE.
   */
  readonly upstreams?: UpstreamGovernance;
  /**
   * The console: static files from `root` (`/` is `index.html`), or your own `handler`, for GET
   * and HEAD of every path outside `/v1/`, the mounts, `/healthz`, `/readyz` and `/openapi.json`.
   * Served without a token (pages hold no data; they call the API with the user's token).
   */
  readonly console?: { readonly root?: string; readonly handler?: (request: Request) => Promise<Response> };
  /** Receives one entry per request. Default: nothing is logged. */
  readonly log?: (entry: RequestLogEntry) => void;
  /** The document's `info.version`. */
  readonly version?: string;
}

/** The server: a web-standard handler plus its lifecycle. */
export interface ToolRegistryServer {
  /**
   * Answers one request; never rejects (a failure is a problem response). `connection`: where
   * it came from (`listen()` passes the socket's remote address, GET /metrics needs no token
   * from a loopback address; and the local port, which a loopback `Host` must carry).
   */
  readonly fetch: (request: Request, connection?: { readonly remoteAddress?: string; readonly localPort?: number }) => Promise<Response>;
  /** The OpenAPI 3.1 document (generated from the zod contracts). */
  openapi(): Record<string, unknown>;
  /** Requests being answered now (event streams not counted once their headers are out). */
  readonly inFlight: number;
  /** Stops taking requests (503 SHUTTING_DOWN) and ends every event stream; the registries stay open. */
  shutdown(): void;
  /** Resolves when no request is in flight. */
  drained(): Promise<void>;
  /** shutdown(), then closes the mounts and every registry. Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY = 1024 * 1024;
const DEFAULT_MAX_DEPTH = 64;
/** What a mount's preflight allows. */
const MOUNT_METHODS = 'DELETE, GET, OPTIONS, POST';
/** The request headers of RFC 9110 that make a write conditional (If-Modified-Since and If-Range apply to GET only). */
const PRECONDITION_HEADERS = ['if-match', 'if-none-match', 'if-unmodified-since'] as const;

/** Per-request facts the log line needs, filled in as the request goes. */
interface RequestFacts {
  readonly requestId: string;
  route: string | null;
  namespace: string | null;
  token: string | null;
  remoteAddress: string | undefined;
  /** The port the request came in on (a socket's), when known. */
  localPort: number | undefined;
  errorId?: string;
  error?: string;
}

type Env = { Bindings: { facts: RequestFacts } };

function toHonoPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

function isNamespaceSource(value: unknown): value is NamespaceSource {
  return typeof value === 'object' && value !== null && typeof (value as NamespaceSource).open === 'function' && typeof (value as NamespaceSource).list === 'function';
}

function isRegistry(value: unknown): value is ToolRegistry {
  return typeof value === 'object' && value !== null && typeof (value as ToolRegistry).register === 'function' && typeof (value as ToolRegistry).listAll === 'function';
}

/**
 * A query's text as sent: a percent-escape that is no UTF-8 (`%E9`) would be read as U+FFFD,
 * and a broken one (`%ZZ`) as typed; either is 400 naming the parameter, never altered.
 */
function checkQueryText(search: string): void {
  if (!search.includes('%')) return;
  for (const part of search.split('&')) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      const name = part.split('=')[0] as string;
      let parameter = name;
      try {
        parameter = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        // The name itself is what cannot be read: named as sent.
      }
      throw new HttpProblem('BAD_REQUEST', `query parameter ${JSON.stringify(parameter)}: ${JSON.stringify(part)} is not percent-encoded UTF-8`, { context: { parameter } });
    }
  }
}

/** The bearer secret of a request, or undefined. */
function bearer(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  if (header === null) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? '';
}

const ALL_SCOPES = TOKEN_SCOPES;

/** Creates the server over `options.registries`. Nothing is listening yet: pass it to `listen()` or call `fetch`. */
export function createToolRegistryServer(options: ToolRegistryServerOptions): ToolRegistryServer {
  if (typeof options !== 'object' || options === null) throw new TypeError('createToolRegistryServer: options must be an object');
  const source: NamespaceSource = isNamespaceSource(options.registries)
    ? options.registries
    : isRegistry(options.registries)
      ? fixedNamespaces({ [DEFAULT_NAMESPACE]: options.registries })
      : fixedNamespaces(options.registries as Record<string, ToolRegistry>);
  // A bound of 0, a fraction or a string refused up front: 0 made every body a 413 and NaN none.
  for (const field of ['maxBodyBytes', 'maxJsonDepth', 'heartbeatMs', 'maxStreams', 'maxSessions', 'streamBacklogBytes'] as const) {
    const value: unknown = options[field];
    if (value !== undefined && !(typeof value === 'number' && Number.isSafeInteger(value) && value >= 1)) {
      throw new TypeError(`createToolRegistryServer: ${field} must be a whole number >= 1, got ${typeof value === 'number' ? String(value) : JSON.stringify(value)}`);
    }
  }
  // A body is read as one string: a larger one failed there, a 500 for every such request.
  if (options.maxBodyBytes !== undefined && options.maxBodyBytes > constants.MAX_STRING_LENGTH) {
    throw new TypeError(`createToolRegistryServer: maxBodyBytes must be a whole number from 1 to ${constants.MAX_STRING_LENGTH} (the longest string JavaScript holds), got ${options.maxBodyBytes}`);
  }
  // A longer timer runs after 1 ms: a heartbeat every millisecond on every stream.
  if (options.heartbeatMs !== undefined && options.heartbeatMs > MAX_TIMER_MS) {
    throw new TypeError(`createToolRegistryServer: heartbeatMs must be a whole number from 1 to ${MAX_TIMER_MS} (the longest timer Node keeps), got ${options.heartbeatMs}`);
  }
  const cors = corsOption(options.cors);
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const maxDepth = options.maxJsonDepth ?? DEFAULT_MAX_DEPTH;
  const allowedHosts = options.allowedHosts ?? [];
  if (!Array.isArray(allowedHosts) || allowedHosts.some((host) => typeof host !== 'string')) throw new TypeError('createToolRegistryServer: allowedHosts must be an array of host names');
  for (const host of allowedHosts) parseHostEntry(host);
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const toolPermissions = options.toolPermissions;
  if (toolPermissions !== undefined && typeof toolPermissions !== 'function') {
    throw new TypeError(`createToolRegistryServer: toolPermissions must be a function (toolName) => string[] | undefined, got ${toolPermissions === null ? 'null' : typeof toolPermissions}`);
  }
  const tokens = options.tokens;
  const mounts = options.mounts ?? {};
  const shutdownController = new AbortController();
  const streamBacklogBytes = options.streamBacklogBytes ?? DEFAULT_STREAM_BACKLOG_BYTES;
  /** Namespaces held now (by requests, streams, sessions) and by how many: /readyz reads one when `default` cannot be opened. */
  const held = new Map<string, number>();
  const hold = (namespace: string): (() => void) => {
    const release = source.hold?.(namespace);
    if (release === undefined) return () => {};
    held.set(namespace, (held.get(namespace) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      const left = (held.get(namespace) ?? 1) - 1;
      if (left === 0) held.delete(namespace);
      else held.set(namespace, left);
    };
  };
  const defaults = defaultLimits();
  const leases = new Leases({
    maxStreams: options.maxStreams ?? defaults.maxStreams,
    maxSessions: options.maxSessions ?? defaults.maxSessions,
    tokens,
    hold,
    ...(source.maxOpen === undefined ? {} : { maxOpenNamespaces: source.maxOpen }),
  });
  const metrics = new ServerMetrics(
    Object.fromEntries(Object.entries(mounts).flatMap(([name, mount]) => (mount.sessionCount === undefined ? [] : [[name, mount.sessionCount]]))),
    Object.fromEntries(Object.entries(mounts).flatMap(([name, mount]) => (mount.auditStats === undefined ? [] : [[name, mount.auditStats]]))),
  );
  let inFlight = 0;
  let drainWaiters: (() => void)[] = [];
  let closing: Promise<void> | undefined;
  let document: Record<string, unknown> | undefined;

  const authenticate = (request: Request, facts: RequestFacts): AuthenticatedToken | null => {
    if (tokens === undefined) return null;
    const secret = bearer(request);
    if (secret === undefined) {
      throw new HttpProblem('UNAUTHORIZED', 'this server needs a bearer token (Authorization: Bearer TOKEN)', {
        headers: { 'www-authenticate': 'Bearer realm="tool-registry"' },
      });
    }
    const token = secret === '' ? undefined : tokens.verify(secret);
    if (token === undefined) {
      throw new HttpProblem('UNAUTHORIZED', 'the bearer token is not valid (unknown or revoked)', {
        headers: { 'www-authenticate': 'Bearer realm="tool-registry", error="invalid_token"' },
      });
    }
    facts.token = token.name;
    return token;
  };

  const requireScope = (token: AuthenticatedToken | null, scope: TokenScope): void => {
    if (token !== null && !token.scopes.includes(scope)) {
      throw new HttpProblem('FORBIDDEN', `the token ${JSON.stringify(token.name)} lacks the ${scope} scope`, { context: { scope, token: token.name } });
    }
  };

  /** The namespace's registry, as the token may see it: a namespace it may not reach does not exist (404). */
  const resolveNamespace = async (namespace: string, token: AuthenticatedToken | null): Promise<ToolRegistry> => {
    if (!NAMESPACE_PATTERN.test(namespace)) throw new HttpProblem('BAD_REQUEST', namespaceRuleMessage(namespace), { context: { namespace } });
    const hidden = token !== null && token.namespaces !== null && !token.namespaces.includes(namespace);
    const registry = hidden ? undefined : await source.open(namespace);
    if (registry === undefined) throw new HttpProblem('NAMESPACE_NOT_FOUND', `no namespace ${JSON.stringify(namespace)}`, { context: { namespace } });
    return registry;
  };

  /** A `{name}` the path's rule refuses: quoted as far as it helps (the names have at most 128 characters). */
  const refuseName = (name: string, rule: string): never => {
    throw new HttpProblem('BAD_REQUEST', `${JSON.stringify(name.length > 140 ? `${name.slice(0, 140)}...` : name)} is not ${rule}`, {
      context: { parameter: 'name', length: name.length },
    });
  };

  const checkUpstreamName = (name: string): void => {
    if (!UPSTREAM_NAME_PATTERN.test(name)) refuseName(name, 'an upstream name (1-64 of A-Z a-z 0-9 _ -)');
  };

  const checkToolName = (name: string): void => {
    if (name === '.' || name === '..') {
      throw new HttpProblem('BAD_REQUEST', `the tool name ${JSON.stringify(name)} cannot be addressed in a URL path (clients and proxies resolve it as a dot segment); use POST /v1/tools or a snapshot import for it`, {
        context: { tool_name: name, parameter: 'name' },
      });
    }
    if (!TOOL_NAME_PATTERN.test(name)) refuseName(name, 'a tool name (1-128 of A-Z a-z 0-9 _ - .)');
  };

  const parseQuery = (route: RouteDefinition, href: string): Record<string, string | string[] | undefined> => {
    const raw: Record<string, string | string[] | undefined> = {};
    // No `?`: no parameters (a URL without one has an empty search), so nothing to parse.
    const url = href.includes('?') ? new URL(href) : undefined;
    if (url !== undefined) checkQueryText(url.search.slice(1));
    const shape = (route.query?.shape ?? {}) as Record<string, unknown>;
    const repeatable = route.repeatable ?? [];
    for (const key of url === undefined ? [] : new Set(url.searchParams.keys())) {
      // Own keys only: `constructor`, `__proto__` and `toString` are in every object.
      if (!Object.hasOwn(shape, key)) {
        const known = Object.keys(shape);
        throw new HttpProblem('BAD_REQUEST', `unknown query parameter ${JSON.stringify(key)}${known.length === 0 ? ' (this route takes none)' : `; this route takes ${known.join(', ')}`}`, {
          context: { parameter: key },
        });
      }
      const values = (url as URL).searchParams.getAll(key);
      if (repeatable.includes(key)) raw[key] = values;
      else if (values.length > 1) throw new HttpProblem('BAD_REQUEST', `query parameter ${JSON.stringify(key)} is given ${values.length} times; give it once`, { context: { parameter: key } });
      else raw[key] = values[0];
    }
    if (route.query === undefined) return raw;
    const parsed = route.query.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
      const first = issues[0] as { path: string; message: string };
      const name = first.path.split('.')[0] as string;
      let [message, value] = [first.message, raw[name]];
      // A repeatable parameter comes as an array, so its schema's union (one value or several)
      // fails as a whole ("Invalid input"): say the array branch's reason and the value at fault.
      const union = parsed.error.issues[0];
      if (Array.isArray(value) && union?.code === 'invalid_union') {
        const inner = union.errors.flat().find((issue) => typeof issue.path[0] === 'number');
        if (inner !== undefined) [message, value] = [inner.message, value[inner.path[0] as number]];
      }
      // The value quoted as far as it helps: a 10 KB query is not sent back whole.
      const text = typeof value === 'string' ? JSON.stringify(value) : undefined;
      const given = text === undefined ? '' : ` (got ${text.length > 80 ? `${text.slice(0, 77)}..." (${(value as string).length} characters)` : text})`;
      throw new HttpProblem('BAD_REQUEST', `query parameter ${name}: ${message}${given}`, { context: { parameter: name, issues } });
    }
    return raw;
  };

  /**
   * A precondition header a write route does not evaluate is refused (400), never ignored: a
   * write made while the client's condition went unchecked is the one it asked us not to make.
   * The server sends no ETags or Last-Modified; routes that take `expected_version` evaluate
   * `If-None-Match: *` (routes.ts). GETs are left alone (a cache's validators, answered 200).
   */
  const checkPreconditions = (route: RouteDefinition, request: Request): void => {
    if (route.method === 'get') return;
    for (const header of PRECONDITION_HEADERS) {
      if (!request.headers.has(header) || Object.hasOwn(route.headers ?? {}, header)) continue;
      const name = header.replace(/(^|-)[a-z]/g, (letter) => letter.toUpperCase());
      const instead = Object.hasOwn(route.query?.shape ?? {}, 'expected_version') ? ': send ?expected_version=V (or If-None-Match: * for "must not exist")' : '';
      throw new HttpProblem('BAD_REQUEST', `${name} is not supported here (this server sends no ETags or Last-Modified)${instead}; nothing was changed`, { context: { header: name } });
    }
  };

  const hasBody = (request: Request): boolean => {
    const length = request.headers.get('content-length');
    return request.body !== null && ((length !== null && length.trim() !== '0') || request.headers.has('transfer-encoding'));
  };

  /** The body as the command reads its input (bodyLimit has bounded it): JSON, UTF-8, numbers exact. */
  const parseBody = async (request: Request, kind: 'spec' | 'snapshot'): Promise<unknown> => {
    const type = mediaType(request.headers.get('content-type'));
    if (!isJsonType(type)) throw unsupportedMediaType(type);
    let bytes: Buffer;
    try {
      bytes = Buffer.from(await request.arrayBuffer());
    } catch {
      // The client stopped sending (went away mid-body): a 400, not a 500 with an error id in the log.
      throw new HttpProblem('BAD_REQUEST', 'the body could not be read to its end (the connection closed before it did); nothing was changed');
    }
    // Structural characters are ASCII, so the depth is counted on the bytes before decoding.
    const depth = jsonDepth(bytes.toString('latin1'), maxDepth);
    if (depth > maxDepth) throw new HttpProblem('BAD_REQUEST', `the JSON body nests deeper than ${maxDepth} levels`, { context: { max_depth: maxDepth } });
    return parseJsonBytes(bytes, { name: 'the body', kind, refuseRepeatedKeys: true });
  };

  const app = new Hono<Env>();
  const mountNames = Object.keys(mounts);
  /** `/{mount}…` or `/v1/namespaces/{ns}/{mount}…`. */
  const isMount = (path: string): boolean => {
    const segments = path.split('/');
    return mountNames.includes((segments[1] === 'v1' && segments[2] === 'namespaces' ? segments[4] : segments[1]) ?? '');
  };
  // The edges, before any route, mount or console page: each one small middleware.
  if (tokens === undefined || allowedHosts.length > 0) app.use('*', hostCheck(allowedHosts, (c) => (c.env as Env['Bindings']).facts.localPort));
  app.use('*', originCheck({ cors, tokens: tokens !== undefined, isMount }));
  app.use('*', jsonOnly());
  const limitBody = bodyLimit({
    maxSize: maxBody,
    onError: () => {
      // The rest of the body is left unread: the connection cannot carry another request.
      throw new HttpProblem('PAYLOAD_TOO_LARGE', `the body is over the limit of ${maxBody} bytes (serve --max-body)`, { context: { limit: maxBody }, headers: { connection: 'close' } });
    },
  });
  // A GET or HEAD request has no body (a Request of either method never carries one), and
  // asking the Node adapter's lightweight request for `body` builds the whole web Request.
  app.use('*', async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    let passed = false;
    try {
      return await limitBody(c, () => ((passed = true), next()));
    } catch (error) {
      if (passed || error instanceof HttpProblem) throw error;
      // bodyLimit reads a chunked body itself, and the client went away before its end: a 400
      // as when parseBody finds so (a 500 with an error id before). A mount gets a body that
      // fails again, so that it says so its own way (/mcp: JSON-RPC -32700).
      if (!isMount(c.req.path)) throw new HttpProblem('BAD_REQUEST', 'the body could not be read to its end (the connection closed before it did); nothing was changed');
      const failed = new ReadableStream({ start: (controller) => controller.error(error) });
      c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers: c.req.raw.headers, body: failed, duplex: 'half' } as RequestInit);
      return next();
    }
  });

  const onRoute = (route: RouteDefinition, prefixed: boolean) => {
    const template = prefixed ? `/v1/namespaces/{ns}${route.path.slice(3)}` : route.path;
    return (c: Context<Env>): Promise<Response> => answerRoute(c, route, prefixed, template);
  };
  const answerRoute = async (c: Context<Env>, route: RouteDefinition, prefixed: boolean, template: string): Promise<Response> => {
    const facts = c.env.facts;
    facts.route = template;
    // From loopback such a route needs no token, but one sent along is read (a namespace-bound token sees its namespaces only).
    // Addressed by a loopback name too: a page whose name was rebound to 127.0.0.1 (DNS rebinding) also comes from loopback,
    // and read every namespace's name and revision on a server with tokens, which checks no Host.
    const loopbackOpen = route.loopbackWithoutToken === true && isLoopbackAddress(facts.remoteAddress) && isLoopbackName(c.req.url);
    const open = route.scope === null || ((route.scope === 'optional' || loopbackOpen) && bearer(c.req.raw) === undefined);
    const token = open ? null : authenticate(c.req.raw, facts);
    const params: Record<string, string> = { ...c.req.param() };
    const namespace = prefixed ? (params.ns as string) : DEFAULT_NAMESPACE;
    facts.namespace = route.namespaced ? namespace : null;
    // The namespace is held (never closed as the least recently used one) from before it is
    // opened to the route's end: unheld, a namespace another request opened meanwhile closed it
    // under this one (a 503 REGISTRY_CLOSED for a valid PUT).
    const resolve = (): Promise<ToolRegistry> => {
      const opened = resolveNamespace(namespace, token);
      return route.scope === 'write' ? readBeforeWrite(opened) : opened;
    };
    let release = route.namespaced ? hold(namespace) : undefined;
    try {
      let registry = route.namespaced ? await resolve() : (undefined as unknown as ToolRegistry);
      if (route.namespaced) metrics.sawRegistry(namespace, registry);
      if (route.scope !== null && route.scope !== 'token' && route.scope !== 'optional' && !loopbackOpen) requireScope(token, route.scope);
      if (params.name !== undefined) {
        // `{name}` is an upstream's under /v1/upstreams: its own rule, so the 400 says which name is wrong.
        if (route.path.startsWith('/v1/upstreams/')) checkUpstreamName(params.name);
        else checkToolName(params.name);
      }
      const query = parseQuery(route, c.req.url);
      checkPreconditions(route, c.req.raw);
      let body: unknown;
      if (route.body !== undefined || hasBody(c.req.raw)) {
        // A body comes at the client's pace: not held meanwhile (a client trickling bodies into
        // many namespaces would keep them all open), then held again and opened again should it
        // have been closed. A route that reads no body still checks one that came (`{}` is
        // fine): every body is JSON as the command reads it.
        release?.();
        release = undefined;
        const parsed = await parseBody(c.req.raw, route.body?.kind ?? 'spec');
        if (route.body !== undefined) body = parsed;
        if (route.namespaced) {
          release = hold(namespace);
          registry = await resolve();
          metrics.sawRegistry(namespace, registry);
        }
      }
      let signal: AbortSignal | undefined;
      const request = c.req.raw;
      const context: RouteContext = {
        request,
        registry,
        namespace,
        params,
        query,
        body,
        token,
        ...(toolPermissions === undefined ? {} : { toolPermissions }),
        heartbeatMs,
        streamBacklogBytes,
        requestId: facts.requestId,
        openStream: () => leases.admit('stream', token, namespace),
        // Made on demand: only event streams watch it, and AbortSignal.any costs every request.
        get signal() {
          return (signal ??= AbortSignal.any([request.signal, shutdownController.signal]));
        },
      };
      return await route.handle(context);
    } finally {
      release?.();
    }
  };

  const services = serviceRoutes({
    source,
    tokensRequired: tokens !== undefined,
    allScopes: ALL_SCOPES,
    openapi: () => serverDocument(),
    resolveNamespace,
    requireScope,
    hold,
    heldNamespaces: () => [...held.keys()],
  });

  const allRoutes: { route: RouteDefinition; prefixed: boolean }[] = [];
  for (const route of [...services, metricsRoute(metrics), ...REGISTRY_ROUTES, ...CALL_ROUTES, ...upstreamRoutes(options.upstreams)]) {
    allRoutes.push({ route, prefixed: false });
    if (route.namespaced) allRoutes.push({ route, prefixed: true });
  }
  const methodsByPath = new Map<string, Set<string>>();
  /** Paths with a route that answers without a token (/healthz, /readyz): their 405 tells an anonymous client nothing new. */
  const openPaths = new Set<string>();
  for (const { route, prefixed } of allRoutes) {
    const path = toHonoPath(prefixed ? `/v1/namespaces/{ns}${route.path.slice(3)}` : route.path);
    app.on(route.method.toUpperCase(), path, onRoute(route, prefixed));
    if (route.scope === null || route.scope === 'optional') openPaths.add(path);
    const methods = methodsByPath.get(path) ?? new Set<string>();
    methods.add(route.method.toUpperCase());
    if (route.method === 'get') methods.add('HEAD');
    methodsByPath.set(path, methods);
  }

  // Mounted handlers: every method, the path and everything below it.
  for (const [name, mount] of Object.entries(mounts)) {
    if (!/^[a-z][a-z0-9_-]*$/.test(name)) throw new TypeError(`createToolRegistryServer: mount name ${JSON.stringify(name)} must be a lowercase path segment`);
    const handler = (prefixed: boolean) => async (c: Context<Env>): Promise<Response> => {
      const facts = c.env.facts;
      facts.route = prefixed ? `/v1/namespaces/{ns}/${name}` : `/${name}`;
      const token = authenticate(c.req.raw, facts);
      const namespace = prefixed ? (c.req.param('ns') as string) : DEFAULT_NAMESPACE;
      facts.namespace = namespace;
      // The body first, at the client's pace, before the namespace is held (as a route's): a
      // client trickling bodies into many namespaces' endpoints held them all open, and every
      // other namespace was 503 until its request timed out.
      let request = c.req.raw;
      if (hasBody(request)) {
        try {
          request = new Request(request, { body: await request.arrayBuffer() });
        } catch {
          // Unreadable (the client went away mid-body): the mount reads it again and says so (a 400).
        }
      }
      const release = hold(namespace);
      try {
        const registry = await resolveNamespace(namespace, token);
        metrics.sawRegistry(namespace, registry);
        requireScope(token, mount.scope ?? 'read');
        // A GET is a session's notification stream: a socket held as long as the session likes.
        if (c.req.method === 'GET') refuseNearFileLimit();
        return await mount.handle(request, { namespace, registry, token, signal: shutdownController.signal, openSession: () => leases.admit('session', token, namespace), hold: () => hold(namespace) });
      } finally {
        release();
      }
    };
    // A browser's preflight needs no token: under `cors` it is answered as the API's are.
    if (cors !== undefined) {
      for (const path of [`/${name}`, `/${name}/*`, `/v1/namespaces/:ns/${name}`, `/v1/namespaces/:ns/${name}/*`]) {
        app.options(path, (c) => {
          c.env.facts.route = path.startsWith('/v1/') ? `/v1/namespaces/{ns}/${name}` : `/${name}`;
          return new Response(null, { status: 204, headers: { allow: MOUNT_METHODS, 'access-control-allow-methods': MOUNT_METHODS } });
        });
      }
    }
    for (const path of [`/${name}`, `/${name}/*`]) app.all(path, handler(false));
    for (const path of [`/v1/namespaces/:ns/${name}`, `/v1/namespaces/:ns/${name}/*`]) app.all(path, handler(true));
  }

  // A known path with another method: 405 with Allow.
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods].sort().join(', ');
    app.all(path, (c) => {
      if (c.req.method === 'OPTIONS' && cors !== undefined) return new Response(null, { status: 204, headers: { allow, 'access-control-allow-methods': allow } });
      // Token holders only, as an unknown path's 404: a 405 with Allow told an anonymous client which routes exist.
      if (!openPaths.has(path)) authenticate(c.req.raw, c.env.facts);
      throw new HttpProblem('METHOD_NOT_ALLOWED', `${c.req.method} is not allowed here; allowed: ${allow}`, { headers: { allow }, context: { allow: [...methods].sort() } });
    });
  }

  app.notFound(async (c) => {
    const method = c.req.method;
    const path = new URL(c.req.url).pathname;
    const consoleOptions = options.console;
    if (consoleOptions !== undefined && (method === 'GET' || method === 'HEAD') && !path.startsWith('/v1/') && path !== '/v1') {
      c.env.facts.route = 'console';
      if (consoleOptions.handler !== undefined) return consoleOptions.handler(c.req.raw);
      if (consoleOptions.root !== undefined) {
        const served = await serveStatic(consoleOptions.root, path, method === 'HEAD');
        if (served !== undefined) return served;
      }
    }
    // Unknown paths are answered for token holders only, so the route map is not probed anonymously.
    authenticate(c.req.raw, c.env.facts);
    throw new HttpProblem('NOT_FOUND', `no route ${method} ${path}`, { context: { path } });
  });

  app.onError((error, c) => {
    const known = knownProblem(error);
    if (known !== undefined) return known;
    if (outOfFileHandles(error)) {
      const limit = openFileLimit();
      return problemResponse('CAPACITY_EXCEEDED', 'the server has run out of file handles; retry later', {
        context: { ...(limit === undefined ? {} : { limit }), resource: 'file_handles' },
        headers: { 'retry-after': String(LIMIT_RETRY_AFTER_SECONDS) },
      });
    }
    const errorId = randomUUID();
    c.env.facts.errorId = errorId;
    c.env.facts.error = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return problemResponse('INTERNAL', `an internal error occurred; quote ${errorId} when reporting it`, { errorId, context: { error_id: errorId } });
  });

  const serverDocument = (): Record<string, unknown> =>
    (document ??= buildOpenApiDocument({ routes: allRoutes.map((r) => r.route).filter((r, i, all) => all.indexOf(r) === i), version: options.version ?? '0.0.0', tokens: tokens !== undefined, cors: cors !== undefined, mounts: Object.entries(mounts).map(([name, mount]) => ({ name, responses: mount.responses, headers: mount.headers, noContent: mount.noContent })) }));

  const withCors = (response: Response): Response => {
    if (cors === undefined) return response;
    try {
      response.headers.set('access-control-allow-origin', cors);
      // X-Request-Id both ways: a page may send its trace id and read the one it was answered with.
      response.headers.set('access-control-allow-headers', 'authorization, content-type, if-none-match, last-event-id, mcp-session-id, mcp-protocol-version, x-request-id');
      response.headers.set('access-control-expose-headers', 'retry-after, www-authenticate, allow, mcp-session-id, tool-registry-revision, x-request-id');
      if (cors !== '*') response.headers.append('vary', 'Origin');
    } catch {
      // A response with immutable headers (a fetch passthrough) stays as it is.
    }
    return response;
  };

  const settle = (): void => {
    if (inFlight === 0) {
      const waiting = drainWaiters;
      drainWaiters = [];
      for (const resolve of waiting) resolve();
    }
  };

  const fetch = async (request: Request, connection?: { readonly remoteAddress?: string; readonly localPort?: number }): Promise<Response> => {
    const started = performance.now();
    const requestId = requestIdOf(request);
    const facts: RequestFacts = { requestId, route: null, namespace: null, token: null, remoteAddress: connection?.remoteAddress, localPort: connection?.localPort };
    let response: Response;
    if (shutdownController.signal.aborted) {
      response = problemResponse('SHUTTING_DOWN', 'the server is shutting down; retry on another instance or after it restarts', { headers: { connection: 'close' } });
    } else {
      inFlight++;
      try {
        response = await app.fetch(request, { facts });
      } catch (error) {
        // Hono answers thrown errors through onError; this is a failure of onError itself.
        response = knownProblem(error) ?? problemResponse('INTERNAL', 'an internal error occurred');
      } finally {
        inFlight--;
        settle();
      }
    }
    const seconds = (performance.now() - started) / 1000;
    metrics.observe(request.method, facts.route, response.status, seconds);
    if (!hasRequestId(response)) response = metrics.trackStream(withRequestId(response, requestId), facts.route);
    if (options.log !== undefined) {
      const entry: RequestLogEntry = {
        time: new Date().toISOString(),
        request_id: requestId,
        method: request.method,
        route: facts.route ?? new URL(request.url).pathname,
        namespace: facts.namespace,
        status: response.status,
        ms: Math.round(seconds * 100_000) / 100,
        token: facts.token,
        ...(facts.errorId === undefined ? {} : { error_id: facts.errorId, error: facts.error }),
      };
      try {
        options.log(entry);
      } catch {
        // A failing logger must not fail the request.
      }
    }
    return withCors(response);
  };

  return {
    fetch,
    openapi: () => serverDocument(),
    get inFlight() {
      return inFlight;
    },
    shutdown() {
      shutdownController.abort();
      leases.abortAll();
    },
    drained() {
      return inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => drainWaiters.push(resolve));
    },
    close() {
      closing ??= (async () => {
        shutdownController.abort();
        leases.abortAll();
        await Promise.allSettled(Object.values(mounts).map((m) => m.close?.()));
        await source.close();
      })();
      return closing;
    },
  };
}

