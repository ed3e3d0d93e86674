// MCP over Streamable HTTP through `tool-registry serve --tools MODULE` (a spawned server, one
// for the file), driven by the SDK's own Client: bearer tokens with persona policies, /mcp and
// /v1/namespaces/{ns}/mcp, governance by another process, Origin, DELETE.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import { createToken } from '../../src/server/index.js';
import type { ToolSpecInput } from '../../src/index.js';
import { CLI, childEnv, runCliAsync, stopChild, useChildProcessTimeout } from '../cli/helpers.js';
import { TOOLS_MODULE, listAll, protocolErrorOf, textOf, watch } from './helpers.js';
import { until } from '../support/waiting.js';
import type { Watched } from './helpers.js';

useChildProcessTimeout();

const folder = mkdtempSync(join(tmpdir(), 'tool-registry-mcp-serve-'));
const db = join(folder, 'tools.db');
const tokensFile = join(folder, 'tokens.json');
const secrets: Record<string, string> = {};
let server: ChildProcess;
let base: string;

type Connected = Watched & { transport: StreamableHTTPClientTransport };

async function connect(token: string, path = '/mcp'): Promise<Connected> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}${path}`), { requestInit: { headers: { authorization: `Bearer ${secrets[token] ?? token}` } } });
  const client = new Client({ name: `test-${token}`, version: '1.0.0' });
  const watched = watch(client);
  await client.connect(transport);
  return { ...watched, transport };
}

async function end(...sessions: Connected[]): Promise<void> {
  for (const session of sessions) {
    await session.transport.terminateSession();
    await session.client.close();
  }
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const post = (headers: Record<string, string>, body: unknown = initialize, path = '/mcp') =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });

beforeAll(async () => {
  // The tools are published in the namespace first (serve serves what is published).
  const tools = (await import(TOOLS_MODULE)) as Record<string, { spec?: ToolSpecInput }>;
  const registry = await openSqliteToolRegistry({ filename: db });
  await registry.registerMany(Object.values(tools).flatMap((tool) => (tool.spec === undefined ? [] : [tool.spec])));
  await registry.close();
  const made = [
    ['admin', ['read']],
    ['reader', ['read'], { persona: 'reader', allowed_permissions: ['READ_FS'], allowed_tools: ['echo', 'read_notes'] }],
    ['crawler', ['read'], { persona: 'crawler', allowed_permissions: ['NET_HTTP'], allowed_tools: ['search', 'boom'] }],
    ['offline', ['read'], { persona: 'offline', allowed_permissions: [] }],
    ['writer', ['write']],
  ] as const;
  for (const [name, scopes, policy] of made) {
    secrets[name] = (await createToken(tokensFile, { name, scopes: [...scopes], ...(policy === undefined ? {} : { policy }) })).secret;
  }
  // --cors as an operator may write it (a trailing slash, capitals): the origin a browser sends matches.
  server = spawn(process.execPath, [CLI, 'serve', '--db', db, '--tokens', tokensFile, '--port', '0', '--no-console', '--tools', TOOLS_MODULE, '--call-timeout-ms', '300', '--page-size', '4', '--cors', 'https://Allowed.Example/', '--allowed-hosts', 'registry.test'], {
    cwd: folder,
    env: childEnv(),
    // Its request log goes to stderr: kept out of the test output.
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  server.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  while (!/listening on (http:\/\/\S+)/.test(out)) await once(server.stdout as NodeJS.ReadableStream, 'data');
  base = (/listening on (http:\/\/\S+)/.exec(out) as RegExpExecArray)[1] as string;
}, 120_000);

afterAll(async () => {
  await stopChild(server);
  rmSync(folder, { recursive: true, force: true });
});

describe('tool-registry serve --tools (Streamable HTTP)', () => {
  it('list (in pages) -> call -> result; invalid arguments, a throwing and a hanging handler, an unknown tool', async () => {
    const admin = await connect('admin');
    expect(admin.client.getServerCapabilities()).toEqual({ tools: { listChanged: true }, logging: {} });
    const { tools, pages } = await listAll(admin.client);
    expect(tools.map((tool) => tool.name)).toEqual(['boom', 'echo', 'hang', 'listing', 'read_notes', 'search']);
    expect(pages).toEqual([4, 2]);
    expect(tools.find((tool) => tool.name === 'echo')).toMatchObject({ title: 'Echo', annotations: { readOnlyHint: true } });
    expect(await admin.client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toEqual({ content: [{ type: 'text', text: '{"text":"hi"}' }], structuredContent: { text: 'hi' } });
    expect(textOf(await admin.client.callTool({ name: 'echo', arguments: {} }))).toMatch(/^INVALID_ARGUMENTS: /);
    expect(await admin.client.callTool({ name: 'boom', arguments: {} })).toEqual({ content: [{ type: 'text', text: "TOOL_FAILED: Tool 'boom' failed: kaboom" }], isError: true });
    expect(textOf(await admin.client.callTool({ name: 'hang', arguments: {} }))).toMatch(/^TIMEOUT: Tool 'hang' did not finish within 300 ms/);
    expect(await protocolErrorOf(admin.client.callTool({ name: 'nope', arguments: {} }))).toBe(-32602);
    // The same endpoint per namespace.
    const namespaced = await connect('admin', '/v1/namespaces/default/mcp');
    expect((await listAll(namespaced.client)).tools).toHaveLength(6);
    await end(admin, namespaced);
  });

  it("the server's tokens: none is 401, one without read is 403; two personas never list or call each other's tools, nor use each other's session", async () => {
    expect((await post({})).status).toBe(401);
    expect((await post({ authorization: `Bearer ${secrets.writer}` })).status).toBe(403);
    const reader = await connect('reader');
    const crawler = await connect('crawler');
    expect((await listAll(reader.client)).tools.map((tool) => tool.name)).toEqual(['echo', 'read_notes']);
    expect((await listAll(crawler.client)).tools.map((tool) => tool.name)).toEqual(['boom', 'search']);
    for (const name of ['search', 'boom']) expect(await protocolErrorOf(reader.client.callTool({ name, arguments: {} }))).toBe(-32602);
    for (const name of ['echo', 'read_notes']) expect(await protocolErrorOf(crawler.client.callTool({ name, arguments: { text: 'x' } }))).toBe(-32602);
    const stolen = await post({ authorization: `Bearer ${secrets.crawler}`, 'mcp-session-id': reader.transport.sessionId as string }, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    expect(stolen.status).toBe(404);
    await end(reader, crawler);
  });

  it("/v1/exports under a token's policy lists what its MCP sessions list: a tool whose code requires a permission the persona lacks is left out", async () => {
    for (const [token, expected] of [
      ['offline', ['boom', 'echo', 'hang', 'listing']],
      ['reader', ['echo', 'read_notes']],
      ['crawler', ['boom', 'search']],
    ] as const) {
      const session = await connect(token);
      const listed = (await listAll(session.client)).tools.map((tool) => tool.name);
      await end(session);
      // anthropic: the MCP export refuses `listing`'s array output schema, which a session omits.
      const exported = await fetch(`${base}/v1/exports/anthropic`, { headers: { authorization: `Bearer ${secrets[token]}` } });
      const body = (await exported.json()) as { name: string }[];
      expect([token, exported.status, Array.isArray(body) ? body.map((tool) => tool.name) : body]).toEqual([token, 200, listed]);
      expect([token, listed]).toEqual([token, expected]);
    }
  });

  it('refuses a foreign Origin and, with --allowed-hosts, a foreign Host (403); serves the --cors one, its preflight without a token; DELETE ends a session', async () => {
    const admin = { authorization: `Bearer ${secrets.admin}` };
    expect((await post({ ...admin, origin: 'https://evil.example' })).status).toBe(403);
    const port = new URL(base).port;
    for (const [host, status] of [[`evil.example:${port}`, 403], [`registry.test:${port}`, 200], [`localhost:${port}`, 200]] as const) {
      const answer = await new Promise<number>((resolve, reject) => {
        const body = JSON.stringify(initialize);
        const req = httpRequest(`${base}/mcp`, { method: 'POST', headers: { ...admin, host, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end(body);
      });
      expect([host, answer]).toEqual([host, status]);
    }
    const preflight = await fetch(`${base}/mcp`, { method: 'OPTIONS', headers: { origin: 'https://allowed.example', 'access-control-request-method': 'POST' } });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, 'https://allowed.example']);
    const allowed = await post({ ...admin, origin: 'https://allowed.example' });
    expect(allowed.status).toBe(200);
    const id = allowed.headers.get('mcp-session-id') as string;
    const remove = () => fetch(`${base}/mcp`, { method: 'DELETE', headers: { ...admin, 'mcp-session-id': id } });
    expect((await remove()).status).toBe(200);
    expect((await remove()).status).toBe(404);
  });

  it('invalid params are -32602 saying what is wrong (null arguments, a bad log level or initialize, a progress token that is an object, params by position); an empty batch is -32600', async () => {
    const admin = { authorization: `Bearer ${secrets.admin}` };
    // Without a session: an initialize with bad params was "no Mcp-Session-Id header".
    const badInit = await post(admin, { jsonrpc: '2.0', id: 'i', method: 'initialize', params: { protocolVersion: '2025-11-25' } });
    expect([badInit.status, await badInit.json()]).toMatchObject([400, { id: 'i', error: { code: -32602, message: expect.stringMatching(/^Invalid params of initialize: "capabilities": [^[{]*$/) } }]);
    const opened = await post(admin);
    const session = { ...admin, 'mcp-session-id': opened.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-11-25' };
    const answers = [];
    for (const body of [
      // It was 400 -32700 "Parse error" with a TypeError as its data.
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: null } },
      { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'loud' } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: { progressToken: {} } } },
      // Params by position: a valid JSON-RPC request whose params MCP cannot take (it was -32600).
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: ['echo', { text: 'x' }] },
      [],
    ]) {
      const reply = await post(session, body);
      answers.push([reply.status, (await reply.json()) as { id: unknown; error: { code: number; message: string } }] as const);
    }
    expect(answers.map(([status, reply]) => [status, reply.id, reply.error.code])).toEqual([
      [200, 1, -32602],
      [200, 2, -32602],
      [400, 3, -32602],
      [400, 4, -32602],
      [400, null, -32600],
    ]);
    expect(answers.map(([, reply]) => reply.error.message)).toEqual([
      'Invalid params of tools/call: "arguments" must be an object, got null',
      expect.stringMatching(/^Invalid params of logging\/setLevel: "level": [^[{]*$/),
      'Invalid params of tools/call: "params._meta.progressToken" must be a string or an integer, got {}',
      'Invalid params of tools/call: MCP takes params by name (an object), got an array (params by position)',
      'Invalid Request: an empty batch',
    ]);
    expect((await fetch(`${base}/mcp`, { method: 'DELETE', headers: session })).status).toBe(200);
  });

  it('a batch is answered with an array, one reply in it included; initialize in a batch is -32600 with its id; a second initialize is -32600 with its id; an initialize without an id is 400 -32600 and opens no session', async () => {
    const admin = { authorization: `Bearer ${secrets.admin}` };
    // initialize must not be part of a batch (MCP 2025-03-26): it was "Only one initialization request is allowed"
    // with id null for [initialize, ping], and [initialize] opened a session.
    for (const batch of [[initialize], [initialize, { jsonrpc: '2.0', id: 'p', method: 'ping' }]]) {
      const batched = await post(admin, batch);
      expect([batched.status, batched.headers.get('mcp-session-id'), await batched.json()]).toEqual([
        400,
        null,
        { jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'Invalid Request: initialize must not be part of a batch' } },
      ]);
    }
    const opened = await post(admin, initialize);
    expect([opened.status, await opened.json()]).toMatchObject([200, { id: 1, result: { protocolVersion: '2025-11-25' } }]);
    // A batch of one request was answered with the bare reply object; JSON-RPC answers a batch with an array.
    const session = { ...admin, 'mcp-session-id': opened.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-11-25' };
    const one = await post(session, [{ jsonrpc: '2.0', id: 'p', method: 'ping' }]);
    expect([one.status, await one.json()]).toEqual([200, [{ jsonrpc: '2.0', id: 'p', result: {} }]]);
    const single = await post(session, { jsonrpc: '2.0', id: 'q', method: 'ping' });
    expect(await single.json()).toEqual({ jsonrpc: '2.0', id: 'q', result: {} });
    // A second initialize was refused with id null (the SDK's transport), leaving its client waiting.
    const again = await post(session, { ...initialize, id: 'again' });
    expect([again.status, await again.json()]).toEqual([400, { jsonrpc: '2.0', id: 'again', error: { code: -32600, message: 'Invalid Request: the session is already initialized; initialize once per session' } }]);
    expect((await fetch(`${base}/mcp`, { method: 'DELETE', headers: session })).status).toBe(200);
    // An initialize sent as a notification was 202 without an Mcp-Session-Id, and the session it
    // opened held a place under --max-sessions (and the token's share) until it idled out.
    const { id: _, ...notification } = initialize;
    const refused = await post(admin, notification);
    expect([refused.status, refused.headers.get('mcp-session-id'), await refused.json()]).toEqual([
      400,
      null,
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: initialize must be a request (with an "id"), not a notification; it opens no session' } },
    ]);
  });

  it('disable from another process: every session hears list_changed on its GET stream, the tool is gone, enable brings it back', async () => {
    const admin = await connect('admin');
    const reader = await connect('reader');
    const [a, r] = [admin.changes(), reader.changes()];
    expect((await runCliAsync(['disable', 'echo', '--db', db], { cwd: folder })).code).toBe(0);
    await Promise.all([admin.changedAfter(a), reader.changedAfter(r)]);
    expect((await listAll(reader.client)).tools.map((tool) => tool.name)).toEqual(['read_notes']);
    expect(await protocolErrorOf(admin.client.callTool({ name: 'echo', arguments: { text: 'x' } }))).toBe(-32602);
    expect((await runCliAsync(['enable', 'echo', '--db', db], { cwd: folder })).code).toBe(0);
    await Promise.all([admin.changedAfter(a + 1), reader.changedAfter(r + 1)]);
    expect((await reader.client.callTool({ name: 'echo', arguments: { text: 'back' } })).structuredContent).toEqual({ text: 'back' });
    await end(admin, reader);
  });

  it("a second GET replaces the session's stream (the first one may be dead unnoticed): it was 409, and the client never heard list_changed again", async () => {
    const admin = { authorization: `Bearer ${secrets.admin}` };
    const opened = await post(admin);
    const session = { ...admin, 'mcp-session-id': opened.headers.get('mcp-session-id') as string, 'mcp-protocol-version': '2025-11-25' };
    await opened.text();
    expect((await post(session, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    // The first stream stays open, as a cut connection (or a proxy that dropped it) looks to the server.
    const first = await rawStream(session);
    const second = await rawStream(session);
    expect([second.status, second.type]).toEqual([200, 'text/event-stream']);
    await first.ended;
    const registry = await openSqliteToolRegistry({ filename: db });
    try {
      await registry.setEnabled('echo', false);
      await until(() => second.text().includes('"notifications/tools/list_changed"'), 'list_changed on the new stream');
      await registry.setEnabled('echo', true);
      await until(() => second.text().split('"notifications/tools/list_changed"').length === 3, 'list_changed of the enable');
    } finally {
      await registry.close();
      first.destroy();
      second.destroy();
    }
    expect((await fetch(`${base}/mcp`, { method: 'DELETE', headers: session })).status).toBe(200);
  });
});

/** A GET notification stream on a connection of its own: its status, what it carried so far, its end. */
function rawStream(headers: Record<string, string>): Promise<{ status: number; type: string | undefined; text: () => string; ended: Promise<void>; destroy: () => void }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}/mcp`, { method: 'GET', agent: false, headers: { ...headers, accept: 'text/event-stream' } });
    request.on('error', reject);
    request.on('response', (response) => {
      let text = '';
      const ended = new Promise<void>((done) => response.on('end', done).on('close', done));
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'], text: () => text, ended, destroy: () => request.destroy() });
    });
    request.end();
  });
}

