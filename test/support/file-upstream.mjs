// A tiny MCP server over stdio for the gateway's tests: its tools are read from the JSON file
// named by its first argument at every tools/list (an array of MCP tool definitions), so a
// test changes an upstream's definitions by rewriting the file (a "rug pull"). tools/call
// answers with the tool's name and arguments as text.
import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: file-upstream.mjs TOOLS.json');
const server = new Server({ name: 'file-upstream', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: JSON.parse(readFileSync(file, 'utf8')) }));
server.setRequestHandler(CallToolRequestSchema, (request) => ({
  content: [{ type: 'text', text: `${request.params.name} ${JSON.stringify(request.params.arguments ?? {})}` }],
}));
await server.connect(new StdioServerTransport());
