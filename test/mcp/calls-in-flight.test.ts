// The bound on one session's tools/calls in flight (--max-calls-in-flight), over a real socket
// (`tool-registry serve --tools`) and over stdio (`tool-registry mcp`), with the SDK's own Client:
// one call past the bound is refused at once with a JSON-RPC error naming it, the session goes on,
// and a place frees when a call ends. (10,000 slow calls of one session were all accepted before.)
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import type { ToolSpecInput } from '../../src/index.js';
import { CLI, childEnv, listeningUrl, stopChild, useChildProcessTimeout } from '../cli/helpers.js';
import { until } from '../support/waiting.js';
import { TOOLS_MODULE, connectStdio, listAll } from './helpers.js';

useChildProcessTimeout();

const folder = mkdtempSync(join(tmpdir(), 'tool-registry-mcp-inflight-'));
const db = join(folder, 'tools.db');
let server: ChildProcess;
let base: string;

beforeAll(async () => {
  const tools = (await import(TOOLS_MODULE)) as Record<string, { spec?: ToolSpecInput }>;
  const registry = await openSqliteToolRegistry({ filename: db });
  await registry.registerMany(Object.values(tools).flatMap((tool) => (tool.spec === undefined ? [] : [tool.spec])));
  await registry.close();
  // A call timeout far beyond the test: only the bound and cancellations end the hanging calls.
  const args = ['serve', '--db', db, '--port', '0', '--no-console', '--no-upstreams', '--tools', TOOLS_MODULE, '--call-timeout-ms', '600000', '--max-calls-in-flight', '3'];
  server = spawn(process.execPath, [CLI, ...args], { cwd: folder, env: childEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
  base = await listeningUrl(server);
}, 120_000);

afterAll(async () => {
  await stopChild(server);
  rmSync(folder, { recursive: true, force: true });
});

/** What a call settled with: its result, or its JSON-RPC error's code, message and data. */
type Settled = { result: unknown } | { code: number; message: string; data: unknown };
function settle(promise: Promise<unknown>): { settled: Settled | undefined } {
  const state: { settled: Settled | undefined } = { settled: undefined };
  promise.then(
    (result) => (state.settled = { result }),
    (error: { code: number; message: string; data?: unknown }) => (state.settled = { code: error.code, message: error.message, data: error.data }),
  );
  return state;
}

/**
 * Starts `bound + 1` hanging calls, waits for the one refused, then checks that a call is
 * refused while `bound` hang, that the session still lists, and that cancelling them frees it.
 */
async function exerciseBound(client: Client, bound: number, flagText: RegExp): Promise<void> {
  const cancel = new AbortController();
  const hanging = Array.from({ length: bound + 1 }, () => settle(client.callTool({ name: 'hang', arguments: {} }, undefined, { signal: cancel.signal, timeout: 600_000 })));
  await until(() => hanging.some((call) => call.settled !== undefined), 'the call past the bound to be refused');
  const refused = hanging.filter((call) => call.settled !== undefined);
  expect(refused).toHaveLength(1);
  const refusal = refused[0]?.settled as { code: number; message: string; data: unknown };
  expect(refusal.code).toBe(-32000);
  expect(refusal.message).toMatch(new RegExp(`Too many calls in flight: this session has ${bound} tools/call requests unanswered`));
  expect(refusal.message).toMatch(flagText);
  expect(refusal.data).toEqual({ limit: bound, resource: 'calls' });
  // The others still hang: any further call is refused at once, a quick one too.
  const echo = settle(client.callTool({ name: 'echo', arguments: { text: 'x' } }));
  await until(() => echo.settled !== undefined, 'the echo call to be answered');
  expect(echo.settled).toMatchObject({ code: -32000, data: { limit: bound } });
  // The session lives on: it lists, and once the hanging calls are cancelled, it calls again.
  expect((await listAll(client)).tools.map((tool) => tool.name)).toContain('echo');
  cancel.abort();
  let answer: unknown;
  await until(async () => {
    try {
      answer = await client.callTool({ name: 'echo', arguments: { text: 'again' } });
      return true;
    } catch (error) {
      // Until the server has heard the cancellations, the bound still holds.
      if ((error as { code?: number }).code !== -32000) throw error;
      return false;
    }
  }, 'a place to free after the cancellations', { pollMs: 20 });
  expect(answer).toMatchObject({ structuredContent: { text: 'again' } });
}

describe('a session\'s calls in flight are bounded (--max-calls-in-flight)', () => {
  it('serve: the call past the bound is refused at once with -32000 naming it; the session lists, and calls again once one ends', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
    const client = new Client({ name: 'inflight', version: '1.0.0' });
    await client.connect(transport);
    await exerciseBound(client, 3, /--max-calls-in-flight/);
    // Another session has its own bound: none of its calls were refused meanwhile.
    const other = new Client({ name: 'inflight-2', version: '1.0.0' });
    const otherTransport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
    await other.connect(otherTransport);
    expect(await other.callTool({ name: 'echo', arguments: { text: 'y' } })).toMatchObject({ structuredContent: { text: 'y' } });
    for (const [each, eachTransport] of [[client, transport], [other, otherTransport]] as const) {
      await eachTransport.terminateSession();
      await each.close();
    }
  });

  it('mcp (stdio): the same bound, from --max-calls-in-flight', async () => {
    const { client } = await connectStdio(['--tools', TOOLS_MODULE, '--db', db, '--no-upstreams', '--call-timeout-ms', '600000', '--max-calls-in-flight', '2'], folder);
    try {
      await exerciseBound(client, 2, /--max-calls-in-flight/);
    } finally {
      await client.close();
    }
  });
});
