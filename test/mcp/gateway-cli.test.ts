// The gateway in the commands (issue 37): `tool-registry serve` without --tools (its mounts,
// serveMounts, in a server of this process listening on a real socket) and `tool-registry
// mcp` without --tools (the command's run() in this process, over piped stdin and stdout: the
// bin's own process behaviour is in test/mcp/stdio.test.ts) serve a SQLite registry's approved
// upstream tools (an upstream of our own, test/support/rug-pull-server.mjs, over stdio); each
// stops its upstream children when it stops (no orphans).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// Newline-delimited JSON-RPC over two streams: the same framing on the client's side.
import { StdioServerTransport as StreamsTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMounts } from '../../src/cli/serve-mounts.js';
import { openSqliteToolRegistry } from '../../src/index.js';
import { upstreamToolSpec } from '../../src/mcp/index.js';
import { createToolRegistryServer, listen } from '../../src/server/index.js';
import { run } from '../../src/cli/program.js';
import { ROOT, childEnv, errorCode, runCli, useChildProcessTimeout } from '../cli/helpers.js';
import { processesWith } from '../support/upstreams.js';
import { until } from '../support/waiting.js';

useChildProcessTimeout();

const SERVER = join(ROOT, 'test/support/rug-pull-server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'gateway-cli-'));
const db = join(dir, 'tools.db');
const descriptionFile = join(dir, 'description.txt');
const WEATHER = 'Tells the weather of a city.';

/** Writes to `file` the upstream `rug` (our server, with `env` besides DESCRIPTION_FILE) and its approved `weather`. */
async function storeUpstream(file: string, env: Record<string, string>): Promise<void> {
  const registry = await openSqliteToolRegistry({ filename: file });
  try {
    const row = await registry.putUpstream({ name: 'rug', transport: { type: 'stdio', command: [process.execPath, SERVER], env: { DESCRIPTION_FILE: descriptionFile, ...env }, cwd: null } });
    // Only `weather` is approved: what the server lists, written out (no process to list it).
    await registry.register(upstreamToolSpec(row, { name: 'weather', description: WEATHER, inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }, '1.0.0'));
  } finally {
    await registry.close();
  }
}

/** `tool-registry mcp --db file` run in this process over piped stdio, an SDK client connected to it. */
async function startMcp(file: string): Promise<{ client: Client; stdin: PassThrough; ended: Promise<number> }> {
  const [stdin, stdout, stderr] = [new PassThrough(), new PassThrough(), new PassThrough()];
  stderr.resume();
  const ended = run(['mcp', '--db', file, '--sync-interval', '10m'], { stdin, stdout, stderr, env: childEnv() });
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamsTransport(stdout, stdin));
  return { client, stdin, ended };
}

beforeAll(async () => {
  writeFileSync(descriptionFile, WEATHER);
  await storeUpstream(db, { CANCEL_FILE: join(dir, 'cancelled') });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function listAndCall(client: Client): Promise<void> {
  // The upstream child may connect after the first list on a busy machine (then list_changed follows).
  await until(async () => (await client.listTools()).tools.length > 0, 'the upstream tool listed', { timeoutMs: 60_000, pollMs: 100 });
  expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['rug_weather']);
  expect(await client.callTool({ name: 'rug_weather', arguments: { city: 'Oslo' } })).toMatchObject({ content: [{ type: 'text', text: 'sunny in Oslo' }], structuredContent: { city: 'Oslo' } });
}

describe('the commands serve upstream tools', () => {
  it("serve's mounts (no --tools): /mcp lists and calls the approved upstream tool; stopping the server ends the upstream child", async () => {
    const registry = await openSqliteToolRegistry({ filename: db });
    const server = createToolRegistryServer({ registries: registry, mounts: await serveMounts({ syncInterval: 600_000 }) });
    const running = await listen(server, { host: '127.0.0.1', port: 0 });
    try {
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', running.url)));
      await listAndCall(client);
      expect(processesWith('rug-pull-server', descriptionFile)).toHaveLength(1);
      await client.close();
    } finally {
      await running.close();
      await registry.close();
    }
    await until(() => processesWith('rug-pull-server', descriptionFile).length === 0, 'the upstream child to end with the server');
  });

  it('mcp (no --tools): the stdio session lists and calls it; closing the session ends the upstream child', async () => {
    const { client, stdin, ended } = await startMcp(db);
    await listAndCall(client);
    expect(processesWith('rug-pull-server', descriptionFile)).toHaveLength(1);
    await client.close();
    stdin.end(); // the session's end, as a client closing the pipe
    expect(await ended).toBe(0);
    await until(() => processesWith('rug-pull-server', descriptionFile).length === 0, 'the upstream child to end with mcp');
  });
});

describe('an upstream that ignores its end', () => {
  it('mcp: one that ignores the end of its input and SIGTERM holds the exit under a second: SIGTERM 0.3 s after its input closed, then SIGKILL (the SDK waited 2 s for each)', async () => {
    const stubbornDb = join(dir, 'stubborn.db');
    const log = join(dir, 'stubborn.log');
    await storeUpstream(stubbornDb, { STUBBORN_LOG: log });
    const { client, stdin, ended } = await startMcp(stubbornDb);
    await listAndCall(client);
    await client.close();
    stdin.end();
    expect(await ended).toBe(0);
    expect(processesWith('rug-pull-server', log)).toEqual([]);
    const notes = Object.fromEntries(readFileSync(log, 'utf8').trim().split('\n').map((line) => line.split(' ')).map(([what, ms]) => [what, Number(ms)]));
    expect(Object.keys(notes)).toEqual(['end', 'SIGTERM']);
    // Not a speed: the SDK's transport sends SIGTERM on a fixed 2 s timer (2001 ms here on the old
    // code), ours 0.3 s after the input closed; only a 300 ms timer running 1.5 s late would fail
    // (the child notes both with its own lag, so the line keeps clear of 2 s).
    expect((notes.SIGTERM as number) - (notes.end as number)).toBeLessThan(1800);
  });
});

describe('the options', () => {
  it('warns, and serves, when --max-result-bytes is over the 10 MiB line the SDK stdio client reads', async () => {
    // The upstream tools of a registry that has none: a session that ends with its input.
    const empty = join(dir, 'max-result.db');
    expect((await runCli(['migrate', '--db', empty], { cwd: dir })).code).toBe(0);
    const served = async (bytes: string) => runCli(['mcp', '--db', empty, '--max-result-bytes', bytes], { cwd: dir });
    // 10485760 itself was taken without a word: the response around the result makes the line longer (below).
    const over = await served('10485760');
    expect([over.code, over.stderr]).toEqual([
      0,
      expect.stringContaining("--max-result-bytes 10485760 and the response around a result (up to 64 bytes) are over the 10485760 bytes (10 MiB) a line the MCP SDK's stdio client reads"),
    ]);
  });

  it('the largest --max-result-bytes taken without a warning is a result the SDK stdio client reads whole (the response around it counts too)', async () => {
    // 10485760 was taken without a word, and a result of 10485739 bytes ended the client's session
    // ("ReadBuffer exceeded maximum size"): the line is the result plus its JSON-RPC envelope.
    const largest = 10 * 1024 * 1024 - 64;
    const file = join(dir, 'largest-result.db');
    const tools = join(dir, 'largest-result.mjs');
    // A string result is {"content":[{"type":"text","text":"..."}]}: 39 bytes around the text. The
    // command runs in this process, from src/: its tools must be defineTool's of the same module.
    writeFileSync(tools, `import { defineTool } from ${JSON.stringify(join(ROOT, 'src/index.ts'))};\nexport const whole = defineTool({ name: 'whole', input_schema: { type: 'object' }, handler: () => 'x'.repeat(${largest - 39}) });\n`);
    const [stdin, stdout, stderr] = [new PassThrough(), new PassThrough(), new PassThrough()];
    let said = '';
    stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
    const ended = run(['mcp', '--db', file, '--tools', tools, '--publish', '--no-upstreams', '--max-result-bytes', String(largest)], { stdin, stdout, stderr, env: childEnv() });
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamsTransport(stdout, stdin));
    const result = (await client.callTool({ name: 'whole', arguments: {} })) as { isError?: boolean; content: { text: string }[] };
    expect([result.isError ?? false, JSON.stringify({ content: result.content }).length]).toEqual([false, largest]);
    await client.close();
    stdin.end();
    expect(await ended).toBe(0);
    expect(said).not.toContain('--max-result-bytes');
    const over = await runCli(['mcp', '--db', file, '--max-result-bytes', String(largest + 1)], { cwd: dir });
    expect(over.stderr).toContain(`--max-result-bytes ${largest + 1} `);
  });

  it('refuses a --sync-interval that is no duration, and mcp with nothing to serve (usage, exit 2)', async () => {
    const bad = await runCli(['mcp', '--db', db, '--sync-interval', '5x'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--sync-interval');
    // Past the longest timer: the bound is said (it read "a duration > 0", as if 600h were not one).
    const long = await runCli(['mcp', '--db', db, '--sync-interval', '600h'], { cwd: dir });
    expect([long.code, long.stderr]).toEqual([2, expect.stringContaining('expected a duration from 1ms to 596h (the longest timer Node keeps)')]);
    const nothing = await runCli(['mcp', '--db', db, '--no-upstreams'], { cwd: dir });
    expect(nothing.code).toBe(2);
    expect(errorCode(nothing.stderr)).toBe('USAGE');
    expect(nothing.stdout).toBe('');
    // --sync-interval with --no-upstreams was taken and did nothing.
    for (const command of ['mcp', 'serve']) {
      const ignored = await runCli([command, '--db', db, '--tools', 'x.mjs', '--no-upstreams', '--sync-interval', '5m'], { cwd: dir });
      expect([command, ignored.code, ignored.stderr.split('\n')[0]]).toEqual([command, 2, 'error USAGE: --sync-interval applies to the upstream tools, which --no-upstreams leaves out']);
    }
    // --publish without --tools published nothing, exit 0, and created a missing database.
    const fresh = join(dir, 'never-created.db');
    const publish = await runCli(['mcp', '--db', fresh, '--publish'], { cwd: dir });
    expect([publish.code, publish.stdout, publish.stderr.split('\n')[0], existsSync(fresh)]).toEqual([2, '', 'error USAGE: --publish needs --tools MODULE (it publishes the tools of that module)', false]);
  });
});
