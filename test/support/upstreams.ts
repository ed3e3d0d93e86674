// Test helpers for the gateway (issue 37): register an upstream as `upstream add --approve all`
// would (its row, then each listed tool as `1.0.0+HASH`), and a free TCP port for an HTTP upstream.
import { createServer } from 'node:net';
import type { ToolRegistry, UpstreamInput } from '../../src/index.js';
import { connectUpstream } from '../../src/mcp/gateway/connect.js';
import { upstreamToolSpec } from '../../src/mcp/gateway/upstream-definition.js';
import type { UpstreamToolDefinition } from '../../src/mcp/gateway/upstream-definition.js';

/** Stores the row and registers every tool the upstream lists now at `semver` (the gateway never registers by itself). */
export async function addUpstream(registry: ToolRegistry, input: UpstreamInput, semver = '1.0.0'): Promise<string[]> {
  const row = await registry.putUpstream(input);
  const connection = await connectUpstream(row, { capabilities: { sampling: {}, elicitation: {} } });
  try {
    const { tools } = await connection.client.listTools();
    for (const tool of tools) await registry.register(upstreamToolSpec(row, tool as unknown as UpstreamToolDefinition, semver));
    return tools.map((tool) => row.prefix + tool.name);
  } finally {
    await connection.close();
  }
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
