// The 1,000 tools both MCP servers of bench/mcp.mjs serve: one zod shape per tool, so the
// SDK's McpServer and tool-registry serve the same schemas.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
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

/** The baseline: the SDK's own McpServer with the same tools (its transport is the caller's). */
export function sdkMcpServer() {
  const server = new McpServer({ name: 'sdk-baseline', version: '1.0.0' });
  for (let i = 0; i < COUNT; i++) {
    const { name, description, shape } = toolShape(i);
    server.registerTool(name, { description, inputSchema: shape }, async (args) => {
      const data = answer(args);
      return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
    });
  }
  return server;
}
