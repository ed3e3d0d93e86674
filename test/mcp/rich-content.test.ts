// Rich MCP results and the call's context (issue 37): mcpContent blocks of every kind,
// progress under a progress token, logs filtered by logging/setLevel, sampling and
// elicitation answered by the calling client; in-process (the SDK's Client over its
// InMemoryTransport), through `invoke` with callbacks, and over a real `serve --tools` /mcp.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { LoggingMessageNotification, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, createToolSet, defineTool, isMcpContent, liveToolSet, mcpContent, openSqliteToolRegistry, publishTools } from '../../src/index.js';
import type { ClientUnavailableError, LogEntry, McpContentInput, ProgressReport, Tool, ToolSpecInput } from '../../src/index.js';
import { createMcpServer } from '../../src/mcp/index.js';
import { CLI, ROOT, childEnv, listeningUrl, stopChild, useChildProcessTimeout } from '../cli/helpers.js';

useChildProcessTimeout();

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';
const none = { type: 'object' };
const everyKind = [
  mcpContent.text('a red dot'),
  mcpContent.image(PNG, 'image/png'),
  mcpContent.audio(new Uint8Array([82, 73, 70, 70]), 'audio/wav'),
  mcpContent.resource({ uri: 'test://notes', mimeType: 'text/plain', text: 'notes' }),
  mcpContent.resourceLink({ uri: 'test://big', name: 'big', mimeType: 'application/pdf', size: 10 }),
];

const tools: Tool[] = [
  defineTool({
    name: 'rich',
    input_schema: none,
    output_schema: { type: 'object', properties: { dots: { type: 'integer' } }, required: ['dots'] },
    handler: () => mcpContent({ content: everyKind, structuredContent: { dots: 1 }, _meta: { 'example/trace': 'x' } }),
  }),
  defineTool({ name: 'refused', input_schema: none, handler: () => mcpContent({ content: [mcpContent.text('no such city')], isError: true }) }),
  defineTool({
    name: 'talk',
    input_schema: none,
    handler: async (_args, { progress, log, sample, elicit }) => {
      progress(0, 2);
      for (const level of ['debug', 'info', 'warning', 'error'] as const) log(level, { level });
      progress(1, 2, 'asking');
      const answer = await sample({ messages: [{ role: 'user', content: { type: 'text', text: 'hi?' } }], maxTokens: 10 });
      const form = await elicit({ message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } });
      progress(2, 2);
      return mcpContent({ content: [mcpContent.text(`${(answer.content as { text: string }).text} / ${form.action} ${JSON.stringify(form.content)}`)] });
    },
  }),
];

/** A client that answers sampling and elicitation, hears logs; and its server over a memory registry. */
async function connected() {
  const registry = new InMemoryToolRegistry();
  await publishTools(registry, tools);
  const live = await liveToolSet(registry, tools);
  const server = createMcpServer(live);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 't', version: '1' }, { capabilities: { sampling: {}, elicitation: {} } });
  const logs: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params));
  client.setRequestHandler(CreateMessageRequestSchema, () => ({ role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm' }));
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'Ada' } }));
  await client.connect(clientSide);
  return { client, logs, close: async () => (await client.close(), await live.close(), await registry.close()) };
}

describe('rich MCP results and the call context (createMcpServer, in-process)', () => {
  it('sends mcpContent unchanged: text, image, audio, resource, resource link, structuredContent, _meta, isError', async () => {
    const { client, close } = await connected();
    expect(client.getServerCapabilities()).toMatchObject({ logging: {} });
    expect(await client.callTool({ name: 'rich', arguments: {} })).toEqual({
      content: [
        { type: 'text', text: 'a red dot' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'test://notes', mimeType: 'text/plain', text: 'notes' } },
        { type: 'resource_link', uri: 'test://big', name: 'big', mimeType: 'application/pdf', size: 10 },
      ],
      structuredContent: { dots: 1 },
      _meta: { 'example/trace': 'x' },
    });
    expect(await client.callTool({ name: 'refused', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'no such city' }], isError: true });
    await close();
  });

  it('progress only under a progress token; logs at or above logging/setLevel; sampling and elicitation answered by the caller', async () => {
    const { client, logs, close } = await connected();
    const reports: Progress[] = [];
    const first = await client.callTool({ name: 'talk', arguments: {} }, undefined, { onprogress: (report) => void reports.push(report) });
    expect(first.content).toEqual([{ type: 'text', text: 'hello / accept {"name":"Ada"}' }]);
    expect(reports).toEqual([{ progress: 0, total: 2 }, { progress: 1, total: 2, message: 'asking' }, { progress: 2, total: 2 }]);
    // No level set yet: every message, the tool's name as logger.
    expect(logs.map((entry) => entry.level)).toEqual(['debug', 'info', 'warning', 'error']);
    expect(logs[0]).toEqual({ level: 'debug', logger: 'talk', data: { level: 'debug' } });
    await client.setLoggingLevel('warning');
    logs.length = 0;
    await client.callTool({ name: 'talk', arguments: {} });
    expect(logs.map((entry) => entry.level)).toEqual(['warning', 'error']);
    await close();
  });
});

/** A tool that reports progress, waits for `release()`, reports again and says so with `finished`: a report after its call timed out. */
function lateReporter() {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let finish = (): void => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const tool = defineTool({
    name: 'late',
    input_schema: none,
    handler: async (_args, { progress }) => {
      progress(0, 2);
      await released;
      progress(1, 2, 'after the end');
      finish();
      return 'done';
    },
  });
  return { tool, release, finished };
}

describe('a call that ended reports and asks nothing more', () => {
  it('in-process: a report after the result (a timeout) does not reach onProgress', async () => {
    const { tool, release, finished } = lateReporter();
    const reports: ProgressReport[] = [];
    const result = await createToolSet([tool]).invoke('late', {}, { timeoutMs: 20, onProgress: (report) => void reports.push(report) });
    expect(result).toMatchObject({ success: false, code: 'TIMEOUT' });
    release();
    await finished;
    expect(reports).toEqual([{ progress: 0, total: 2 }]);
  });

  it('in-process: a sample or elicit after the call timed out rejects with the timeout and never asks the client (as the SDK does over MCP)', async () => {
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let finish = (): void => undefined;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const outcomes: string[] = [];
    const asker = defineTool({
      name: 'asker',
      input_schema: none,
      handler: async (_args, { elicit, sample }) => {
        await released;
        await elicit({ message: 'Still there?' }).catch((error: Error) => outcomes.push(`elicit: ${error.name}`));
        await sample({ messages: [], maxTokens: 1 }).catch((error: Error) => outcomes.push(`sample: ${error.name}`));
        finish();
        return 'done';
      },
    });
    const asked: string[] = [];
    const client = {
      createMessage: async () => (asked.push('sample'), { role: 'assistant' as const, content: { type: 'text', text: 'x' }, model: 'm' }),
      elicitInput: async () => (asked.push('elicit'), { action: 'cancel' as const }),
    };
    expect(await createToolSet([asker]).invoke('asker', {}, { timeoutMs: 20, client })).toMatchObject({ code: 'TIMEOUT' });
    release();
    await finished;
    expect(outcomes).toEqual(['elicit: TimeoutError', 'sample: TimeoutError']);
    expect(asked).toEqual([]);
  });

  it('over MCP: no notifications/progress after the tools/call answer (the SDK client reports an unknown token)', async () => {
    const { tool, release, finished } = lateReporter();
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [tool]);
    const live = await liveToolSet(registry, [tool]);
    const server = createMcpServer(live, { callTimeoutMs: 20 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' });
    const errors: string[] = [];
    client.onerror = (error) => void errors.push(error.message);
    await client.connect(clientSide);
    const reports: Progress[] = [];
    const answer = await client.callTool({ name: 'late', arguments: {} }, undefined, { onprogress: (report) => void reports.push(report) });
    expect(answer.isError).toBe(true);
    release();
    await finished;
    await client.listTools(); // a round trip: anything sent before its answer has arrived
    expect(errors).toEqual([]);
    expect(reports).toEqual([{ progress: 0, total: 2 }]);
    await client.close();
    await live.close();
    await registry.close();
  });
});

describe('the same handlers in-process (invoke)', () => {
  it('content is data, callbacks hear progress and logs, a request to a client fails with CLIENT_UNAVAILABLE', async () => {
    const set = createToolSet(tools);
    const rich = await set.invoke('rich', {});
    expect(rich.success).toBe(true);
    if (!rich.success) return;
    expect(isMcpContent(rich.data)).toBe(true);
    expect(rich.data).toMatchObject({ content: everyKind, structuredContent: { dots: 1 } });
    expect(Object.isFrozen((rich.data as { content: unknown[] }).content[1])).toBe(true);

    const reports: ProgressReport[] = [];
    const entries: LogEntry[] = [];
    const talk = await set.invoke('talk', {}, { onProgress: (report) => void reports.push(report), onLog: (entry) => void entries.push(entry) });
    expect(talk).toMatchObject({ success: false, code: 'TOOL_FAILED' });
    expect(!talk.success && talk.error).toMatch(/CLIENT_UNAVAILABLE: tool 'talk' asked its client for sampling\/createMessage/);
    expect(reports).toEqual([{ progress: 0, total: 2 }, { progress: 1, total: 2, message: 'asking' }]);
    expect(entries.map((entry) => entry.level)).toEqual(['debug', 'info', 'warning', 'error']);

    // A handler may catch it by code; with a client of the caller's own, the same call succeeds.
    const caught = defineTool({ name: 'caught', input_schema: none, handler: (_a, { elicit }) => elicit({ message: 'x' }).catch((error: ClientUnavailableError) => error.code) });
    expect(await createToolSet([caught]).invoke('caught', {})).toMatchObject({ success: true, data: 'CLIENT_UNAVAILABLE' });
    const client = {
      createMessage: async () => ({ role: 'assistant' as const, content: { type: 'text', text: 'local' }, model: 'm' }),
      elicitInput: async () => ({ action: 'decline' as const }),
    };
    const answered = await set.invoke('talk', {}, { client });
    expect(answered).toMatchObject({ success: true, data: { content: [{ type: 'text', text: 'local / decline undefined' }] } });
  });

  it('output_schema judges structuredContent (none is INVALID_OUTPUT; isError is not judged); mcpContent refuses what clients would', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const make = (value: unknown) => defineTool({ name: 'n', input_schema: none, output_schema: schema, handler: () => value });
    const invoke = (value: unknown) => createToolSet([make(value)]).invoke('n', {});
    expect(await invoke(mcpContent({ content: [], structuredContent: { n: 'x' } }))).toMatchObject({ code: 'INVALID_OUTPUT', issues: [{ path: '/n' }] });
    expect(await invoke(mcpContent({ content: [mcpContent.text('1')] }))).toMatchObject({ code: 'INVALID_OUTPUT' });
    expect(await invoke(mcpContent({ content: [mcpContent.text('down')], isError: true }))).toMatchObject({ success: true });
    expect(await invoke(mcpContent({ content: [], structuredContent: { n: 1 } }))).toMatchObject({ success: true });
    expect(() => mcpContent({ content: [mcpContent.image('not base64!', 'image/png')] })).toThrow(TypeError);
    expect(() => mcpContent({ content: [{ type: 'video' } as never] })).toThrow(TypeError);
    expect(() => mcpContent({ content: [], structuredContent: { when: new Date() } as never })).toThrow(/not JSON data/);
  });

  it('mcpContent: a text result (the quick path) is checked, copied and frozen as any other; anything unusual is judged as before', () => {
    const input = { _meta: { trace: 't' }, isError: false, structuredContent: { b: [1, { c: null }], a: 'x', u: undefined, 2: true }, content: [{ text: 'hi', type: 'text' as const }] };
    const made = mcpContent(input as unknown as McpContentInput);
    // Key order as the schema makes it; a copy (the input stays the caller's), deeply frozen, marked.
    expect(JSON.stringify(made)).toBe('{"content":[{"type":"text","text":"hi"}],"structuredContent":{"2":true,"b":[1,{"c":null}],"a":"x"},"isError":false,"_meta":{"trace":"t"}}');
    expect('u' in (made.structuredContent as object)).toBe(true);
    const deep = made.structuredContent as { b: [number, { c: null }] };
    expect(deep).not.toBe(input.structuredContent);
    expect([made, made.content, made.content[0], deep, deep.b, deep.b[1], made._meta].every((object) => Object.isFrozen(object))).toBe(true);
    expect(Object.isFrozen(input.structuredContent)).toBe(false);
    expect(isMcpContent(made)).toBe(true);
    // A key named __proto__ at the top of a record is dropped, as the schema drops it; deeper it is data.
    const proto = mcpContent(JSON.parse('{"content":[],"structuredContent":{"__proto__":{"a":1},"b":{"__proto__":2}}}') as McpContentInput);
    expect(Object.keys(proto.structuredContent as object)).toEqual(['b']);
    expect(Object.getOwnPropertyDescriptor((proto.structuredContent as { b: object }).b, '__proto__')?.value).toBe(2);
    const refused: [string, unknown][] = [
      ['NaN', { content: [], structuredContent: { n: Number.NaN } }],
      ['a cycle', (() => { const loop: Record<string, unknown> = {}; loop.self = loop; return { content: [], structuredContent: { loop } }; })()],
      // eslint-disable-next-line no-sparse-arrays -- a hole is the point
      ['a hole', { content: [], structuredContent: { list: [1, , 3] } }],
      ['undefined in an array', { content: [], structuredContent: { list: [undefined] } }],
      ['an array as structuredContent', { content: [], structuredContent: [1] }],
      ['a symbol key in a record', { content: [], _meta: { [Symbol('s')]: 1 } }],
      ['isError not a boolean', { content: [], isError: 'yes' }],
      ['an unknown key', { content: [], extra: 1 }],
      ['a block with an unknown key', { content: [{ type: 'text', text: 'a', extra: 1 }] }],
      ['a text that is not a string', { content: [{ type: 'text', text: 1 }] }],
      ['content not an array', { content: { type: 'text', text: 'a' } }],
    ];
    for (const [why, value] of refused) expect(() => mcpContent(value as McpContentInput), why).toThrow(TypeError);
  });
});

describe('over a real tool-registry serve --tools (Streamable HTTP)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-rich-'));
  const module = join(ROOT, 'test', 'fixtures', 'mcp-conformance-tools.mjs');
  let server: ChildProcess;
  let url: URL;

  beforeAll(async () => {
    const db = join(folder, 'tools.db');
    // serve serves what is published: the module's tools first.
    const registry = await openSqliteToolRegistry({ filename: db });
    // (The module's tools come from dist/: their specs are registered.)
    const exported = Object.values((await import(module)) as Record<string, { spec?: ToolSpecInput }>);
    await registry.registerMany(exported.flatMap((tool) => (tool.spec === undefined ? [] : [tool.spec])));
    await registry.close();
    server = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', '0', '--no-console', '--tools', module], { cwd: folder, env: childEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
    url = new URL(`${await listeningUrl(server)}/mcp`);
  }, 120_000);

  afterAll(async () => {
    await stopChild(server);
    rmSync(folder, { recursive: true, force: true });
  });

  it('an image, progress with a token, logs above the level, sampling and elicitation, through the SDK client', async () => {
    const client = new Client({ name: 'rich', version: '1' }, { capabilities: { sampling: {}, elicitation: {} } });
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(String(notification.params.data)));
    client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
      role: 'assistant',
      content: { type: 'text', text: `echo ${(request.params.messages[0] as { content: { text: string } }).content.text}` },
      model: 'm',
    }));
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { username: 'ada', email: 'ada@example.com' } }));
    const transport = new StreamableHTTPClientTransport(url);
    await client.connect(transport);
    const image = await client.callTool({ name: 'test_image_content', arguments: {} });
    expect(image.content).toEqual([{ type: 'image', data: expect.stringMatching(/^iVBORw0KGgo/), mimeType: 'image/png' }]);
    const reports: Progress[] = [];
    await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, { onprogress: (report) => void reports.push(report) });
    expect(reports.map((report) => report.progress)).toEqual([0, 50, 100]);
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(logs).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
    await client.setLoggingLevel('warning');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(logs).toHaveLength(3);
    expect((await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } })).content).toEqual([{ type: 'text', text: 'LLM response: echo hi' }]);
    expect((await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who?' } })).content).toEqual([
      { type: 'text', text: 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}' },
    ]);
    // A call that sends nothing first is answered as JSON, as before.
    const plain = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId as string, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }),
    });
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await plain.json()).toMatchObject({ id: 9, result: { content: [{ type: 'text', text: 'This is a simple text response for testing.' }] } });
    await transport.terminateSession();
    await client.close();
  });

  it("the suite's 2025-11-25 tool scenarios: a 2020-12 schema listed as written, elicitation with defaults and every enum form", async () => {
    const client = new Client({ name: 'conformance', version: '1' }, { capabilities: { elicitation: {} } });
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push((request.params as { requestedSchema: { properties: Record<string, unknown> } }).requestedSchema.properties);
      return { action: 'accept', content: {} };
    });
    const transport = new StreamableHTTPClientTransport(url);
    await client.connect(transport);
    const listed = (await client.listTools()).tools.find((tool) => tool.name === 'json_schema_2020_12_tool');
    expect(listed?.inputSchema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', $defs: { address: { type: 'object' } }, additionalProperties: false });
    const defaults = await client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
    expect(defaults.content).toEqual([{ type: 'text', text: 'Elicitation completed: action=accept, content={}' }]);
    expect(asked[0]).toMatchObject({ name: { default: 'John Doe' }, age: { type: 'integer', default: 30 }, score: { default: 95.5 }, status: { default: 'active' }, verified: { default: true } });
    await client.callTool({ name: 'test_elicitation_sep1330_enums', arguments: {} });
    expect(asked[1]).toMatchObject({ titledSingle: { oneOf: [{ const: 'value1', title: 'First Option' }, {}, {}] }, legacyEnum: { enumNames: ['Option One', 'Option Two', 'Option Three'] }, titledMulti: { items: { anyOf: [{ const: 'value1' }, {}, {}] } } });
    await transport.terminateSession();
    await client.close();
  });
});
