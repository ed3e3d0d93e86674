// A tiny MCP server over Streamable HTTP in the test's own process (stateless: a server and a
// transport per request, as the SDK's stateless example does), whose tools are whatever
// `tools()` returns at each tools/list: a test changes an upstream's definitions without a child
// process. tools/call answers with the tool's name and arguments as text, or with whatever
// `call(name, args)` returns, sent as it is (not checked by the SDK's server: a test can send
// what a careless upstream would). `raw(method, params)` may answer a request itself (a tools/call,
// a tools/list), before the SDK's server sees it: the response's fields besides `jsonrpc` and
// `id`, written as they are on an SSE stream or as a JSON body (what the SDK's server cannot
// send: `result: null`, `error: 5`, ...). `startLegacySseUpstream` is a server of the older
// HTTP+SSE transport (2024-11-05), written by hand: it answers whatever `answer` returns.
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

/**
 * An answer `raw` writes itself: `fields` beside `jsonrpc` and `id`, on an SSE stream or as a
 * JSON body; on a stream, `progress` first sends a progress report of that message (under the
 * request's progress token) in the same write.
 */
export interface RawAnswer {
  readonly fields: Record<string, unknown>;
  readonly as: 'sse' | 'json';
  readonly progress?: string;
}

export async function startHttpUpstream(
  tools: () => readonly object[],
  call?: (name: string, args: Record<string, unknown>) => unknown,
  raw?: (method: string, params: Record<string, unknown>) => RawAnswer | undefined,
): Promise<HttpUpstream> {
  const http = createServer((request, response) => {
    if (raw === undefined || request.method !== 'POST') {
      serve(request, response);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; method?: string; params?: Record<string, unknown> };
      const answer = body.id !== undefined && body.method !== undefined ? raw(body.method, body.params ?? {}) : undefined;
      if (answer === undefined) {
        serve(request, response, body);
        return;
      }
      const message = JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer.fields });
      if (answer.as === 'json') response.writeHead(200, { 'content-type': 'application/json' }).end(message);
      else {
        const progressToken = (body.params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
        const report = answer.progress === undefined ? '' : `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, progress: 1, message: answer.progress } })}\n\n`;
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${report}event: message\ndata: ${message}\n\n`);
      }
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

/**
 * A server of the older HTTP+SSE transport in the test's process, by hand (the SDK's server
 * cannot send a broken answer): GET `url` opens a session's event stream, whose first event
 * names the session's POST endpoint; a POSTed request is accepted (202) and answered on the
 * stream with `answer(method, params)`'s fields beside `jsonrpc` and `id`. A POST to `url`
 * itself is refused (405), as a server of that transport refuses Streamable HTTP.
 */
export async function startLegacySseUpstream(answer: (method: string, params: Record<string, unknown>) => Record<string, unknown>): Promise<HttpUpstream> {
  const streams = new Map<string, ServerResponse>();
  let sessions = 0;
  const http = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/sse' && request.method === 'GET') {
      const session = String(++sessions);
      streams.set(session, response);
      response.on('close', () => streams.delete(session));
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).write(`event: endpoint\ndata: /messages?session=${session}\n\n`);
      return;
    }
    const stream = streams.get(url.searchParams.get('session') ?? '');
    if (url.pathname !== '/messages' || request.method !== 'POST' || stream === undefined) {
      response.writeHead(url.pathname === '/sse' ? 405 : 404).end();
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; method?: string; params?: Record<string, unknown> };
      response.writeHead(202).end('Accepted');
      if (body.id === undefined || body.method === undefined) return;
      stream.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer(body.method, body.params ?? {}) })}\n\n`);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sse`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const stream of streams.values()) stream.end();
        http.close(() => resolve());
      }),
  };
}
