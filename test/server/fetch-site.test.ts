// A write that carries no `Origin` but a browser's `Sec-Fetch-Site` saying another site (or
// an unknown value) sent it is refused 403 ORIGIN_NOT_ALLOWED, as a foreign `Origin` is: it
// was accepted. One tokenless server over a real socket, with --cors and /mcp; each answer
// held to /openapi.json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, ToolSet, defineTool, liveToolSet, publishTools } from '../../src/index.js';
import { memoryNamespaces } from '../../src/server/index.js';
import { createMcpHttpHandler, mcpMount } from '../../src/mcp/index.js';
import { documentChecker, recorded, recordThisFile, spec, start } from './helpers.js';
import type { Reply, Running } from './helpers.js';

recordThisFile();

const CORS = 'https://console.example';
let calls = 0;
const tools = new ToolSet([defineTool({ name: 'admin_reset', version: '1', input_schema: { type: 'object' }, handler: () => ({ reset: (calls += 1) }) })]);
let open: Running;

beforeAll(async () => {
  open = await start({ registries: memoryNamespaces(), cors: CORS, mounts: { mcp: mcpMount(tools) } });
  await open.call('PUT', '/v1/tools/payments', { body: spec('payments') });
});

afterAll(() => open?.close());

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fetch-site', version: '1' } } };
const mcpAccept = { accept: 'application/json, text/event-stream' };
const refusal = (reply: Reply): unknown => {
  const body = reply.body as { code?: unknown; context?: { sec_fetch_site?: unknown } } | undefined;
  return [reply.status, body?.code, body?.context?.sec_fetch_site];
};

describe('Sec-Fetch-Site on a write without Origin', () => {
  it('cross-site, same-site and values no browser sends are 403 ORIGIN_NOT_ALLOWED on every write, /mcp included; nothing changes', async () => {
    const cases: [string, string, string, { body?: unknown; headers?: Record<string, string> }?][] = [
      ['cross-site', 'PUT', '/v1/tools/pwn', { body: spec('pwn') }],
      ['cross-site', 'POST', '/v1/tools/payments/disable'],
      ['cross-site', 'DELETE', '/v1/tools/payments'],
      ['cross-site', 'PUT', '/v1/namespaces/pwned'],
      ['cross-site', 'POST', '/mcp', { body: initialize, headers: mcpAccept }],
      ['cross-site', 'DELETE', '/mcp'],
      ['cross-site', 'POST', '/v1/namespaces/default/mcp', { body: initialize, headers: mcpAccept }],
      // Another port of localhost is same-site but another origin: refused as cross-site.
      ['same-site', 'POST', '/v1/tools/payments/disable'],
      ['same-site', 'POST', '/mcp', { body: initialize, headers: mcpAccept }],
      // Not guessed at: odd case (the trailing space is HTTP's, dropped), a list, nothing.
      ['Cross-Site ', 'POST', '/v1/tools/payments/disable'],
      ['Same-Origin', 'DELETE', '/v1/tools/payments'],
      ['same-origin, cross-site', 'POST', '/v1/tools/payments/disable'],
      ['bogus', 'POST', '/mcp', { body: initialize, headers: mcpAccept }],
    ];
    for (const [site, method, path, init = {}] of cases) {
      const reply = await open.call(method, path, { ...init, headers: { ...init.headers, 'sec-fetch-site': site } });
      expect([site, method, path, refusal(reply)]).toEqual([site, method, path, [403, 'ORIGIN_NOT_ALLOWED', site.trim()]]);
    }
    expect((await open.call('GET', '/v1/tools/payments')).body).toMatchObject({ enabled: true });
    expect((await open.call('GET', '/v1/tools/pwn')).status).toBe(404);
    expect(JSON.stringify((await open.call('GET', '/v1/namespaces')).body)).not.toContain('pwned');
  });

  it('same-origin, none, no header, an allowed Origin with cross-site, and reads pass', async () => {
    const passed = [
      await open.call('POST', '/v1/tools/payments/disable', { headers: { 'sec-fetch-site': 'same-origin' } }),
      await open.call('POST', '/v1/tools/payments/enable', { headers: { 'sec-fetch-site': 'none' } }),
      await open.call('POST', '/v1/tools/payments/disable'),
      // The --cors origin's page is cross-site, and says who it is: its Origin decides.
      await open.call('POST', '/v1/tools/payments/enable', { headers: { origin: CORS, 'sec-fetch-site': 'cross-site' } }),
      await open.call('POST', '/mcp', { body: initialize, headers: { ...mcpAccept, origin: CORS, 'sec-fetch-site': 'cross-site' } }),
      await open.call('POST', '/mcp', { body: initialize, headers: { ...mcpAccept, 'sec-fetch-site': 'same-origin' } }),
      // Reads are not this rule's: the Host check and tokens govern them.
      await open.call('GET', '/v1/tools/payments', { headers: { 'sec-fetch-site': 'cross-site' } }),
      await open.call('OPTIONS', '/v1/tools/payments', { headers: { origin: CORS, 'access-control-request-method': 'POST', 'sec-fetch-site': 'cross-site' } }),
    ];
    expect(passed.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 204]);
    expect(passed[6]?.body).toMatchObject({ enabled: true });
    // A foreign Origin stays refused whatever Sec-Fetch-Site claims.
    const foreign = await open.call('POST', '/v1/tools/payments/disable', { headers: { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' } });
    expect([foreign.status, (foreign.body as { code?: unknown }).code]).toEqual([403, 'ORIGIN_NOT_ALLOWED']);
  });

  it('createMcpHttpHandler used alone refuses a cross-site POST or DELETE without Origin (403, -32000), and serves same-origin and none', async () => {
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [...tools.tools()]);
    const live = await liveToolSet(registry, [...tools.tools()]);
    const handler = createMcpHttpHandler(live);
    try {
      const send = (method: string, site: string) =>
        handler.handle(new Request('http://localhost/mcp', { method, headers: { 'content-type': 'application/json', ...mcpAccept, 'sec-fetch-site': site }, ...(method === 'POST' ? { body: JSON.stringify(initialize) } : {}) }));
      const refused = [await send('POST', 'cross-site'), await send('DELETE', 'same-site'), await send('POST', 'Cross-Site')];
      expect(await Promise.all(refused.map(async (response) => [response.status, ((await response.json()) as { error: { code: number; message: string } }).error]))).toEqual([
        [403, { code: -32000, message: 'Forbidden: Sec-Fetch-Site "cross-site" without Origin is not allowed' }],
        [403, { code: -32000, message: 'Forbidden: Sec-Fetch-Site "same-site" without Origin is not allowed' }],
        [403, { code: -32000, message: 'Forbidden: Sec-Fetch-Site "Cross-Site" without Origin is not allowed' }],
      ]);
      expect([(await send('POST', 'same-origin')).status, (await send('POST', 'none')).status]).toEqual([200, 200]);
    } finally {
      await handler.close();
      await live.close();
    }
  });

  it('/openapi.json declares the 403 on every path and method it came from', () => {
    const refused = recorded.filter((r) => r.status === 403);
    expect(refused.length).toBeGreaterThan(10);
    // Only the 403s: each 200's schema compiled too cost about a second more.
    expect(documentChecker(open.server.openapi()).check(refused)).toEqual([]);
  });
});
