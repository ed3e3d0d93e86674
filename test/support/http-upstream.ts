// A tiny MCP server over Streamable HTTP in the test's own process (stateless: a server and a
// transport per request, as the SDK's stateless example does), whose tools are whatever
// `tools()` returns at each tools/list: a test changes an upstream's definitions without a child
// process. tools/call answers with the tool's name and arguments as text, or with whatever
// `call(name, args)` returns, sent as it is (not checked by the SDK's server: a test can send
// what a careless upstream would). `raw(name, args)` may answer a tools/call itself, before the
// SDK's server sees it: the response's fields besides `jsonrpc` and `id`, written as they are
// on an SSE stream or as a JSON body (what the SDK's server cannot send: `result: null`, ...).
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface HttpUpstream {
  readonly url: string;
  close(): Promise<void>;
}

/** A tools/call answer `raw` writes itself: `fields` beside `jsonrpc` and `id`, on an SSE stream or as a JSON body. */
export interface RawAnswer {
  readonly fields: Record<string, unknown>;
  readonly as: 'sse' | 'json';
}

export async function startHttpUpstream(
  tools: () => readonly object[],
  call?: (name: string, args: Record<string, unknown>) => unknown,
  raw?: (name: string, args: Record<string, unknown>) => RawAnswer | undefined,
): Promise<HttpUpstream> {
  const http = createServer((request, response) => {
    if (raw === undefined || request.method !== 'POST') {
      serve(request, response);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; method?: string; params?: { name: string; arguments?: Record<string, unknown> } };
      const answer = body.method === 'tools/call' && body.params !== undefined ? raw(body.params.name, body.params.arguments ?? {}) : undefined;
      if (answer === undefined) {
        serve(request, response, body);
        return;
      }
      const message = JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer.fields });
      if (answer.as === 'json') response.writeHead(200, { 'content-type': 'application/json' }).end(message);
      else response.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${message}\n\n`);
    });
  });
  const serve = (request: IncomingMessage, response: ServerResponse, parsedBody?: unknown): void => {
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
      .then(() => transport.handleRequest(request, response, parsedBody))
      .catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
  };
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}
