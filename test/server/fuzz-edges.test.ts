// Cases a hostile-input sweep of every HTTP edge found (operations of /openapi.json × path,
// query, header, body and method variants, and JSON-RPC on /mcp): each answer was a 500 in the
// log or a status the document does not declare. In process over a real socket.
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, ToolSet } from '../../src/index.js';
import { mcpMount } from '../../src/mcp/index.js';
import type { RequestLogEntry } from '../../src/server/index.js';
import { until } from '../support/waiting.js';
import { start } from './helpers.js';
import type { Running } from './helpers.js';

const running: Running[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
});

describe('a client that goes away in the middle of a chunked body', () => {
  it('is a 400 in the log on a route and on /mcp, never a 500 with an error id', async () => {
    const logged: RequestLogEntry[] = [];
    const served = await start({ registries: new InMemoryToolRegistry(), mounts: { mcp: mcpMount(new ToolSet([]), { upstreams: false, audit: false }) }, log: (entry) => logged.push(entry) });
    running.push(served);
    const { host, port } = new URL(served.url);
    for (const [method, path] of [['PUT', '/v1/tools/gone'], ['POST', '/v1/check'], ['POST', '/mcp']] as const) {
      const before = logged.length;
      const socket = connect(Number(port), '127.0.0.1');
      // Chunked (no Content-Length): the body limit counts it as it comes, reading it itself.
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n`);
      await until(() => served.server.inFlight === 1, `the ${method} ${path} to be in flight`);
      socket.destroy();
      await until(() => logged.length > before, `the ${method} ${path}'s log line`);
      // Was a 500 with an error id and the stack of Node's "aborted" on each.
      expect([path, logged.at(-1)?.status, logged.at(-1)?.error_id]).toEqual([path, 400, undefined]);
    }
  });
});

/** Writes `text` on a new connection and reads until the server closes it. */
function exchange(url: string, text: string): Promise<string> {
  const { host, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text.replaceAll('HOST', host)));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('requests node:http answers itself', () => {
  it('an Expect other than 100-continue is a 400 naming the header (was a bare 417 no route declares), a CONNECT a 400 (was a dropped socket)', async () => {
    const served = await start({ registries: new InMemoryToolRegistry() });
    running.push(served);
    const expectation = await exchange(served.url, 'GET /v1/tools HTTP/1.1\r\nHost: HOST\r\nExpect: a-pony\r\nConnection: close\r\n\r\n');
    expect(expectation.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(expectation.slice(expectation.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'BAD_REQUEST', context: { header: 'expect' }, detail: expect.stringContaining('"a-pony"') });
    const tunnel = await exchange(served.url, 'CONNECT HOST HTTP/1.1\r\nHost: HOST\r\n\r\n');
    expect(tunnel.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(tunnel.slice(tunnel.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'BAD_REQUEST', context: { method: 'CONNECT' } });
    // 100-continue is still Node's: the body comes and the route answers.
    const continued = await exchange(served.url, 'POST /v1/check HTTP/1.1\r\nHost: HOST\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]');
    expect(continued).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK/);
  });
});

describe('an answer given before the body is all in', () => {
  it('reaches a client still sending (a 404 and a query 400 for a 300 KB body, four times each), and says Connection: close', async () => {
    const served = await start({ registries: new InMemoryToolRegistry() });
    running.push(served);
    const body = JSON.stringify({ description: 'x'.repeat(300_000) });
    for (const [path, status] of [['/v1/nope', 404], ['/v1/check?nope=1', 400]] as const) {
      const answers: (number | string | null)[][] = [];
      for (let i = 0; i < 4; i++) {
        // Kept alive, the unread rest stalled the connection: about one in two was a reset or EPIPE.
        const reply = await served.call('POST', path, { raw: body, headers: { 'content-type': 'application/json' } }).catch((error: Error) => String((error.cause as Error | undefined)?.message ?? error));
        answers.push(typeof reply === 'string' ? [reply] : [reply.status, reply.headers.get('connection')]);
      }
      expect(answers).toEqual(Array(4).fill([status, 'close']));
    }
  });
});
