// The gateway against MCP servers this project did not write (issue 37): the official
// server-everything over stdio and over Streamable HTTP, and server-memory over stdio,
// proxied by one gatewayToolSet beside a local tool; an SDK client of the official SDK lists
// and calls through it and gets their content (an image included), progress, logs and
// sampling requests (a task-only tool called as a task), under its session's policy and each
// upstream's stored permissions; every proxied call leaves an audit row (the sessions record
// through createCallRecorder). Upstreams in this process send what no SDK server sends (a
// result or an error that is no JSON-RPC member, on Streamable HTTP and on the older HTTP+SSE
// transport): each call or listing fails at once, never at its timeout.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, LoggingMessageNotification, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool, fingerprintOf, InMemoryToolRegistry, publishTools } from '../../src/index.js';
import type { ToolPolicy } from '../../src/index.js';
import { callOutcomeOf } from '../../src/mcp/call-outcome.js';
import { connectUpstream, createCallRecorder, createMcpServer, fetchUpstreamDefinitions, gatewayToolSet } from '../../src/mcp/index.js';
import type { CallRecorder, GatewayToolSet } from '../../src/mcp/index.js';
import { ROOT, stopChild, useChildProcessTimeout } from '../cli/helpers.js';
import { until } from '../support/waiting.js';
import { approveListed, freePort } from '../support/upstreams.js';
import { startHttpUpstream, startLegacySseUpstream } from '../support/http-upstream.js';
import type { HttpUpstream, RawAnswer } from '../support/http-upstream.js';

useChildProcessTimeout();

const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const MEMORY = join(ROOT, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js');

/** What the in-process upstream `relay` answers to `answer`, by the `kind` asked for. */
const RELAYED: Record<string, object> = {
  text: { content: [{ type: 'text', text: 'h\u00e9llo "x"\n\u2028' }], structuredContent: { n: 1, nested: { list: [1, null, 'a'], empty: {} }, 2: true }, isError: true, _meta: { 'example/trace': 't1' } },
  rich: { content: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png', annotations: { audience: ['user'], priority: 0.5 } }, { type: 'resource_link', uri: 'test://x', name: 'x' }] },
  // Unpadded base64: the SDK's client takes it (atob does), MCP clients that check the padding refuse it.
  unpadded: { content: [{ type: 'image', data: 'iVBORw0KGgo', mimeType: 'image/png' }] },
  // Not MCP content at all: the SDK's client refuses it.
  video: { content: [{ type: 'video', url: 'test://v' }] },
  // A JSON-RPC response, but content is no list: not a CallToolResult.
  'content-string': { content: 'x' },
  big: { content: [{ type: 'text', text: 'x'.repeat(5000) }] },
};

/** What `relay` answers itself (its SDK server cannot send these): not even a JSON-RPC response, which the SDK's client transport drops. */
const INVALID: Record<string, RawAnswer> = {
  null: { fields: { result: null }, as: 'sse' },
  five: { fields: { result: 5 }, as: 'sse' },
  missing: { fields: {}, as: 'sse' },
  'null-json': { fields: { result: null }, as: 'json' },
  // An error member that is no JSON-RPC error.
  'error-five': { fields: { error: 5 }, as: 'sse', progress: 'just before' },
  'error-null': { fields: { error: null }, as: 'sse' },
  'error-code': { fields: { error: { code: 'x', message: 'm' } }, as: 'sse' },
  'error-no-message': { fields: { error: { code: -32050 } }, as: 'sse' },
  'error-five-json': { fields: { error: 5 }, as: 'json' },
};

const local = defineTool({ name: 'local_add', input_schema: { type: 'object', properties: { a: { type: 'number' } } }, handler: ({ a }) => ({ sum: (a as number) + 1 }) });

let registry: InMemoryToolRegistry;
let gateway: GatewayToolSet;
let recorder: CallRecorder;
let httpChild: ChildProcess | undefined;
let httpUrl: string;
let relay: HttpUpstream;
const sessions: Client[] = [];
/** The serving gateway's warnings (an upstream that could not be listed, say), shown when the listing test fails. */
const warnings: string[] = [];
/** A call of server-everything's task-only tool (over HTTP: a call in flight to the stdio one would take its log messages), started in beforeAll. */
let researching: Promise<CallToolResult>;
const dir = mkdtempSync(join(tmpdir(), 'gateway-'));

/** A session of the SDK's client over the gateway (in process, as `serve` and `mcp` make them), answering sampling. */
async function session(policy?: ToolPolicy, model = 'test-model'): Promise<{ client: Client; logs: LoggingMessageNotification['params'][] }> {
  const server = createMcpServer(gateway, { ...(policy === undefined ? {} : { policy }), onCall: (record) => recorder.record(record) });
  const client = new Client({ name: 'test', version: '1' }, { capabilities: { sampling: {}, elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, (request) => ({ action: 'accept', content: { name: `answered: ${request.params.message.slice(0, 11)}` } }));
  const logs: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void logs.push(notification.params));
  client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
    role: 'assistant',
    model,
    content: { type: 'text', text: `answer to ${JSON.stringify(request.params.messages.map((message) => (message.content as { text?: string }).text))}` },
  }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await client.connect(b);
  sessions.push(client);
  return { client, logs };
}

beforeAll(async () => {
  const port = await freePort();
  httpChild = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  httpUrl = `http://127.0.0.1:${port}/mcp`;
  const listening = new Promise<void>((resolve, reject) => {
    httpChild?.stderr?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) resolve();
    });
    httpChild?.once('exit', (code) => reject(new Error(`server-everything (HTTP) exited with ${code}`)));
  });
  // An upstream in this process that answers `answer` with the result its `kind` names, as it is.
  const kind = (params: Record<string, unknown>): string => (params.arguments as { kind: string }).kind;
  relay = await startHttpUpstream(
    () => [{ name: 'answer', inputSchema: { type: 'object', properties: { kind: { type: 'string' } } } }],
    (_name, args) => RELAYED[args.kind as string],
    (method, params) => (method === 'tools/call' ? INVALID[kind(params)] : undefined),
  );
  registry = new InMemoryToolRegistry();
  recorder = createCallRecorder(registry);
  await publishTools(registry, [local]);
  await registry.putUpstream({ name: 'everything', transport: { type: 'stdio', command: [process.execPath, EVERYTHING, 'stdio'], env: {}, cwd: null } });
  await registry.putUpstream({ name: 'memory', transport: { type: 'stdio', command: [process.execPath, MEMORY], env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }, cwd: null }, permissions: ['DB_WRITE'] });
  await registry.putUpstream({ name: 'web', prefix: 'web.', transport: { type: 'http', url: httpUrl, headers: {} } });
  await registry.putUpstream({ name: 'relay', transport: { type: 'http', url: relay.url, headers: {} } });
  await listening;
  gateway = await gatewayToolSet(registry, [local], { onWarning: (warning) => void warnings.push(warning) });
  // Nothing is served until registered (the gateway never registers): approve what they list.
  expect(gateway.current().tools().map((tool) => tool.name)).toEqual(['local_add']);
  await approveListed(registry, gateway);
  // Its stages take about 5 s (server-everything waits 1 s in each): started now, it runs while the other tests do
  // (its test comes before the one that stops the HTTP upstream).
  researching = session().then(({ client }) => client.callTool({ name: 'web.simulate-research-query', arguments: { topic: 'gateways' } }) as Promise<CallToolResult>);
  researching.catch(() => undefined);
}, 60_000);

afterAll(async () => {
  await Promise.all(sessions.map((client) => client.close()));
  await recorder?.close();
  await gateway?.close();
  await stopChild(httpChild);
  await relay?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('one endpoint: local and upstream tools', () => {
  it('lists every approved upstream tool beside the local one, with the upstream title and hints', async () => {
    const { client } = await session();
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toContain('local_add');
    expect(names, `the gateway's warnings: ${JSON.stringify(warnings)}`).toEqual(expect.arrayContaining(['everything_echo', 'everything_get-tiny-image', 'everything_trigger-sampling-request', 'memory_create_entities', 'memory_read_graph', 'web.echo']));
    const longRunning = tools.find((tool) => tool.name === 'everything_trigger-long-running-operation');
    expect(longRunning?.title).toBe('Trigger Long Running Operation Tool');
    expect(longRunning?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(gateway.upstreams().map((status) => [status.name, status.connected])).toEqual([
      ['everything', true],
      ['memory', true],
      ['relay', true],
      ['web', true],
    ]);
  });

  it('forwards a call and gives the upstream result back unchanged (text, an image, structuredContent)', async () => {
    const { client } = await session();
    const echo = (await client.callTool({ name: 'everything_echo', arguments: { message: 'hello' } })) as CallToolResult;
    expect(echo).toEqual({ content: [{ type: 'text', text: 'Echo: hello' }] });
    const image = (await client.callTool({ name: 'everything_get-tiny-image', arguments: {} })) as CallToolResult;
    const direct = image.content.find((block) => block.type === 'image');
    expect(direct).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect((direct as { data: string }).data).toMatch(/^iVBOR/);
    const structured = (await client.callTool({ name: 'everything_get-structured-content', arguments: { location: 'New York' } })) as CallToolResult;
    expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });
    // The audit row of the proxied echo: the upstream's name, the approved version and its fingerprint, ok.
    await recorder.flush();
    const registered = await registry.get('everything_echo');
    const rows = await registry.listCalls({ tool: 'everything_echo' });
    expect(rows.map(({ tool, upstream, version, fingerprint, outcome }) => ({ tool, upstream, version, fingerprint, outcome }))).toEqual([
      { tool: 'everything_echo', upstream: 'everything', version: registered!.spec.version, fingerprint: fingerprintOf(registered!.spec), outcome: 'ok' },
    ]);
    expect(registered!.spec.version).toMatch(/^1\.0\.0\+/);
    expect(JSON.stringify(rows)).not.toContain('hello');
  });

  it('relays the upstream progress to the calling session under its own progress token', async () => {
    const { client } = await session();
    const progress: Progress[] = [];
    const result = (await client.callTool({ name: 'everything_trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, { onprogress: (report) => void progress.push(report) })) as CallToolResult;
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Steps: 3') });
    expect(progress.map((report) => [report.progress, report.total])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });

  it('relays the upstream log messages during a call to the calling session', async () => {
    const { client, logs } = await session();
    await client.callTool({ name: 'everything_toggle-simulated-logging', arguments: {} });
    // server-everything sends its first message during the call, before its answer.
    await until(() => logs.length > 0, 'a log message');
    expect(logs[0]?.data).toEqual(expect.stringMatching(/-level message|level-message/));
    await client.callTool({ name: 'everything_toggle-simulated-logging', arguments: {} });
  });

  it("sends the upstream's sampling request to the session that made the call and its answer back", async () => {
    const { client } = await session();
    const result = (await client.callTool({ name: 'everything_trigger-sampling-request', arguments: { prompt: 'two words', maxTokens: 5 } })) as CallToolResult;
    expect((result.content[0] as { text: string }).text).toContain('answer to');
    expect((result.content[0] as { text: string }).text).toContain('test-model');
  });

  it("sends the upstream's elicitation request to the session that made the call and its answer back", async () => {
    const { client } = await session();
    const result = (await client.callTool({ name: 'everything_trigger-elicitation-request', arguments: {} })) as CallToolResult;
    expect(JSON.stringify(result.content)).toContain('answered: Please prov');
  });

  it('relays the sampling requests of concurrent calls over Streamable HTTP each to its own session', async () => {
    const [one, two] = await Promise.all([session(undefined, 'model-one'), session(undefined, 'model-two')]);
    const call = (client: Client) => client.callTool({ name: 'web.trigger-sampling-request', arguments: { prompt: 'who?', maxTokens: 5 } }) as Promise<CallToolResult>;
    const [a, b] = await Promise.all([call(one.client), call(two.client)]);
    expect((a.content[0] as { text: string }).text).toContain('model-one');
    expect((b.content[0] as { text: string }).text).toContain('model-two');
  });

  it('relays the sampling requests of concurrent calls of one session to a stdio upstream to that session (nothing on stdio links a request to its call)', async () => {
    // The client holds each sampling request until both have come: both calls are in flight at once.
    const { client } = await session(undefined, 'model-both');
    let arrived = 0;
    let release: () => void = () => {};
    const both = new Promise<void>((resolve) => (release = resolve));
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      if (++arrived === 2) release();
      await Promise.race([both, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      return { role: 'assistant', model: 'model-both', content: { type: 'text', text: `answer ${arrived}` } };
    });
    const call = () => client.callTool({ name: 'everything_trigger-sampling-request', arguments: { prompt: 'who?', maxTokens: 5 } }) as Promise<CallToolResult>;
    const results = await Promise.all([call(), call()]);
    expect(arrived).toBe(2);
    for (const result of results) expect([result.isError, (result.content[0] as { text: string }).text]).toEqual([undefined, expect.stringContaining('model-both')]);
  });

  it('calls server-memory (create_entities, read_graph) and an HTTP upstream (server-everything, Streamable HTTP)', async () => {
    const { client } = await session();
    const name = `gw-${process.pid}-${Date.now()}`;
    await client.callTool({ name: 'memory_create_entities', arguments: { entities: [{ name, entityType: 'test', observations: ['proxied'] }] } });
    const graph = (await client.callTool({ name: 'memory_read_graph', arguments: {} })) as CallToolResult;
    expect(JSON.stringify(graph.structuredContent ?? graph.content)).toContain(name);
    const echo = (await client.callTool({ name: 'web.echo', arguments: { message: 'over http' } })) as CallToolResult;
    expect(echo.content).toEqual([{ type: 'text', text: 'Echo: over http' }]);
    const progress: Progress[] = [];
    await client.callTool({ name: 'web.trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } }, undefined, { onprogress: (report) => void progress.push(report) });
    expect(progress.map((report) => report.progress)).toEqual([1, 2]);
  });

  it('relays a result as the upstream sent it, or refuses it deterministically: not MCP content, or over maxResultBytes', async () => {
    const server = createMcpServer(gateway, { maxResultBytes: 4096, onCall: (record) => recorder.record(record) });
    const client = new Client({ name: 'test', version: '1' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    await client.connect(b);
    sessions.push(client);
    const answer = async (kind: string) => (await client.callTool({ name: 'relay_answer', arguments: { kind } })) as CallToolResult;
    // Text, structuredContent, isError and _meta unchanged (the quick path); other blocks and annotations too (the full one).
    expect(await answer('text')).toEqual(RELAYED.text);
    expect(await answer('rich')).toEqual(RELAYED.rich);
    // Refused, each an isError result naming the upstream (the audit log: UPSTREAM_ERROR).
    for (const kind of ['unpadded', 'video', 'content-string']) {
      const refused = await answer(kind);
      expect(refused.isError).toBe(true);
      expect((refused.content[0] as { text: string }).text).toMatch(/^UPSTREAM_ERROR: upstream 'relay' returned a result for answer that cannot be relayed: /);
    }
    // Answers the SDK's transport refuses: on the call's SSE stream it dropped them (on the old code:
    // TIMEOUT after the session's 30 s); a JSON body failed the send (an UPSTREAM_ERROR of another wording).
    const invalid = await Promise.all(['null', 'five', 'missing', 'null-json'].map(answer));
    expect(invalid.map((result) => [result.isError, (result.content[0] as { text: string }).text])).toEqual(
      ['null', 'number', 'undefined', 'null'].map((received) => [
        true,
        `UPSTREAM_ERROR: upstream 'relay' returned a result for answer that cannot be relayed: not a valid CallToolResult: result Invalid input: expected object, received ${received}`,
      ]),
    );
    expect(((await answer('content-string')).content[0] as { text: string }).text).toMatch(/cannot be relayed: not a valid CallToolResult: content Invalid input: expected array, received string$/);
    const big = await answer('big');
    expect(big.isError).toBe(true);
    expect((big.content[0] as { text: string }).text).toMatch(/^TOOL_FAILED: Tool 'relay_answer' returned \d+ bytes .* over this server's limit of 4096 bytes/);
    expect(await answer('text')).toEqual(RELAYED.text);
    await recorder.flush();
    const rows = await registry.listCalls({ tool: 'relay_answer' });
    expect(rows.map((row) => row.outcome).reverse()).toEqual(['TOOL_ERROR', 'ok', 'UPSTREAM_ERROR', 'UPSTREAM_ERROR', 'UPSTREAM_ERROR', 'UPSTREAM_ERROR', 'UPSTREAM_ERROR', 'UPSTREAM_ERROR', 'UPSTREAM_ERROR', 'UPSTREAM_ERROR', 'TOOL_FAILED', 'TOOL_ERROR']);
  });

  it('an answer whose error is no JSON-RPC error (5, null, a code that is no number, no message) is UPSTREAM_ERROR naming it at once, on the call\'s SSE stream or as a JSON body', async () => {
    // On the old code the SSE ones were dropped by the SDK's transport: TIMEOUT after this session's 5 s.
    const server = createMcpServer(gateway, { callTimeoutMs: 5_000, onCall: (record) => recorder.record(record) });
    const client = new Client({ name: 'test', version: '1' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    await client.connect(b);
    sessions.push(client);
    const kinds = ['error-five', 'error-null', 'error-code', 'error-no-message', 'error-five-json'];
    const progress: Progress[] = [];
    const call = (kind: string) => client.callTool({ name: 'relay_answer', arguments: { kind } }, undefined, { onprogress: (report) => void progress.push(report) });
    const results = (await Promise.all(kinds.map(call))) as CallToolResult[];
    const prefix = "UPSTREAM_ERROR: upstream 'relay' answered answer with an error that is not a JSON-RPC error: error";
    expect(results.map((result) => [result.isError, (result.content[0] as { text: string }).text])).toEqual([
      [true, `${prefix} Invalid input: expected object, received number`],
      [true, `${prefix} Invalid input: expected object, received null`],
      [true, `${prefix}.code Invalid input: expected number, received string`],
      [true, `${prefix}.message Invalid input: expected string, received undefined`],
      [true, `${prefix} Invalid input: expected object, received number`],
    ]);
    // The report sent just before the refused answer, on the same stream, was relayed before the call ended.
    expect(progress.map((report) => report.message)).toEqual(['just before']);
  });

  it('a listing answered with what is not a JSON-RPC response fails at once saying so, on an SSE stream or as a JSON body, for the commands and for a serving gateway (Streamable HTTP)', async () => {
    let listing: RawAnswer = { fields: { result: 5 }, as: 'sse' };
    const broken = await startHttpUpstream(() => [], undefined, (method) => (method === 'tools/list' ? listing : undefined));
    const upstream = { name: 'broken', transport: { type: 'http' as const, url: broken.url, headers: {} } };
    const own = new InMemoryToolRegistry();
    try {
      // On the old code: "did not list its tools: MCP error -32001: Request timed out", after these 5 s.
      const refusal = (answer: string) => `upstream broken (${broken.url}) did not list its tools: MCP error -32603: the upstream's answer is not a JSON-RPC response: ${answer}`;
      await expect(fetchUpstreamDefinitions(upstream, { timeoutMs: 5_000 })).rejects.toThrow(refusal('result Invalid input: expected object, received number'));
      listing = { fields: { error: { code: 'x', message: 'm' } }, as: 'sse' };
      await expect(fetchUpstreamDefinitions(upstream, { timeoutMs: 5_000 })).rejects.toThrow(refusal('error.code Invalid input: expected number, received string'));
      // As a JSON body the SDK's parse failed the POST at once, but said only "the answer: Invalid input" on the old code.
      listing = { fields: { error: 5 }, as: 'json' };
      await expect(fetchUpstreamDefinitions(upstream, { timeoutMs: 5_000 })).rejects.toThrow(refusal('error Invalid input: expected object, received number'));
      listing = { fields: { error: { code: 'x', message: 'm' } }, as: 'sse' };
      // The serving gateway's listing: its first attempt ends with the refusal, not the connect timeout.
      await own.putUpstream(upstream);
      const serving = await gatewayToolSet(own, [], { onWarning: () => {}, connectTimeoutMs: 5_000 });
      try {
        expect(serving.upstreams().map((status) => [status.connected, status.error])).toEqual([
          [true, "cannot list its tools: MCP error -32603: the upstream's answer is not a JSON-RPC response: error.code Invalid input: expected number, received string"],
        ]);
      } finally {
        await serving.close();
      }
    } finally {
      await broken.close();
    }
  });

  it('over the older HTTP+SSE transport, an answer that is not a JSON-RPC response fails a call or a listing at once (matched by its id on the shared stream)', async () => {
    const LEGACY: Record<string, Record<string, unknown>> = { usual: { result: { content: [{ type: 'text', text: 'over sse' }] } }, five: { result: 5 }, 'error-code': { error: { code: 'x', message: 'm' } } };
    let listing: Record<string, unknown> = { result: { tools: [{ name: 'answer', inputSchema: { type: 'object', properties: { kind: { type: 'string' } } } }] } };
    const legacy = await startLegacySseUpstream((method, params) => {
      if (method === 'initialize') return { result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'legacy', version: '1' } } };
      if (method === 'tools/list') return listing;
      if (method === 'tools/call') return LEGACY[(params.arguments as { kind: string }).kind] ?? {};
      return { result: {} };
    });
    const upstream = { name: 'legacy', transport: { type: 'http' as const, url: legacy.url, headers: {} } };
    const own = new InMemoryToolRegistry();
    await own.putUpstream(upstream);
    const serving = await gatewayToolSet(own, [], { onWarning: () => {}, connectTimeoutMs: 5_000 });
    try {
      await approveListed(own, serving);
      const server = createMcpServer(serving, { callTimeoutMs: 5_000 });
      const client = new Client({ name: 'test', version: '1' });
      const [a, b] = InMemoryTransport.createLinkedPair();
      await server.connect(a);
      await client.connect(b);
      sessions.push(client);
      // On the old code the last two were dropped by the SDK's transport: TIMEOUT after this session's 5 s.
      const results = (await Promise.all(['usual', 'five', 'error-code'].map((kind) => client.callTool({ name: 'legacy_answer', arguments: { kind } })))) as CallToolResult[];
      expect(results.map((result) => [result.isError, (result.content[0] as { text: string }).text])).toEqual([
        [undefined, 'over sse'],
        [true, "UPSTREAM_ERROR: upstream 'legacy' returned a result for answer that cannot be relayed: not a valid CallToolResult: result Invalid input: expected object, received number"],
        [true, "UPSTREAM_ERROR: upstream 'legacy' answered answer with an error that is not a JSON-RPC error: error.code Invalid input: expected number, received string"],
      ]);
      // A request the SDK's client makes itself: a call, and a listing (the commands'), each an error at once.
      const connection = await connectUpstream(upstream, { timeoutMs: 5_000 });
      try {
        expect(connection.transport).toBe('sse');
        const refused = await connection.client.callTool({ name: 'answer', arguments: { kind: 'five' } }, undefined, { timeout: 5_000 }).catch((error: unknown) => error);
        expect(refused).toMatchObject({ code: -32603, message: "MCP error -32603: the upstream's answer is not a JSON-RPC response: result Invalid input: expected object, received number" });
      } finally {
        await connection.close();
      }
      listing = { result: null };
      await expect(fetchUpstreamDefinitions(upstream, { timeoutMs: 5_000 })).rejects.toThrow(
        `upstream legacy (${legacy.url}) did not list its tools: MCP error -32603: the upstream's answer is not a JSON-RPC response: result Invalid input: expected object, received null`,
      );
    } finally {
      await serving.close();
      await legacy.close();
    }
  });

  it('checks the arguments against the approved input schema before forwarding', async () => {
    const { client } = await session();
    const result = (await client.callTool({ name: 'everything_echo', arguments: { message: 42 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/^INVALID_ARGUMENTS/);
  });

  it("applies the session's policy and the upstream's stored permissions like a local tool's", async () => {
    const { client } = await session({ persona: 'reader', allowed_permissions: [] });
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('everything_echo');
    expect(names).toContain('local_add');
    expect(names.filter((name) => name.startsWith('memory_'))).toEqual([]);
    await expect(client.callTool({ name: 'memory_read_graph', arguments: {} })).rejects.toThrow(/Unknown tool/);
    const writer = await session({ persona: 'writer', allowed_permissions: ['DB_WRITE'] });
    expect((await writer.client.listTools()).tools.map((tool) => tool.name)).toContain('memory_read_graph');
  });

  it("calls a tool the upstream runs only as a task (execution.taskSupport 'required'): the gateway calls it as a task and answers with its result", async () => {
    const result = await researching;
    expect(result.isError).toBeUndefined();
    expect((result.content[0] as { text: string }).text).toContain('gateways');
  });

  it('a listing of the commands (upstream add, pending) declares sampling and elicitation as the serving gateway does, so it lists the tools an upstream shows only to such clients', async () => {
    const listed = (await fetchUpstreamDefinitions({ name: 'web', transport: { type: 'http', url: httpUrl, headers: {} } })).map((definition) => definition.name);
    expect(listed).toEqual(expect.arrayContaining(['trigger-sampling-request', 'trigger-elicitation-request']));
    expect(listed.sort()).toEqual(gateway.upstreams().find((status) => status.name === 'web')?.listed?.map((definition) => definition.name).sort());
  });

  it('answers a call to an upstream that stopped as an error result naming it; the session goes on', async () => {
    const { client } = await session();
    await stopChild(httpChild);
    httpChild = undefined;
    const result = (await client.callTool({ name: 'web.echo', arguments: { message: 'anyone?' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/^UPSTREAM_UNAVAILABLE: upstream 'web'/);
    // The audit log's outcome: the result the handler made is marked with the code.
    const invoked = await gateway.current().invoke('web.echo', { message: 'anyone?' });
    expect(invoked.success && callOutcomeOf(invoked.data)).toBe('UPSTREAM_UNAVAILABLE');
    await recorder.flush();
    const rows = await registry.listCalls({ tool: 'web.echo' });
    expect(rows.filter((row) => row.outcome === 'UPSTREAM_UNAVAILABLE').map(({ upstream, version }) => ({ upstream, version }))).toEqual([{ upstream: 'web', version: (await registry.get('web.echo'))!.spec.version }]);
    expect(await client.callTool({ name: 'everything_echo', arguments: { message: 'still here' } })).toEqual({ content: [{ type: 'text', text: 'Echo: still here' }] });
  });
});
