// The gateway's governance for the HTTP server (`createToolRegistryServer({ upstreams })`):
// the server's upstream routes call it to list an upstream's tools and to approve or reject.
// It connects and lists per request (the pending view is live) unless `definitions` answers
// (`serve` passes its MCP mount's: the serving gateway's listing); the upstream list's counts
// may come from a listing a few seconds old, so a console page does not start a child process
// per upstream on every load.
import type { ToolRegistry, Upstream } from '../../index.js';
import type { UpstreamGovernance } from '../../server/index.js';
import type { ConnectUpstreamOptions } from './connect.js';
import { approveUpstreamTools, fetchUpstreamDefinitions, rejectUpstreamTool, upstreamStates } from './sync.js';
import type { UpstreamToolDefinition } from './upstream-definition.js';

export interface UpstreamGovernanceOptions extends Pick<ConnectUpstreamOptions, 'env'> {
  /** Connecting, then listing, each give up after this many ms. Default 30,000 (a first `npx -y` downloads the server). */
  readonly timeoutMs?: number;
  /** How long a listing answers the upstream list's counts (not the pending view, approve or reject). Default 10,000 ms. */
  readonly listTtlMs?: number;
  /**
   * The definitions a live connection already has (a serving gateway's), or undefined to
   * connect and list. Used for every call when it answers.
   */
  readonly definitions?: (registry: ToolRegistry, upstream: Upstream) => Promise<readonly UpstreamToolDefinition[] | undefined>;
}

/** The server's `UpstreamGovernance` over `fetchUpstreamDefinitions` and the rules of sync.ts. */
export function upstreamGovernance(options: UpstreamGovernanceOptions = {}): UpstreamGovernance {
  const ttl = options.listTtlMs ?? 10_000;
  const connect: ConnectUpstreamOptions = { ...(options.env === undefined ? {} : { env: options.env }), timeoutMs: options.timeoutMs ?? 30_000 };
  // Per registry (a namespace), per upstream: the listing of one row version, and when it was made.
  const cache = new WeakMap<ToolRegistry, Map<string, { readonly updatedAt: string; readonly at: number; readonly definitions: Promise<readonly UpstreamToolDefinition[]>; settled: boolean }>>();

  const definitions = async (registry: ToolRegistry, upstream: Upstream, fresh: boolean): Promise<readonly UpstreamToolDefinition[]> => {
    const live = await options.definitions?.(registry, upstream);
    if (live !== undefined) return live;
    const byName = cache.get(registry) ?? new Map();
    cache.set(registry, byName);
    const cached = byName.get(upstream.name);
    if (cached !== undefined && cached.updatedAt === upstream.updated_at) {
      // A listing still under way answers every request that comes meanwhile, fresh or not: a
      // burst of requests opens one connection (a stdio upstream: one child), not one each.
      if (!cached.settled) return cached.definitions;
      if (!fresh && Date.now() - cached.at < ttl) return cached.definitions;
    }
    const listing = fetchUpstreamDefinitions(upstream, connect);
    const entry = { updatedAt: upstream.updated_at, at: Date.now(), definitions: listing, settled: false };
    byName.set(upstream.name, entry);
    listing.then(
      () => {
        entry.settled = true;
      },
      () => {
        entry.settled = true;
        // A failed listing is not kept: the next request tries again.
        if (byName.get(upstream.name) === entry) byName.delete(upstream.name);
      },
    );
    return listing;
  };

  return {
    states: async (registry, upstream, { fresh }) => upstreamStates(registry, upstream, await definitions(registry, upstream, fresh)),
    approve: async (registry, upstream, approve) => approveUpstreamTools(registry, upstream, await definitions(registry, upstream, true), approve),
    reject: async (registry, upstream, tool) => rejectUpstreamTool(registry, upstream, await definitions(registry, upstream, true), tool),
  };
}
