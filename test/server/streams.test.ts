// The change feed's edges over a real socket (issue 40): HEAD starts no stream and no watcher;
// a reader that stops reading is cut off once its backlog passes the bound, and resumes with
// Last-Event-ID; past --max-streams a new stream is 503 with Retry-After while the rest of
// the API answers. One in-process server (listen() on 127.0.0.1) for the file.
import { get } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry } from '../../src/index.js';
import type { ChangeEvent, WatchOptions } from '../../src/index.js';
import { until } from '../support/waiting.js';
import { spec, start } from './helpers.js';
import type { Running } from './helpers.js';

/** A real in-memory registry that counts the watchers started on it. */
class CountingRegistry extends InMemoryToolRegistry {
  watchers = 0;
  override watch(options?: WatchOptions): AsyncIterable<ChangeEvent> {
    this.watchers += 1;
    return super.watch(options);
  }
}

const registry = new CountingRegistry();
let api: Running;
const BACKLOG = 64 * 1024;

beforeAll(async () => {
  api = await start({ registries: registry, maxStreams: 1, streamBacklogBytes: BACKLOG });
});
afterAll(() => api.close());

/** Opens the event stream without reading it (the response stays paused until asked). */
function openStream(headers: Record<string, string> = {}, url = `${api.url}/v1/changes`): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } }, resolve).on('error', reject);
  });
}

/** Reads the rest of a response: its text, once it ended. */
function readToEnd(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
    response.on('end', () => resolve(text));
    response.on('error', reject);
  });
}

const ids = (text: string): number[] => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

/** Whether a new stream is admitted now (it is closed at once). */
async function streamAdmitted(): Promise<boolean> {
  const controller = new AbortController();
  const response = await fetch(`${api.url}/v1/changes`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
  controller.abort();
  return response.status === 200;
}

describe('HEAD /v1/changes', () => {
  it('answers the headers and starts no stream and no watcher', async () => {
    for (let i = 0; i < 5; i++) {
      const head = await fetch(`${api.url}/v1/changes`, { method: 'HEAD', headers: { accept: 'text/event-stream' } });
      expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    }
    expect(registry.watchers).toBe(0);
    // The one stream --max-streams allows is still free.
    expect(await streamAdmitted()).toBe(true);
    expect(registry.watchers).toBe(1);
  });
});

describe('Accept', () => {
  it('text/event-stream as a media range with q above 0 and not below application/json streams; refused with q=0, preferred less, or only a substring, is the JSON page', async () => {
    // HEAD answers what GET would; each of the first three got a stream that never ended.
    for (const [accept, type] of [
      ['text/event-stream;q=0, application/json', 'application/json'],
      ['application/json, text/event-stream; q=0.0', 'application/json'],
      ['application/x-text/event-stream-like', 'application/json'],
      ['text/event-stream;q=0.5, application/json', 'application/json'],
      ['TEXT/EVENT-STREAM', 'text/event-stream; charset=utf-8'],
      ['application/json, text/event-stream', 'text/event-stream; charset=utf-8'],
      ['application/json;q=0.5, text/event-stream;q=0.9', 'text/event-stream; charset=utf-8'],
    ]) {
      const head = await fetch(`${api.url}/v1/changes`, { method: 'HEAD', headers: { accept: accept as string } });
      expect([accept, head.status, head.headers.get('content-type')]).toEqual([accept, 200, type]);
    }
  });
});

describe('a reader that falls behind', () => {
  it('is cut off past the backlog bound, gets every event up to the cut, and resumes with Last-Event-ID', async () => {
    await until(async () => streamAdmitted(), 'the probe stream closed');
    const since = (await registry.changes({ limit: 0 })).revision;
    const paused = await openStream();
    expect(paused.statusCode).toBe(200);
    // The only stream the server allows is taken until the paused one is cut off.
    expect((await fetch(`${api.url}/v1/changes`, { headers: { accept: 'text/event-stream' } })).status).toBe(503);
    let batches = 0;
    // Kernel buffers take the first few MiB; then the server's queue grows to the bound.
    while (batches < 40) {
      batches += 1;
      await registry.registerMany(Array.from({ length: 500 }, (_, i) => spec(`${'slow_reader_'.repeat(10)}${batches}_${i}`)));
      if (await streamAdmitted()) break;
    }
    const last = (await registry.changes({ limit: 0 })).revision;
    const text = await readToEnd(paused);
    const got = ids(text);
    // Every event from the start to the cut, in order, none twice; the rest was not sent.
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => since + 1 + i));
    expect(got.at(-1)).toBeLessThan(last);
    // Resuming from the last id gets the next event first.
    const resumed = await openStream({ 'last-event-id': String(got.at(-1)) });
    resumed.setEncoding('utf8');
    let more = '';
    resumed.on('data', (chunk: string) => (more += chunk));
    await until(() => ids(more).length > 0, 'the resumed stream');
    expect(ids(more)[0]).toBe((got.at(-1) as number) + 1);
    resumed.destroy();
  });
});

describe('--max-streams', () => {
  it('past the bound: 503 CAPACITY_EXCEEDED with Retry-After and a problem body; the API still answers', async () => {
    await until(async () => streamAdmitted(), 'the earlier streams closed');
    const held = await openStream();
    expect(held.statusCode).toBe(200);
    const refused = await api.call('GET', '/v1/changes', { headers: { accept: 'text/event-stream' } });
    expect([refused.status, refused.headers.get('retry-after'), refused.headers.get('content-type')]).toEqual([503, '5', 'application/problem+json']);
    expect(refused.body).toMatchObject({ code: 'CAPACITY_EXCEEDED', context: { limit: 1, resource: 'stream' } });
    expect((await api.call('GET', '/v1/tools?limit=1')).status).toBe(200);
    expect((await api.call('GET', '/healthz')).status).toBe(200);
    // HEAD answers as GET would (it said 200 while GET was 503), and still takes no place.
    const head = await fetch(`${api.url}/v1/changes`, { method: 'HEAD', headers: { accept: 'text/event-stream' } });
    expect([head.status, head.headers.get('retry-after')]).toEqual([503, '5']);
    held.destroy();
  });
});

describe('a server shutting down', () => {
  it('ends its streams without an error event (the token is fine: a client resumes with Last-Event-ID)', async () => {
    const own = new InMemoryToolRegistry();
    const stopping = await start({ registries: own });
    try {
      const stream = await openStream({}, `${stopping.url}/v1/changes?since=0`);
      stream.setEncoding('utf8');
      let text = '';
      stream.on('data', (chunk: string) => (text += chunk));
      const ended = new Promise<void>((resolve) => stream.on('end', resolve));
      await own.register(spec('before_shutdown'));
      await until(() => ids(text).length === 1, 'the event before the shutdown');
      stopping.server.shutdown();
      await ended;
      expect(ids(text)).toEqual([1]);
      expect(text).not.toMatch(/^event: error/m);
    } finally {
      await stopping.close();
    }
  });
});

describe('many streams on one registry', () => {
  it('eleven watchers at once print no MaxListenersExceededWarning (each leaves its listener when it ends: no leak to warn of)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    const own = new InMemoryToolRegistry();
    try {
      const stops = Array.from({ length: 11 }, () => new AbortController());
      const watchers = stops.map((stop) => own.watch({ signal: stop.signal })[Symbol.asyncIterator]());
      const first = watchers.map((watcher) => watcher.next());
      await own.register(spec('watched'));
      expect((await Promise.all(first)).map((step) => step.done)).toEqual(Array(11).fill(false));
      for (const stop of stops) stop.abort();
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
      await own.close();
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});
