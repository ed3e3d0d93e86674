// The HTTP baseline of bench/mcp.mjs: the MCP SDK's own McpServer with the same tools behind
// the SDK's StreamableHTTPServerTransport on node:http, one server and transport per session as
// the SDK's own example serves them (its defaults: answers as SSE streams). Prints its URL
// (`listening on http://127.0.0.1:PORT/mcp`) and serves until it is killed.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { sdkMcpServer } from './mcp-tools.mjs';

const sessions = new Map();

async function body(req) {
  let text = '';
  req.setEncoding('utf8');
  for await (const chunk of req) text += chunk;
  return text === '' ? undefined : JSON.parse(text);
}

const http = createServer(async (req, res) => {
  try {
    const message = req.method === 'POST' ? await body(req) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (transport === undefined && req.method === 'POST' && isInitializeRequest(message)) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => sessions.set(sid, transport) });
      transport.onclose = () => sessions.delete(transport.sessionId);
      await sdkMcpServer().connect(transport);
    }
    if (transport === undefined) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No valid session' }, id: null }));
      return;
    }
    await transport.handleRequest(req, res, message);
  } catch (error) {
    if (!res.headersSent) res.writeHead(500).end(String(error));
  }
});
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
process.stdout.write(`listening on http://127.0.0.1:${http.address().port}/mcp\n`);
