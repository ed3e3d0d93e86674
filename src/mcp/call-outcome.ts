// The audit log's outcome of a call whose result is an `isError` MCP result: by default
// `TOOL_ERROR` (the tool's own verdict); the gateway marks the results it makes itself (an
// upstream down, timed out, or answering a JSON-RPC error) with a code of ours. A mark is
// kept beside the object, never in it: an upstream's own result cannot claim a code.
const outcomes = new WeakMap<object, string>();

/** The outcome of a call whose handler returned an `isError` result without a mark of ours. */
export const TOOL_ERROR_OUTCOME = 'TOOL_ERROR';

/** Marks `result` (the object a handler returns, such as an `mcpContent` result) with the outcome the audit log records for it. */
export function withCallOutcome<T extends object>(result: T, code: string): T {
  outcomes.set(result, code);
  return result;
}

/** The outcome `withCallOutcome` marked `value` with, if any. */
export function callOutcomeOf(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? outcomes.get(value) : undefined;
}
