// The audit log of MCP tool calls (issue 37): one record per tools/call at tool-server's
// dispatch point, over stdio (serveMcpStdio in-process, on the real memory store) and over HTTP
// (one real server with tokens and the /mcp mount); each outcome; the token, persona,
// namespace and upstream columns; no argument or result anywhere in a row; the recorder's
// batches, failures and bound; GET /v1/calls (filters, paging, 401/403, /openapi.json); /metrics;
// and one `tool-registry mcp` process on SQLite read back by `tool-registry calls` (in-process).
import { PassThrough } from 'node:stream';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, ToolSet, defineTool, liveToolSet, mcpContent, openPostgresToolRegistry, openSqliteToolRegistry, publishTools } from '../../src/index.js';
import type { CallRecord, CallRecordInput, LiveToolSet, Tool, ToolRegistry } from '../../src/index.js';
import { createCallRecorder, mcpMount, serveMcpStdio } from '../../src/mcp/index.js';
import { withCallOutcome } from '../../src/mcp/call-outcome.js';
import { createToken, memoryNamespaces, tokenFileVerifier } from '../../src/server/index.js';
import { documentChecker, recorded, start } from '../server/helpers.js';
import type { Running } from '../server/helpers.js';
import { runCli, useChildProcessTimeout } from '../cli/helpers.js';
import { TOOLS_MODULE, connectStdio, initializeRequest } from './helpers.js';
import { createTestDatabase, uniqueName } from '../support/postgres.js';
import { until } from '../support/waiting.js';

useChildProcessTimeout();

const SECRET_ARG = 'argument-secret-7f3a';
const SECRET_RESULT = 'result-secret-91bc';
const text = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

const tools: Tool[] = [
  defineTool({ name: 'echo', version: '1', input_schema: text, handler: ({ text: value }: { text: string }) => ({ text: `${value} ${SECRET_RESULT}` }) }),
  defineTool({ name: 'fail', version: '1', input_schema: { type: 'object' }, handler: () => { throw new Error(`kaboom ${SECRET_RESULT}`); } }),
  defineTool({ name: 'slow', version: '1', input_schema: { type: 'object' }, handler: () => new Promise(() => {}) }),
  defineTool({ name: 'soft', version: '1', input_schema: { type: 'object' }, handler: () => mcpContent({ content: [mcpContent.text(`no ${SECRET_RESULT}`)], isError: true }) }),
  defineTool({
    name: 'down',
    version: '1',
    input_schema: { type: 'object' },
    handler: () => withCallOutcome(mcpContent({ content: [mcpContent.text('upstream gh is down')], isError: true }), 'UPSTREAM_UNAVAILABLE'),
  }),
  defineTool({ name: 'guarded', version: '2', input_schema: { type: 'object' }, permissions: { required: ['NET_HTTP'] }, handler: () => ({}) }),
  defineTool({ name: 'gh_search', version: '1.0.0+abc', tags: ['upstream:gh'], input_schema: { type: 'object' }, handler: () => ({ hits: [] }) }),
];

/** Every value of the rows as one text: what must never hold an argument or a result. */
const everything = (rows: readonly object[]): string => JSON.stringify(rows);

describe('createCallRecorder', () => {
  const row = (tool: string, extra: Partial<CallRecordInput> = {}): CallRecordInput => ({
    at: new Date().toISOString(),
    token: null,
    persona: null,
    namespace: 'default',
    tool,
    version: null,
    fingerprint: null,
    upstream: null,
    duration_ms: 1,
    outcome: 'ok',
    ...extra,
  });
  /** The real memory store, its recordCalls seen (and failing while `failing` is set). */
  const watched = (registry: ToolRegistry, state: { failing: boolean; writes: number[] }): ToolRegistry =>
    new Proxy(registry, {
      get(target, key) {
        if (key !== 'recordCalls') return Reflect.get(target, key, target) as unknown;
        return async (calls: readonly CallRecordInput[]) => {
          state.writes.push(calls.length);
          if (state.failing) throw Object.assign(new Error('database is locked'), { code: 'STORAGE_BUSY' });
          return target.recordCalls(calls);
        };
      },
    });

  it('writes in batches of batchRows, retries a failed write, drops past its bound and counts it all', async () => {
    const registry = new InMemoryToolRegistry();
    const state = { failing: false, writes: [] as number[] };
    const errors: unknown[] = [];
    const recorder = createCallRecorder(watched(registry, state), { flushMs: 10_000, batchRows: 100, maxBufferedRows: 300, onError: (error) => errors.push(error) });
    for (let i = 0; i < 250; i++) recorder.record(row(`t${i}`));
    await recorder.flush();
    expect(state.writes).toEqual([100, 100, 50]);
    expect((await registry.listCalls({ limit: 1000 })).length).toBe(250);

    state.failing = true;
    for (let i = 0; i < 320; i++) recorder.record(row('late'));
    await recorder.flush();
    // 300 held (the bound), 20 dropped; the failed write reported, its rows kept for the retry.
    expect(recorder.stats).toMatchObject({ written: 250, dropped: 20, buffered: 300 });
    expect(recorder.stats.failedWrites).toBeGreaterThanOrEqual(1);
    expect((errors[0] as { code: string }).code).toBe('STORAGE_BUSY');
    state.failing = false;
    await until(async () => (await recorder.flush(), recorder.stats.written === 550), 'the retry wrote the held rows');
    expect(recorder.stats.buffered).toBe(0);
    await recorder.close();
    recorder.record(row('after close'));
    expect(recorder.stats.dropped).toBe(21);
    await registry.close();
  });

  it('writes on its own within flushMs, and a row the store refuses costs only itself', async () => {
    const registry = new InMemoryToolRegistry();
    const recorder = createCallRecorder(registry, { flushMs: 20, onError: () => {} });
    recorder.record(row('a'));
    recorder.record(row('b', { duration_ms: -1 })); // the store refuses it (VALIDATION_FAILED)
    recorder.record(row('c'));
    await until(() => recorder.stats.written + recorder.stats.dropped === 3, 'the timer flushed');
    expect((await registry.listCalls()).map((call) => call.tool)).toEqual(['c', 'a']);
    expect(recorder.stats).toMatchObject({ written: 2, dropped: 1, buffered: 0 });
    // A closed store refuses for good: dropped, not held.
    await registry.close();
    recorder.record(row('d'));
    await recorder.close();
    expect(recorder.stats.dropped).toBe(2);
    expect(() => createCallRecorder(registry, { batchRows: 0 })).toThrow(TypeError);
    expect(() => createCallRecorder({} as ToolRegistry)).toThrow(TypeError);
  });
});

describe('over stdio: one record per tools/call, each outcome', () => {
  let registry: InMemoryToolRegistry;
  let live: LiveToolSet;

  beforeAll(async () => {
    registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    live = await liveToolSet(registry, tools);
  });
  afterAll(async () => {
    await live?.close();
    await registry?.close();
  });

  it('records ok and every failure kind with the policy persona, never the arguments or results', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const replies = new Map<number, { result?: { isError?: boolean }; error?: { code: number } }>();
    createInterface({ input: stdout }).on('line', (line) => {
      const message = JSON.parse(line) as { id?: number };
      if (typeof message.id === 'number') replies.set(message.id, message as never);
    });
    const recorder = createCallRecorder(registry, { flushMs: 10_000 });
    const session = await serveMcpStdio(live, { stdin, stdout, policy: { persona: 'ops\u202e', allowed_permissions: [] }, callTimeoutMs: 50, onCall: recorder.record });
    const send = (message: object): void => void stdin.write(`${JSON.stringify(message)}\n`);
    let id = 1;
    const ask = async (params: object): Promise<{ result?: { isError?: boolean }; error?: { code: number } }> => {
      const mine = ++id;
      send({ jsonrpc: '2.0', id: mine, method: 'tools/call', params });
      await until(() => replies.has(mine), `the reply to ${JSON.stringify(params).slice(0, 60)}`);
      return replies.get(mine) as never;
    };
    send(initializeRequest(1));
    await until(() => replies.has(1), 'initialize');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });

    const long = 'x'.repeat(200);
    const cases: [object, string][] = [
      [{ name: 'echo', arguments: { text: SECRET_ARG } }, 'ok'],
      [{ name: 'echo', arguments: { text: 5, note: SECRET_ARG } }, 'INVALID_ARGUMENTS'],
      [{ name: 'echo', arguments: SECRET_ARG }, 'INVALID_ARGUMENTS'],
      [{ name: 'nope', arguments: { key: SECRET_ARG } }, 'TOOL_NOT_FOUND'],
      [{ name: 'guarded', arguments: {} }, 'PERMISSION_DENIED'],
      [{ name: 'fail', arguments: {} }, 'TOOL_FAILED'],
      [{ name: 'soft', arguments: {} }, 'TOOL_ERROR'],
      [{ name: 'down', arguments: {} }, 'UPSTREAM_UNAVAILABLE'],
      [{ name: 'slow', arguments: {} }, 'TIMEOUT'],
      [{ name: 'gh_search', arguments: {} }, 'ok'],
      [{ name: '' }, 'TOOL_NOT_FOUND'],
      [{ name: 'nul\u0000name' }, 'TOOL_NOT_FOUND'],
      [{ name: long }, 'TOOL_NOT_FOUND'],
    ];
    for (const [params] of cases) await ask(params);
    // A request that names no tool is a malformed request, not a call: answered, not recorded.
    expect((await ask({ name: 5 })).error?.code).toBe(-32602);
    await recorder.flush();
    const rows = [...(await registry.listCalls({ limit: 100 }))].reverse();
    expect(rows.map((row) => row.outcome)).toEqual(cases.map(([, outcome]) => outcome));
    expect(rows.map((row) => row.tool)).toEqual(['echo', 'echo', 'echo', 'nope', 'guarded', 'fail', 'soft', 'down', 'slow', 'gh_search', '""', 'nul\ufffdname', long.slice(0, 128)]);
    for (const row of rows) expect(row).toMatchObject({ token: null, persona: 'ops\u202e', namespace: 'default' });
    const echo = rows[0] as CallRecord;
    expect(echo.version).toBe('1');
    expect(echo.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(echo.upstream).toBeNull();
    expect(rows[4]).toMatchObject({ version: '2', fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) }); // the denied tool is known
    expect(rows[3]).toMatchObject({ version: null, fingerprint: null, upstream: null });
    expect(rows[9]).toMatchObject({ upstream: 'gh', version: '1.0.0+abc' });
    for (const row of rows) expect(row.duration_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(echo.at)).not.toBeNaN();
    expect(everything(rows)).not.toContain(SECRET_ARG);
    expect(everything(rows)).not.toContain(SECRET_RESULT);
    expect(Object.keys(echo).sort()).toEqual(['at', 'duration_ms', 'fingerprint', 'id', 'namespace', 'outcome', 'persona', 'token', 'tool', 'upstream', 'version']);
    await session.close();
    await recorder.close();
  });
});

describe('over HTTP: the /mcp mount records with the token, and GET /v1/calls reads it', () => {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-audit-'));
  const secrets: Record<string, string> = {};
  let running: Running;
  const clients: Client[] = [];

  const connect = async (token: string, path = '/mcp'): Promise<Client> => {
    const transport = new StreamableHTTPClientTransport(new URL(`${running.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${secrets[token]}` } } });
    const client = new Client({ name: `audit-${token}`, version: '1' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  const calls = async (path: string, token = 'admin'): Promise<{ status: number; body: { calls: CallRecord[]; next_before: number | null } }> => {
    const reply = await running.call('GET', path, { token: secrets[token] });
    return reply as never;
  };

  beforeAll(async () => {
    const file = join(folder, 'tokens.json');
    for (const [name, scopes, policy] of [
      ['admin', ['read', 'write', 'admin'], undefined],
      ['support', ['read'], { persona: 'support', allowed_permissions: [] }],
    ] as const) {
      secrets[name] = (await createToken(file, { name, scopes: [...scopes], ...(policy === undefined ? {} : { policy }) })).secret;
    }
    running = await start({ registries: memoryNamespaces(), tokens: tokenFileVerifier(file), mounts: { mcp: mcpMount(new ToolSet(tools), { audit: { flushMs: 20 } }) } });
    await running.call('PUT', '/v1/namespaces/team_a', { token: secrets.admin });
    for (const prefix of ['/v1', '/v1/namespaces/team_a']) {
      expect((await running.call('POST', `${prefix}/tools`, { token: secrets.admin, body: tools.map((tool) => tool.spec) })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await running?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('records each call with its token, persona and namespace; the API filters, pages and guards them', async () => {
    const admin = await connect('admin');
    const support = await connect('support');
    const team = await connect('admin', '/v1/namespaces/team_a/mcp');
    await admin.callTool({ name: 'echo', arguments: { text: SECRET_ARG } });
    await expect(admin.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await support.callTool({ name: 'echo', arguments: { text: 'hi' } });
    await expect(support.callTool({ name: 'guarded', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await team.callTool({ name: 'gh_search', arguments: {} });
    await until(async () => (await calls('/v1/calls')).body.calls.length === 4, 'four calls in default');
    const all = (await calls('/v1/calls')).body.calls;
    expect(all.map((row) => [row.token, row.persona, row.namespace, row.tool, row.outcome])).toEqual([
      ['support', 'support', 'default', 'guarded', 'PERMISSION_DENIED'],
      ['support', 'support', 'default', 'echo', 'ok'],
      ['admin', null, 'default', 'nope', 'TOOL_NOT_FOUND'],
      ['admin', null, 'default', 'echo', 'ok'],
    ]);
    expect(everything(all)).not.toContain(SECRET_ARG);
    expect(everything(all)).not.toContain(SECRET_RESULT);
    await until(async () => (await calls('/v1/namespaces/team_a/calls')).body.calls.length === 1, 'the call in team_a');
    expect((await calls('/v1/namespaces/team_a/calls')).body.calls[0]).toMatchObject({ token: 'admin', namespace: 'team_a', tool: 'gh_search', upstream: 'gh', outcome: 'ok' });

    // Filters.
    expect((await calls('/v1/calls?tool=echo')).body.calls.map((row) => row.token)).toEqual(['support', 'admin']);
    expect((await calls('/v1/calls?token=support')).body.calls.map((row) => row.tool)).toEqual(['guarded', 'echo']);
    expect((await calls('/v1/calls?tool=echo&token=admin')).body.calls).toHaveLength(1);
    expect((await calls('/v1/calls?since=2999-01-01')).body.calls).toEqual([]);
    expect((await calls(`/v1/calls?since=${encodeURIComponent((all[3] as CallRecord).at)}`)).body.calls).toHaveLength(4);
    expect((await calls('/v1/calls?since=2020-01-01T00:00:00%2B02:00')).body.calls).toHaveLength(4);
    // Paging: newest first, `before` the last id of a page.
    const first = (await calls('/v1/calls?limit=3')).body;
    expect(first.calls.map((row) => row.id)).toEqual(all.slice(0, 3).map((row) => row.id));
    expect(first.next_before).toBe((all[2] as CallRecord).id);
    const second = (await calls(`/v1/calls?limit=3&before=${first.next_before}`)).body;
    expect(second).toEqual({ calls: [all[3]], next_before: null });
    expect((await calls('/v1/calls?limit=0')).body).toEqual({ calls: [], next_before: null });
    // Bad filters are 400 naming the parameter.
    // 2026-02-30 was read as March 2, as Date.parse reads it.
    for (const bad of ['since=yesterday', 'since=2026-02-30', 'limit=1001', 'before=x', 'tool=']) expect((await calls(`/v1/calls?${bad}`)).status, bad).toBe(400);
    // A date-time without an offset was read in the server's time zone: refused, naming the value.
    const local = await calls('/v1/calls?since=2026-01-01T10:00:00');
    expect([local.status, JSON.stringify(local.body)]).toEqual([400, expect.stringContaining('\\"2026-01-01T10:00:00\\" has no UTC offset')]);

    // Admin scope: no token 401, a read token 403.
    expect((await running.call('GET', '/v1/calls')).status).toBe(401);
    expect((await calls('/v1/calls', 'support')).status).toBe(403);
    expect((await calls('/v1/namespaces/team_a/calls', 'support')).status).toBe(403);

    // /metrics counts what the mount's recorders wrote.
    const metrics = (await running.call('GET', '/metrics', { token: secrets.admin })).text;
    expect(metrics).toMatch(/^tool_registry_audit_rows_written_total\{mount="mcp"\} 5$/m);
    expect(metrics).toMatch(/^tool_registry_audit_write_failures_total\{mount="mcp"\} 0$/m);
    expect(metrics).toMatch(/^tool_registry_audit_rows_dropped_total\{mount="mcp"\} 0$/m);
    expect(documentChecker(running.server.openapi()).check(recorded)).toEqual([]);
    const operation = (running.server.openapi().paths as Record<string, Record<string, { security?: unknown }>>)['/v1/calls']?.get;
    expect(operation).toBeDefined();
  });
});

describe('tool-registry mcp records into its database; tool-registry calls prints the rows', () => {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-audit-cli-'));
  const db = join(folder, 'registry.db');
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('one process: each call a row (persona from --policy, pruned to --call-retention-rows); calls as a table, as JSON, filtered and paged', async () => {
    const policy = join(folder, 'policy.json');
    writeFileSync(policy, JSON.stringify({ persona: 'cli-agent', allowed_permissions: [] }));
    const { client } = await connectStdio(['--tools', TOOLS_MODULE, '--publish', '--db', db, '--policy', policy, '--call-retention-rows', '4'], folder);
    await client.callTool({ name: 'echo', arguments: { text: SECRET_ARG } });
    await client.callTool({ name: 'boom', arguments: {} });
    await expect(client.callTool({ name: 'search', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await client.callTool({ name: 'echo', arguments: { text: 'again' } });
    // The session ends: the process writes what waits before it closes the registry.
    await client.close();
    const registry = await openSqliteToolRegistry({ filename: db, readonly: true });
    try {
      await until(async () => (await registry.listCalls()).some((row) => row.tool === 'echo' && row.id === 5), 'the last call written');
      const rows = await registry.listCalls();
      // Five calls, the oldest pruned by --call-retention-rows 4.
      expect(rows.map((row) => [row.tool, row.outcome])).toEqual([
        ['echo', 'ok'],
        ['nope', 'TOOL_NOT_FOUND'],
        ['search', 'PERMISSION_DENIED'],
        ['boom', 'TOOL_FAILED'],
      ]);
      for (const row of rows) expect(row).toMatchObject({ token: null, persona: 'cli-agent', namespace: 'default' });
    } finally {
      await registry.close();
    }

    const table = await runCli(['calls', '--db', db], { cwd: folder });
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+AT\s+TOKEN\s+PERSONA\s+NAMESPACE\s+TOOL\s+VERSION\s+UPSTREAM\s+MS\s+OUTCOME$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/).filter((cell, index) => [0, 2, 3, 5, 6, 9].includes(index)))).toEqual([
      ['5', '-', 'cli-agent', 'echo', '1', 'ok'],
      ['4', '-', 'cli-agent', 'nope', '-', 'TOOL_NOT_FOUND'],
      ['3', '-', 'cli-agent', 'search', '1', 'PERMISSION_DENIED'],
      ['2', '-', 'cli-agent', 'boom', '1', 'TOOL_FAILED'],
    ]);
    expect(table.stdout).not.toContain(SECRET_ARG);

    const json = JSON.parse((await runCli(['calls', '--db', db, '--tool', 'echo', '--json'], { cwd: folder })).stdout) as { calls: CallRecord[]; next_before: number | null };
    expect(json.calls.map((row) => row.id)).toEqual([5]);
    expect(json.next_before).toBeNull();
    const paged = await runCli(['calls', '--db', db, '--limit', '2'], { cwd: folder });
    expect(paged.stdout.trimEnd().split('\n').at(-1)).toBe('older calls: --before 4');
    const older = JSON.parse((await runCli(['calls', '--db', db, '--limit', '2', '--before', '4', '--json'], { cwd: folder })).stdout) as { calls: CallRecord[] };
    expect(older.calls.map((row) => row.id)).toEqual([3, 2]);
    expect((await runCli(['calls', '--db', db, '--token', 'nobody'], { cwd: folder })).stdout).toBe('no calls recorded that match\n');
    expect((await runCli(['calls', '--db', db, '--since', '2999-01-01', '--json'], { cwd: folder })).stdout).toBe(`${JSON.stringify({ calls: [], next_before: null }, null, 2)}\n`);
    const bad = await runCli(['calls', '--db', db, '--since', 'yesterday'], { cwd: folder });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error USAGE: .*--since/m);
    const missing = await runCli(['calls', '--db', join(folder, 'none.db')], { cwd: folder });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/DATABASE_NOT_FOUND/);
  });

  it('reads a PostgreSQL registry too (--db postgres://...)', async () => {
    const database = await createTestDatabase();
    try {
      const url = new URL(database.url);
      url.searchParams.set('schema', uniqueName('audit'));
      const registry = await openPostgresToolRegistry({ connectionString: database.url, schema: url.searchParams.get('schema') as string });
      try {
        const call = { token: 'ci', persona: null, namespace: 'default', version: '1', fingerprint: null, upstream: 'gh', duration_ms: 2.5, outcome: 'ok' };
        await registry.recordCalls([
          { ...call, at: '2026-11-28T09:00:00Z', tool: 'gh_search' },
          { ...call, at: '2026-11-28T09:00:01Z', tool: 'echo', upstream: null, outcome: 'TIMEOUT' },
        ]);
      } finally {
        await registry.close();
      }
      const listed = await runCli(['calls', '--db', url.toString(), '--json'], { cwd: folder });
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as { calls: CallRecord[] }).calls.map((row) => [row.tool, row.upstream, row.outcome])).toEqual([
        ['echo', null, 'TIMEOUT'],
        ['gh_search', 'gh', 'ok'],
      ]);
      const filtered = await runCli(['calls', '--db', url.toString(), '--tool', 'gh_search'], { cwd: folder });
      expect(filtered.stdout.trimEnd().split('\n')).toHaveLength(2);
      expect(filtered.stdout).toMatch(/^1\s+2026-11-28T09:00:00\.000Z\s+ci\s+-\s+default\s+gh_search\s+1\s+gh\s+2\.5\s+ok$/m);
    } finally {
      await database.drop();
    }
  });
});

