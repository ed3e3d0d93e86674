// The extra handlers `tool-registry serve` mounts beside the routes: with --tools MODULE, the
// MCP endpoint at /mcp and /v1/namespaces/{ns}/mcp.
import type { Mount } from '../server/index.js';

/** The mounts for one `serve` run, from its parsed options. */
export async function serveMounts(options: Readonly<Record<string, unknown>>): Promise<Record<string, Mount>> {
  if (typeof options.tools !== 'string') return {};
  // Loaded only when asked for: the MCP SDK is not needed to serve the HTTP API.
  const [{ mcpMount }, { readToolsModule }] = await Promise.all([import('../mcp/index.js'), import('./mcp-run.js')]);
  const tools = await readToolsModule(options.tools);
  const number = (name: string): { [key: string]: number } => (typeof options[name] === 'number' ? { [name]: options[name] } : {});
  return {
    mcp: mcpMount(tools, {
      ...number('sessionIdleMs'),
      ...number('callTimeoutMs'),
      ...number('pageSize'),
      ...number('maxResultBytes'),
      onError: (error, namespace) => process.stderr.write(`tool-registry serve: MCP in namespace ${namespace} cannot follow the registry: ${(error as Error).message ?? String(error)} (retrying)\n`),
      onWarning: (message) => process.stderr.write(`tool-registry serve: ${message}\n`),
      audit: { onError: (error, rows) => process.stderr.write(`tool-registry serve: the audit log could not write ${rows} call record(s): ${(error as Error).message ?? String(error)}\n`) },
    }),
  };
}
