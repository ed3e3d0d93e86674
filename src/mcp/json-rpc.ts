// JSON-RPC 2.0 messages as the specification reads them: what is wrong with a value that is not
// one, for the -32600 Invalid Request replies of both transports (stdio, Streamable HTTP).
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';

export type Id = string | number;

export function isId(value: unknown): value is Id {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function errorReply(id: Id | null, code: number, message: string): object {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** What is wrong with a JSON value that is not a JSON-RPC 2.0 message, in a few words. */
export function whyInvalid(value: unknown): string {
  if (!isObject(value)) return `a message must be a JSON object, got ${value === null ? 'null' : typeof value}`;
  if (value.jsonrpc !== '2.0') return `"jsonrpc" must be "2.0", got ${JSON.stringify(value.jsonrpc) ?? 'nothing'}`;
  if ('id' in value && !isId(value.id)) return `"id" must be a string or an integer, got ${JSON.stringify(value.id)}`;
  if (!('method' in value)) return 'a request needs a "method"';
  if (typeof value.method !== 'string') return `"method" must be a string, got ${JSON.stringify(value.method)}`;
  if ('params' in value && !isObject(value.params)) return '"params" must be an object';
  const extra = Object.keys(value).filter((key) => !['jsonrpc', 'id', 'method', 'params'].includes(key));
  return extra.length > 0 ? `unknown members ${extra.map((key) => JSON.stringify(key)).join(', ')}` : 'not a JSON-RPC 2.0 request or notification';
}

/** For a parsed JSON value that is not a JSON-RPC 2.0 message: the id to answer (null when it has no valid one) and why; undefined for a message. */
export function invalidMessage(value: unknown): { readonly id: Id | null; readonly reason: string } | undefined {
  if (JSONRPCMessageSchema.safeParse(value).success) return undefined;
  return { id: isObject(value) && isId(value.id) ? value.id : null, reason: whyInvalid(value) };
}
