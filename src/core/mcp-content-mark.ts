// Which objects mcpContent() made: marked here so the runtime (which makes them) and the
// exports (which pass them through) share one mark without importing each other's code.
const marked = new WeakSet<object>();

/** Marks a checked, frozen MCP result made by `mcpContent`. */
export function markMcpContent(value: object): void {
  marked.add(value);
}

/** Whether `value` was made by `mcpContent` (a handler's rich MCP result). */
export function isMarkedMcpContent(value: unknown): boolean {
  return typeof value === 'object' && value !== null && marked.has(value);
}
