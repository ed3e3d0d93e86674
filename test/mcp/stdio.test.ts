// `tool-registry mcp` over stdio, driven by the SDK's own Client: two sessions (one with a
// persona policy) on one SQLite file, governed by other processes (the command, sqlite3).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliAsync, useChildProcessTimeout } from '../cli/helpers.js';
import { HAS_SQLITE3, NEEDS_SQLITE3, SQLITE3 } from '../support/sqlite3-shell.js';
import { TOOLS_MODULE, connectStdio, listAll, protocolErrorOf, textOf } from './helpers.js';

/**
 * The shell waits for the lock as an operator's should (`.timeout`): the mcp processes write
 * their audit rows (issue 37) every 250 ms, and a shell without a busy timeout gives up at once.
 */
const WAIT_FOR_LOCK = ['-cmd', '.timeout 10000'];
import type { Watched } from './helpers.js';

useChildProcessTimeout();

const folder = mkdtempSync(join(tmpdir(), 'tool-registry-mcp-stdio-'));
const db = join(folder, 'tools.db');
const ALL = ['boom', 'echo', 'hang', 'listing', 'read_notes', 'search'];
let admin: Watched;
let reader: Watched;

beforeAll(async () => {
  writeFileSync(join(folder, 'reader.json'), JSON.stringify({ persona: 'reader', allowed_permissions: ['READ_FS'], allowed_tools: ['echo', 'read_notes', 'search'] }));
  admin = await connectStdio(['--tools', TOOLS_MODULE, '--db', db, '--publish', '--call-timeout-ms', '300', '--page-size', '2'], folder);
  reader = await connectStdio(['--tools', TOOLS_MODULE, '--db', db, '--policy', 'reader.json'], folder);
}, 120_000);

afterAll(async () => {
  await admin?.client.close();
  await reader?.client.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('tool-registry mcp (stdio)', () => {
  it('declares tools.listChanged and lists every tool in name order, two a page', async () => {
    expect(admin.client.getServerCapabilities()).toEqual({ tools: { listChanged: true }, logging: {} });
    expect(admin.client.getServerVersion()?.name).toBe('tool-registry');
    const { tools, pages } = await listAll(admin.client);
    expect(tools.map((tool) => tool.name)).toEqual(ALL);
    expect(pages).toEqual([2, 2, 2]);
    const echo = tools.find((tool) => tool.name === 'echo');
    expect(echo).toEqual({
      name: 'echo',
      title: 'Echo',
      description: 'Returns its text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      outputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    });
    // An array output schema is not an MCP outputSchema: left out, results go as text.
    expect(tools.find((tool) => tool.name === 'listing')).toEqual({ name: 'listing', inputSchema: { type: 'object' } });
    expect(await protocolErrorOf(admin.client.listTools({ cursor: 'not a cursor' }))).toBe(-32602);
  });

  it('calls: a result, invalid arguments, a handler that throws, one that hangs past the timeout, an unknown tool', async () => {
    const ok = await admin.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(ok).toEqual({ content: [{ type: 'text', text: '{"text":"hi"}' }], structuredContent: { text: 'hi' } });
    const listed = await admin.client.callTool({ name: 'listing', arguments: {} });
    expect(listed).toEqual({ content: [{ type: 'text', text: '["a","b"]' }] });

    const invalid = await admin.client.callTool({ name: 'echo', arguments: { text: 1 } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/^INVALID_ARGUMENTS: .*\n\/text: /);

    const thrown = await admin.client.callTool({ name: 'boom', arguments: {} });
    expect(thrown.isError).toBe(true);
    expect(textOf(thrown)).toBe("TOOL_FAILED: Tool 'boom' failed: kaboom");

    const hung = await admin.client.callTool({ name: 'hang', arguments: {} });
    expect(hung.isError).toBe(true);
    expect(textOf(hung)).toMatch(/^TIMEOUT: Tool 'hang' did not finish within 300 ms/);

    expect(await protocolErrorOf(admin.client.callTool({ name: 'nope', arguments: {} }))).toBe(-32602);
  });

  it('a persona lists and calls only what its policy allows', async () => {
    const { tools } = await listAll(reader.client);
    expect(tools.map((tool) => tool.name)).toEqual(['echo', 'read_notes']);
    expect((await reader.client.callTool({ name: 'read_notes', arguments: {} })).structuredContent).toEqual({ notes: ['n1'] });
    // search needs NET_HTTP; boom is not in the allowlist: both unknown to this session.
    expect(await protocolErrorOf(reader.client.callTool({ name: 'search', arguments: {} }))).toBe(-32602);
    expect(await protocolErrorOf(reader.client.callTool({ name: 'boom', arguments: {} }))).toBe(-32602);
  });

  it(`disable from another process: both sessions hear list_changed, echo is gone; a sqlite3 hand edit brings it back${NEEDS_SQLITE3}`, async () => {
    const [adminSeen, readerSeen] = [admin.changes(), reader.changes()];
    const disabled = await runCliAsync(['disable', 'echo', '--db', db], { cwd: folder });
    expect(disabled.code).toBe(0);
    await Promise.all([admin.changedAfter(adminSeen), reader.changedAfter(readerSeen)]);
    expect((await listAll(admin.client)).tools.map((tool) => tool.name)).toEqual(ALL.filter((name) => name !== 'echo'));
    expect((await listAll(reader.client)).tools.map((tool) => tool.name)).toEqual(['read_notes']);
    expect(await protocolErrorOf(admin.client.callTool({ name: 'echo', arguments: { text: 'x' } }))).toBe(-32602);

    // A change the persona cannot see (boom) reaches the admin session only.
    const [adminBefore, readerBefore] = [admin.changes(), reader.changes()];
    const toggle = async (on: boolean) => {
      if (!HAS_SQLITE3) return expect((await runCliAsync([on ? 'enable' : 'disable', 'boom', '--db', db], { cwd: folder })).code).toBe(0);
      expect(spawnSync(SQLITE3, [...WAIT_FOR_LOCK, db, `UPDATE tool_registrations SET enabled = ${on ? 1 : 0} WHERE tool_name = 'boom';`], { encoding: 'utf8' }).status).toBe(0);
    };
    await toggle(false);
    await admin.changedAfter(adminBefore);
    await toggle(true);
    await admin.changedAfter(adminBefore + 1);
    expect(reader.changes()).toBe(readerBefore);

    if (HAS_SQLITE3) {
      const [a, r] = [admin.changes(), reader.changes()];
      const edit = spawnSync(SQLITE3, [...WAIT_FOR_LOCK, db, "UPDATE tool_registrations SET enabled = 1 WHERE tool_name = 'echo';"], { encoding: 'utf8' });
      expect(edit.stderr).toBe('');
      await Promise.all([admin.changedAfter(a), reader.changedAfter(r)]);
    } else {
      expect((await runCliAsync(['enable', 'echo', '--db', db], { cwd: folder })).code).toBe(0);
      await admin.changedAfter(admin.changes() - 1);
    }
    expect((await listAll(reader.client)).tools.map((tool) => tool.name)).toEqual(['echo', 'read_notes']);
    expect((await admin.client.callTool({ name: 'echo', arguments: { text: 'back' } })).structuredContent).toEqual({ text: 'back' });
  });

  it('refuses a module without tools (usage, exit 2) and an invalid policy (VALIDATION_FAILED, exit 1), writing nothing to stdout', async () => {
    writeFileSync(join(folder, 'empty.mjs'), 'export const answer = 42;\n');
    writeFileSync(join(folder, 'bad-policy.json'), JSON.stringify({ persona: 'x', allowed_tool: ['echo'] }));
    const [empty, bad] = await Promise.all([
      runCliAsync(['mcp', '--tools', 'empty.mjs', '--db', db], { cwd: folder }),
      runCliAsync(['mcp', '--tools', TOOLS_MODULE, '--db', db, '--policy', 'bad-policy.json'], { cwd: folder }),
    ]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/^error USAGE: the tools module .*empty\.mjs exports no tools/);
    // An empty default export (an array, a ToolSet) was served as it was, without a word: nothing at all under --no-upstreams.
    writeFileSync(join(folder, 'empty-default.mjs'), 'export default [];\n');
    const emptyDefault = await runCli(['mcp', '--tools', 'empty-default.mjs', '--db', db, '--no-upstreams'], { cwd: folder });
    expect([emptyDefault.code, emptyDefault.stdout]).toEqual([2, '']);
    expect(emptyDefault.stderr).toMatch(/^error USAGE: the tools module .*empty-default\.mjs exports no tools: its default export holds none/);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error VALIDATION_FAILED: /);
    expect(empty.stdout + bad.stdout).toBe('');
  });

  it('a time in ms past the longest timer Node keeps (2147483647) is a usage error naming it: Node ran such a timer after 1 ms', async () => {
    // mcp took it, then refused every call (-32603 from invoke()); serve's sessions ended 1 ms after each request.
    // (serve's --host 10.99.99.99 is a usage error of its own, after the options are read: it keeps the test from listening.)
    // Usage errors are the command's parse, in this process (runCli); the accepted bound runs as a process.
    const call = await runCli(['mcp', '--tools', TOOLS_MODULE, '--db', db, '--call-timeout-ms', '2147483648'], { cwd: folder });
    const idle = await runCli(['serve', '--db', db, '--host', '10.99.99.99', '--port', '0', '--session-idle-ms', '99999999999'], { cwd: folder });
    const serveCall = await runCli(['serve', '--db', db, '--host', '10.99.99.99', '--port', '0', '--call-timeout-ms', '99999999999'], { cwd: folder });
    for (const [result, option, value] of [[call, '--call-timeout-ms', '2147483648'], [idle, '--session-idle-ms', '99999999999'], [serveCall, '--call-timeout-ms', '99999999999']] as const) {
      expect([result.code, result.stderr.split('\n')[0]]).toEqual([2, `error USAGE: option '${option} <ms>' argument '${value}' is invalid. expected a time in ms, 1 to 2147483647, got "${value}"`]);
    }
    expect((await runCliAsync(['mcp', '--tools', TOOLS_MODULE, '--db', db, '--call-timeout-ms', '2147483647'], { cwd: folder })).code).toBe(0);
  });
});
