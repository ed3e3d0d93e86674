// GET /metrics (Prometheus text format) and request ids (issue 39), in-process over a real
// socket on a PostgreSQL registry (the store that exposes cache and write counters): route
// templates as labels, never raw paths; no token from loopback, the read scope otherwise;
// X-Request-Id on every response and in the log line, a caller's own kept only when it is a
// plain token of at most 64 characters.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import type { PostgresToolRegistry } from '../../src/index.js';
import { createToken, tokenFileVerifier } from '../../src/server/index.js';
import { sqliteNamespaces } from '../../src/server/namespaces.js';
import type { RequestLogEntry } from '../../src/server/index.js';
import { useFileDatabase } from '../postgres/helpers.js';
import { until } from '../support/waiting.js';
import { spec, start } from './helpers.js';
import type { Running } from './helpers.js';

const db = useFileDatabase();
const folder = mkdtempSync(join(tmpdir(), 'tool-registry-metrics-'));
const logged: RequestLogEntry[] = [];
const secrets: Record<string, string> = {};
let registry: PostgresToolRegistry;
let running: Running;

beforeAll(async () => {
  registry = await openPostgresToolRegistry({ connectionString: db.url(), schema: db.schema() });
  const file = join(folder, 'tokens.json');
  for (const [name, scopes] of [['reader', ['read']], ['writer', ['write']]] as const) secrets[name] = (await createToken(file, { name, scopes: [...scopes] })).secret;
  secrets.team = (await createToken(file, { name: 'team', scopes: ['read'], namespaces: ['team_a'] })).secret;
  running = await start({ registries: registry, tokens: tokenFileVerifier(file), log: (entry) => logged.push(entry) });
});

afterAll(async () => {
  await running?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('counts requests by route template and status, with latency histograms and the store gauges; from loopback without a token', async () => {
    const auth = { token: secrets.writer as string };
    for (const name of ['alpha', 'beta']) expect((await running.call('PUT', `/v1/tools/${name}`, { body: spec(name), ...auth })).status).toBe(201);
    for (const name of ['alpha', 'beta', 'gamma']) await running.call('GET', `/v1/tools/${name}`, { token: secrets.reader as string });
    await running.call('GET', '/no/such/path', { token: secrets.reader as string });
    // An event stream is open while the scrape runs.
    const controller = new AbortController();
    const stream = await fetch(`${running.url}/v1/changes`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${secrets.reader}` }, signal: controller.signal });
    expect(stream.status).toBe(200);

    const response = await fetch(`${running.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    expect(sample(text, 'tool_registry_http_requests_total{method="PUT",route="/v1/tools/{name}",status="201"}')).toBe(2);
    expect(sample(text, 'tool_registry_http_requests_total{method="GET",route="/v1/tools/{name}",status="200"}')).toBe(2);
    expect(sample(text, 'tool_registry_http_requests_total{method="GET",route="/v1/tools/{name}",status="404"}')).toBe(1);
    expect(sample(text, 'tool_registry_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    // Never a raw path or a tool name as a label.
    expect(text).not.toMatch(/alpha|beta|gamma|no\/such/);
    expect(sample(text, 'tool_registry_http_request_duration_seconds_count{method="GET",route="/v1/tools/{name}"}')).toBe(3);
    expect(sample(text, 'tool_registry_http_request_duration_seconds_bucket{method="GET",route="/v1/tools/{name}",le="+Inf"}')).toBe(3);
    expect(text).toMatch(/^# TYPE tool_registry_http_request_duration_seconds histogram$/m);
    expect(sample(text, 'tool_registry_open_streams{route="/v1/changes"}')).toBe(1);
    expect(sample(text, 'tool_registry_revision{namespace="default"}')).toBe((await registry.changes({ limit: 0 })).revision);
    expect(sample(text, 'tool_registry_storage_up{namespace="default"}')).toBe(1);
    expect(sample(text, 'tool_registry_write_batches_total{namespace="default"}')).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'tool_registry_cache_hits_total{namespace="default"}')).toBeGreaterThan(0);
    expect(sample(text, 'tool_registry_cache_misses_total{namespace="default"}')).toBeGreaterThanOrEqual(0);
    // Every sample line is `name{labels} number` under a TYPE line of its family.
    for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) expect(line).toMatch(/^[a-z_]+(\{([a-z_]+="(?:[^"\\]|\\.)*",?)*\})? -?[0-9.e+-]+$/);

    controller.abort();
    await until(async () => sample(await (await fetch(`${running.url}/metrics`)).text(), 'tool_registry_open_streams{route="/v1/changes"}') === 0, 'the stream to count as closed');
  });

  it("from another address it takes the read scope; a namespace-bound token sees only its namespaces' series", async () => {
    const scrape = (token?: string) =>
      running.server.fetch(new Request('http://registry.example/metrics', { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } }), { remoteAddress: '10.1.2.3' });
    expect((await scrape()).status).toBe(401);
    expect((await scrape(secrets.writer)).status).toBe(403);
    const all = await scrape(secrets.reader);
    expect([all.status, (await all.text()).includes('namespace="default"')]).toEqual([200, true]);
    // A namespace-bound token's scrape names no other namespace (as every route: names do not leak).
    const team = await scrape(secrets.team);
    expect([team.status, (await team.text()).includes('namespace="default"')]).toEqual([200, false]);
    // From loopback no token is needed, but one sent along is read: the namespace-bound one still names no other namespace.
    const local = (token: string) => running.server.fetch(new Request('http://127.0.0.1/metrics', { headers: { authorization: `Bearer ${token}` } }), { remoteAddress: '127.0.0.1' });
    const localTeam = await local(secrets.team as string);
    expect([localTeam.status, (await localTeam.text()).includes('namespace="default"')]).toEqual([200, false]);
    expect((await local(secrets.writer as string)).status).toBe(200);
    // IPv4-mapped loopback counts as loopback.
    expect((await running.server.fetch(new Request('http://127.0.0.1/metrics'), { remoteAddress: '::ffff:127.0.0.1' })).status).toBe(200);
  });
});

describe('GET /metrics with namespaces closed as idle', () => {
  it('leaves out a namespace the server closed as idle (its store is not down), and counts it again once a request opens it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-metrics-ns-'));
    const served = await start({ registries: sqliteNamespaces(folder, { maxOpen: 2 }) });
    try {
      const scrape = async () => (await fetch(`${served.url}/metrics`)).text();
      for (const ns of ['a', 'b']) expect((await served.call('PUT', `/v1/namespaces/${ns}`)).status).toBe(201);
      // default opens third: a, the least recently used, is closed.
      for (const ns of ['a', 'b', 'default']) expect((await served.call('GET', `/v1/namespaces/${ns}/tools`)).status).toBe(200);
      let text = await scrape();
      expect([sample(text, 'tool_registry_storage_up{namespace="a"}'), sample(text, 'tool_registry_storage_up{namespace="b"}'), sample(text, 'tool_registry_storage_up{namespace="default"}')]).toEqual([undefined, 1, 1]);
      expect(sample(text, 'tool_registry_revision{namespace="a"}')).toBeUndefined();
      expect((await served.call('GET', '/v1/namespaces/a/tools')).status).toBe(200);
      text = await scrape();
      expect([sample(text, 'tool_registry_storage_up{namespace="a"}'), sample(text, 'tool_registry_revision{namespace="a"}')]).toEqual([1, 0]);
    } finally {
      await served.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('request ids', () => {
  it('every response carries X-Request-Id, the same as its log line; an acceptable incoming id is kept, any other replaced', async () => {
    const ids: string[] = [];
    for (const given of [undefined, 'trace-01.ab_C', 'x'.repeat(64), 'x'.repeat(65), 'bad id', 'new\nline', '']) {
      const before = logged.length;
      const headers: Record<string, string> = { authorization: `Bearer ${secrets.reader}` };
      // A header value with a newline cannot be sent; an empty one is sent as empty.
      if (given !== undefined && !given.includes('\n')) headers['x-request-id'] = given;
      const response = await fetch(`${running.url}/v1/tools/alpha`, { headers });
      const id = response.headers.get('x-request-id') as string;
      await until(() => logged.length > before, 'the log line');
      expect(logged.at(-1)?.request_id).toBe(id);
      if (given === 'trace-01.ab_C' || given === 'x'.repeat(64)) expect(id).toBe(given);
      else expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      ids.push(id);
    }
    expect(new Set(ids).size).toBe(ids.length);
    // Problems carry it too.
    const problem = await fetch(`${running.url}/v1/tools/alpha`);
    expect(problem.status).toBe(401);
    expect(problem.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
