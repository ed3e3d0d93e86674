// GET /v1/tools/{name}, the hot read (issue 39's bench row): its JSON text is kept per frozen
// registration, the Host verdict per authority text, and /metrics counts without building keys.
// These guard the shortcuts: a change made through the API, or by another connection to the
// same SQLite file (as another process would), is in the very next answer; a Host refused
// once is refused every time; every request is still counted and logged with its id.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import type { SqliteToolRegistry } from '../../src/index.js';
import type { RequestLogEntry } from '../../src/server/index.js';
import { rawRequest, spec, start } from './helpers.js';
import type { Running } from './helpers.js';

const folder = mkdtempSync(join(tmpdir(), 'tool-registry-get-tool-'));
const file = join(folder, 'registry.db');
const logged: RequestLogEntry[] = [];
let running: Running;
/** A second connection to the server's file: its commits reach the server as another process's do. */
let other: SqliteToolRegistry;

beforeAll(async () => {
  running = await start({ registries: await openSqliteToolRegistry({ filename: file }), log: (entry) => logged.push(entry) });
  other = await openSqliteToolRegistry({ filename: file });
});

afterAll(async () => {
  await other?.close();
  await running?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('GET /v1/tools/{name}', () => {
  it('answers the current registration every time: after a PUT, and after a disable, a new version and a removal by another connection', async () => {
    expect((await running.call('PUT', '/v1/tools/hot', { body: spec('hot', '1') })).status).toBe(201);
    const first = await running.call('GET', '/v1/tools/hot');
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('application/json');
    expect(first.text).toBe(JSON.stringify(await other.get('hot')));
    // The same registration twice: the same text (the kept one).
    expect((await running.call('GET', '/v1/tools/hot')).text).toBe(first.text);

    expect((await running.call('PUT', '/v1/tools/hot', { body: spec('hot', '2') })).status).toBe(200);
    expect((await running.call('GET', '/v1/tools/hot')).body).toMatchObject({ spec: { version: '2' }, enabled: true });

    await other.setEnabled('hot', false);
    const disabled = await running.call('GET', '/v1/tools/hot');
    expect(disabled.body).toMatchObject({ spec: { version: '2' }, enabled: false });
    expect(disabled.text).toBe(JSON.stringify(await other.get('hot')));

    await other.register(spec('hot', '3'));
    expect((await running.call('GET', '/v1/tools/hot')).body).toMatchObject({ spec: { version: '3' }, enabled: false });

    await other.remove('hot');
    const gone = await running.call('GET', '/v1/tools/hot');
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ code: 'TOOL_NOT_FOUND' });
  });

  it('HEAD has the headers and no body; an empty query is no parameter, an unknown one is 400 every time', async () => {
    await other.register(spec('headed', '1'));
    const head = await fetch(`${running.url}/v1/tools/headed`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json');
    expect(head.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await head.text()).toBe('');
    expect((await running.call('GET', '/v1/tools/headed?')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await running.call('GET', '/v1/tools/headed?x=1')).body).toMatchObject({ code: 'BAD_REQUEST', context: { parameter: 'x' } });
  });

  it('a Host the server does not serve is 403 every time, before and after the names it serves were seen', async () => {
    const port = new URL(running.url).port;
    for (const host of [`evil.example:${port}`, `127.0.0.1:${port}`, `evil.example:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `localhost.evil.example:${port}`]) {
      const reply = await rawRequest(running.url, 'GET', '/v1/tools/headed', { host });
      const served = host.toLowerCase() === `127.0.0.1:${port}` || host.toLowerCase() === `localhost:${port}`;
      expect([host, reply.status]).toEqual([host, served ? 200 : 403]);
      if (!served) expect(reply.body).toMatchObject({ code: 'HOST_NOT_ALLOWED' });
    }
  });

  it('every answer is counted in /metrics (cumulative buckets, +Inf = count) and logged with the id it carries', async () => {
    const before = logged.length;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const reply = await running.call('GET', '/v1/tools/headed', { headers: { 'x-request-id': `get-${i}` } });
      ids.push(reply.headers.get('x-request-id') as string);
    }
    expect(ids).toEqual(['get-0', 'get-1', 'get-2', 'get-3', 'get-4']);
    expect(logged.slice(before).map((entry) => [entry.request_id, entry.route, entry.status])).toEqual(ids.map((id) => [id, '/v1/tools/{name}', 200]));

    const text = await (await fetch(`${running.url}/metrics`)).text();
    const value = (series: string): number => Number(text.split('\n').find((line) => line.startsWith(`${series} `))?.split(' ')[1]);
    const oks = logged.filter((entry) => entry.method === 'GET' && entry.route === '/v1/tools/{name}' && entry.status === 200).length;
    const all = logged.filter((entry) => entry.method === 'GET' && entry.route === '/v1/tools/{name}').length;
    expect(value('tool_registry_http_requests_total{method="GET",route="/v1/tools/{name}",status="200"}')).toBe(oks);
    const buckets = text.split('\n').filter((line) => line.startsWith('tool_registry_http_request_duration_seconds_bucket{method="GET",route="/v1/tools/{name}",'));
    const counts = buckets.map((line) => Number(line.split(' ')[1]));
    expect(counts).toHaveLength(12);
    expect(counts.every((count, i) => i === 0 || count >= (counts[i - 1] as number))).toBe(true);
    expect(counts.at(-1)).toBe(all);
    expect(value('tool_registry_http_request_duration_seconds_count{method="GET",route="/v1/tools/{name}"}')).toBe(all);
  });
});
