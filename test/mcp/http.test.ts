// MCP over Streamable HTTP, driven by the SDK's own Client: the handler (dist/mcp) mounted on a
// bare node:http server in a child process (test/fixtures/mcp-http-server.mjs), one server for
// the whole file; tokens map to principals and persona policies as the server's tokens do.
import { fork } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCliAsync } from '../cli/helpers.js';
import { until } from '../support/waiting.js';
import { listAll, protocolErrorOf, textOf, watch } from './helpers.js';
import type { Watched } from './helpers.js';

const folder = mkdtempSync(join(tmpdir(), 'tool-registry-mcp-http-'));
const db = join(folder, 'tools.db');
const TOKENS = {
  admin: { principal: 'admin' },
  reader: { principal: 'reader', policy: { persona: 'reader', allowed_permissions: ['READ_FS'], allowed_tools: ['echo', 'read_notes'] } },
  crawler: { principal: 'crawler', policy: { persona: 'crawler', allowed_permissions: ['NET_HTTP'], allowed_tools: ['search', 'boom'] } },
};
// Short, so that sessions left without DELETE end within the test; long enough for a loaded machine.
const IDLE_MS = 3_000;
let server: ChildProcess;
let url: URL;

async function stats(): Promise<{ sessions: number; heapUsed: number }> {
  server.send('stats');
  const [answer] = (await once(server, 'message')) as [{ sessions: number; heapUsed: number }];
  return answer;
}

function transportFor(token: keyof typeof TOKENS | string, sessionId?: string): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } }, ...(sessionId === undefined ? {} : { sessionId }) });
}

async function connect(token: keyof typeof TOKENS): Promise<Watched & { transport: StreamableHTTPClientTransport }> {
  const transport = transportFor(token);
  const client = new Client({ name: `test-${token}`, version: '1.0.0' });
  const watched = watch(client);
  await client.connect(transport);
  return { ...watched, transport };
}

beforeAll(async () => {
  server = fork(join(ROOT, 'test', 'fixtures', 'mcp-http-server.mjs'), [db, JSON.stringify(TOKENS), String(IDLE_MS), '300', '4'], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const [line] = (await once(server.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  url = new URL(`http://127.0.0.1:${(JSON.parse(line.toString()) as { port: number }).port}/mcp`);
}, 60_000);

afterAll(async () => {
  server?.disconnect();
  if (server !== undefined && server.exitCode === null) await once(server, 'exit');
  rmSync(folder, { recursive: true, force: true });
});

describe('MCP over Streamable HTTP', () => {
  it('list (in pages) -> call -> result; invalid arguments, a throwing and a hanging handler, an unknown tool', async () => {
    const { client, transport } = await connect('admin');
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: true } });
    const { tools, pages } = await listAll(client);
    expect(tools.map((tool) => tool.name)).toEqual(['boom', 'echo', 'hang', 'listing', 'read_notes', 'search']);
    expect(pages).toEqual([4, 2]);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toEqual({ content: [{ type: 'text', text: '{"text":"hi"}' }], structuredContent: { text: 'hi' } });
    expect(textOf(await client.callTool({ name: 'echo', arguments: {} }))).toMatch(/^INVALID_ARGUMENTS: /);
    expect(await client.callTool({ name: 'boom', arguments: {} })).toEqual({ content: [{ type: 'text', text: "TOOL_FAILED: Tool 'boom' failed: kaboom" }], isError: true });
    expect(textOf(await client.callTool({ name: 'hang', arguments: {} }))).toMatch(/^TIMEOUT: /);
    expect(await protocolErrorOf(client.callTool({ name: 'nope', arguments: {} }))).toBe(-32602);
    await transport.terminateSession();
    await client.close();
  });

  it('two personas never list or call each other\'s tools, nor use each other\'s session', async () => {
    const reader = await connect('reader');
    const crawler = await connect('crawler');
    expect((await listAll(reader.client)).tools.map((tool) => tool.name)).toEqual(['echo', 'read_notes']);
    expect((await listAll(crawler.client)).tools.map((tool) => tool.name)).toEqual(['boom', 'search']);
    for (const name of ['search', 'boom']) expect(await protocolErrorOf(reader.client.callTool({ name, arguments: {} }))).toBe(-32602);
    for (const name of ['echo', 'read_notes']) expect(await protocolErrorOf(crawler.client.callTool({ name, arguments: { text: 'x' } }))).toBe(-32602);
    // The crawler's token with the reader's session id: as if there were no such session.
    const stolen = await fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer crawler', 'mcp-session-id': reader.transport.sessionId as string, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(stolen.status).toBe(404);
    for (const one of [reader, crawler]) {
      await one.transport.terminateSession();
      await one.client.close();
    }
  });

  it('refuses a foreign Origin (403) and serves an allowed one', async () => {
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'browser', version: '1' } } };
    const post = (origin: string) =>
      fetch(url, { method: 'POST', headers: { authorization: 'Bearer admin', origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initialize) });
    expect((await post('https://evil.example')).status).toBe(403);
    const allowed = await post('https://allowed.example');
    expect(allowed.status).toBe(200);
    const id = allowed.headers.get('mcp-session-id') as string;
    expect((await fetch(url, { method: 'DELETE', headers: { authorization: 'Bearer admin', 'mcp-session-id': id } })).status).toBe(200);
    expect((await fetch(url, { method: 'DELETE', headers: { authorization: 'Bearer admin', 'mcp-session-id': id } })).status).toBe(404);
  });

  it('disable from another process: every session hears list_changed on its GET stream, the tool is gone, enable brings it back', async () => {
    const admin = await connect('admin');
    const reader = await connect('reader');
    // The client opens its GET stream after initialize; wait until both are there.
    await until(async () => (await stats()).sessions >= 2, 'two sessions');
    const [a, r] = [admin.changes(), reader.changes()];
    expect((await runCliAsync(['disable', 'echo', '--db', db], { cwd: folder })).code).toBe(0);
    await Promise.all([admin.changedAfter(a), reader.changedAfter(r)]);
    expect((await listAll(reader.client)).tools.map((tool) => tool.name)).toEqual(['read_notes']);
    expect(await protocolErrorOf(admin.client.callTool({ name: 'echo', arguments: { text: 'x' } }))).toBe(-32602);
    expect((await runCliAsync(['enable', 'echo', '--db', db], { cwd: folder })).code).toBe(0);
    await Promise.all([admin.changedAfter(a + 1), reader.changedAfter(r + 1)]);
    expect((await reader.client.callTool({ name: 'echo', arguments: { text: 'back' } })).structuredContent).toEqual({ text: 'back' });
    for (const one of [admin, reader]) {
      await one.transport.terminateSession();
      await one.client.close();
    }
  });

  it('50 concurrent sessions x 100 calls: zero protocol errors, every answer right', async () => {
    const sessions = await Promise.all(Array.from({ length: 50 }, () => rawSession()));
    let errors = 0;
    let wrong = 0;
    await Promise.all(
      sessions.map(async (session, index) => {
        for (let call = 0; call < 100; call++) {
          const text = `${index}-${call}`;
          const { status, json } = await rawPost(session, { jsonrpc: '2.0', id: call, method: 'tools/call', params: { name: 'echo', arguments: { text } } });
          const answer = json as { id?: number; error?: unknown; result?: { structuredContent?: { text?: string } } } | undefined;
          if (status !== 200 || answer?.error !== undefined || answer?.id !== call) errors += 1;
          else if (answer.result?.structuredContent?.text !== text) wrong += 1;
        }
      }),
    );
    expect({ errors, wrong }).toEqual({ errors: 0, wrong: 0 });
    await Promise.all(sessions.map((session) => rawRequest('DELETE', session)));
    await until(async () => (await stats()).sessions === 0, 'every session ended');
  });

  it('1,000 connect/disconnect cycles (DELETE, no goodbye, a client vanishing mid-call or from its stream) leave no session behind, memory flat', async () => {
    const cycle = async (index: number): Promise<void> => {
      const session = await rawSession();
      switch (index % 4) {
        case 0:
          expect((await rawPost(session, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })).status).toBe(200);
          expect((await rawRequest('DELETE', session)).status).toBe(200);
          break;
        case 1:
          break; // gone without a word: the idle timer ends it
        case 2:
          // Vanishes mid-call: the connection drops while the hanging call is in flight.
          await rawVanish(session, 'POST', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'hang', arguments: {} } });
          break;
        default:
          await rawVanish(session, 'GET');
      }
    };
    const run = async (from: number, to: number): Promise<void> => {
      const lanes = 10;
      await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
        for (let index = from + lane; index < to; index += lanes) await cycle(index);
      }));
    };
    await run(0, 200);
    await until(async () => (await stats()).sessions === 0, 'the first 200 sessions gone', { timeoutMs: 30_000, pollMs: 100 });
    const warm = await stats();
    await run(200, 1_000);
    await until(async () => (await stats()).sessions === 0, 'all 1,000 sessions gone', { timeoutMs: 30_000, pollMs: 100 });
    const after = await stats();
    expect(after.sessions).toBe(0);
    // 800 leaked sessions of even a few KB each would show as megabytes.
    expect(after.heapUsed - warm.heapUsed).toBeLessThan(4 * 1024 * 1024);
  }, 240_000);
});

// A lean client for the load and leak tests (the SDK's Client costs more CPU than the server).
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

interface RawSession {
  readonly id: string;
}

function rawRequest(method: string, session: RawSession | undefined, body?: unknown): Promise<{ status: number; headers: IncomingHttpHeaders; json: unknown }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = httpRequest(url, {
      method,
      agent,
      headers: {
        authorization: 'Bearer admin',
        accept: 'application/json, text/event-stream',
        ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        ...(session === undefined ? {} : { 'mcp-session-id': session.id }),
      },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, json: text === '' ? undefined : JSON.parse(text) }));
    });
    request.end(payload);
  });
}

const rawPost = (session: RawSession, body: unknown) => rawRequest('POST', session, body);

async function rawSession(): Promise<RawSession> {
  const opened = await rawRequest('POST', undefined, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  const id = opened.headers['mcp-session-id'];
  if (opened.status !== 200 || typeof id !== 'string') throw new Error(`initialize answered ${opened.status}: ${JSON.stringify(opened.json)}`);
  const session = { id };
  const initialized = await rawPost(session, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (initialized.status !== 202) throw new Error(`notifications/initialized answered ${initialized.status}`);
  return session;
}

/** Sends a request on a connection of its own and destroys the connection once the server has it (a stream's headers came, or a moment passed). */
function rawVanish(session: RawSession, method: 'GET' | 'POST', body?: unknown): Promise<void> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = httpRequest(url, {
      method,
      agent: false,
      headers: {
        authorization: 'Bearer admin',
        accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
        'mcp-session-id': session.id,
        ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
      },
    });
    request.on('error', () => resolve());
    request.on('close', () => resolve());
    request.on('response', () => request.destroy());
    request.end(payload, () => {
      if (method === 'POST') setTimeout(() => request.destroy(), 20);
    });
  });
}
