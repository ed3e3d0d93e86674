// Any MCP client sends a tool's arguments, and the server checked them against the tool's
// `pattern`s on its event loop with no bound: `^(a+)+$` against 40 a's and a `b` held `serve`
// (every other client with it) and the stdio `tool-registry mcp` for hours. Each check now has
// 100 ms for its pattern tests; past it the call is refused as invalid arguments. On the old
// code these calls are never answered (the tests time out).
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryToolRegistry, defineTool, liveToolSet, openSqliteToolRegistry, publishTools } from '../../src/index.js';
import type { ToolSpecInput } from '../../src/index.js';
import { createMcpServer, gatewayToolSet } from '../../src/mcp/index.js';
import { CLI, ROOT, childEnv, listeningUrl, stopChild, useChildProcessTimeout } from '../cli/helpers.js';
import { startHttpUpstream } from '../support/http-upstream.js';
import { approveListed } from '../support/upstreams.js';
import { connectStdio, textOf } from './helpers.js';

useChildProcessTimeout();

const MODULE = join(ROOT, 'test', 'fixtures', 'backtracking-tools.mjs');
const folder = mkdtempSync(join(tmpdir(), 'tool-registry-pattern-bound-'));
const db = join(folder, 'tools.db');
const hostile = `${'a'.repeat(40)}b`;
const reason = 'could not be checked against pattern "^(a+)+$" within 100 ms';
/** The text of the refusal: the error, then its issue. */
const refused = [`INVALID_ARGUMENTS: Invalid arguments for tool 'spell': /word ${reason}`, `/word: ${reason}`];
let server: ChildProcess | undefined;
let base: string;

beforeAll(async () => {
  const tools = (await import(MODULE)) as Record<string, { spec: ToolSpecInput }>;
  const registry = await openSqliteToolRegistry({ filename: db });
  await registry.registerMany(Object.values(tools).map((tool) => tool.spec));
  await registry.close();
  server = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', '0', '--no-console', '--tools', MODULE], { cwd: folder, env: childEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
  base = await listeningUrl(server);
}, 120_000);

afterAll(async () => {
  await stopChild(server);
  rmSync(folder, { recursive: true, force: true });
});

async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
  const client = new Client({ name: 'pattern-bound', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

describe('a crafted argument against a backtracking pattern, over MCP', () => {
  it("serve's /mcp: the call is refused as invalid arguments, and another client's calls made meanwhile are answered", async () => {
    const attacker = await connect();
    const other = await connect();
    const attacks = Array.from({ length: 3 }, () => attacker.client.callTool({ name: 'spell', arguments: { word: hostile } }));
    const others = Array.from({ length: 3 }, (_, i) => other.client.callTool({ name: 'echo', arguments: { text: `hi ${i}` } }));
    for (const answer of await Promise.all(attacks)) expect([answer.isError, textOf(answer).split('\n')]).toEqual([true, refused]);
    expect((await Promise.all(others)).map((answer) => answer.structuredContent)).toEqual([{ text: 'hi 0' }, { text: 'hi 1' }, { text: 'hi 2' }]);
    // The same tool with arguments its patterns decide in time.
    expect((await attacker.client.callTool({ name: 'spell', arguments: { word: 'aaa', phrase: 'two words' } })).structuredContent).toEqual({ word: 'aaa', phrase: 'two words' });
    for (const session of [attacker, other]) {
      await session.transport.terminateSession();
      await session.client.close();
    }
  });

  it('the stdio `tool-registry mcp` answers it too, and the next call', async () => {
    const stdio = await connectStdio(['--tools', MODULE, '--db', join(folder, 'stdio.db'), '--publish'], folder);
    try {
      const answer = await stdio.client.callTool({ name: 'spell', arguments: { word: hostile } });
      expect([answer.isError, textOf(answer).split('\n')]).toEqual([true, refused]);
      expect((await stdio.client.callTool({ name: 'echo', arguments: { text: 'after' } })).structuredContent).toEqual({ text: 'after' });
    } finally {
      await stdio.client.close();
    }
  });

  it("a gateway serving an approved upstream tool's backtracking pattern refuses the call and never forwards it", async () => {
    const calls: string[] = [];
    const upstream = await startHttpUpstream(
      () => [{ name: 'tag', inputSchema: { type: 'object', properties: { label: { type: 'string', pattern: '^(\\w+\\s?)+$' } } } }],
      (_name, args) => {
        calls.push(args.label as string);
        return { content: [{ type: 'text', text: 'tagged' }] };
      },
    );
    const registry = new InMemoryToolRegistry();
    await registry.putUpstream({ name: 'up', transport: { type: 'http', url: upstream.url, headers: {} } });
    const gateway = await gatewayToolSet(registry, []);
    const client = new Client({ name: 'pattern-bound', version: '1' });
    try {
      await approveListed(registry, gateway);
      const [a, b] = InMemoryTransport.createLinkedPair();
      await createMcpServer(gateway).connect(a);
      await client.connect(b);
      const answer = await client.callTool({ name: 'up_tag', arguments: { label: `${'a'.repeat(40)}!` } });
      expect([answer.isError, textOf(answer).split('\n')[0]]).toEqual([true, `INVALID_ARGUMENTS: Invalid arguments for tool 'up_tag': /label could not be checked against pattern "^(\\w+\\s?)+$" within 100 ms`]);
      expect(textOf(await client.callTool({ name: 'up_tag', arguments: { label: 'two words' } }))).toBe('tagged');
      expect(calls).toEqual(['two words']);
    } finally {
      await client.close();
      await gateway.close();
      await upstream.close();
    }
  });

  it("a form's elicitation answer against a backtracking pattern in its requestedSchema: the handler's elicit is refused in time, as a non-matching answer is", async () => {
    const ask = defineTool({
      name: 'ask',
      version: '1',
      input_schema: { type: 'object' },
      handler: async (_args, { elicit }) => (await elicit({ message: 'A word?', requestedSchema: { type: 'object', properties: { word: { type: 'string', pattern: '^(a+)+$' } } } })).content,
    });
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [ask]);
    const live = await liveToolSet(registry, [ask]);
    const answers = [hostile, 'aab', 'aaa'];
    const client = new Client({ name: 'pattern-bound', version: '1' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { word: answers.shift() as string } }));
    try {
      const [a, b] = InMemoryTransport.createLinkedPair();
      await createMcpServer(live).connect(a);
      await client.connect(b);
      const failed = "TOOL_FAILED: Tool 'ask' failed: Elicitation response content does not match requested schema: ";
      expect(textOf(await client.callTool({ name: 'ask', arguments: {} }))).toBe(`${failed}/word ${reason}`);
      expect(textOf(await client.callTool({ name: 'ask', arguments: {} }))).toBe(`${failed}/word must match pattern "^(a+)+$"`);
      expect((await client.callTool({ name: 'ask', arguments: {} })).structuredContent).toEqual({ word: 'aaa' });
    } finally {
      await client.close();
      await live.close();
    }
  });
});
