// The bound on long-lived things (MCP sessions, event streams) and one holder's share of it: one
// rule for the server's leases (src/server/limits.ts) and the MCP handler used alone
// (src/mcp/http-handler.ts), which may not import each other; imports nothing.

/** The share of a bound one holder (a token, a principal) may hold, rounded up: half. */
export const HOLDER_SHARE = 0.5;

/** The most one holder may hold of `bound`: half of it, rounded up, at least 1 (Infinity of no bound). */
export function holderShare(bound: number): number {
  return Math.max(1, Math.ceil(bound * HOLDER_SHARE));
}

/**
 * Which bound one more would pass, `total` being held of `bound` and `mine` of them by its
 * holder (undefined: no holder to share by, as a server without tokens): `'bound'`, `'share'`
 * (the holder's, `holderShare(bound)`), or undefined when it may be admitted.
 */
export function leaseRefusal(bound: number, total: number, mine: number | undefined): 'bound' | 'share' | undefined {
  if (total >= bound) return 'bound';
  if (mine !== undefined && mine >= holderShare(bound)) return 'share';
  return undefined;
}
