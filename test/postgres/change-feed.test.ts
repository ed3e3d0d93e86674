// The change feed of the PostgreSQL store with real processes (issue 11 on issue 10's store):
// watchers in other processes and in this one see every commit of several writer processes,
// in revision order, once; a watcher resuming from a cursor gets exactly what it missed; pages
// of changes() read in another process are what was written. test/sqlite/change-feed.test.ts
// holds the same for SQLite; test/conformance/changes-suite.ts the in-process behaviour.
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import type { ChangeEvent, ChangesPage, ToolRegistry } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { tempFolder, useFileDatabase, usePgWorkers } from './helpers.js';

const db = useFileDatabase();
const workers = usePgWorkers();

/** A schema created and migrated up front. */
async function migratedSchema(): Promise<string> {
  const schema = db.schema();
  await (await openPostgresToolRegistry({ connectionString: db.url(), schema })).close();
  return schema;
}

/** The events of the whole retained log, read in this process. */
async function feedOf(schema: string): Promise<ChangeEvent[]> {
  const registry = await openPostgresToolRegistry({ connectionString: db.url(), schema, readonly: true });
  try {
    return JSON.parse(JSON.stringify((await registry.changes({ limit: 10_000 })).events)) as ChangeEvent[];
  } finally {
    await registry.close();
  }
}

/** What writeMix writes for one name, in order: [tool_name, action, version]. */
function mixOf(name: string, rounds: number): [string, string, string][] {
  return Array.from({ length: rounds }, (_, round): [string, string, string][] => [
    [name, 'added', `${round}.0`],
    [name, 'disabled', `${round}.0`],
    [name, 'enabled', `${round}.0`],
    [name, 'updated', `${round}.1`],
    [name, 'removed', `${round}.1`],
  ]).flat();
}

/** What one writeMix process writes, in its order. */
function writerSequence(names: readonly string[], rounds: number): [string, string, string][] {
  return Array.from({ length: rounds }, (_, round) => names.flatMap((name) => mixOf(name, rounds).slice(round * 5, round * 5 + 5))).flat();
}

/**
 * How long a watch waits for the events a test expects: generous for a loaded machine, and
 * below the tests' timeout, so that a feed that loses events fails on what it delivered.
 */
const WATCH_DEADLINE_MS = 25_000;
const TIMEOUT = { timeout: 60_000 };

const shape = (event: ChangeEvent): [string, string, string | null] => [event.tool_name, event.action, event.version];
const revisions = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

/** Three writeMix processes at once over their own names. */
const WRITERS = 3;
const ROUNDS = 3;
const NAMES = (writer: number): string[] => [`w${writer}_a`, `w${writer}_b`];
const TOTAL = WRITERS * NAMES(0).length * ROUNDS * 5;

function writerJobs(schema: string): Record<string, unknown>[] {
  return Array.from({ length: WRITERS }, (_, w) => ({ url: db.url(), schema, action: 'writeMix', names: NAMES(w), rounds: ROUNDS }));
}

/** The feed is what the writers wrote: each writer's events in its own order, each name's history kept. */
function expectWrittenBy(events: readonly ChangeEvent[]): void {
  for (let w = 0; w < WRITERS; w++) {
    const own = events.filter((event) => event.tool_name.startsWith(`w${w}_`)).map(shape);
    expect(own, `writer ${w}`).toEqual(writerSequence(NAMES(w), ROUNDS));
  }
  for (const event of events) expect(event.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
}

describe('PostgreSQL change feed across processes', () => {
  it('a watcher process sees every event of three writer processes at once, in revision order, once; a reader process pages through the same', TIMEOUT, async () => {
    const schema = await migratedSchema();
    const watcher = workers.spawn({ url: db.url(), schema, action: 'watch', since: 0, count: TOTAL, timeoutMs: WATCH_DEADLINE_MS });
    await watcher.next('ready');
    const wrote = await workers.race(writerJobs(schema));
    for (const result of wrote) expect(result.ok, JSON.stringify(result.error)).toBe(true);
    expect(wrote.map((result) => result.result)).toEqual(Array(WRITERS).fill(NAMES(0).length * ROUNDS * 5));
    const watched = await watcher.next('done');
    expect(watched.ok, JSON.stringify(watched.error)).toBe(true);
    const events = watched.result as ChangeEvent[];
    expect(events.map((event) => event.revision)).toEqual(revisions(1, TOTAL));
    expectWrittenBy(events);
    expect(events).toEqual(await feedOf(schema));

    // changes() pages of 7 read by another process: the same events, each page within its limit.
    const reader = workers.spawn({ url: db.url(), schema, action: 'changes', since: 0, limit: 7 });
    const read = await reader.next('done');
    expect(read.ok, JSON.stringify(read.error)).toBe(true);
    const pages = read.result as ChangesPage[];
    expect(pages).toHaveLength(Math.ceil(TOTAL / 7) + 1);
    for (const page of pages) {
      expect(page.revision).toBe(TOTAL);
      expect(page.events.length).toBeLessThanOrEqual(7);
    }
    expect(pages.flatMap((page) => page.events)).toEqual(events);

    // History survives remove: every version ever stored under each name.
    const registry = await openPostgresToolRegistry({ connectionString: db.url(), schema });
    try {
      for (const name of [...NAMES(0), ...NAMES(WRITERS - 1)]) {
        expect((await registry.history(name)).map((entry) => entry.spec.version)).toEqual(
          Array.from({ length: ROUNDS }, (_, round) => [`${round}.0`, `${round}.1`]).flat(),
        );
      }
      expect(await registry.listAll({ includeDisabled: true })).toEqual([]);
    } finally {
      await registry.close();
    }
  });

  it('a watcher process that stops after 10 events, resumed from its cursor by another, gets exactly what it missed, then what comes', TIMEOUT, async () => {
    const schema = await migratedSchema();
    const first = workers.spawn({ url: db.url(), schema, action: 'watch', since: 0, count: 10, timeoutMs: WATCH_DEADLINE_MS });
    await first.next('ready');
    const wrote = await workers.race(writerJobs(schema));
    for (const result of wrote) expect(result.ok, JSON.stringify(result.error)).toBe(true);
    const before = await first.next('done');
    expect(before.ok, JSON.stringify(before.error)).toBe(true);
    const seen = before.result as ChangeEvent[];
    expect(seen.map((event) => event.revision)).toEqual(revisions(1, 10));
    // Resumed from the cursor after the writers finished: what it missed, then a late writer's commits as they come.
    const cursor = seen.at(-1)?.revision as number;
    const LATE = 4;
    const second = workers.spawn({ url: db.url(), schema, action: 'watch', since: cursor, count: TOTAL - cursor + LATE, timeoutMs: WATCH_DEADLINE_MS });
    await second.next('ready');
    const late = workers.spawn({ url: db.url(), schema, action: 'registerEach', prefix: 'late', count: LATE });
    expect((await late.next('done')).ok).toBe(true);
    const after = await second.next('done');
    expect(after.ok, JSON.stringify(after.error)).toBe(true);
    const rest = after.result as ChangeEvent[];
    expect(rest.map((event) => event.revision)).toEqual(revisions(cursor + 1, TOTAL - cursor + LATE));
    const all = [...seen, ...rest];
    expect(all).toEqual(await feedOf(schema));
    expectWrittenBy(all.slice(0, TOTAL));
    expect(all.slice(TOTAL).map(shape)).toEqual(Array.from({ length: LATE }, (_, i) => [`late_000${i}`, 'added', '1']));
  });
});

/** Collects what watches on one registry deliver; `until(n)` resolves when each has seen n events (or after WATCH_DEADLINE_MS). */
function collect(registry: ToolRegistry, sinces: readonly (number | undefined)[], signal: AbortSignal) {
  const seen = sinces.map((): ChangeEvent[] => []);
  const waiting: { count: number; resolve: () => void }[] = [];
  const settle = (): void => {
    for (const waiter of waiting.filter((one) => seen.every((events) => events.length >= one.count))) {
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const done = Promise.all(
    sinces.map(async (since, i) => {
      for await (const event of registry.watch({ signal, ...(since === undefined ? {} : { since }) })) {
        seen[i]?.push(event);
        settle();
      }
    }),
  );
  return {
    seen,
    done,
    until: (count: number) =>
      new Promise<void>((resolve) => {
        const deadline = setTimeout(resolve, WATCH_DEADLINE_MS);
        waiting.push({
          count,
          resolve: () => {
            clearTimeout(deadline);
            resolve();
          },
        });
        settle();
      }),
  };
}

describe.each([
  { cache: true, label: 'cache on' },
  { cache: false, label: 'cache off' },
])('PostgreSQL watch in this process ($label)', ({ cache }) => {
  it('sees another process’s commits while it waits; several watches on one registry each see every commit once', TIMEOUT, async () => {
    const schema = db.schema();
    const registry = await openPostgresToolRegistry({ connectionString: db.url(), schema, cache });
    const controller = new AbortController();
    const temp = tempFolder();
    try {
      // Two watches from "now" (the revision at the call) and one from 0.
      const watches = collect(registry, [undefined, 0, undefined], controller.signal);
      // The child commits only once it has started and opened the registry, well after the calls above.
      const writer = workers.spawn({ url: db.url(), schema, action: 'registerEach', prefix: 'child', count: 4, go: temp.file('go') });
      await writer.next('ready');
      writeFileSync(temp.file('go'), 'go');
      const wrote = await writer.next('done');
      expect(wrote.ok, JSON.stringify(wrote.error)).toBe(true);
      expect(wrote.result).toEqual(Array(4).fill('ok'));
      await watches.until(4);
      // And this process's own write, after the child's.
      await registry.register(minimalSpec('own'));
      await watches.until(5);
      controller.abort();
      await watches.done;
      const expected = [
        [1, 'child_0000'],
        [2, 'child_0001'],
        [3, 'child_0002'],
        [4, 'child_0003'],
        [5, 'own'],
      ];
      for (const events of watches.seen) expect(events.map((event) => [event.revision, event.tool_name])).toEqual(expected);
      expect(watches.seen[0]).toEqual((await registry.changes()).events);
      expect((await registry.status()).revision).toBe(5);
    } finally {
      controller.abort();
      await registry.close();
      temp.cleanup();
    }
  });
});
