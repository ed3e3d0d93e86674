// The extra handlers `tool-registry serve` mounts beside the routes (the MCP endpoint at /mcp
// and /v1/namespaces/{ns}/mcp goes here, with the options it adds to the serve command).
import type { Mount } from '../index.js';

/** The mounts for one `serve` run, from its parsed options. */
export async function serveMounts(_options: Readonly<Record<string, unknown>>): Promise<Record<string, Mount>> {
  return {};
}
