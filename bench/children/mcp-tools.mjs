// The 1,000 tools both MCP servers of bench/mcp.mjs serve: one zod shape per tool, so the
// SDK's McpServer and tool-registry serve the same schemas.
import { z } from 'zod';

export const COUNT = Number(process.env.MCP_BENCH_TOOLS ?? 1000);

/** Name, description and zod shape of tool `i`. */
export function toolShape(i) {
  return {
    name: `tool_${String(i).padStart(4, '0')}`,
    description: `Tool number ${i}: looks something up`,
    shape: { query: z.string().min(1), limit: z.number().int().min(1).max(100).optional(), lang: z.enum(['en', 'de', 'fr']).optional() },
  };
}

/** The trivial handler's answer. */
export const answer = (args) => ({ query: args.query, hits: 0 });
