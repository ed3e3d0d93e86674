// A server for bench/server.mjs, in its own process so the load generator does not share its
// event loop: `ours` is `tool-registry`'s HTTP server over a SQLite file; `bare` is a plain
// node:http handler answering GET /v1/tools/{name} with the same registrations' cached JSON.
// Sends { url } once listening; answers 'rss' with its resident set size.
import { createServer } from 'node:http';
import { openSqliteToolRegistry } from '../../dist/index.js';
import { createToolRegistryServer, listen } from '../../dist/server/index.js';

const [kind, file, count] = process.argv.slice(2);
const registry = await openSqliteToolRegistry({ filename: file });
let url;
if (kind === 'ours') {
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
  http.keepAliveTimeout = 5_000;
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${http.address().port}`;
}
process.on('message', (message) => {
  if (message === 'rss') process.send({ rss: process.memoryUsage().rss });
  if (message === 'exit') process.exit(0);
});
process.send({ url, count: Number(count) });
