// Test helpers for the gateway (issue 37): register what upstreams list as `upstream add
// --approve all` would (each tool as `1.0.0+HASH`), and a free TCP port for an HTTP upstream.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { ToolRegistry } from '../../src/index.js';
import type { GatewayToolSet, UpstreamStatus } from '../../src/mcp/index.js';
import { until } from './waiting.js';
import { upstreamToolSpec } from '../../src/mcp/index.js';

/**
 * Registers at `semver` every tool a running gateway lists for its upstreams now (what
 * `upstream add --approve all` would have registered), then syncs: one process per upstream
 * instead of another one only to list it.
 */
export async function approveListed(registry: ToolRegistry, gateway: GatewayToolSet, semver = '1.0.0'): Promise<void> {
  // On a busy machine a child may take longer than the gateway's startup wait.
  await until(() => gateway.upstreams().every((status) => status.listed !== undefined), 'every upstream listed by the gateway', { timeoutMs: 60_000, pollMs: 50 });
  const approved = new Map<string, number>();
  for (const status of gateway.upstreams()) {
    const row = await registry.getUpstream(status.name);
    for (const definition of status.listed ?? []) await registry.register(upstreamToolSpec(row!, definition, semver));
    approved.set(status.name, status.listed?.length ?? 0);
  }
  await gateway.sync();
  // sync lists every upstream again, and a listing can fail once (a fresh-clone run saw `fetch
  // failed` from server-everything's HTTP server): the gateway lists it again after 1 s.
  const served = (status: UpstreamStatus): boolean => status.listed !== undefined && status.served.length >= (approved.get(status.name) ?? 0);
  await until(() => gateway.upstreams().every(served), 'every upstream listed again after the sync, its approved tools served', { timeoutMs: 60_000, pollMs: 50 });
}

/** A port free a moment ago (the upstream child listens on it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The live processes (zombies left out) whose command line holds `command` and whose environment holds `marker`. */
export function processesWith(command: string, marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/\) Z /.test(readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(command) && readFileSync(`/proc/${entry}/environ`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}
