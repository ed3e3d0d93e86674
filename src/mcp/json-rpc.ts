// JSON-RPC 2.0 messages as the specification reads them: what is wrong with a value that is not
// one, for the -32600 Invalid Request replies of both transports (stdio, Streamable HTTP).
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

export type Id = string | number;

/**
 * A message (an HTTP body, a stdio line) nesting arrays and objects deeper than this is
 * refused before it is parsed (-32700): 24 bodies of 500,000 brackets held the HTTP server
 * 20 s, and one of 1,000 levels holding 150,000 `1e400`s ended it out of memory. Tool
 * arguments that deep are no one's (the routes allow 64).
 */
export const MAX_MESSAGE_DEPTH = 1000;

export function isId(value: unknown): value is Id {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function errorReply(id: Id | null, code: number, message: string): object {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/**
 * A reply's JSON (`text`) as a batch's answer takes it (MCP 2025-03-26, stdio and HTTP), the
 * answer holding `held` bytes so far: a reply that would take it past `maxBytes` (the
 * session's maxResultBytes) is replaced by a -32000 error saying so; an error is never
 * replaced. The answer is one body or line, held until its last reply: 20,000 tools/list in
 * a 1 MB batch were one 10.7 MB line, and a registry of larger tools would have held gigabytes.
 */
export function boundedBatchReply(reply: object, text: string, held: number, maxBytes: number): string {
  if (held + Buffer.byteLength(text, 'utf8') <= maxBytes || 'error' in reply) return text;
  const id = (reply as { id?: Id | null }).id ?? null;
  return JSON.stringify(errorReply(id, -32000, `Answer too large: the answers of this batch would pass ${maxBytes} bytes (maxResultBytes); send this request again on its own`));
}

/**
 * What is wrong with the params of a message whose shape is JSON-RPC's, or undefined: params by
 * position (an array), which JSON-RPC allows and MCP does not, or their `_meta` (every MCP
 * request may carry one).
 */
function paramsProblem(value: Record<string, unknown>): string | undefined {
  if (Array.isArray(value.params)) return 'MCP takes params by name (an object), got an array (params by position)';
  if (!isObject(value.params) || !('_meta' in value.params)) return undefined;
  const params = value.params;
  const meta = params._meta;
  if (!isObject(meta)) return `"params._meta" must be an object, got ${JSON.stringify(meta)}`;
  if ('progressToken' in meta && !isId(meta.progressToken)) return `"params._meta.progressToken" must be a string or an integer, got ${JSON.stringify(meta.progressToken)}`;
  return undefined;
}

/** What is wrong with the shape of a JSON value as a JSON-RPC 2.0 message (its members, not its params' content), or undefined. */
function shapeProblem(value: unknown): string | undefined {
  if (!isObject(value)) return `a message must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`;
  if (value.jsonrpc !== '2.0') return `"jsonrpc" must be "2.0", got ${JSON.stringify(value.jsonrpc) ?? 'nothing'}`;
  if ('id' in value && !isId(value.id)) return `"id" must be a string or an integer, got ${JSON.stringify(value.id)}`;
  if (!('method' in value)) return 'a request needs a "method"';
  if (typeof value.method !== 'string') return `"method" must be a string, got ${JSON.stringify(value.method)}`;
  // JSON-RPC's params are a structured value: an array (by position) is a valid request, refused as invalid params.
  if ('params' in value && !isObject(value.params) && !Array.isArray(value.params)) return `"params" must be an object, got ${JSON.stringify(value.params)}`;
  const extra = Object.keys(value).filter((key) => !['jsonrpc', 'id', 'method', 'params'].includes(key));
  return extra.length > 0 ? `unknown members ${extra.map((key) => JSON.stringify(key)).join(', ')}` : undefined;
}

const UNREADABLE = 'not a JSON-RPC 2.0 request or notification';

/** What is wrong with a JSON value that is not a JSON-RPC 2.0 message, in a few words. */
export function whyInvalid(value: unknown): string {
  return shapeProblem(value) ?? (isObject(value) ? paramsProblem(value) : undefined) ?? UNREADABLE;
}

/** The error reply's parts for a parsed JSON value that is not a message: its id (null without a valid one), code and message. */
export interface Refusal {
  readonly id: Id | null;
  readonly code: number;
  readonly message: string;
}

/**
 * The refusal of a parsed JSON value that is not a JSON-RPC 2.0 message as MCP reads one:
 * -32602 Invalid params for a request whose only fault is its params (given by position, or
 * a progress token that is an object), else -32600 Invalid Request saying why.
 */
export function refusalOf(value: unknown): Refusal {
  const id = isObject(value) && isId(value.id) ? value.id : null;
  const shape = shapeProblem(value);
  const params = shape === undefined && isObject(value) ? paramsProblem(value) : undefined;
  if (params !== undefined) return { id, code: -32602, message: `Invalid params of ${(value as { method: string }).method}: ${params}` };
  return { id, code: -32600, message: `Invalid Request: ${shape ?? UNREADABLE}` };
}

/** `refusalOf` a parsed JSON value that is not a JSON-RPC 2.0 message; undefined for a message. */
export function invalidMessage(value: unknown): Refusal | undefined {
  return JSONRPCMessageSchema.safeParse(value).success ? undefined : refusalOf(value);
}
