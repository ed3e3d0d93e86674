// createMcpServer in-process (the SDK's Client over its InMemoryTransport, a memory registry):
// what a session lists as the set changes, pages across a change, tools MCP cannot carry,
// cancellation, and option checks. The processes and sockets are in stdio/serve/http-load tests.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, CreateMessageRequestSchema, ErrorCode, LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, defineTool, liveToolSet, publishTools } from '../../src/index.js';
import type { LiveToolSet, Tool } from '../../src/index.js';
import { createMcpHttpHandler, createMcpServer, serveMcpStdio } from '../../src/mcp/index.js';
import type { McpServerOptions } from '../../src/mcp/index.js';
import { until } from '../support/waiting.js';

const object = { type: 'object' };
const named = (name: string, extra: Partial<Parameters<typeof defineTool>[0]> = {}): Tool =>
  defineTool({ name, version: '1', input_schema: object, handler: () => ({ name }), ...extra } as Parameters<typeof defineTool>[0]);

/** A memory registry holding `tools` as `prepare` leaves it, the live set over it, and a session per policy (undefined: none). */
async function sessionsOver(tools: Tool[], prepare: (registry: InMemoryToolRegistry) => Promise<unknown>, policies: (McpServerOptions['policy'] | undefined)[]) {
  const registry = new InMemoryToolRegistry();
  await publishTools(registry, tools);
  await prepare(registry);
  const live = await liveToolSet(registry, tools);
  const clients = await Promise.all(policies.map(async (policy) => (await session(live, policy === undefined ? {} : { policy })).client));
  return { clients, close: async () => void (await live.close(), await registry.close()) };
}

/** A tool whose call runs until its signal aborts (having logged a line, with `logs`), and a promise of its first call starting. */
function waitingTool(name: string, logs = false): { tool: Tool; running: Promise<void> } {
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const tool = defineTool({
    name,
    version: '1',
    input_schema: object,
    handler: (_args, { signal, log }) =>
      new Promise((_resolve, reject) => {
        if (logs) log('info', 'waiting');
        started();
        signal.addEventListener('abort', () => reject(signal.reason as Error));
      }),
  });
  return { tool, running };
}

/** `serveMcpStdio` over a memory registry holding `tools`, on streams in this process: what it wrote so far, and a line sender. */
async function stdioOver(tools: Tool[]) {
  const registry = new InMemoryToolRegistry();
  await publishTools(registry, tools);
  const live = await liveToolSet(registry, tools);
  const [stdin, stdout] = [new PassThrough(), new PassThrough()];
  let written = '';
  stdout.on('data', (chunk: Buffer) => {
    written += chunk.toString('utf8');
  });
  const stdio = await serveMcpStdio(live, { stdin, stdout });
  return {
    written: () => written,
    /** The messages in one write (one chunk: read in one turn, before the SDK's microtasks run). */
    send: (...messages: unknown[]): boolean => stdin.write(messages.map((message) => `${JSON.stringify(message)}\n`).join('')),
    close: async () => void (await stdio.close(), await live.close()),
  };
}

async function session(live: LiveToolSet, options: McpServerOptions = {}) {
  const server = createMcpServer(live, options);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 't', version: '1' });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes += 1;
  });
  await client.connect(clientSide);
  return { client, changes: () => changes };
}

describe('createMcpServer', () => {
  it("does not name a deprecation's replacement the session's policy forbids, in tools/list or in a call's _meta", async () => {
    const tools = [named('old', { description: 'Old.' }), named('shell', { permissions: { required: ['EXEC_SHELL'] } })];
    const { clients, close } = await sessionsOver(tools, (registry) => registry.deprecate('old', { message: 'Retired.', replacement: 'shell' }), [
      { persona: 'guest' },
      { persona: 'admin', allowed_permissions: ['EXEC_SHELL'] },
    ]);
    const [guest, admin] = clients as [Client, Client];
    expect((await guest.listTools()).tools.map((tool) => [tool.name, tool.description])).toEqual([['old', 'Old.\n\nDeprecated: Retired.']]);
    expect((await guest.callTool({ name: 'old', arguments: {} }))._meta).toEqual({ 'tool-registry/deprecation': { message: 'Retired.', replacement: null, sunset: null } });
    expect((await admin.listTools()).tools.find((tool) => tool.name === 'old')?.description).toBe('Old.\n\nDeprecated: Retired. Use shell instead.');
    expect((await admin.callTool({ name: 'old', arguments: {} }))._meta).toEqual({ 'tool-registry/deprecation': { message: 'Retired.', replacement: 'shell', sunset: null } });
    await close();
  });

  it("names the registry's reason for an unknown tool only when the session's policy allows that tool", async () => {
    const tools = [named('calc'), named('shell', { permissions: { required: ['EXEC_SHELL'] } })];
    const disable = async (registry: InMemoryToolRegistry) => Promise.all(['calc', 'shell'].map((name) => registry.setEnabled(name, false)));
    const { clients, close } = await sessionsOver(tools, disable, [{ persona: 'guest' }, undefined]);
    const [guest, admin] = clients as [Client, Client];
    // A denied tool that is disabled answers like a name that does not exist: nothing tells it exists.
    await expect(guest.callTool({ name: 'shell', arguments: {} })).rejects.toThrow(/^MCP error -32602: Unknown tool: shell$/);
    await expect(guest.callTool({ name: 'calc', arguments: {} })).rejects.toThrow(/^MCP error -32602: Unknown tool: calc \(disabled in the registry\)$/);
    await expect(admin.callTool({ name: 'shell', arguments: {} })).rejects.toThrow(/Unknown tool: shell \(disabled in the registry\)$/);
    await close();
  });

  it('tells each session only about changes to what it lists', async () => {
    const tools = [named('a'), named('b', { permissions: { required: ['NET_HTTP'] } })];
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const all = await session(live);
    const persona = await session(live, { policy: { persona: 'p' } }); // no permissions: only a
    expect((await persona.client.listTools()).tools.map((tool) => tool.name)).toEqual(['a']);
    const heard = (count: number) => new Promise<void>((resolve) => {
      let seen = 0;
      const stop = live.subscribe(() => {
        if (++seen === count) {
          stop();
          resolve();
        }
      });
    });
    let next = heard(1);
    await registry.setEnabled('b', false);
    await next;
    await until(() => all.changes() === 1, 'the first session told');
    next = heard(1);
    await registry.setEnabled('a', false);
    await next;
    await until(() => all.changes() === 2 && persona.changes() === 1, 'both sessions told');
    expect(persona.changes()).toBe(1); // b's disable was not its business
    await live.close();
    await registry.close();
  });

  it('pages continue after the last name across a change; a tool MCP clients would reject is not served, said once', async () => {
    const warnings: string[] = [];
    const tools = ['a', 'b', 'c', 'd', 'e'].map((name) => named(name));
    const bad = defineTool({ name: 'bad', version: '1', input_schema: { type: 'string' }, handler: () => 1 });
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [...tools, bad]);
    const live = await liveToolSet(registry, [...tools, bad]);
    const { client } = await session(live, { pageSize: 2, onWarning: (message) => warnings.push(message) });
    const first = await client.listTools();
    expect(first.tools.map((tool) => tool.name)).toEqual(['a', 'b']);
    const changed = new Promise((resolve) => live.subscribe(resolve));
    await registry.setEnabled('c', false);
    await changed;
    const second = await client.listTools({ cursor: first.nextCursor as string });
    expect(second.tools.map((tool) => tool.name)).toEqual(['d', 'e']);
    expect(second.nextCursor).toBeUndefined();
    await client.listTools();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/"bad" is not served over MCP/);
    await expect(client.callTool({ name: 'bad', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await live.close();
  });

  it('each listener hears of a tool not served, once: a second server (another registry, its own onWarning) too', async () => {
    const bad = defineTool({ name: 'bad', version: '1', input_schema: { type: 'string' }, handler: () => 1 });
    const heard: string[][] = [];
    for (const _server of [1, 2]) {
      const warnings: string[] = [];
      heard.push(warnings);
      const onWarning = (message: string): void => void warnings.push(message);
      const registry = new InMemoryToolRegistry();
      await publishTools(registry, [bad]);
      const live = await liveToolSet(registry, [bad]);
      // Two sessions with the same listener: it hears once.
      for (const _session of [1, 2]) {
        const { client } = await session(live, { onWarning });
        expect((await client.listTools()).tools).toEqual([]);
        await client.close();
      }
      await live.close();
      await registry.close();
    }
    // The second heard nothing: what the first was told was kept for the process, by tool.
    expect(heard.map((warnings) => warnings.length)).toEqual([1, 1]);
    expect(heard[1]?.[0]).toMatch(/"bad" is not served over MCP/);
  });

  it("a client's cancellation aborts the handler's signal", async () => {
    let aborted: unknown;
    const waits = defineTool({
      name: 'waits',
      version: '1',
      input_schema: object,
      handler: (_args, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve((aborted = signal.reason)))),
    });
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [waits]);
    const live = await liveToolSet(registry, [waits]);
    const { client } = await session(live);
    const controller = new AbortController();
    const call = client.callTool({ name: 'waits', arguments: {} }, undefined, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort('enough');
    await expect(call).rejects.toThrow();
    await until(() => aborted !== undefined, 'the handler aborted');
    await live.close();
  });

  it('a result over maxResultBytes (any transport: HTTP sessions too) is an isError result naming the limit', async () => {
    const tools = [named('small'), defineTool({ name: 'large', version: '1', input_schema: object, handler: () => ({ blob: 'x'.repeat(100) }) })];
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const { client } = await session(live, { maxResultBytes: 150 });
    const large = await client.callTool({ name: 'large', arguments: {} });
    expect(large).toEqual({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/^TOOL_FAILED: Tool 'large' returned \d+ bytes .* over this server's limit of 150 bytes \(maxResultBytes\)/) }] });
    expect((await client.callTool({ name: 'small', arguments: {} })).structuredContent).toEqual({ name: 'small' });
    // A deprecated tool's result says so even when this server replaced it (it said nothing).
    await registry.deprecate('large', { message: 'Too big.', replacement: 'small' });
    const deprecated = await client.callTool({ name: 'large', arguments: {} });
    expect(deprecated.isError).toBe(true);
    expect(deprecated._meta).toEqual({ 'tool-registry/deprecation': { message: 'Too big.', replacement: 'small', sunset: null } });
    await live.close();
  });

  it("under a tiny maxResultBytes the server's own error results still say what happened (TIMEOUT, INVALID_ARGUMENTS, a thrown error cut to 1 KiB); a tool's result is still refused", async () => {
    const { tool: waits } = waitingTool('waits');
    const tools = [
      waits,
      defineTool({ name: 'needs', version: '1', input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, handler: () => null }),
      defineTool({ name: 'throws', version: '1', input_schema: object, handler: () => { throw new Error(`${'é'.repeat(3000)}"end`); } }),
      named('plain'),
    ];
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const outcomes: string[] = [];
    const { client } = await session(live, { maxResultBytes: 20, callTimeoutMs: 30, onCall: (record) => void outcomes.push(record.outcome) });
    const textOf = (result: unknown): string => ((result as { content: { text: string }[] }).content[0] as { text: string }).text;
    // A TIMEOUT of about 110 bytes read "TOOL_FAILED: Tool 'waits' returned 110 bytes ..., over this server's limit of 20 bytes".
    expect(textOf(await client.callTool({ name: 'waits', arguments: {} }))).toMatch(/^TIMEOUT: /);
    expect(textOf(await client.callTool({ name: 'needs', arguments: {} }))).toMatch(/^INVALID_ARGUMENTS: /);
    const thrown = await client.callTool({ name: 'throws', arguments: {} });
    expect(textOf(thrown)).toMatch(/^TOOL_FAILED: Tool 'throws' failed: é+ \.\.\. \(cut: the result was \d+ bytes, over this server's limit of 1024 bytes\)$/);
    expect(Buffer.byteLength(JSON.stringify(thrown), 'utf8')).toBeLessThanOrEqual(1024);
    // The tool's own result is what the limit bounds.
    expect(textOf(await client.callTool({ name: 'plain', arguments: {} }))).toMatch(/^TOOL_FAILED: Tool 'plain' returned \d+ bytes .* over this server's limit of 20 bytes/);
    expect(outcomes).toEqual(['TIMEOUT', 'INVALID_ARGUMENTS', 'TOOL_FAILED', 'TOOL_FAILED']);
    await live.close();
  });

  it('a log message or a request to the client over maxResultBytes is not sent: the log says so, sample() fails; the session goes on', async () => {
    const big = 'x'.repeat(2_000);
    const asker = defineTool({
      name: 'asker',
      version: '1',
      input_schema: object,
      handler: async (_args, { log, sample }) => {
        log('info', big);
        log('info', 'small');
        return sample({ messages: [{ role: 'user', content: { type: 'text', text: big } }], maxTokens: 1 }).then(
          () => ({ sampled: true }),
          (error: Error) => ({ refused: error.message }),
        );
      },
    });
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [asker]);
    const live = await liveToolSet(registry, [asker]);
    const warnings: string[] = [];
    const server = createMcpServer(live, { maxResultBytes: 1_000, onWarning: (message) => void warnings.push(message) });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' }, { capabilities: { sampling: {} } });
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params.data));
    client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }));
    await client.connect(clientSide);
    const result = await client.callTool({ name: 'asker', arguments: {} });
    expect(result.structuredContent).toEqual({ refused: expect.stringMatching(/^sample\(\): the request is \d+ bytes, over this server's limit of 1000 bytes \(maxResultBytes\)$/) });
    expect(logs).toEqual([expect.stringMatching(/^a notifications\/message of \d+ bytes from a tool was not sent: over this server's limit of 1000 bytes/), 'small']);
    expect(warnings).toHaveLength(1);
    await client.close();
    await live.close();
  });

  it('the log messages over maxResultBytes a call drops are warned of once a call, not once each (a flood would fill the log)', async () => {
    const loud = defineTool({
      name: 'loud',
      version: '1',
      input_schema: object,
      handler: async (_args, { log }) => {
        for (let index = 0; index < 5; index++) log('info', 'x'.repeat(2_000));
        return {};
      },
    });
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [loud]);
    const live = await liveToolSet(registry, [loud]);
    const warnings: string[] = [];
    const { client } = await session(live, { maxResultBytes: 1_000, onWarning: (message) => void warnings.push(message) });
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params.data));
    await client.callTool({ name: 'loud', arguments: {} });
    await client.callTool({ name: 'loud', arguments: {} });
    // The client still hears of each one dropped; the operator once for each call.
    expect(logs).toHaveLength(10);
    expect(warnings).toEqual([
      expect.stringMatching(/^a notifications\/message of \d+ bytes from a tool was not sent: .* \(warned once a call\)$/),
      expect.stringMatching(/\(warned once a call\)$/),
    ]);
    await client.close();
    await live.close();
  });

  it('a tools/list page stays within maxResultBytes too: it ends before the entry that would pass it (one entry at least)', async () => {
    // Entries of about 1,100 bytes under a bound of 2,500: two a page, where pageSize alone made one page of five.
    const tools = ['a', 'b', 'c', 'd', 'e'].map((name) => named(name, { description: name.repeat(1_000) }));
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const { client } = await session(live, { maxResultBytes: 2_500 });
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      pages.push(page.tools.map((tool) => tool.name));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(pages).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    const { client: tiny } = await session(live, { maxResultBytes: 10 });
    expect((await tiny.listTools()).tools.map((tool) => tool.name)).toEqual(['a']);
    await live.close();
  });

  it("tools/call params: a name, arguments and a progress token are taken as they are; anything else as the SDK's schema says", async () => {
    const tools = [defineTool({ name: 'echo', version: '1', input_schema: object, handler: (args) => args })];
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const { client } = await session(live);
    const call = (params: object) => client.request({ method: 'tools/call', params } as never, CallToolResultSchema);
    expect((await call({ name: 'echo', arguments: { a: 1 }, _meta: { progressToken: 7 } })).structuredContent).toEqual({ a: 1 });
    // More than the usual: the schema decides (extra keys are dropped, _meta is open, a task is not ours to run).
    expect((await call({ name: 'echo', arguments: { a: 2 }, _meta: { progressToken: 'p', 'example/x': 1 }, extra: true })).structuredContent).toEqual({ a: 2 });
    expect((await call({ name: 'echo' })).structuredContent).toEqual({});
    // (A _meta that is not an object, or a progress token that is neither a string nor an integer, never gets here: the SDK drops such a message.)
    for (const params of [{ name: 'echo', arguments: [] }, { name: 'echo', arguments: 'a' }, { name: 1 }]) {
      await expect(call(params), JSON.stringify(params)).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    }
    await live.close();
  });

  it('a tools/call asking for a task (MCP 2025-11-25) runs as a plain call: this server declares no tasks, and such a receiver must ignore the task', async () => {
    const tools = [defineTool({ name: 'echo', version: '1', input_schema: object, handler: (args) => args })];
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const handler = createMcpHttpHandler(live);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const post = async (message: unknown) => (await handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(message) }))).json();
    const opened = await handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) }));
    headers['mcp-session-id'] = opened.headers.get('mcp-session-id') as string;
    headers['mcp-protocol-version'] = '2025-11-25';
    // It was -32603 "Server does not support task creation (required for tools/call)", an internal error.
    expect(await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { a: 1 }, task: { ttl: 60_000 } } })).toMatchObject({ id: 1, result: { structuredContent: { a: 1 } } });
    await handler.close();
    await live.close();
  });

  it('over stdio, a result goes out as the JSON the session measured: one line, exactly JSON.stringify of the response', async () => {
    const data = { 2: 'two', b: 'h\u00e9llo "q"\n\u2028', nested: [{ x: null }] };
    const { written, send, close } = await stdioOver([defineTool({ name: 'data', version: '1', input_schema: object, handler: () => data })]);
    const lines = async (count: number) => {
      await until(() => written().split('\n').length > count, `${count} lines written`);
      return written().split('\n').slice(0, count);
    };
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 'call "1"', method: 'tools/call', params: { name: 'data', arguments: {} } });
    const [, line] = await lines(2);
    const text = JSON.stringify(data);
    expect(line).toBe(JSON.stringify({ result: { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) }, jsonrpc: '2.0', id: 'call "1"' }));
    await close();
  });

  it("over stdio, a client slow to read a tool's many notifications leaves one 'drain' listener, not one a message (Node warned of a leak past 10)", async () => {
    const chatty = defineTool({ name: 'chatty', version: '1', input_schema: object, handler: (_args, { log }) => {
      for (let index = 0; index < 50; index++) log('info', `line ${index}`);
      return 'done';
    } });
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [chatty]);
    const live = await liveToolSet(registry, [chatty]);
    // A pipe the client does not read yet: every write past the first few waits for 'drain'.
    const [stdin, stdout] = [new PassThrough(), new PassThrough({ highWaterMark: 64 })];
    const stdio = await serveMcpStdio(live, { stdin, stdout });
    const send = (message: unknown): boolean => stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chatty', arguments: {} } });
    await until(() => stdout.writableLength > 50 * 40, 'the log lines written, waiting for the client');
    // The old code: 52 (the result, then a listener for each of the 50 lines and the answer).
    expect(stdout.listenerCount('drain')).toBe(1);
    let written = '';
    stdout.on('data', (chunk: Buffer) => void (written += chunk.toString('utf8')));
    await until(() => written.includes('"id":1'), 'the answer, once the client reads');
    expect(written.split('\n').filter((line) => line.includes('notifications/message'))).toHaveLength(50);
    expect(stdout.listenerCount('drain')).toBe(0);
    await stdio.close();
    await live.close();
  });

  it('over stdio, a client that does not read the answers is not read either until it does (backpressure): its requests wait in its pipe, not in memory', async () => {
    const registry = new InMemoryToolRegistry();
    const live = await liveToolSet(registry, []);
    const [stdin, stdout] = [new PassThrough(), new PassThrough({ highWaterMark: 64 })];
    const stdio = await serveMcpStdio(live, { stdin, stdout });
    const ping = (id: number): boolean => stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`);
    // What waits for the client to read.
    const unread = (): number => stdout.writableLength + stdout.readableLength;
    let sent = 0;
    while (sent < 100 && stdin.readableFlowing !== false) {
      const before = unread();
      ping(sent++);
      await until(() => unread() > before, 'the ping answered');
    }
    // The old code read on: 100 answers waited in memory (a flood of pings grew the process by about 4 KiB each, without bound).
    expect(sent).toBeLessThan(100);
    for (let more = 0; more < 5; more++) ping(sent++);
    let written = '';
    stdout.on('data', (chunk: Buffer) => void (written += chunk.toString('utf8')));
    await until(() => written.split('\n').length > sent, 'every ping answered, once the client reads');
    expect(written.split('\n').slice(0, -1).map((line) => (JSON.parse(line) as { id: number }).id)).toEqual([...Array(sent).keys()]);
    await stdio.close();
    await live.close();
  });

  // A read error kept the session open for good (no 'end' follows an error), and `tool-registry mcp` with it;
  // unheard, a write error (EPIPE: the client gone) was an uncaught exception of the process serving.
  it.each([
    ['stdin', 'read EIO', 'EIO', 'standard input failed (read EIO); the session ends'],
    ['stdout', 'write EPIPE', 'EPIPE', 'standard output failed (write EPIPE); the session ends'],
  ] as const)('over stdio, an error of %s ends the session with a warning', async (stream, message, code, warning) => {
    const registry = new InMemoryToolRegistry();
    const live = await liveToolSet(registry, []);
    const warnings: string[] = [];
    const streams = { stdin: new PassThrough(), stdout: new PassThrough() };
    const stdio = await serveMcpStdio(live, { ...streams, onWarning: (text) => warnings.push(text) });
    let closed = false;
    void stdio.closed.then(() => (closed = true));
    streams[stream].destroy(Object.assign(new Error(message), { code }));
    await until(() => closed, 'the session to end');
    expect(warnings).toEqual([warning]);
    await live.close();
  });

  it('refuses a tools/call whose progress token is over 1,024 characters (-32602 naming it): each report carried it back', async () => {
    const reporter = defineTool({ name: 'reporter', version: '1', input_schema: object, handler: (_args, { progress }) => {
      for (let index = 0; index < 3; index++) progress(index, 3);
      return 'done';
    } });
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [reporter]);
    const live = await liveToolSet(registry, [reporter]);
    const { client } = await session(live);
    const call = (progressToken: string) => client.request({ method: 'tools/call', params: { name: 'reporter', arguments: {}, _meta: { progressToken } } }, CallToolResultSchema);
    expect((await call('t'.repeat(1_024))).content).toEqual([{ type: 'text', text: 'done' }]);
    // The old code answered it, each of its reports 2 KB more.
    await expect(call('t'.repeat(1_025))).rejects.toMatchObject({ code: ErrorCode.InvalidParams, message: 'MCP error -32602: Invalid params of tools/call: "_meta.progressToken" must be at most 1024 characters, got a string of 1025' });
    await client.close();
    await live.close();
  });

  it('over stdio (MCP 2025-03-26), a batch whose call the client cancels answers the rest: the cancelled one is owed no response', async () => {
    const { tool: slow, running } = waitingTool('slow');
    const { written, send, close } = await stdioOver([slow, named('fast')]);
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await until(() => written().includes('\n'), 'the initialize answer');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: {} } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fast', arguments: {} } },
    ]);
    await running;
    send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'not needed' } });
    // The batch waited for a response to 1 that never comes: 2's answer was never written.
    await until(() => written().split('\n').length > 2, 'the answer to the batch');
    const answer = JSON.parse(written().split('\n')[1] as string) as { id: number; result: { structuredContent: unknown } }[];
    expect(answer.map((reply) => [reply.id, reply.result.structuredContent])).toEqual([[2, { name: 'fast' }]]);
    await close();
  });

  it('over stdio, a request id still unanswered (or twice in one batch) is refused -32600 with that id; the first call is still aborted when the session ends', async () => {
    let aborted = false;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    // Runs until its signal aborts, which it notes.
    const slow = defineTool({ name: 'slow', version: '1', input_schema: object, handler: (_args, { signal }) => {
      started();
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve((aborted = true))));
    } });
    const { written, send, close } = await stdioOver([slow, named('fast')]);
    const replies = () => written().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown);
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await until(() => replies().length === 1, 'the initialize answer');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    await running;
    // It ran, and took the SDK's abort controller of id 7: the first call was never aborted after.
    send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'fast', arguments: {} } });
    send([{ jsonrpc: '2.0', id: 'x', method: 'ping' }, { jsonrpc: '2.0', id: 'x', method: 'ping' }]);
    await until(() => replies().length === 3, 'the refusals');
    const inUse = (id: unknown) => ({ jsonrpc: '2.0', id, error: { code: -32600, message: `Invalid Request: request id ${JSON.stringify(id)} is already in use by a request of this session not yet answered; give each request a new id` } });
    expect(replies().slice(1)).toEqual([inUse(7), [inUse('x'), { jsonrpc: '2.0', id: 'x', result: {} }]]);
    await close();
    expect(aborted).toBe(true);
  });

  it('over stdio, the id of a cancelled call is in use until the cancel is heard, in the chunk of the cancel too: the cancel aborted the request reusing it, and the cancelled call was answered', async () => {
    let aborts = 0;
    let finish!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    // Ignores its signal (counts its aborts) and ends when the test says.
    const slow = defineTool({ name: 'slow', version: '1', input_schema: object, handler: (_args, { signal }) => {
      signal.addEventListener('abort', () => void (aborts += 1));
      started();
      return new Promise((resolve) => (finish = () => resolve({ slow: true })));
    } });
    const { written, send, close } = await stdioOver([slow, named('fast')]);
    const replies = () => written().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { id?: unknown });
    const answered = (id: number) => until(() => replies().some((reply) => reply.id === id), `the answer to ${id}`);
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await answered(0);
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    await running;
    const fast = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'fast', arguments: {} } };
    // The cancel and a request reusing its id in one chunk: refused. Once the cancel was heard (the ping answered), taken.
    send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }, fast, { jsonrpc: '2.0', id: 8, method: 'ping' });
    await answered(8);
    const inUse = { jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Invalid Request: request id 7 is already in use by a request of this session not yet answered; give each request a new id' } };
    // It ran, and the cancel aborted it (no answer): the cancelled call was answered under id 7 when it ended.
    expect(replies().slice(1)).toEqual([inUse, { jsonrpc: '2.0', id: 8, result: {} }]);
    send(fast);
    await until(() => replies().filter((reply) => reply.id === 7).length === 2, 'the answer to the second request 7');
    // The cancelled call's handler ends: its answer is dropped, as the cancel asks.
    finish();
    send({ jsonrpc: '2.0', id: 9, method: 'ping' });
    await answered(9);
    expect(replies().slice(1)).toEqual([inUse, { jsonrpc: '2.0', id: 8, result: {} }, { jsonrpc: '2.0', id: 7, result: expect.objectContaining({ structuredContent: { name: 'fast' } }) }, { jsonrpc: '2.0', id: 9, result: {} }]);
    expect(aborts).toBe(1);
    await close();
  });

  it('over stdio (MCP 2025-03-26), a batch answer stays within maxResultBytes (replies past it are errors saying so), and a batch holds at most 1,000 messages', async () => {
    const tools = ['a', 'b', 'c'].map((name) => named(name, { description: name.repeat(300) }));
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const [stdin, stdout] = [new PassThrough(), new PassThrough()];
    let written = '';
    stdout.on('data', (chunk: Buffer) => void (written += chunk.toString('utf8')));
    const stdio = await serveMcpStdio(live, { stdin, stdout, maxResultBytes: 4000 });
    const send = (message: unknown): boolean => stdin.write(`${JSON.stringify(message)}\n`);
    const lines = () => written.split('\n').slice(0, -1);
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await until(() => lines().length === 1, 'the initialize answer');
    // Each tools/list answer is about 1.2 KB: ten of them were one line of 12 KB (20,000 in 1 MB of batch: 10.7 MB).
    send(Array.from({ length: 10 }, (_, id) => ({ jsonrpc: '2.0', id: id + 1, method: 'tools/list' })));
    send(Array.from({ length: 1001 }, (_, id) => ({ jsonrpc: '2.0', id: `p${id}`, method: 'ping' })));
    await until(() => lines().length === 3, 'both batches answered');
    // The refusal goes out at once, before the answer of the first.
    const answer = lines().find((line) => line.startsWith('[')) as string;
    const tooMany = lines().find((line) => line.includes('"id":null')) as string;
    expect(Buffer.byteLength(answer)).toBeLessThan(4000 + 10 * 250);
    const replies = JSON.parse(answer) as { id: number; result?: unknown; error?: { code: number; message: string } }[];
    expect(replies.map((reply) => reply.id)).toEqual([...Array(10).keys()].map((id) => id + 1));
    expect(replies.slice(0, 3).every((reply) => reply.result !== undefined)).toBe(true);
    expect(replies.at(-1)?.error).toEqual({ code: -32000, message: 'Answer too large: the answers of this batch would pass 4000 bytes (maxResultBytes); send this request again on its own' });
    expect(JSON.parse(tooMany)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: a batch of 1001 messages, over the 1000 one batch may hold: send fewer at a time' } });
    await stdio.close();
    await live.close();
  });

  /** A session of MCP 2025-03-26 (which has batches) on a handler holding answers to 4,000 bytes; `post` sends on it. */
  async function batchSession(live: Parameters<typeof createMcpHttpHandler>[0]): Promise<{ handler: ReturnType<typeof createMcpHttpHandler>; post: (message: unknown) => Promise<Response> }> {
    const handler = createMcpHttpHandler(live, { maxResultBytes: 4000 });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const post = (message: unknown) => handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(message) }));
    const opened = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    headers['mcp-session-id'] = opened.headers.get('mcp-session-id') as string;
    return { handler, post };
  }

  it('over HTTP (MCP 2025-03-26), a batch answer stays within maxResultBytes as over stdio (replies past it are errors saying so)', async () => {
    const tools = ['a', 'b', 'c'].map((name) => named(name, { description: name.repeat(300) }));
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const { handler, post } = await batchSession(live);
    // Each tools/list answer is about 1.2 KB: ten of them were one body of 12 KB (100, the SDK's most, of a large registry: 100 times a page).
    const answered = await post(Array.from({ length: 10 }, (_, id) => ({ jsonrpc: '2.0', id: id + 1, method: 'tools/list' })));
    const answer = await answered.text();
    expect(Buffer.byteLength(answer)).toBeLessThan(4000 + 10 * 250);
    const replies = JSON.parse(answer) as { id: number; result?: unknown; error?: { code: number; message: string } }[];
    expect(replies.map((reply) => reply.id)).toEqual([...Array(10).keys()].map((id) => id + 1));
    expect(replies.slice(0, 3).every((reply) => reply.result !== undefined)).toBe(true);
    expect(replies.at(-1)?.error).toEqual({ code: -32000, message: 'Answer too large: the answers of this batch would pass 4000 bytes (maxResultBytes); send this request again on its own' });
    // On its own, as the error says, the request is answered.
    expect(((await (await post({ jsonrpc: '2.0', id: 11, method: 'tools/list' })).json()) as { result?: { tools: unknown[] } }).result?.tools).toHaveLength(3);
    await handler.close();
    await live.close();
  });

  it('over HTTP (MCP 2025-03-26), a batch answered as an SSE stream (a call logged first) stays within maxResultBytes too', async () => {
    const tools = [...['a', 'b', 'c'].map((name) => named(name, { description: name.repeat(300) })), named('logs', { handler: (_args, { log }) => {
        log('info', 'working');
        return { logged: true };
      } })];
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const { handler, post } = await batchSession(live);
    const answered = await post([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'logs', arguments: {} } }, ...Array.from({ length: 10 }, (_, id) => ({ jsonrpc: '2.0', id: id + 2, method: 'tools/list' }))]);
    expect(answered.headers.get('content-type')).toBe('text/event-stream');
    const messages = (await answered.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
    // The log came on the stream, and the replies (about 1.2 KB each for a list: 12 KB passed on as they came) are held to the bound.
    expect(messages.some((message) => message.includes('"notifications/message"'))).toBe(true);
    const replies = messages.filter((message) => !message.includes('"method"'));
    expect(replies.map((reply) => (JSON.parse(reply) as { id: number }).id).sort((x, y) => x - y)).toEqual([...Array(11).keys()].map((id) => id + 1));
    const [kept, refused] = [replies.filter((reply) => !reply.includes('"error"')), replies.filter((reply) => reply.includes('"error"'))];
    expect(kept.reduce((sum, reply) => sum + Buffer.byteLength(reply) + 1, 0)).toBeLessThanOrEqual(4000);
    expect(refused.length).toBeGreaterThan(0);
    expect(JSON.parse(refused[0] as string).error).toEqual({ code: -32000, message: 'Answer too large: the answers of this batch would pass 4000 bytes (maxResultBytes); send this request again on its own' });
    await handler.close();
    await live.close();
  });

  it('over HTTP, the POST of a call the client cancels ends (202: no answer is owed; a stream that carried a log ends), and the session can go idle', async () => {
    const { tool: waits, running } = waitingTool('waits');
    const logged = waitingTool('logs_first', true);
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [waits, logged.tool]);
    const live = await liveToolSet(registry, [waits, logged.tool]);
    const handler = createMcpHttpHandler(live, { sessionIdleMs: 50 });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const post = (message: unknown) => handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(message) }));
    const opened = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    headers['mcp-session-id'] = opened.headers.get('mcp-session-id') as string;
    headers['mcp-protocol-version'] = '2025-06-18';
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    // The notification stream keeps the session from idling out between the steps (50 ms: under load the session ended
    // after the first call, the next POST was a 404 and the test waited for a call that never ran until its timeout).
    const listening = await handler.handle(new Request('http://localhost/mcp', { method: 'GET', headers: { ...headers, accept: 'text/event-stream' } }));
    let held: Response | undefined;
    void post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'waits', arguments: {} } }).then((response) => {
      held = response;
    });
    await running;
    expect((await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'not needed' } })).status).toBe(202);
    // It waited for an answer the SDK never sends, for as long as the connection stayed: the session was never idle.
    await until(() => held !== undefined, 'the cancelled call\'s POST to end');
    expect([held?.status, await held?.text()]).toEqual([202, '']);
    // A call that logged first is answered as its SSE stream: it ends too, the log in it.
    const streamed = await post({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'logs_first', arguments: {} } });
    await logged.running;
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    expect((await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 8, reason: 'not needed' } })).status).toBe(202);
    const events = await streamed.text();
    expect(events).toContain('"waiting"');
    expect(events).not.toContain('"id":8');
    await listening.body?.cancel();
    await until(() => handler.sessionCount === 0, 'the idle session to end');
    await handler.close();
    await live.close();
  });

  it("over HTTP, a second GET replaces the session's stream (it was 409): the old one ends, list_changed comes on the new one, a GET refused (406) leaves the stream alone", async () => {
    const tools = [named('a'), named('b')];
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const handler = createMcpHttpHandler(live, { sessionIdleMs: 50 });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const post = (message: unknown) => handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(message) }));
    const get = (accept = 'text/event-stream') => handler.handle(new Request('http://localhost/mcp', { method: 'GET', headers: { ...headers, accept } }));
    const opened = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    headers['mcp-session-id'] = opened.headers.get('mcp-session-id') as string;
    headers['mcp-protocol-version'] = '2025-11-25';
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    const heard = async (stream: ReadableStreamDefaultReader<Uint8Array>) => new TextDecoder().decode((await stream.read()).value);
    const first = ((await get()).body as ReadableStream<Uint8Array>).getReader();
    expect((await get('application/json')).status).toBe(406);
    await registry.setEnabled('b', false);
    expect(await heard(first)).toContain('"notifications/tools/list_changed"');
    const second = await get();
    expect([second.status, second.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
    // The first one ended (the response's end: the server lets its connection go).
    expect((await first.read()).done).toBe(true);
    await registry.setEnabled('a', false);
    const reader = (second.body as ReadableStream<Uint8Array>).getReader();
    expect(await heard(reader)).toContain('"notifications/tools/list_changed"');
    // Neither stream is left in flight: the session idles out once the new one closes.
    await reader.cancel();
    await until(() => handler.sessionCount === 0, 'the idle session to end');
    await handler.close();
    await live.close();
  });

  it('over HTTP, a request id still unanswered in the session (or twice in one batch) is refused -32600 with that id; the first request keeps its POST', async () => {
    const { tool: waits, running } = waitingTool('waits');
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [waits]);
    const live = await liveToolSet(registry, [waits]);
    const handler = createMcpHttpHandler(live);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const post = (message: unknown) => handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(message) }));
    const opened = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    headers['mcp-session-id'] = opened.headers.get('mcp-session-id') as string;
    const first = post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'waits', arguments: {} } });
    await running;
    // It was answered (the ping's result), and the call's POST then waited forever: its answer went to the last POST of id 7.
    const again = await post({ jsonrpc: '2.0', id: 7, method: 'ping' });
    expect([again.status, await again.json()]).toEqual([400, { jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Invalid Request: request id 7 is already in use by a request of this session not yet answered; give each request a new id' } }]);
    const twice = await post([{ jsonrpc: '2.0', id: 'x', method: 'ping' }, { jsonrpc: '2.0', id: 'x', method: 'ping' }]);
    expect([twice.status, ((await twice.json()) as { id: unknown }).id]).toEqual([400, 'x']);
    expect((await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } })).status).toBe(202);
    expect((await first).status).toBe(202);
    // Answered, the id is free again.
    expect(await (await post({ jsonrpc: '2.0', id: 7, method: 'ping' })).json()).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    await handler.close();
    await live.close();
  });

  it("300 sessions, each with its own persona, over an unchanged set leave no view of theirs behind (a set keeps 64 at most)", () => {
    const dist = fileURLToPath(new URL('../../dist/mcp/index.js', import.meta.url));
    if (!existsSync(dist)) throw new Error(`build first: ${dist} is missing (npm run build)`);
    const child = fileURLToPath(new URL('../fixtures/policy-views-heap.mjs', import.meta.url));
    const out = execFileSync(process.execPath, ['--expose-gc', child, '300'], { encoding: 'utf8' });
    const result = JSON.parse(out) as { listed: number; grewMiB: number };
    expect(result.listed).toBe(301 * 300);
    // 20 MiB when every policy's view was kept while the set lived (about 40 KB each, checked on
    // the code before); 3-4 since (64 views at most).
    expect(result.grewMiB).toBeLessThan(10);
  }, 120_000);

  it('over HTTP, a long session whose calls are cancelled or left by their client keeps nothing of them (the SDK kept each stream until the session ended)', () => {
    const dist = fileURLToPath(new URL('../../dist/mcp/index.js', import.meta.url));
    if (!existsSync(dist)) throw new Error(`build first: ${dist} is missing (npm run build)`);
    const child = fileURLToPath(new URL('../fixtures/cancelled-calls-heap.mjs', import.meta.url));
    const result = JSON.parse(execFileSync(process.execPath, ['--expose-gc', child, '15'], { encoding: 'utf8' })) as { sessions: number; grewMiB: { cancelled: number; gone: number } };
    expect(result.sessions).toBe(1);
    // 15 calls with 256 KB ids: 4.2 MiB cancelled and 7.9 left (their POSTs never ended) on the code before; 0.1-0.6 since.
    expect(result.grewMiB.cancelled).toBeLessThan(2);
    expect(result.grewMiB.gone).toBeLessThan(2);
  }, 60_000);

  it('refuses bad options: TypeError for misuse, VALIDATION_FAILED for a policy', async () => {
    const registry = new InMemoryToolRegistry();
    const live = await liveToolSet(registry, []);
    expect(() => createMcpServer({} as never)).toThrow(TypeError);
    expect(() => createMcpServer(live, { callTimeoutMs: 0 })).toThrow(TypeError);
    expect(() => createMcpServer(live, { pageSize: 1.5 })).toThrow(TypeError);
    expect(() => createMcpServer(live, { maxResultBytes: 0 })).toThrow(TypeError);
    expect(() => createMcpServer(live, { maxCallsInFlight: 0 })).toThrow('createMcpServer(): maxCallsInFlight must be a whole number > 0, got 0');
    expect(() => createMcpHttpHandler(live, { maxCallsInFlight: 2.5 })).toThrow('maxCallsInFlight must be a whole number > 0, got 2.5');
    expect(() => createMcpServer(live, { policy: { persona: 'x', allowed_tool: [] } as never })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => createMcpHttpHandler(live, { sessionIdleMs: -1 })).toThrow(TypeError);
    // Past the longest timer Node keeps, a timer runs after 1 ms: every call timed out, every session ended at once.
    expect(() => createMcpServer(live, { callTimeoutMs: 2 ** 31 })).toThrow('createMcpServer(): callTimeoutMs must be a whole number from 1 to 2147483647 (the longest timer Node keeps), got 2147483648');
    expect(() => createMcpHttpHandler(live, { sessionIdleMs: 2 ** 31 })).toThrow('createMcpHttpHandler(): sessionIdleMs must be a whole number from 1 to 2147483647 (the longest timer Node keeps), got 2147483648');
    expect(() => createMcpHttpHandler(live, { allowedOrigins: 'x' as never })).toThrow(TypeError);
    // An entry no Origin header can equal let no browser in and said nothing (a trailing slash, a capital, `*`).
    for (const [origin, meant] of [['https://App.example/', ' ("https://app.example"?)'], ['https://app.example:443', ' ("https://app.example"?)'], ['*', ''], ['app.example', ''], ['null', '']]) {
      expect(() => createMcpHttpHandler(live, { allowedOrigins: ['https://ok.example', origin as string] })).toThrow(
        `createMcpHttpHandler(): allowedOrigins[1] must be an origin as a browser sends it in Origin (scheme://host[:port], lowercase, no path or default port), got ${JSON.stringify(origin)}${meant as string}: it would match no request`,
      );
    }
    // As a browser sends them: served. Another scheme (an extension's) is compared as given.
    const handler = createMcpHttpHandler(live, { allowedOrigins: ['https://app.example', 'http://[::1]:5173', 'chrome-extension://abcdefgh'] });
    for (const origin of ['https://app.example', 'http://[::1]:5173', 'chrome-extension://abcdefgh']) {
      const reply = await handler.handle(new Request('http://localhost/mcp', { method: 'DELETE', headers: { origin, 'mcp-session-id': 'none' } }));
      expect([origin, reply.status]).toEqual([origin, 404]);
    }
    await handler.close();
    await live.close();
  });
});
