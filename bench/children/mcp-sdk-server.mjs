// The baseline of bench/mcp.mjs: the MCP SDK's own McpServer over stdio, serving the same tools.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { sdkMcpServer } from './mcp-tools.mjs';

await sdkMcpServer().connect(new StdioServerTransport());
process.stdin.on('end', () => process.exit(0));
