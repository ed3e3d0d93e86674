// A tiny MCP server over Streamable HTTP in the test's own process (stateless: a server and a
// transport per request, as the SDK's stateless example does), whose tools are whatever
// `tools()` returns at each tools/list: a test changes an upstream's definitions without a child
// process. tools/call answers with the tool's name and arguments as text, or with whatever
// `call(name, args)` returns, sent as it is (not checked by the SDK's server: a test can send
// what a careless upstream would).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface HttpUpstream {
  readonly url: string;
  close(): Promise<void>;
}

export async function startHttpUpstream(tools: () => readonly object[], call?: (name: string, args: Record<string, unknown>) => unknown): Promise<HttpUpstream> {
  const http = createServer((request, response) => {
    const server = new Server({ name: 'http-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools() as never }));
    if (call === undefined) {
      server.setRequestHandler(CallToolRequestSchema, (asked) => ({ content: [{ type: 'text', text: `${asked.params.name} ${JSON.stringify(asked.params.arguments ?? {})}` }] }));
    } else {
      // The server's own tools/call handler checks the result; the fallback sends it as it is.
      server.fallbackRequestHandler = async (asked) => {
        const params = asked.params as { name: string; arguments?: Record<string, unknown> };
        return call(params.name, params.arguments ?? {}) as never;
      };
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}
