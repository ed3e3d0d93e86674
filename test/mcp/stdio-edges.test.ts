// `tool-registry mcp` against a hostile or careless client (issue 40): huge results, malformed
// lines, batches, an over-long line, a call before initialize, a handler that ignores its
// abort signal when the client leaves, a handler's rejection nobody handles, calls racing a
// disable by another process, and deprecations. Three children on one SQLite file: one driven by the SDK's Client, two spoken
// to line by line (what the SDK's client would never send), each ended by a test; and two
// `serve --tools`: one stopped with such a handler running, one ended by a handler's throw in a
// timer (on a registry of its own, with a stdio upstream that outlives its input's end).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, childEnv, runCli, runCliAsync, useChildProcessTimeout } from '../cli/helpers.js';
import { openSqliteToolRegistry } from '../../src/index.js';
import { processesWith } from '../support/upstreams.js';
import { until } from '../support/waiting.js';
import { connectStdio, initializeRequest, listAll, protocolErrorOf, spawnRawStdio, textOf } from './helpers.js';
import type { RawStdio, Watched } from './helpers.js';

useChildProcessTimeout();

const TOOLS = join(ROOT, 'test', 'fixtures', 'mcp-edge-tools.mjs');
const folder = mkdtempSync(join(tmpdir(), 'tool-registry-mcp-edges-'));
const db = join(folder, 'tools.db');
const args = ['--tools', TOOLS, '--db', db, '--publish'];
let client: Watched;
let raw: RawStdio;
let raw2025: RawStdio;
/** The `serve --tools` processes the tests started, and the one the throw in a timer ends (started early). */
const servers: ChildProcess[] = [];
let thrower: ReturnType<typeof serveTools> | undefined;
/** The thrower's stdio upstream: file-upstream.mjs held alive by a timer (it outlives its input's end), told apart by `LINGERING_MARKER` in its environment. */
const LINGERING = join(folder, 'lingering.mjs');
const LINGERING_MARKER = `TR_LINGERING=${folder}`;

beforeAll(async () => {
  // Published once first: the raw children then start on a registry that already holds the tools.
  client = await connectStdio(args, folder);
  raw = spawnRawStdio(args.slice(0, -1), folder);
  raw2025 = spawnRawStdio(args.slice(0, -1), folder);
  // Both serving: ping is answered before initialize.
  for (const child of [raw, raw2025]) child.send({ jsonrpc: '2.0', id: 'ready', method: 'ping' });
  await Promise.all([raw.reply('ready'), raw2025.reply('ready')]);
}, 120_000);

afterAll(async () => {
  await client?.client.close();
  for (const child of [raw, raw2025]) if (child?.child.exitCode === null) child.child.kill();
  for (const server of servers) if (server.exitCode === null && server.signalCode === null) server.kill();
  for (const pid of processesWith(LINGERING, LINGERING_MARKER)) process.kill(pid);
  rmSync(folder, { recursive: true, force: true });
});

const call = (id: number, name: string, callArgs: unknown = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: callArgs } });

/** A `serve --tools` of the edge tools, listening, with an MCP session open: `post` sends a message in it. */
/** The thrower's registry: the tool it calls, and a stdio upstream that only a signal ends. */
async function throwerDatabase(): Promise<string> {
  const file = join(folder, 'thrower.db');
  const tools = join(folder, 'no-tools.json');
  writeFileSync(tools, '[]');
  writeFileSync(LINGERING, `setInterval(() => {}, 60_000);\nawait import(${JSON.stringify(join(ROOT, 'test', 'support', 'file-upstream.mjs'))});\n`);
  const registry = await openSqliteToolRegistry({ filename: file });
  try {
    await registry.register(((await import(TOOLS)) as { reckless: { spec: Parameters<typeof registry.register>[0] } }).reckless.spec);
    const [name, value] = LINGERING_MARKER.split('=') as [string, string];
    await registry.putUpstream({ name: 'lingering', transport: { type: 'stdio', command: [process.execPath, LINGERING, tools], env: { [name]: value }, cwd: null } });
  } finally {
    await registry.close();
  }
  return file;
}

async function serveTools(upstreams: 'thrower' | undefined = undefined) {
  const served = upstreams === 'thrower' ? ['--db', await throwerDatabase()] : ['--db', db, '--no-upstreams'];
  const server = spawn(process.execPath, [CLI, 'serve', ...served, '--port', '0', '--no-console', '--tools', TOOLS], { cwd: folder, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  servers.push(server);
  let out = '';
  let err = '';
  server.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  server.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = once(server, 'exit');
  await until(() => /listening on http:\/\/\S+/.test(out), 'serve listening', { timeoutMs: 60_000 });
  const url = `${(/listening on (http:\/\/\S+)/.exec(out) as RegExpExecArray)[1] as string}/mcp`;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const opened = await fetch(url, { method: 'POST', headers, body: JSON.stringify(initializeRequest(1)) });
  const session = { ...headers, 'mcp-session-id': opened.headers.get('mcp-session-id') as string };
  const post = (message: unknown): Promise<Response> => fetch(url, { method: 'POST', headers: session, body: JSON.stringify(message) });
  return { server, post, err: () => err, exited };
}

describe('tool-registry mcp (stdio) against hostile input', () => {
  it('a result over 4 MiB (text and structuredContent together) is an isError result naming the limit; the session goes on', async () => {
    // 3 MiB of data goes out twice: over the bound, under the 10 MiB line that ended the session before.
    const big = await client.client.callTool({ name: 'big', arguments: { bytes: 3 * 1024 * 1024 } });
    expect(big.isError).toBe(true);
    expect(big.structuredContent).toBeUndefined();
    expect(textOf(big)).toMatch(/^TOOL_FAILED: Tool 'big' returned \d+ bytes \(text and structuredContent together\), over this server's limit of 4194304 bytes \(maxResultBytes\)/);
    const small = await client.client.callTool({ name: 'big', arguments: { bytes: 1024 } });
    expect(small.isError).toBeUndefined();
    expect((await client.client.callTool({ name: 'echo', arguments: { text: 'still here' } })).structuredContent).toEqual({ text: 'still here' });
    // A request over --max-message-bytes: its reply carries its id (the SDK's client writes it last), so the call
    // fails at once; with id null the client could not read the reply and waited for its 60 s timeout.
    await expect(client.client.callTool({ name: 'echo', arguments: { text: 'x'.repeat(4_200_000) } }, undefined, { timeout: 30_000 })).rejects.toMatchObject({ code: -32600 });
    expect((await client.client.callTool({ name: 'echo', arguments: { text: 'after' } })).structuredContent).toEqual({ text: 'after' });
    // A log message over the bound is not sent (an 11 MB line ended the SDK client's session: "Not connected"); a short one says so.
    const logged: unknown[] = [];
    client.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logged.push(notification.params.data));
    expect((await client.client.callTool({ name: 'loud', arguments: { bytes: 11_000_000 } })).structuredContent).toEqual({ logged: 11_000_000 });
    expect(logged).toEqual([expect.stringMatching(/^a notifications\/message of \d+ bytes from a tool was not sent: over this server's limit of 4194304 bytes \(maxResultBytes\)$/)]);
    expect((await client.client.callTool({ name: 'echo', arguments: { text: 'alive' } })).structuredContent).toEqual({ text: 'alive' });
    // A handler's promise that rejects with nobody to handle it ended the process (exit 1, a stack): said on stderr, the session goes on.
    expect((await client.client.callTool({ name: 'careless', arguments: {} })).structuredContent).toEqual({ started: true });
    await until(() => client.stderr().includes('careless:'), 'the line on stderr');
    expect(client.stderr()).toMatch(/^tool-registry mcp: a promise rejected and nothing handled it \(a tool handler's work not awaited\?\); the session goes on: Error: careless: nobody awaited this$/m);
    expect((await client.client.callTool({ name: 'echo', arguments: { text: 'still' } })).structuredContent).toEqual({ text: 'still' });
  });

  it('answers every malformed line as JSON-RPC says, refuses calls before initialize, and skips an over-long line', async () => {
    // Before initialize: refused, and the handler never ran.
    raw.send(call(1, 'stubborn'));
    expect((await raw.reply(1)).error?.code).toBe(-32600);
    raw.send('this is not JSON');
    raw.send('{"jsonrpc":"2.0","id":2,"method":"ping"');
    raw.child.stdin?.write(Buffer.from([0x22, 0xff, 0x22, 0x0a])); // "\xff": not UTF-8, refused rather than read as U+FFFD
    raw.send({ jsonrpc: '2.0', id: { not: 'an id' }, method: 'ping' });
    raw.send({ jsonrpc: '1.0', id: 3, method: 'ping' });
    expect((await raw.reply(3)).error).toEqual({ code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0", got "1.0"' });

    // Params the SDK's Server checks itself: -32602 saying what is wrong (it was -32603 with zod's raw issues).
    raw.send({ jsonrpc: '2.0', id: 'bad-init', method: 'initialize', params: { protocolVersion: 5 } });
    expect((await raw.reply('bad-init')).error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid params of initialize: "protocolVersion": [^[{]*$/) });
    raw.send(initializeRequest(4, '2025-06-18'));
    expect((await raw.reply(4)).result?.protocolVersion).toBe('2025-06-18');
    raw.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    // 2025-06-18 removed batches: refused as a whole, saying so.
    raw.send([{ jsonrpc: '2.0', id: 5, method: 'ping' }]);
    // Invalid params: -32602 saying what is wrong (it was -32603 with zod's raw issues).
    raw.send(call(6, 'echo', 'x'));
    expect((await raw.reply(6)).error).toEqual({ code: -32602, message: 'Invalid params of tools/call: "arguments" must be an object, got "x"' });
    // arguments null ended the process (a TypeError in the call's fast path, a stack on stderr).
    raw.send(call(61, 'echo', null));
    expect((await raw.reply(61)).error).toEqual({ code: -32602, message: 'Invalid params of tools/call: "arguments" must be an object, got null' });
    raw.send({ jsonrpc: '2.0', id: 62, method: 'logging/setLevel', params: { level: 'loud' } });
    expect((await raw.reply(62)).error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid params of logging\/setLevel: "level": [^[{]*$/) });
    raw.send({ jsonrpc: '2.0', id: 63, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: { progressToken: { a: 1 } } } });
    expect((await raw.reply(63)).error).toEqual({ code: -32602, message: 'Invalid params of tools/call: "params._meta.progressToken" must be a string or an integer, got {"a":1}' });
    // Params by position are a valid JSON-RPC request whose params MCP cannot take: -32602 (it was -32600, "not a valid Request").
    // A notification so (no id) is owed no reply at all, as JSON-RPC says: a line on stderr (the count of id-null replies below stays 5).
    raw.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: [7, 'by position'] });
    raw.send({ jsonrpc: '2.0', id: 66, method: 'tools/list', params: [] });
    expect((await raw.reply(66)).error).toEqual({ code: -32602, message: 'Invalid params of tools/list: MCP takes params by name (an object), got an array (params by position)' });
    // Params that are not a structured value at all make no JSON-RPC request: -32600, naming the value.
    raw.send({ jsonrpc: '2.0', id: 67, method: 'tools/list', params: null });
    expect((await raw.reply(67)).error).toEqual({ code: -32600, message: 'Invalid Request: "params" must be an object, got null' });
    // A number a double would change is refused, not passed to the handler rounded (as over HTTP).
    raw.send('{"jsonrpc":"2.0","id":64,"method":"tools/call","params":{"name":"big","arguments":{"bytes":18446744073709551616}}}');
    expect((await raw.reply(64)).error).toEqual({ code: -32700, message: 'Parse error: params.arguments.bytes: the number 18446744073709551616 cannot be kept exactly (a double holds 18446744073709552000); write it as a string' });
    // So is a key given twice, which JSON.parse resolves to the last (the call ran echo; HTTP refused it already).
    raw.send('{"jsonrpc":"2.0","id":65,"method":"tools/call","params":{"name":"stubborn","name":"echo","arguments":{"text":"x"}}}');
    expect((await raw.reply(65)).error).toEqual({ code: -32700, message: 'Parse error: params.name: the key "name" is given twice in one object (JSON.parse would keep the last); give it once' });
    // 11 MB on one line: skipped with a reply (its id read from the line's start) and a line on stderr; the session goes on.
    raw.send(`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"${'x'.repeat(11_000_000)}"}}`);
    raw.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
    expect((await raw.reply(8)).result).toEqual({});
    expect((await raw.reply(7)).error).toEqual({ code: -32600, message: expect.stringMatching(/^Invalid Request: a message \(line\) over 4194304 bytes was skipped unread/) });

    const nulls = await raw.nullReplies(5);
    expect(nulls.map((reply) => reply.error?.code)).toEqual([-32700, -32700, -32700, -32600, -32600]);
    expect(nulls[2]?.error?.message).toBe('Parse error: the line is not UTF-8 text');
    expect(nulls[3]?.error?.message).toBe('Invalid Request: "id" must be a string or an integer, got {"not":"an id"}');
    expect(nulls[4]?.error?.message).toMatch(/batches are not accepted in a session of MCP 2025-06-18/);
    expect(raw.stderr()).toMatch(/^tool-registry mcp: a message \(line\) over 4194304 bytes was skipped/m);
    expect(raw.stderr()).toMatch(/^tool-registry mcp: a notification was ignored, not answered \(JSON-RPC answers no notification\): Invalid params of notifications\/cancelled: MCP takes params by name/m);
    expect(raw.stderr()).not.toMatch(/stubborn: started/);
  });

  it('answers a batch in a session of MCP 2025-03-26, which has them', async () => {
    raw2025.send(initializeRequest(1, '2025-03-26'));
    expect((await raw2025.reply(1)).result?.protocolVersion).toBe('2025-03-26');
    raw2025.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    raw2025.send([{ jsonrpc: '2.0', id: 2, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }, call(3, 'echo', { text: 'b' }), 42]);
    await until(() => raw2025.lines().some(Array.isArray), 'the answer to the batch', { timeoutMs: 60_000 });
    const answer = raw2025.lines().find(Array.isArray) as { id: unknown; result?: unknown; error?: { code: number } }[];
    expect(answer).toHaveLength(3);
    expect(answer.find((reply) => reply.id === 2)?.result).toEqual({});
    expect(answer.find((reply) => reply.id === 3)?.result).toEqual({ content: [{ type: 'text', text: '{"text":"b"}' }], structuredContent: { text: 'b' } });
    expect(answer.find((reply) => reply.id === null)?.error?.code).toBe(-32600);

    // A second initialize is refused, as over HTTP: it re-negotiated the revision (here to one without batches).
    raw2025.send(initializeRequest(9, '2025-06-18'));
    expect((await raw2025.reply(9)).error).toEqual({ code: -32600, message: 'Invalid Request: the session is already initialized (MCP 2025-03-26); initialize once per session' });
    raw2025.send([{ jsonrpc: '2.0', id: 10, method: 'ping' }]);
    await until(() => raw2025.lines().filter(Array.isArray).length === 2, 'the answer to the second batch', { timeoutMs: 60_000 });
    expect(raw2025.lines().filter(Array.isArray).at(-1)).toEqual([{ jsonrpc: '2.0', id: 10, result: {} }]);
  });

  it('SIGTERM, and stdin closed: the call in flight is aborted and the process exits without waiting for its handler', async () => {
    raw.send(call(9, 'stubborn'));
    raw2025.send(call(4, 'stubborn'));
    await until(() => raw.stderr().includes('stubborn: started') && raw2025.stderr().includes('stubborn: started'), 'both stubborn calls running', { timeoutMs: 60_000 });
    raw.child.kill('SIGTERM');
    // An over-long line, then the last line, truncated and without its newline: both answered before the session ends.
    raw2025.child.stdin?.write(`${'x'.repeat(4_200_000)}\n`);
    raw2025.child.stdin?.end('{"jsonrpc":"2.0","id":5,"method":"ping"');
    const [signalled, closed] = await Promise.all([raw.exited, raw2025.exited]);
    expect(raw2025.lines().slice(-2)).toMatchObject([{ id: null, error: { code: -32600 } }, { id: null, error: { code: -32700 } }]);
    // The input ended after a message was lost (skipped): exit 1 saying so. A signal is a stop: exit 0 (raw skipped the 11 MB line too).
    expect([signalled, closed]).toEqual([0, 1]);
    expect(raw2025.stderr()).toMatch(/^error IO_ERROR: 1 message was over --max-message-bytes \(4194304 bytes\) on standard input/m);
    // The handlers would have written "finished" after 15 s, before an exit that waited for them.
    for (const child of [raw, raw2025]) {
      expect(child.stderr()).toContain('stubborn: aborted');
      expect(child.stderr()).not.toContain('stubborn: finished');
      // It said "a tool handler was still running", also when only a timer of the module was (no call at all).
      expect(child.stderr()).toMatch(/^tool-registry mcp: still running 1000 ms after the session closed \(a tool handler that ignores its abort signal, or a timer or connection of the tools module\); exiting without it$/m);
      // Its work rejected on the abort after the shutdown began: a line, not Node's default (exit 1, a stack).
      expect(child.stderr()).toMatch(/^tool-registry mcp: a promise rejected and nothing handled it \(a tool handler's work not awaited\?\); the session goes on: Error: stubborn: its work failed on the abort$/m);
      expect(child.stderr()).not.toMatch(/^\s+at /m);
    }
  });

  it('deprecate and undeprecate from another process: list_changed, the description says so, call results carry it in _meta', async () => {
    const before = client.changes();
    expect((await runCli(['deprecate', 'legacy', '--message', 'Retired.', '--replacement', 'echo', '--db', db], { cwd: folder })).code).toBe(0);
    await client.changedAfter(before);
    const listed = (await listAll(client.client)).tools.find((tool) => tool.name === 'legacy');
    expect(listed?.description).toBe('Old tool\n\nDeprecated: Retired. Use echo instead.');
    const deprecated = await client.client.callTool({ name: 'legacy', arguments: {} });
    expect(deprecated.structuredContent).toEqual({ old: true });
    expect(deprecated._meta).toEqual({ 'tool-registry/deprecation': { message: 'Retired.', replacement: 'echo', sunset: null } });

    const deprecatedSeen = client.changes();
    expect((await runCli(['undeprecate', 'legacy', '--db', db], { cwd: folder })).code).toBe(0);
    await client.changedAfter(deprecatedSeen);
    expect((await listAll(client.client)).tools.find((tool) => tool.name === 'legacy')?.description).toBe('Old tool');
    expect((await client.client.callTool({ name: 'legacy', arguments: {} }))._meta).toBeUndefined();
  });

  it('calls racing a disable by another process: once the disable has committed, no call runs', async () => {
    // This process disables (the child is another process): the commit's return is the sharpest "after".
    const registry = await openSqliteToolRegistry({ filename: db });
    let committed = false;
    const disabling = registry.setEnabled('echo', false).then(() => {
      committed = true;
    });
    const outcomes: { after: boolean; outcome: string | number | undefined }[] = [];
    while (outcomes.filter((entry) => entry.after).length < 20) {
      const after = committed;
      const outcome = await client.client.callTool({ name: 'echo', arguments: { text: 'x' } }).then(
        () => 'ran',
        (error: { code?: number }) => error.code,
      );
      outcomes.push({ after, outcome });
    }
    await disabling;
    await registry.close();
    expect(outcomes.filter((entry) => entry.after).map((entry) => entry.outcome)).toEqual(Array(20).fill(-32602));
    expect(await protocolErrorOf(client.client.callTool({ name: 'echo', arguments: { text: 'x' } }))).toBe(-32602);
  });

  it("what a tools module writes to stdout (at import, in a handler, without a newline) goes to stderr: stdout carries the protocol alone", async () => {
    // A line of text was an error at the client; a write without a newline spoiled the next answer (the client timed out).
    const chatty = spawnRawStdio(['--tools', join(ROOT, 'test', 'fixtures', 'mcp-stdout-tools.mjs'), '--db', join(folder, 'stdout.db'), '--publish'], folder);
    try {
      chatty.send(initializeRequest(1));
      expect((await chatty.reply(1)).result).toMatchObject({ serverInfo: { name: 'tool-registry' } });
      chatty.send(call(2, 'chatty'));
      expect((await chatty.reply(2)).result).toMatchObject({ structuredContent: { said: true } });
      expect(chatty.stderr()).toContain('stdout-tools: loading (no newline)');
      expect(chatty.stderr()).toContain('chatty: console.log in a handler\nchatty: no newline');
    } finally {
      chatty.child.kill();
    }
  });

  it('a tools module that fails to load (throws null, a syntax error, a missing file, exports that throw when read, an Error whose message throws when read, a top-level await that never settles, a throw in a timer while it loads, a rejection it leaves unhandled, process.exit(0)) is a usage error without a stack', async () => {
    writeFileSync(join(folder, 'throws-null.mjs'), 'throw null;\n');
    writeFileSync(join(folder, 'syntax.mjs'), 'export const = 1;\n');
    writeFileSync(join(folder, 'getter.mjs'), 'export default { get tools() { throw new Error("no tools today"); } };\n');
    writeFileSync(join(folder, 'never-settles.mjs'), 'await new Promise(() => {});\n');
    writeFileSync(join(folder, 'unreadable.mjs'), 'throw Object.defineProperty(new Error(), "message", { get() { throw new Error("no message"); } });\n');
    // Thrown outside the import's own promise: in a timer its top-level await waits on, and a rejection nobody handles.
    writeFileSync(join(folder, 'throws-later.mjs'), 'setTimeout(() => { throw new Error("late boom"); }, 0);\nawait new Promise((settle) => setTimeout(settle, 200));\n');
    writeFileSync(join(folder, 'rejects.mjs'), 'export default Promise.reject(new Error("nobody caught this"));\n');
    writeFileSync(join(folder, 'exits.mjs'), 'process.exit(0);\n');
    // Processes of their own: in this one the event loop never runs empty, which is how the stall is seen, and vitest hears uncaught errors.
    const own = ['never-settles.mjs', 'throws-later.mjs', 'rejects.mjs', 'exits.mjs'].map((module) => runCliAsync(['mcp', '--tools', module, '--db', db], { cwd: folder }));
    const outcomes = [];
    for (const module of ['throws-null.mjs', 'syntax.mjs', 'missing.mjs', 'getter.mjs', 'unreadable.mjs']) outcomes.push(await runCli(['mcp', '--tools', module, '--db', db], { cwd: folder }));
    outcomes.push(...(await Promise.all(own)));
    const [thrown, syntax, missing, getter, unreadable, stalled, later, rejected, exits] = outcomes;
    for (const outcome of outcomes) {
      expect(outcome.code).toBe(2);
      expect(outcome.stdout).toBe('');
      expect(outcome.stderr).not.toMatch(/^\s+at /m);
      expect(outcome.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(thrown?.stderr).toMatch(/^error USAGE: cannot load the tools module \S*throws-null\.mjs: it threw null \(not an Error\)$/m);
    // In this process vitest's loader parses the module (RolldownError); the bin says "SyntaxError: Unexpected token '='".
    expect(syntax?.stderr).toMatch(/^error USAGE: cannot load the tools module \S*syntax\.mjs: \w*Error: \S.*$/m);
    expect(missing?.stderr).toMatch(/^error USAGE: the tools module \S*missing\.mjs does not exist$/m);
    // It was error INTERNAL with a stack.
    expect(getter?.stderr).toMatch(/^error USAGE: the tools module \S*getter\.mjs: reading its exports failed: Error: no tools today$/m);
    // Reading what it threw threw too: it was error INTERNAL with a stack.
    expect(unreadable?.stderr).toMatch(/^error USAGE: cannot load the tools module \S*unreadable\.mjs: it threw a value that cannot be shown \(reading its name or message threw\)$/m);
    // It was exit 13 (Node's "unsettled top-level await") and not a word on stderr.
    expect(stalled?.stderr).toMatch(/^error USAGE: cannot load the tools module \S*never-settles\.mjs: its top-level await never settled /m);
    // Both were exit 1 with a stack (the second after a usage error saying it exports no tools).
    expect(later?.stderr).toMatch(/^error USAGE: cannot load the tools module \S*throws-later\.mjs: Error: late boom$/m);
    expect(rejected?.stderr).toMatch(/^error USAGE: cannot load the tools module \S*rejects\.mjs: Error: nobody caught this$/m);
    // It was exit 0 and not a word: the client saw the server vanish.
    expect(exits?.stderr).toMatch(/^error USAGE: the tools module \S*exits\.mjs ended the process while it loaded \(process\.exit\(0\)\)$/m);
  });

  it('serve --tools, SIGTERM with a call in flight whose handler ignores its signal: the call gets an error reply and the process exits without the handler', async () => {
    // The next test's server starts meanwhile (its start is most of its time).
    thrower ??= serveTools('thrower');
    const { server, post, err, exited } = await serveTools();
    // A handler's promise that rejects with nobody to handle it ended the server (exit 1, a stack): a warning line, the server goes on.
    expect(await (await post(call(5, 'careless'))).json()).toMatchObject({ id: 5, result: { structuredContent: { started: true } } });
    await until(() => err().includes('careless:'), 'the warning on stderr');
    const warned = err().split('\n').find((line) => line.includes('careless:')) as string;
    expect(JSON.parse(warned)).toEqual({ time: expect.any(String), level: 'warn', message: "a promise rejected and nothing handled it (a tool handler's work not awaited?); the server goes on: Error: careless: nobody awaited this" });
    const pending = post(call(2, 'stubborn'));
    await until(() => err().includes('stubborn: started'), 'the stubborn call running', { timeoutMs: 60_000 });
    server.kill('SIGTERM');
    // It was 200 with the body [] (the session's stream ended unanswered): the client waited for its answer.
    expect(await (await pending).json()).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32000, message: expect.stringMatching(/^The session ended before this request was answered/) } });
    expect((await exited)[0]).toBe(0);
    // The process used to wait for the handler (15 s) and exit after it wrote "finished".
    expect(err()).toContain('stubborn: aborted');
    expect(err()).not.toContain('stubborn: finished');
    expect(err()).toMatch(/^tool-registry serve: still running 1000 ms after the server closed \(a tool handler that ignores its abort signal\); exiting without it$/m);
    // Its work rejected on the abort once the server had closed: a warning, not Node's default (exit 1, a stack).
    expect(err()).toContain('"level":"warn","message":"a promise rejected and nothing handled it (a tool handler\'s work not awaited?); the server goes on: Error: stubborn: its work failed on the abort"');
    expect(err()).not.toMatch(/^\s+at /m);
  });

  it('serve --tools, an exception a handler leaves thrown in a timer: one JSON line (level error) and exit 1, not a stack; its stdio upstream ended with it', async () => {
    const { post, err, exited } = await (thrower ??= serveTools('thrower'));
    // The session's initialize started the namespace's gateway, which spawned the upstream.
    await until(() => processesWith(LINGERING, LINGERING_MARKER).length === 1, 'the stdio upstream running', { timeoutMs: 60_000 });
    expect((await post(call(2, 'reckless'))).status).toBe(200);
    // Node's default: exit 1 and a stack of several lines, not JSON (a log pipeline reading stderr as JSON lines met text).
    expect((await exited)[0]).toBe(1);
    // It ran on: it saw only its input end. Now its input ends and SIGTERM follows within 0.3 s, before the exit.
    await until(() => processesWith(LINGERING, LINGERING_MARKER).length === 0, 'the stdio upstream ended', { timeoutMs: 5_000 });
    const lines = err().trim().split('\n').map((line) => JSON.parse(line) as { level?: string; message?: string });
    expect(lines.at(-1)).toEqual({
      time: expect.any(String),
      level: 'error',
      message: 'an exception was thrown where nothing could catch it (in a timer or callback of the tools module?); the process ends, as Node advises: Error: reckless: thrown in a timer\\nsecond line',
    });
  });
});
