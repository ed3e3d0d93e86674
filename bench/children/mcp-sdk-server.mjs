// The baseline of bench/mcp.mjs: the MCP SDK's own McpServer over stdio, serving the same tools.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { COUNT, answer, toolShape } from './mcp-tools.mjs';

const server = new McpServer({ name: 'sdk-baseline', version: '1.0.0' });
for (let i = 0; i < COUNT; i++) {
  const { name, description, shape } = toolShape(i);
  server.registerTool(name, { description, inputSchema: shape }, async (args) => {
    const data = answer(args);
    return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data };
  });
}
await server.connect(new StdioServerTransport());
process.stdin.on('end', () => process.exit(0));
