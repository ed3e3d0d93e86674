// Namespaces closed as the least recently used (`sqliteNamespaces(dir, { maxOpen })`, `serve
// --max-open-namespaces`) against requests in flight and sessions just ended (issue 40): a
// namespace is never closed under a request that uses it, nor before an MCP session's call
// records are written. In process over a real socket, with one or two namespaces open at most.
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolSet, defineTool, openSqliteToolRegistry, publishTools } from '../../src/index.js';
import { mcpMount } from '../../src/mcp/index.js';
import { sqliteNamespaces } from '../../src/server/index.js';
import type { NamespaceSource, RequestLogEntry } from '../../src/server/index.js';
import { until } from '../support/waiting.js';
import { documentChecker, recorded, recordThisFile, spec, start } from './helpers.js';
import type { Reply, Running } from './helpers.js';

recordThisFile();

const folders: string[] = [];
const running: Running[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.close()));
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** `sqliteNamespaces` keeping one open, wrapped to see each open and to hold one back (a gate) before the server gets it. */
function oneOpen() {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-ns-edges-'));
  folders.push(folder);
  const inner = sqliteNamespaces(folder, { maxOpen: 1 });
  const opened: string[] = [];
  const gates = new Map<string, Promise<void>>();
  const source: NamespaceSource = {
    extensible: true,
    maxOpen: 1,
    hold: (ns) => (inner.hold as (ns: string) => () => void)(ns),
    list: () => inner.list(),
    create: (ns) => inner.create(ns),
    close: () => inner.close(),
    // Seen once the source has it open; then it waits for the namespace's gate, if any.
    open: async (ns) => {
      const registry = await inner.open(ns);
      opened.push(ns);
      await gates.get(ns);
      return registry;
    },
  };
  return { source, opened, gates };
}

/**
 * A server over `oneOpen()`, and `stall(ns, request)`: starts the request and resolves once it
 * has namespace `ns` open and waits at its gate; `answer` is its reply once `release()` lets it go.
 */
async function oneOpenServer() {
  const { source, opened, gates } = oneOpen();
  const served = await start({ registries: source });
  running.push(served);
  const stall = async (ns: string, request: () => Promise<Reply>) => {
    let release: (() => void) | undefined;
    gates.set(ns, new Promise((resolve) => (release = resolve)));
    const before = opened.length;
    const answer = request();
    await until(() => opened.slice(before).includes(ns), `the request to open namespace ${ns}`);
    return {
      answer,
      release: () => {
        gates.delete(ns);
        release?.();
      },
    };
  };
  return { served, opened, stall };
}

describe('a namespace closed as the least recently used, under --max-open-namespaces 1', () => {
  it('a PUT whose body is still coming is not failed by a request for another namespace meanwhile: both are served', async () => {
    const { source, opened } = oneOpen();
    const served = await start({ registries: source });
    running.push(served);
    for (const ns of ['a', 'b']) expect((await served.call('PUT', `/v1/namespaces/${ns}`)).status).toBe(201);
    const body = JSON.stringify(spec('slow'));
    // A Content-Length body sent in two parts (fetch would send a stream chunked, which the body limit reads whole first).
    const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (reply += chunk));
    const closed = once(socket, 'close');
    const before = opened.length;
    socket.write(`PUT /v1/namespaces/a/tools/slow HTTP/1.1\r\nHost: ${new URL(served.url).host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`);
    // The PUT found its namespace and waits for the rest of its body.
    await until(() => opened.slice(before).includes('a'), 'the PUT to open namespace a');
    // Another namespace, opened meanwhile: a is the least recently used.
    expect((await served.call('GET', '/v1/namespaces/b/tools')).status).toBe(200);
    socket.write(body.slice(10));
    await closed;
    const [head, text] = reply.split('\r\n\r\n') as [string, string];
    const answer = { status: Number(head.split(' ')[1]), code: (JSON.parse(text) as { code?: string }).code };
    // Was 503 REGISTRY_CLOSED: the registry the PUT had found was closed under it.
    expect(answer).toEqual({ status: 201, code: undefined });
    expect((await served.call('GET', '/v1/namespaces/a/tools/slow')).status).toBe(200);
  });

  it("/readyz reading the default namespace is not failed by a request for another namespace meanwhile (a probe's 503 takes the server out)", async () => {
    const { served, stall } = await oneOpenServer();
    expect((await served.call('PUT', '/v1/namespaces/b')).status).toBe(201);
    const ready = await stall('default', () => served.call('GET', '/readyz'));
    // default is in use: a request for b waits its turn (503 with Retry-After, as documented), it does not close default.
    const other = await served.call('GET', '/v1/namespaces/b/tools');
    ready.release();
    expect([other.status, other.headers.get('retry-after'), (other.body as { code?: string }).code]).toEqual([503, '5', 'CAPACITY_EXCEEDED']);
    // The limit, never a count of namespaces (lookups under way made it read 89 open beside a limit of 64).
    expect((other.body as { detail?: string }).detail).toBe("the server's limit of open namespaces (--max-open-namespaces, 1) is reached, each in use or opening; retry later");
    // Was 503 REGISTRY_CLOSED.
    expect((await ready.answer).status).toBe(200);
    expect((await served.call('GET', '/v1/namespaces/b/tools')).status).toBe(200);
  });

  it('with every open namespace in use, PUT /v1/namespaces/{ns} is 503 CAPACITY_EXCEEDED with Retry-After, as /openapi.json lists it', async () => {
    const { served, stall } = await oneOpenServer();
    expect((await served.call('PUT', '/v1/namespaces/b')).status).toBe(201);
    const reading = await stall('b', () => served.call('GET', '/v1/namespaces/b/tools'));
    const document = served.server.openapi() as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> };
    try {
      const refused = await served.call('PUT', '/v1/namespaces/c');
      expect([refused.status, refused.headers.get('retry-after'), (refused.body as { code?: string }).code]).toEqual([503, '5', 'CAPACITY_EXCEEDED']);
      // The document did not list the code (its 503s said SHUTTING_DOWN, STORAGE_UNAVAILABLE; REGISTRY_CLOSED, ...).
      expect(document.paths['/v1/namespaces/{ns}']?.put?.responses['503']?.description).toContain('CAPACITY_EXCEEDED');
    } finally {
      reading.release();
    }
    expect((await reading.answer).status).toBe(200);
  });

  it('/readyz is ready while a stream on another namespace holds the only open one (was 503: one stream took the server out of rotation)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-ns-edges-'));
    folders.push(folder);
    const served = await start({ registries: sqliteNamespaces(folder, { maxOpen: 1 }) });
    running.push(served);
    expect((await served.call('PUT', '/v1/namespaces/b')).status).toBe(201);
    // The feed of b, on a socket of its own (cut at the end: a fetch's aborted stream lingered until the server cut it).
    const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
    let head = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (head += chunk));
    socket.write(`GET /v1/namespaces/b/changes HTTP/1.1\r\nHost: ${new URL(served.url).host}\r\nAccept: text/event-stream\r\n\r\n`);
    try {
      await until(() => head.includes('\r\n\r\n'), 'the feed of b to start');
      expect(head.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
      // Ready, without default's revision (not read: b's store was); default's own requests still wait their turn.
      const ready = await served.call('GET', '/readyz');
      expect([ready.status, ready.body]).toEqual([200, { status: 'ready' }]);
      const waiting = await served.call('GET', '/v1/tools');
      expect([waiting.status, (waiting.body as { code?: string }).code]).toEqual([503, 'CAPACITY_EXCEEDED']);
    } finally {
      socket.destroy();
    }
    // The stream gone, default is read again.
    await until(async () => (await served.call('GET', '/readyz')).text.includes('revision'), 'default read again by /readyz');
  });
});

const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ns-edges', version: '1' } } });

/** A server with the MCP endpoint (no tools) over SQLite namespaces a and b, one open at most. */
async function mcpServerOneOpen(): Promise<Running> {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-ns-edges-'));
  folders.push(folder);
  const served = await start({ registries: sqliteNamespaces(folder, { maxOpen: 1 }), mounts: { mcp: mcpMount(new ToolSet([]), { upstreams: false, audit: false }) } });
  running.push(served);
  for (const ns of ['a', 'b']) expect((await served.call('PUT', `/v1/namespaces/${ns}`)).status).toBe(201);
  return served;
}

describe("a body still coming to a namespace's MCP endpoint", () => {
  it('does not hold the namespace open: with one open at most, another namespace is served meanwhile (it was 503)', async () => {
    const served = await mcpServerOneOpen();
    const body = INITIALIZE;
    const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (reply += chunk));
    const closed = once(socket, 'close');
    socket.write(
      `POST /v1/namespaces/a/mcp HTTP/1.1\r\nHost: ${new URL(served.url).host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`,
    );
    try {
      await until(() => served.server.inFlight === 1, 'the POST to be in flight');
      // One round trip more: what the POST does before it waits for its body is done by then.
      expect((await served.call('GET', '/healthz')).status).toBe(200);
      expect((await served.call('GET', '/v1/namespaces/b/tools')).status).toBe(200);
      socket.write(body.slice(10));
      await closed;
    } finally {
      socket.destroy();
    }
    expect(reply.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  });
});

describe('MCP sessions opened at once in a namespace reopened after it was closed as the least recently used', () => {
  it('all live (one request retired the endpoint another had just made, ending its new session: 404)', async () => {
    const served = await mcpServerOneOpen();
    const initialize = JSON.parse(INITIALIZE) as object;
    const headers = { accept: 'application/json, text/event-stream' };
    // a's endpoint starts, then a is closed (b opened): the endpoint is for a registry that is gone.
    const first = await served.call('POST', '/v1/namespaces/a/mcp', { body: initialize, headers });
    expect(first.status).toBe(200);
    const session = { 'mcp-session-id': first.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-11-25' };
    const accepted = await served.call('POST', '/v1/namespaces/a/mcp', { body: { jsonrpc: '2.0', method: 'notifications/initialized' }, headers: { ...headers, ...session } });
    expect([accepted.status, accepted.text]).toEqual([202, '']);
    const ended = await served.call('DELETE', '/v1/namespaces/a/mcp', { headers: session });
    expect(ended.status).toBe(200);
    expect((await served.call('GET', '/v1/namespaces/b/tools')).status).toBe(200);
    const opened = await Promise.all(Array.from({ length: 4 }, () => served.call('POST', '/v1/namespaces/a/mcp', { body: initialize, headers })));
    const lists = await Promise.all(
      opened.map(async (reply) => {
        expect(reply.status).toBe(200);
        const session = reply.headers.get('mcp-session-id') as string;
        return (await served.call('POST', '/v1/namespaces/a/mcp', { body: { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } })).status;
      }),
    );
    expect(lists).toEqual([200, 200, 200, 200]);
    // Every answer as /openapi.json declares it: DELETE's 200 and a notification's 202 have no body (they were declared with content).
    expect(recorded.some((r) => r.method === 'delete' && r.status === 200 && r.contentType === '')).toBe(true);
    expect(documentChecker(served.server.openapi()).check(recorded)).toEqual([]);
  });
});

describe('an MCP session ended in a namespace closed as the least recently used right after', () => {
  it("its call records are written before the namespace closes (they were dropped as REGISTRY_CLOSED)", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-ns-edges-'));
    folders.push(folder);
    const echo = defineTool({ name: 'echo', version: '1', input_schema: { type: 'object' }, handler: () => ({ ok: true }) });
    for (const ns of ['a', 'b', 'c']) {
      const registry = await openSqliteToolRegistry({ filename: join(folder, `${ns}.db`) });
      await publishTools(registry, [echo]);
      await registry.close();
    }
    // Records wait a minute unless something flushes them: only the session's end does.
    const mount = mcpMount(new ToolSet([echo]), { upstreams: false, audit: { flushMs: 60_000 } });
    const served = await start({ registries: sqliteNamespaces(folder, { maxOpen: 2 }), mounts: { mcp: mount } });
    running.push(served);
    const transport = new StreamableHTTPClientTransport(new URL(`${served.url}/v1/namespaces/a/mcp`));
    const client = new Client({ name: 'ns-edges', version: '1' });
    await client.connect(transport);
    for (let i = 0; i < 3; i++) expect((await client.callTool({ name: 'echo', arguments: {} })).isError).toBeFalsy();
    await transport.terminateSession();
    await client.close();
    // Two other namespaces opened: a, the least recently used, is closed.
    for (const ns of ['b', 'c']) expect((await served.call('GET', `/v1/namespaces/${ns}/tools`)).status).toBe(200);
    const calls = await served.call('GET', '/v1/namespaces/a/calls');
    expect([(calls.body as { calls: unknown[] }).calls.length, mount.auditStats?.().dropped]).toEqual([3, 0]);
  });
});

describe('PUT /v1/namespaces/{ns} through two servers on one --data-dir', () => {
  it('of PUTs of one new namespace at once, only one is 201; one refused for capacity makes nothing', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-ns-edges-'));
    folders.push(folder);
    const [one, two] = [await start({ registries: sqliteNamespaces(folder) }), await start({ registries: sqliteNamespaces(folder) })];
    running.push(one, two);
    for (const ns of ['n1', 'n2', 'n3']) {
      const statuses = await Promise.all([one, two, one, two].map(async (server) => (await server.call('PUT', `/v1/namespaces/${ns}`)).status));
      // Was 201 from each server: each found no file, and each one's open made it.
      expect([ns, statuses.sort()]).toEqual([ns, [200, 200, 200, 201]]);
    }
    // Every open namespace in use (one at most, held by a read waiting at its gate): the PUT is 503 and no file is made.
    const { served, stall } = await oneOpenServer();
    const reading = await stall('default', () => served.call('GET', '/v1/tools'));
    const refused = await served.call('PUT', '/v1/namespaces/later');
    reading.release();
    expect(refused.status).toBe(503);
    expect((await reading.answer).status).toBe(200);
    expect((await served.call('GET', '/v1/namespaces/later/tools')).status).toBe(404);
    expect((await served.call('PUT', '/v1/namespaces/later')).status).toBe(201);
  });
});

describe('/metrics audit counters over namespaces closed and opened again', () => {
  it('count each written call record once (an endpoint retired twice, stale and closed, added its rows twice)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-ns-edges-'));
    folders.push(folder);
    const echo = defineTool({ name: 'echo', version: '1', input_schema: { type: 'object' }, handler: () => ({ ok: true }) });
    for (const ns of ['a', 'b']) {
      const registry = await openSqliteToolRegistry({ filename: join(folder, `${ns}.db`) });
      await publishTools(registry, [echo]);
      await registry.close();
    }
    const mount = mcpMount(new ToolSet([echo]), { upstreams: false });
    const served = await start({ registries: sqliteNamespaces(folder, { maxOpen: 1 }), mounts: { mcp: mount } });
    running.push(served);
    let calls = 0;
    for (let round = 0; round < 3; round++) {
      const transport = new StreamableHTTPClientTransport(new URL(`${served.url}/v1/namespaces/a/mcp`));
      const client = new Client({ name: 'ns-edges', version: '1' });
      await client.connect(transport);
      for (let i = 0; i < 2; i++, calls++) await client.callTool({ name: 'echo', arguments: {} });
      await transport.terminateSession();
      await client.close();
      // b opened: a is closed, and its endpoint is stale for the next sessions, opened at once.
      expect((await served.call('GET', '/v1/namespaces/b/tools')).status).toBe(200);
      const headers = { accept: 'application/json, text/event-stream' };
      const opened = await Promise.all(Array.from({ length: 3 }, () => served.call('POST', '/v1/namespaces/a/mcp', { body: JSON.parse(INITIALIZE) as object, headers })));
      for (const reply of opened) {
        const session = { 'mcp-session-id': reply.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-11-25' };
        expect((await served.call('DELETE', '/v1/namespaces/a/mcp', { headers: session })).status).toBe(200);
      }
    }
    const rows = (await served.call('GET', '/v1/namespaces/a/calls')).body as { calls: unknown[] };
    expect(rows.calls.length).toBe(calls);
    await until(() => mount.auditStats?.().buffered === 0, 'the records written');
    expect(mount.auditStats?.().written).toBe(calls);
  });
});

describe('a client that goes away in the middle of its body', () => {
  it('is a 400 in the log, on a route and on /mcp of a namespace, never a 500 with an error id', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-ns-edges-'));
    folders.push(folder);
    const logged: RequestLogEntry[] = [];
    const served = await start({ registries: sqliteNamespaces(folder), mounts: { mcp: mcpMount(new ToolSet([]), { upstreams: false, audit: false }) }, log: (entry) => logged.push(entry) });
    running.push(served);
    expect((await served.call('PUT', '/v1/namespaces/a')).status).toBe(201);
    for (const [method, path] of [['PUT', '/v1/namespaces/a/tools/gone'], ['POST', '/v1/namespaces/a/mcp']] as const) {
      const before = logged.length;
      const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${new URL(served.url).host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"a"`);
      await until(() => served.server.inFlight === 1, `the ${method} to be in flight`);
      socket.destroy();
      await until(() => logged.length > before, `the ${method}'s log line`);
      // Was a 500 on both (the route's body read failed; /mcp's since its body is read before the namespace is held).
      expect([path, logged.at(-1)?.status, logged.at(-1)?.error_id]).toEqual([path, 400, undefined]);
    }
  });
});


describe("a namespace's SQLite file that cannot be opened or made", () => {
  it('is 503 STORAGE_UNAVAILABLE naming the file (a folder in its place), and a data dir that is a file refuses a new namespace the same way; both were 500s', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-ns-edges-'));
    folders.push(folder);
    mkdirSync(join(folder, 'broken.db'));
    const served = await start({ registries: sqliteNamespaces(folder) });
    running.push(served);
    for (const [method, path] of [['GET', '/v1/namespaces/broken/tools'], ['PUT', '/v1/namespaces/broken']] as const) {
      const reply = await served.call(method, path);
      const body = reply.body as { code: string; context: Record<string, unknown> };
      expect([method, reply.status, reply.headers.get('retry-after'), body.code]).toEqual([method, 503, '1', 'STORAGE_UNAVAILABLE']);
      expect(body.context).toMatchObject({ namespace: 'broken', file: join(folder, 'broken.db') });
    }
    expect((await served.call('GET', '/v1/tools')).status).toBe(200);
    const file = join(folder, 'not-a-folder');
    writeFileSync(file, '');
    const onFile = await start({ registries: sqliteNamespaces(file) });
    running.push(onFile);
    const reply = await onFile.call('PUT', '/v1/namespaces/team_a');
    expect([reply.status, (reply.body as { code: string }).code]).toEqual([503, 'STORAGE_UNAVAILABLE']);
    expect((reply.body as { detail: string }).detail).toContain(`cannot create ${join(file, 'team_a.db')}`);
    expect(documentChecker(served.server.openapi()).check(recorded)).toEqual([]);
  });
});
