// RFC 9457 problem details at one edge: one table maps every error code to its HTTP status;
// routes throw, the edge answers. The same table feeds the OpenAPI document.
import { ToolRegistryError } from '../index.js';
import type { ToolRegistryErrorCode } from '../index.js';

/** Codes the server adds to the library's (the request, not the registry, was wrong). */
export type ServerErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'HOST_NOT_ALLOWED'
  | 'ORIGIN_NOT_ALLOWED'
  | 'NOT_FOUND'
  | 'NAMESPACE_NOT_FOUND'
  | 'NAMESPACES_UNAVAILABLE'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'SHUTTING_DOWN'
  | 'CAPACITY_EXCEEDED'
  | 'TOKEN_LIMIT_EXCEEDED'
  | 'INTERNAL'
  // the gateway's (issue 37): src/server/upstream-routes.ts
  | 'UPSTREAM_NOT_FOUND'
  | 'UPSTREAM_TOOL_NOT_FOUND'
  | 'UPSTREAM_UNAVAILABLE'
  | 'VARIABLE_MISSING'
  | 'GATEWAY_UNAVAILABLE';

/** Every code a problem body may carry, with its status and title. Later codes: add a row here. */
export const PROBLEM_STATUS: Readonly<Record<string, { readonly status: number; readonly title: string }>> = Object.freeze<
  Record<ToolRegistryErrorCode | ServerErrorCode | 'VERSION_DOWNGRADE' | 'COMPATIBILITY_FAILED', { status: number; title: string }>
>({
  // the library's codes
  VALIDATION_FAILED: { status: 400, title: 'The input does not satisfy the contract' },
  SNAPSHOT_INVALID: { status: 400, title: 'The snapshot is invalid' },
  DUPLICATE_TOOL: { status: 400, title: 'A tool name is given more than once' },
  TOOL_NOT_FOUND: { status: 404, title: 'No such tool' },
  VERSION_CONFLICT: { status: 409, title: 'Same version, different spec' },
  SPEC_MISMATCH: { status: 409, title: 'Code and registry disagree on a spec' },
  READ_ONLY: { status: 409, title: 'The registry is read-only' },
  VERSION_DOWNGRADE: { status: 409, title: 'The version is lower than the stored one' },
  COMPATIBILITY_FAILED: { status: 409, title: 'The new version is incompatible' },
  CHANGES_EXPIRED: { status: 410, title: 'The change log no longer reaches back that far' },
  PRECONDITION_FAILED: { status: 412, title: 'The expected version did not match' },
  PROVIDER_INCOMPATIBLE: { status: 422, title: 'The provider would reject a tool' },
  SCHEMA_TOO_NEW: { status: 500, title: 'The database was migrated by a newer release' },
  REGISTRY_CLOSED: { status: 503, title: 'The registry is closed' },
  STORAGE_BUSY: { status: 503, title: 'The store is busy' },
  STORAGE_UNAVAILABLE: { status: 503, title: 'The store cannot be reached' },
  // the server's own
  BAD_REQUEST: { status: 400, title: 'The request is malformed' },
  UNAUTHORIZED: { status: 401, title: 'A valid bearer token is required' },
  FORBIDDEN: { status: 403, title: 'The token lacks the scope' },
  HOST_NOT_ALLOWED: { status: 403, title: 'The server does not answer for this Host' },
  ORIGIN_NOT_ALLOWED: { status: 403, title: 'A page of another origin may not do this' },
  NOT_FOUND: { status: 404, title: 'No such route' },
  NAMESPACE_NOT_FOUND: { status: 404, title: 'No such namespace' },
  NAMESPACES_UNAVAILABLE: { status: 409, title: 'This server serves one namespace only' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'The body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'The body must be application/json' },
  SHUTTING_DOWN: { status: 503, title: 'The server is shutting down' },
  CAPACITY_EXCEEDED: { status: 503, title: 'The server is at a limit (streams, sessions, namespaces or open files)' },
  TOKEN_LIMIT_EXCEEDED: { status: 429, title: "The token holds its share of the server's streams or sessions" },
  INTERNAL: { status: 500, title: 'Internal server error' },
  // the gateway's
  UPSTREAM_NOT_FOUND: { status: 404, title: 'No such upstream' },
  UPSTREAM_TOOL_NOT_FOUND: { status: 404, title: 'The upstream lists no such tool in a state that allows this' },
  UPSTREAM_UNAVAILABLE: { status: 502, title: 'The upstream could not be reached or did not list its tools' },
  VARIABLE_MISSING: { status: 502, title: "An upstream's header or environment names a ${VAR} the server does not have" },
  GATEWAY_UNAVAILABLE: { status: 501, title: 'This server has no gateway to reach upstreams' },
});

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 1;

/** A failure of the request the server detects itself (not a registry error). */
export class HttpProblem extends Error {
  readonly code: ServerErrorCode;
  readonly context: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ServerErrorCode, message: string, options: { context?: Record<string, unknown>; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'HttpProblem';
    this.code = code;
    this.context = Object.freeze({ ...options.context });
    this.headers = Object.freeze({ ...options.headers });
  }
}

/** The body of every error response. */
export interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
  readonly context: Readonly<Record<string, unknown>>;
  /** VALIDATION_FAILED and SNAPSHOT_INVALID: every issue with its path. */
  readonly issues?: readonly { readonly path: string; readonly message: string }[];
  /** 500 only: the id the server's log line carries. */
  readonly error_id?: string;
}

function statusOf(code: string): { status: number; title: string } {
  return PROBLEM_STATUS[code] ?? { status: 500, title: 'Internal server error' };
}

/**
 * The longest string a problem carries. A problem names the value it refuses, and a hostile
 * one (a 1 MiB body key, a 16 KiB header) came back whole two or three times (detail, context,
 * issues): past this it is cut and ends in `...`, enough to recognise it.
 */
const PROBLEM_TEXT_MAX = 1024;

/** `value` with every string in it cut to PROBLEM_TEXT_MAX characters. */
function cutStrings(value: unknown): unknown {
  if (typeof value === 'string') return value.length > PROBLEM_TEXT_MAX ? `${value.slice(0, PROBLEM_TEXT_MAX - 3)}...` : value;
  if (Array.isArray(value)) return value.map(cutStrings);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, cutStrings(inner)]));
  return value;
}

/** A JSON response of the problem for `code`. */
export function problemResponse(
  code: string,
  detail: string,
  extra: { context?: Readonly<Record<string, unknown>>; headers?: Readonly<Record<string, string>>; issues?: ProblemBody['issues']; errorId?: string } = {},
): Response {
  const { status, title } = statusOf(code);
  const body: ProblemBody = {
    type: `https://tool-registry.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`,
    title,
    status,
    detail,
    code,
    context: extra.context ?? {},
    ...(extra.issues === undefined ? {} : { issues: extra.issues }),
    ...(extra.errorId === undefined ? {} : { error_id: extra.errorId }),
  };
  const headers: Record<string, string> = { 'content-type': 'application/problem+json', ...extra.headers };
  if (code === 'STORAGE_BUSY' || code === 'STORAGE_UNAVAILABLE' || code === 'SHUTTING_DOWN' || code === 'REGISTRY_CLOSED') headers['retry-after'] = String(RETRY_AFTER_SECONDS);
  return new Response(JSON.stringify(cutStrings(body)), { status, headers });
}

/** The response for a thrown value, or undefined for an unexpected one (a 500, logged by the caller). */
export function knownProblem(error: unknown): Response | undefined {
  if (error instanceof HttpProblem) return problemResponse(error.code, error.message, { context: error.context, headers: error.headers });
  if (error instanceof ToolRegistryError) {
    const raw = (error as { issues?: readonly { pathText: string; message: string }[] }).issues;
    const issues = Array.isArray(raw) ? raw.map((issue) => ({ path: issue.pathText, message: issue.message })) : undefined;
    return problemResponse(error.code, error.message, { context: jsonSafe(error.context), ...(issues === undefined ? {} : { issues }) });
  }
  return undefined;
}

/** A context is data for JSON: drop what JSON cannot carry (a cause, a function). */
function jsonSafe(context: Readonly<Record<string, unknown>>): Record<string, unknown> {
  try {
    return JSON.parse(JSON.stringify(context)) as Record<string, unknown>;
  } catch {
    return {};
  }
}
