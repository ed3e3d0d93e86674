// The JSON of a tools/call result, written once: the session serialises a result to measure it
// (maxResultBytes), and our stdio transport sends that text rather than serialising it again.

/** Each measured result's JSON text, until its message is sent. */
const texts = new WeakMap<object, string>();
/** The transports that send a remembered text (ours over stdio); for any other, nothing is kept. */
const senders = new WeakSet<object>();

/** Marks a transport that sends responses through `responseJson`. */
export function sendsResultJson(transport: object): void {
  senders.add(transport);
}

/** Remembers `text`, the JSON.stringify of `result`, when `transport` will send it. */
export function rememberResultJson(transport: object | undefined, result: object, text: string): void {
  if (transport !== undefined && senders.has(transport)) texts.set(result, text);
}

/**
 * `JSON.stringify(message)` for a JSON-RPC response whose result the session measured
 * (`{ result, jsonrpc, id }`, in that order, as the SDK's Protocol builds it), spliced from
 * the remembered text; undefined for any other message.
 */
export function responseJson(message: object): string | undefined {
  const { result, id } = message as { result?: unknown; id?: unknown };
  if (typeof result !== 'object' || result === null) return undefined;
  const text = texts.get(result);
  if (text === undefined) return undefined;
  texts.delete(result);
  const keys = Object.keys(message);
  if (keys.length !== 3 || keys[0] !== 'result' || keys[1] !== 'jsonrpc' || keys[2] !== 'id' || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') return undefined;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  return `{"result":${text},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}
