// The MCP endpoint's own refusals while it closes (issue 40: every 503 and 429 carries
// Retry-After), used alone (`createMcpHttpHandler`) and as the server's mount (`mcpMount`),
// whose answers are held to the server's /openapi.json; used alone, its 415 for JSON in another
// charset; a call answered as a stream (it reported progress) whose session ends under it; and a
// session used alone that ends when its caller passes a changed (narrowed) policy.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, ToolSet, defineTool, liveToolSet } from '../../src/index.js';
import { memoryNamespaces } from '../../src/server/index.js';
import { createMcpHttpHandler, mcpMount } from '../../src/mcp/index.js';
import { documentChecker, recorded, recordThisFile, start } from '../server/helpers.js';

recordThisFile();

const tools = new ToolSet([defineTool({ name: 'echo', version: '1', input_schema: { type: 'object' }, handler: () => ({}) })]);
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'any' };

describe('the MCP endpoint closing', () => {
  it('used alone, answers every method 503 with Retry-After and a JSON-RPC error', async () => {
    const live = await liveToolSet(new InMemoryToolRegistry(), tools);
    const handler = createMcpHttpHandler(live);
    await handler.close();
    for (const method of ['POST', 'GET', 'DELETE', 'OPTIONS']) {
      const reply = await handler.handle(new Request('http://localhost/mcp', { method, headers, ...(method === 'POST' ? { body: JSON.stringify(initialize) } : {}) }));
      expect([method, reply.status, reply.headers.get('retry-after'), ((await reply.json()) as { error: { code: number } }).error.code]).toEqual([method, 503, '1', -32000]);
    }
    await live.close();
  });

  it('used alone, an initialize in flight when close() is called opens no session that outlives it: 503, its place released', async () => {
    const live = await liveToolSet(new InMemoryToolRegistry(), tools);
    const handler = createMcpHttpHandler(live);
    let released = 0;
    const admit = () => ({ signal: new AbortController().signal, release: () => (released += 1) });
    const opening = handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers: { accept: headers.accept, 'content-type': 'application/json' }, body: JSON.stringify(initialize) }), { admit });
    await handler.close();
    const reply = await opening;
    // It was 200 with a session id, and the session stayed open after close() (its --max-sessions place held until it idled out).
    expect([reply.status, reply.headers.get('retry-after'), handler.sessionCount, released]).toEqual([503, '1', 0, 1]);
    await live.close();
  });

  it('as the server\'s mount, answers 503 with Retry-After at /mcp and in a namespace, as /openapi.json declares it', async () => {
    const mount = mcpMount(tools, { audit: false, upstreams: false });
    const running = await start({ registries: memoryNamespaces(), mounts: { mcp: mount } });
    await mount.close?.();
    for (const path of ['/mcp', '/v1/namespaces/default/mcp']) {
      for (const method of ['POST', 'GET', 'DELETE']) {
        const reply = await running.call(method, path, { headers, ...(method === 'POST' ? { body: initialize } : {}) });
        expect([path, method, reply.status, reply.headers.get('retry-after'), (reply.body as { error?: { code: number } } | undefined)?.error?.code]).toEqual([path, method, 503, '1', -32000]);
      }
    }
    expect(documentChecker(running.server.openapi()).check(recorded)).toEqual([]);
    await running.close();
  });

  it('used alone, refuses JSON said to be in another charset than UTF-8 (415), where it read it as UTF-8', async () => {
    const live = await liveToolSet(new InMemoryToolRegistry(), tools);
    const handler = createMcpHttpHandler(live);
    const ask = (type: string) => handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers: { accept: headers.accept, 'content-type': type }, body: JSON.stringify(initialize) }));
    for (const type of ['application/json; charset=latin1', 'application/json; charset="ISO-8859-1"']) {
      const reply = await ask(type);
      expect([type, reply.status, ((await reply.json()) as { error: { code: number } }).error.code]).toEqual([type, 415, -32000]);
    }
    expect(handler.sessionCount).toBe(0);
    expect((await ask('application/json; charset=UTF-8')).status).toBe(200);
    await handler.close();
    await live.close();
  });

  it('used alone, stops reading a body without Content-Length once it passes maxBodyBytes (413): it read the whole body first', async () => {
    const live = await liveToolSet(new InMemoryToolRegistry(), tools);
    const handler = createMcpHttpHandler(live, { maxBodyBytes: 100 * 1024 });
    // 64 chunks of 64 KiB (4 MiB), as a chunked upload sends them; the bytes pulled are counted.
    let pulled = 0;
    let chunks = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (chunks++ === 64) return controller.close();
        pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    const reply = await handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers: { accept: headers.accept, 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit));
    expect([reply.status, ((await reply.json()) as { error: { code: number } }).error.code]).toEqual([413, -32000]);
    // The limit and what the stream had queued past it; the old code pulled all 4 MiB.
    expect(pulled).toBeLessThanOrEqual(4 * 64 * 1024);
    await handler.close();
    await live.close();
  });

  it('used alone, bounds its sessions (maxSessions): 503 past it, 429 past one principal\'s half, both with Retry-After; an ended session frees its place', async () => {
    const live = await liveToolSet(new InMemoryToolRegistry(), tools);
    const handler = createMcpHttpHandler(live, { maxSessions: 3 });
    const open = (principal: string) =>
      handler.handle(new Request('http://localhost/mcp', { method: 'POST', headers: { accept: headers.accept, 'content-type': 'application/json' }, body: JSON.stringify(initialize) }), { principal });
    const refusal = async (reply: Response) => [reply.status, reply.headers.get('retry-after'), ((await reply.json()) as { error?: { code: number } }).error?.code];
    const [a1, a2] = [await open('a'), await open('a')];
    expect([a1.status, a2.status]).toEqual([200, 200]);
    // Without the bound every one was opened (9,000 sessions of one token took 300 MiB under serve before its bound).
    expect(await refusal(await open('a'))).toEqual([429, '5', -32000]);
    expect((await open('b')).status).toBe(200);
    expect(await refusal(await open('c'))).toEqual([503, '5', -32000]);
    expect(handler.sessionCount).toBe(3);
    const ended = await handler.handle(new Request('http://localhost/mcp', { method: 'DELETE', headers: { 'mcp-session-id': a1.headers.get('mcp-session-id') as string } }), { principal: 'a' });
    expect(ended.status).toBe(200);
    expect((await open('c')).status).toBe(200);
    expect(() => createMcpHttpHandler(live, { maxSessions: 0 })).toThrow('createMcpHttpHandler(): maxSessions must be a whole number > 0, got 0');
    await handler.close();
    await live.close();
  });

  it('a call whose answer is a stream (it reported progress) gets the session-ended error when its session ends: DELETE, a revoked token, close()', async () => {
    let progressed!: () => void;
    const stuck = defineTool({
      name: 'stuck',
      version: '1',
      input_schema: { type: 'object' },
      handler: async (_args, { progress }) => {
        progress(1, 2);
        return new Promise(() => {});
      },
    });
    const registry = new InMemoryToolRegistry();
    const set = new ToolSet([stuck]);
    await registry.register(stuck.spec);
    const live = await liveToolSet(registry, set);
    for (const end of ['delete', 'revoke', 'close'] as const) {
      const handler = createMcpHttpHandler(live);
      const revoked = new AbortController();
      const admit = () => ({ signal: revoked.signal, release: () => {} });
      const transport = new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), { fetch: (url, init) => handler.handle(new Request(url, init), { admit }) });
      const client = new Client({ name: 't', version: '1' });
      await client.connect(transport);
      const reported = new Promise<void>((resolve) => (progressed = resolve));
      // The client's own timeout only bounds a failure: on the old code the stream just ended and the call waited for it.
      const outcome = client.callTool({ name: 'stuck', arguments: {} }, undefined, { onprogress: () => progressed(), timeout: 10_000 }).then(
        () => 'answered',
        (error: { code?: number; message: string }) => [error.code, error.message],
      );
      await reported;
      if (end === 'delete') await transport.terminateSession();
      else if (end === 'revoke') revoked.abort();
      else await handler.close();
      expect([end, await outcome]).toEqual([end, [-32000, expect.stringMatching(/The session ended before this request was answered/)]]);
      expect(handler.sessionCount).toBe(0);
      await client.close();
      await handler.close();
    }
    await live.close();
  });
});

describe('a session whose policy is narrowed', () => {
  it('used alone, ends at the first request that carries another policy (404), so a tool the new policy removed is never called through it', async () => {
    const registry = new InMemoryToolRegistry();
    const ran: string[] = [];
    const tool = (name: string) => defineTool({ name, version: '1', input_schema: { type: 'object' }, handler: () => (ran.push(name), {}) });
    const set = new ToolSet([tool('notes'), tool('shell')]);
    for (const each of set) await registry.register(each.spec);
    const live = await liveToolSet(registry, set);
    const handler = createMcpHttpHandler(live);
    // The caller's authentication decides the policy of every request; a copy of equal content is the same policy.
    let policy: { persona: string; allowed_tools: string[] } = { persona: 'agent', allowed_tools: ['notes', 'shell'] };
    const connect = async () => {
      const client = new Client({ name: 't', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), { fetch: (url, init) => handler.handle(new Request(url, init), { principal: 'p', policy: structuredClone(policy) }) }));
      return client;
    };
    const client = await connect();
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['notes', 'shell']);
    await client.callTool({ name: 'notes', arguments: {} });
    policy = { persona: 'agent', allowed_tools: ['notes'] };
    // Before: the session kept the policy it was opened with, listed and ran shell.
    await expect(client.callTool({ name: 'shell', arguments: {} })).rejects.toMatchObject({ code: 404, message: expect.stringContaining('Session not found') });
    expect(ran).toEqual(['notes']);
    expect(handler.sessionCount).toBe(0);
    const again = await connect();
    expect((await again.listTools()).tools.map((t) => t.name)).toEqual(['notes']);
    await handler.close();
    await live.close();
  });
});
