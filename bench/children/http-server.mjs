// A server for bench/server.mjs, in its own process so the load generator does not share its
// event loop: `ours` is `tool-registry`'s HTTP server over a SQLite file; `bare` is a plain
// node:http handler answering GET /v1/tools/{name} with the same registrations' cached JSON;
// `bare-sse` is the SSE fan-out's baseline: a plain node:http server that holds every
// GET /v1/changes as an event stream and, on a PUT /v1/tools/{name}, writes one change event
// in our feed's bytes (`id:`, `event: change`, `data:` JSON) to every stream, then answers.
// Sends { url } once listening; answers 'rss' with its resident set size.
import { createServer } from 'node:http';
import { openSqliteToolRegistry } from '../../dist/index.js';
import { createToolRegistryServer, listen } from '../../dist/server/index.js';

const [kind, file, count] = process.argv.slice(2);
const registry = await openSqliteToolRegistry({ filename: file });
let url;
if (kind === 'bare-sse') {
  await registry.close();
  url = await listenBare(fanOutServer());
} else if (kind === 'ours') {
  const server = createToolRegistryServer({ registries: registry });
  url = (await listen(server, { host: '127.0.0.1', port: 0 })).url;
} else {
  const cached = new Map();
  for (const registration of await registry.listAll({ includeDisabled: true })) cached.set(registration.spec.tool_name, JSON.stringify(registration));
  await registry.close();
  const http = createServer((req, res) => {
    const body = cached.get(decodeURIComponent(req.url.slice('/v1/tools/'.length)));
    if (body === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  });
  url = await listenBare(http);
}

async function listenBare(http) {
  http.keepAliveTimeout = 5_000;
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${http.address().port}`;
}

/** The SSE fan-out baseline: no store, no watch; the PUT's event goes straight to every open stream. */
function fanOutServer() {
  const streams = new Set();
  let revision = 0;
  return createServer((req, res) => {
    if (req.method === 'GET' && req.url.startsWith('/v1/changes')) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
      res.write(`retry: 1000\n: stream open at revision ${revision}\n\n`);
      streams.add(res);
      req.on('close', () => streams.delete(res));
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const spec = JSON.parse(body);
      revision++;
      const event = { revision, tool_name: spec.tool_name, action: 'updated', version: spec.version, at: new Date().toISOString() };
      const text = `id: ${revision}\nevent: change\ndata: ${JSON.stringify(event)}\n\n`;
      for (const stream of streams) stream.write(text);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ action: 'updated', revision }));
    });
  });
}

process.on('message', (message) => {
  if (message === 'rss') process.send({ rss: process.memoryUsage().rss });
  if (message === 'exit') process.exit(0);
});
process.send({ url, count: Number(count) });
