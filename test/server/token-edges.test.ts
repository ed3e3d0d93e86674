// Tokens that end and limits refused cleanly (issue 40), on one `tool-registry serve --tools`
// process for the file, with the token commands run as the command: a revoked or edited token
// loses its open change-feed streams and MCP sessions (their notification streams too); a
// session belongs to the token, not its name; past --max-sessions / --max-streams a new one is
// 429 (the token's half) or 503 (the server's), with Retry-After, while other clients are served.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import type { ToolSpecInput } from '../../src/index.js';
import { updateTokens } from '../../src/server/tokens.js';
import { CLI, childEnv, listeningUrl, runCli, stopChild, useChildProcessTimeout } from '../cli/helpers.js';
import { TOOLS_MODULE } from '../mcp/helpers.js';
import { until } from '../support/waiting.js';

useChildProcessTimeout();

const folder = mkdtempSync(join(tmpdir(), 'tool-registry-token-edges-'));
const db = join(folder, 'tools.db');
const tokensFile = join(folder, 'tokens.json');
let server: ChildProcess;
let base: string;

/** Creates a token with the command; its secret. */
async function createToken(name: string, policy?: object): Promise<string> {
  const args = ['token', 'create', '--name', name, '--scopes', 'read', '--tokens', tokensFile];
  if (policy !== undefined) {
    const file = join(folder, `${name}-policy.json`);
    writeFileSync(file, JSON.stringify(policy));
    args.push('--policy', file);
  }
  const created = await runCli(args, { cwd: folder });
  expect(created.code).toBe(0);
  return created.stdout.trim().split('\n').at(-1) as string;
}

async function revoke(name: string): Promise<void> {
  expect((await runCli(['token', 'revoke', name, '--tokens', tokensFile], { cwd: folder })).code).toBe(0);
}

const auth = (secret: string) => ({ authorization: `Bearer ${secret}` });
const rpc = (secret: string, body: unknown, session?: string) =>
  fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...auth(secret), 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }) },
    body: JSON.stringify(body),
  });
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const toolsList = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };

/** Opens an MCP session: its id. */
async function openSession(secret: string): Promise<string> {
  const response = await rpc(secret, initialize);
  expect(response.status).toBe(200);
  const id = response.headers.get('mcp-session-id') as string;
  expect((await rpc(secret, { jsonrpc: '2.0', method: 'notifications/initialized' }, id)).status).toBe(202);
  return id;
}

async function toolNames(secret: string, session: string): Promise<string[]> {
  const response = await rpc(secret, toolsList, session);
  expect(response.status).toBe(200);
  return ((await response.json()) as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name).sort();
}

/** A stream read in the background: its text so far, and whether the server ended it. */
interface Followed {
  readonly text: () => string;
  readonly ended: () => boolean;
  readonly close: () => void;
}

async function follow(response: Response): Promise<Followed> {
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // cut: counts as ended
    }
    ended = true;
  })();
  return { text: () => text, ended: () => ended, close: () => void reader.cancel().catch(() => {}) };
}

const changeFeed = async (secret: string): Promise<Followed> => follow(await fetch(`${base}/v1/changes`, { headers: { ...auth(secret), accept: 'text/event-stream' } }));
const notifications = async (secret: string, session: string): Promise<Followed> =>
  follow(await fetch(`${base}/mcp`, { headers: { ...auth(secret), accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } }));

beforeAll(async () => {
  const tools = (await import(TOOLS_MODULE)) as Record<string, { spec?: ToolSpecInput }>;
  const registry = await openSqliteToolRegistry({ filename: db });
  await registry.registerMany(Object.values(tools).flatMap((tool) => (tool.spec === undefined ? [] : [tool.spec])));
  await registry.close();
  await createToken('keeper');
  server = spawn(process.execPath, [CLI, 'serve', '--db', db, '--tokens', tokensFile, '--port', '0', '--no-console', '--tools', TOOLS_MODULE, '--max-streams', '4', '--max-sessions', '4'], {
    cwd: folder,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  base = await listeningUrl(server);
}, 120_000);

afterAll(async () => {
  await stopChild(server);
  rmSync(folder, { recursive: true, force: true });
});

describe('limits', () => {
  it('--max-sessions 4: a token past its half is 429, the server past 4 is 503, both with Retry-After; other clients are served', async () => {
    const [alice, bob, carol] = [await createToken('alice'), await createToken('bob'), await createToken('carol')];
    const mine = [await openSession(alice), await openSession(alice)];
    const third = await rpc(alice, initialize);
    expect([third.status, third.headers.get('retry-after'), third.headers.get('content-type')]).toEqual([429, '5', 'application/problem+json']);
    expect(await third.json()).toMatchObject({ code: 'TOKEN_LIMIT_EXCEEDED', context: { limit: 2, resource: 'session', token: 'alice' } });
    const theirs = [await openSession(bob), await openSession(bob)];
    const full = await rpc(carol, initialize);
    expect([full.status, full.headers.get('retry-after')]).toEqual([503, '5']);
    expect(await full.json()).toMatchObject({ code: 'CAPACITY_EXCEEDED', context: { limit: 4, resource: 'session' } });
    // Everyone else is still served: the open sessions, the API, the health check.
    expect(await toolNames(alice, mine[0] as string)).toContain('echo');
    expect((await fetch(`${base}/v1/tools`, { headers: auth(carol) })).status).toBe(200);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    // A session ended frees its place.
    expect((await fetch(`${base}/mcp`, { method: 'DELETE', headers: { ...auth(bob), 'mcp-session-id': theirs[0] as string } })).status).toBe(200);
    const carols = await openSession(carol);
    for (const [secret, id] of [[alice, mine[0]], [alice, mine[1]], [bob, theirs[1]], [carol, carols]] as const) {
      expect((await fetch(`${base}/mcp`, { method: 'DELETE', headers: { ...auth(secret), 'mcp-session-id': id as string } })).status).toBe(200);
    }
  });

  it('--max-streams 4: the third change-feed stream of one token is 429, the fifth of the server 503', async () => {
    const [alice, bob, carol] = [await createToken('alice2'), await createToken('bob2'), await createToken('carol2')];
    const open = [await changeFeed(alice), await changeFeed(alice)];
    const third = await fetch(`${base}/v1/changes`, { headers: { ...auth(alice), accept: 'text/event-stream' } });
    expect([third.status, third.headers.get('retry-after')]).toEqual([429, '5']);
    expect(await third.json()).toMatchObject({ code: 'TOKEN_LIMIT_EXCEEDED', context: { limit: 2, resource: 'stream' } });
    open.push(await changeFeed(bob), await changeFeed(bob));
    const fifth = await fetch(`${base}/v1/changes`, { headers: { ...auth(carol), accept: 'text/event-stream' } });
    expect([fifth.status, fifth.headers.get('retry-after')]).toEqual([503, '5']);
    expect((await fetch(`${base}/v1/changes?limit=1`, { headers: auth(carol) })).status).toBe(200);
    for (const stream of open) stream.close();
    await until(async () => (await fetch(`${base}/v1/changes`, { method: 'HEAD', headers: auth(carol) })).ok && (await changeFeed(carol).then((s) => (s.close(), true))), 'a free stream');
  });
});

describe('tokens that end', () => {
  it('revoked: its change-feed stream and its MCP session, notification stream included, end; the session is gone', async () => {
    const victim = await createToken('victim');
    const keeper = (await runCli(['token', 'list', '--tokens', tokensFile], { cwd: folder })).stdout;
    expect(keeper).toContain('victim');
    const feed = await changeFeed(victim);
    const session = await openSession(victim);
    const stream = await notifications(victim, session);
    await until(() => feed.text().includes('stream open'), 'the change feed open');
    await revoke('victim');
    await until(() => feed.ended() && stream.ended(), 'the streams of the revoked token to end', { timeoutMs: 10_000 });
    expect(feed.text()).toMatch(/event: error\ndata: \{"code":"UNAUTHORIZED"/);
    expect((await rpc(victim, toolsList, session)).status).toBe(401);
  });

  it("a narrowed policy ends the token's session at once (its next request is 404, before the 500 ms check); a new session follows the new policy", async () => {
    const agent = await createToken('agent', { persona: 'support', allowed_permissions: ['READ_FS'], allowed_tools: ['echo', 'read_notes'] });
    const session = await openSession(agent);
    expect(await toolNames(agent, session)).toEqual(['echo', 'read_notes']);
    const stream = await notifications(agent, session);
    await updateTokens(tokensFile, (tokens) => ({
      tokens: tokens.map((t) => (t.name === 'agent' ? { ...t, policy: { persona: 'support', allowed_permissions: ['READ_FS'], allowed_tools: ['read_notes'] } } : t)),
      result: undefined,
    }));
    // Right after the edit: the removed tool is not called through the old session.
    expect((await rpc(agent, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }, session)).status).toBe(404);
    await until(() => stream.ended(), 'the session of the edited token to end', { timeoutMs: 10_000 });
    expect((await rpc(agent, toolsList, session)).status).toBe(404);
    const again = await openSession(agent);
    expect(await toolNames(agent, again)).toEqual(['read_notes']);
    expect((await fetch(`${base}/mcp`, { method: 'DELETE', headers: { ...auth(agent), 'mcp-session-id': again } })).status).toBe(200);
  });

  it('a token created again under the same name does not get the old one’s session', async () => {
    const first = await createToken('twin');
    const session = await openSession(first);
    await revoke('twin');
    const second = await createToken('twin');
    expect((await rpc(second, toolsList, session)).status).toBe(404);
  });
});
