// The change feed and conditional writes (issue 11) with real processes, one suite for every
// store with a worker (test/fixtures/*-worker.mjs, sharing feedActions of worker-protocol.mjs):
// watchers in other processes and in this one see every commit of several writer processes,
// in revision order, once; a watcher resumed from its cursor gets exactly what it missed; pages
// of changes() read in another process are what was written; conditional writes racing from
// several processes give the outcomes of one serial order and PRECONDITION_FAILED for the rest.
// Run by test/sqlite/ and test/postgres/; the in-process behaviour is in test/conformance/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChangeEvent, ChangesPage, ToolRegistration, ToolRegistry } from '../../src/index.js';
import { minimalSpec } from './registry-helpers.js';
import { countWaiter } from './waiting.js';
import type { Worker, WorkerMessage } from './workers.js';

/** The fields of a worker job that say which store to use ({ file } or { url, schema }). */
export type StoreJob = Record<string, unknown>;

/** One store, as the suite drives it. */
export interface ProcessStore {
  /** Shown in the suite's names. */
  readonly name: string;
  /** Creates a fresh, migrated, empty store; returns the job fields that reach it. */
  create(): Promise<StoreJob>;
  /** Opens that store in this process. */
  open(at: StoreJob, options?: { readonly?: boolean; cache?: boolean }): Promise<ToolRegistry>;
  /** Starts a job on a pooled worker (ready once it has opened the store); killed after the test if still running. */
  spawn(job: StoreJob): Worker;
  /** The same on a process started for it alone. */
  spawnProcess(job: StoreJob): Worker;
  /** Starts one worker per job, releases them at once, returns each "done" message in job order. */
  race(jobs: readonly StoreJob[]): Promise<WorkerMessage[]>;
}

/**
 * How long a watch waits for the events a test expects: generous for a loaded machine, and
 * below the tests' timeout, so that a feed that loses events fails on what it delivered.
 */
const WATCH_DEADLINE_MS = 25_000;
const TIMEOUT = { timeout: 180_000 };

/** Three writeMix processes at once, each over its own two names. */
const WRITERS = 3;
const ROUNDS = 3;
const NAMES = (writer: number): string[] => [`w${writer}_a`, `w${writer}_b`];
const TOTAL = WRITERS * NAMES(0).length * ROUNDS * 5;

type Shape = [string, string, string | null];
const shape = (event: ChangeEvent): Shape => [event.tool_name, event.action, event.version];
const revisions = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

/** What one writeMix process writes, in its order: per round and name, add, disable, enable, new version, remove. */
function writerSequence(names: readonly string[]): Shape[] {
  return Array.from({ length: ROUNDS }, (_, round) =>
    names.flatMap((name): Shape[] => [
      [name, 'added', `${round}.0`],
      [name, 'disabled', `${round}.0`],
      [name, 'enabled', `${round}.0`],
      [name, 'updated', `${round}.1`],
      [name, 'removed', `${round}.1`],
    ]),
  ).flat();
}

function writerJobs(at: StoreJob): StoreJob[] {
  return Array.from({ length: WRITERS }, (_, w) => ({ ...at, action: 'writeMix', names: NAMES(w), rounds: ROUNDS }));
}

/** The feed is what the writers wrote: each writer's events, in its own order. */
function expectWrittenBy(events: readonly ChangeEvent[]): void {
  for (let w = 0; w < WRITERS; w++) {
    const own = events.filter((event) => event.tool_name.startsWith(`w${w}_`)).map(shape);
    expect(own, `writer ${w}`).toEqual(writerSequence(NAMES(w)));
  }
  for (const event of events) expect(event.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
}

function expectOk(result: WorkerMessage): WorkerMessage {
  expect(result.ok, JSON.stringify(result.error)).toBe(true);
  return result;
}

async function withRegistry<T>(store: ProcessStore, at: StoreJob, work: (registry: ToolRegistry) => Promise<T>, options = {}): Promise<T> {
  const registry = await store.open(at, options);
  try {
    return await work(registry);
  } finally {
    await registry.close();
  }
}

/** The events of the whole retained log, read in this process, as plain data (as a worker reports them). */
function feedOf(store: ProcessStore, at: StoreJob): Promise<ChangeEvent[]> {
  return withRegistry(
    store,
    at,
    async (registry) => JSON.parse(JSON.stringify((await registry.changes({ limit: 10_000 })).events)) as ChangeEvent[],
    { readonly: true },
  );
}

/** Collects what watches on one registry deliver; `until(n)` resolves when each has seen n events (or after WATCH_DEADLINE_MS). */
function collect(registry: ToolRegistry, sinces: readonly (number | undefined)[], signal: AbortSignal) {
  const seen = sinces.map((): ChangeEvent[] => []);
  // Every watch must have seen the count: the fewest events any one has.
  const events = countWaiter(() => Math.min(...seen.map((one) => one.length)), WATCH_DEADLINE_MS);
  const done = Promise.all(
    sinces.map(async (since, i) => {
      for await (const event of registry.watch({ signal, ...(since === undefined ? {} : { since }) })) {
        seen[i]?.push(event);
        events.check();
      }
    }),
  );
  return { seen, done, until: (count: number) => events.wait(count) };
}

/** The change feed (`watch`, `changes`) between processes. */
export function changeFeedProcessTests(store: ProcessStore): void {
  let folder: string | undefined;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'tool-registry-feed-'));
  });
  afterEach(() => {
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  });

  describe(`${store.name} change feed across processes`, () => {
    it('a watcher process sees every event of three writer processes at once, in revision order, once; a reader process pages through the same', TIMEOUT, async () => {
      const at = await store.create();
      const watcher = store.spawn({ ...at, action: 'watch', since: 0, count: TOTAL, timeoutMs: WATCH_DEADLINE_MS });
      await watcher.next('ready');
      const wrote = await store.race(writerJobs(at));
      expect(wrote.map((result) => expectOk(result).result)).toEqual(Array(WRITERS).fill(NAMES(0).length * ROUNDS * 5));
      const events = expectOk(await watcher.next('done')).result as ChangeEvent[];
      expect(events.map((event) => event.revision)).toEqual(revisions(1, TOTAL));
      expectWrittenBy(events);
      expect(events).toEqual(await feedOf(store, at));

      // changes() pages of 7 read by another process: the same events, each page within its limit.
      const reader = store.spawn({ ...at, action: 'changes', since: 0, limit: 7 });
      const pages = expectOk(await reader.next('done')).result as ChangesPage[];
      expect(pages).toHaveLength(Math.ceil(TOTAL / 7) + 1);
      for (const page of pages) {
        expect(page.revision).toBe(TOTAL);
        expect(page.events.length).toBeLessThanOrEqual(7);
      }
      expect(pages.flatMap((page) => page.events)).toEqual(events);

      // History survives remove: every version ever stored under each name.
      await withRegistry(store, at, async (registry) => {
        for (const name of [...NAMES(0), ...NAMES(WRITERS - 1)]) {
          expect((await registry.history(name)).map((entry) => entry.spec.version)).toEqual(
            Array.from({ length: ROUNDS }, (_, round) => [`${round}.0`, `${round}.1`]).flat(),
          );
        }
        expect(await registry.listAll({ includeDisabled: true })).toEqual([]);
      });
    });

    it('a watcher process that stops after 10 events, resumed from its cursor by another, gets exactly what it missed, then what comes', TIMEOUT, async () => {
      const at = await store.create();
      const first = store.spawn({ ...at, action: 'watch', since: 0, count: 10, timeoutMs: WATCH_DEADLINE_MS });
      await first.next('ready');
      for (const result of await store.race(writerJobs(at))) expectOk(result);
      const seen = expectOk(await first.next('done')).result as ChangeEvent[];
      expect(seen.map((event) => event.revision)).toEqual(revisions(1, 10));
      // Resumed from the cursor after the writers finished: what it missed, then a late writer's commits as they come.
      const cursor = seen.at(-1)?.revision as number;
      const late = ['late_a', 'late_b', 'late_c'];
      const second = store.spawn({ ...at, action: 'watch', since: cursor, count: TOTAL - cursor + late.length, timeoutMs: WATCH_DEADLINE_MS });
      await second.next('ready');
      expectOk(await store.spawn({ ...at, action: 'registerNames', names: late }).next('done'));
      const rest = expectOk(await second.next('done')).result as ChangeEvent[];
      expect(rest.map((event) => event.revision)).toEqual(revisions(cursor + 1, TOTAL - cursor + late.length));
      const all = [...seen, ...rest];
      expect(all).toEqual(await feedOf(store, at));
      expectWrittenBy(all.slice(0, TOTAL));
      expect(all.slice(TOTAL).map(shape)).toEqual(late.map((name) => [name, 'added', '1']));
    });
  });

  describe.each([
    { cache: true, label: 'cache on' },
    { cache: false, label: 'cache off' },
  ])(`${store.name} watch in this process ($label)`, ({ cache }) => {
    it('sees another process’s commits while it waits; several watches on one registry each see every commit once', TIMEOUT, async () => {
      const at = await store.create();
      const registry = await store.open(at, { cache });
      const controller = new AbortController();
      try {
        // Two watches from "now" (the revision at the call) and one from 0.
        const watches = collect(registry, [undefined, 0, undefined], controller.signal);
        // The child commits only once it has started and opened the store, well after the calls above:
        // a process of its own, whose start-up (about half a second) is what makes it well after.
        // The watches from "now" start at the revision their store reports for the call; on
        // PostgreSQL that is a query, which a pooled worker, ready at once, could beat on a
        // loaded machine (it did: a watch then started after child_a).
        const go = join(folder as string, 'go');
        const children = ['child_a', 'child_b', 'child_c', 'child_d'];
        const writer = store.spawnProcess({ ...at, action: 'registerNames', names: children, go });
        await writer.next('ready');
        writeFileSync(go, 'go');
        expect(expectOk(await writer.next('done')).result).toBe(children.length);
        await watches.until(children.length);
        // And this process's own write, after the child's.
        await registry.register(minimalSpec('own'));
        await watches.until(children.length + 1);
        controller.abort();
        await watches.done;
        const expected = [...children, 'own'].map((name, i) => [i + 1, name]);
        for (const events of watches.seen) expect(events.map((event) => [event.revision, event.tool_name])).toEqual(expected);
        const page = await registry.changes();
        expect(watches.seen[0]).toEqual(page.events);
        expect(page.revision).toBe(expected.length);
      } finally {
        controller.abort();
        await registry.close();
      }
    });
  });
}

/** A conditional write on `deploy` expecting 1.4.0. */
function conditional(at: StoreJob, write: Record<string, unknown>): StoreJob {
  return { ...at, action: 'conditional', name: 'deploy', writeOptions: { expectedVersion: '1.4.0' }, ...write };
}

/** Each loser failed the precondition on `deploy` expecting 1.4.0, nothing else. */
function expectPreconditionFailed(losers: readonly WorkerMessage[]): void {
  for (const loser of losers) {
    expect(loser.ok).toBe(false);
    expect(loser.error?.code, loser.error?.message).toBe('PRECONDITION_FAILED');
    expect(loser.error?.context).toMatchObject({ tool_name: 'deploy', expected: '1.4.0' });
  }
}

/** Conditional writes (`expectedVersion`) racing from several processes. */
export function conditionalProcessTests(store: ProcessStore): void {
  /** A fresh store holding tool `deploy` at version 1.4.0. */
  async function deployAt140(): Promise<StoreJob> {
    const at = await store.create();
    await withRegistry(store, at, (registry) => registry.register(minimalSpec('deploy', { version: '1.4.0' })));
    return at;
  }

  const actionsAndVersions = async (registry: ToolRegistry) =>
    (await registry.changes()).events.map((event) => [event.action, event.version]);

  describe(`${store.name} conditional writes from several processes`, () => {
    it('six processes switch a version conditionally at once: exactly one wins, five PRECONDITION_FAILED', TIMEOUT, async () => {
      const at = await deployAt140();
      const results = await store.race(
        Array.from({ length: 6 }, (_, i) => conditional(at, { method: 'register', spec: minimalSpec('deploy', { version: `2.0.${i}` }) })),
      );
      const winners = results.filter((result) => result.ok);
      expect(winners).toHaveLength(1);
      const losers = results.filter((result) => !result.ok);
      expectPreconditionFailed(losers);
      const version = (winners[0]!.result as ToolRegistration).spec.version;
      for (const loser of losers) expect(loser.error?.context).toMatchObject({ actual: version, exists: true });
      await withRegistry(store, at, async (registry) => {
        expect(JSON.parse(JSON.stringify(await registry.get('deploy')))).toEqual(winners[0]?.result);
        expect(await actionsAndVersions(registry)).toEqual([
          ['added', '1.4.0'],
          ['updated', version],
        ]);
        expect((await registry.history('deploy')).map((entry) => entry.spec.version)).toEqual(['1.4.0', version]);
      });
    });

    it('six processes remove conditionally at once: exactly one removes, five PRECONDITION_FAILED', TIMEOUT, async () => {
      const at = await deployAt140();
      const results = await store.race(Array.from({ length: 6 }, () => conditional(at, { method: 'remove' })));
      expect(results.filter((result) => result.ok).map((winner) => winner.result)).toEqual([true]);
      const losers = results.filter((result) => !result.ok);
      expectPreconditionFailed(losers);
      for (const loser of losers) expect(loser.error?.context).toMatchObject({ exists: false });
      await withRegistry(store, at, async (registry) => {
        expect(await registry.has('deploy')).toBe(false);
        expect(await actionsAndVersions(registry)).toEqual([
          ['added', '1.4.0'],
          ['removed', '1.4.0'],
        ]);
      });
    });

    it('six processes disable conditionally at once: the version holds, so all succeed and one disable is written', TIMEOUT, async () => {
      const at = await deployAt140();
      const results = await store.race(Array.from({ length: 6 }, () => conditional(at, { method: 'setEnabled', enabled: false })));
      for (const result of results) expect(expectOk(result).result).toMatchObject({ enabled: false, spec: { version: '1.4.0' } });
      await withRegistry(store, at, async (registry) => {
        expect((await registry.changes()).events.map((event) => event.action)).toEqual(['added', 'disabled']);
      });
    });

    it('register, disable and remove race on one expected version: the outcomes, the final state and the feed are one serial order', TIMEOUT, async () => {
      const at = await deployAt140();
      const jobs = [
        conditional(at, { method: 'register', spec: minimalSpec('deploy', { version: '2.0.0' }) }),
        conditional(at, { method: 'register', spec: minimalSpec('deploy', { version: '2.0.1' }) }),
        conditional(at, { method: 'setEnabled', enabled: false }),
        conditional(at, { method: 'setEnabled', enabled: false }),
        conditional(at, { method: 'remove' }),
        conditional(at, { method: 'remove' }),
      ];
      const results = await store.race(jobs);
      // The version changes only with a register or a remove: exactly one of them wins.
      const changesVersion = (i: number): boolean => jobs[i]?.method !== 'setEnabled';
      expect(results.filter((result, i) => result.ok && changesVersion(i))).toHaveLength(1);
      expectPreconditionFailed(results.filter((result) => !result.ok));
      // A disable succeeds only before the winner (as disabled at 1.4.0); after it, it fails.
      const disabled = results.filter((result, i) => result.ok && !changesVersion(i));
      for (const result of disabled) expect(result.result).toMatchObject({ enabled: false, spec: { version: '1.4.0' } });
      const winner = results.findIndex((result, i) => result.ok && changesVersion(i));
      const disable = disabled.length > 0 ? [['disabled', '1.4.0']] : [];
      await withRegistry(store, at, async (registry) => {
        const current = await registry.get('deploy');
        if (jobs[winner]?.method === 'remove') {
          expect(results[winner]?.result).toBe(true);
          expect(current).toBeUndefined();
          expect(await actionsAndVersions(registry)).toEqual([['added', '1.4.0'], ...disable, ['removed', '1.4.0']]);
        } else {
          const registration = results[winner]?.result as ToolRegistration;
          // A new version keeps `enabled`: disabled if a disable came first.
          expect(registration.enabled).toBe(disabled.length === 0);
          expect(JSON.parse(JSON.stringify(current))).toEqual(registration);
          expect(await actionsAndVersions(registry)).toEqual([['added', '1.4.0'], ...disable, ['updated', registration.spec.version]]);
        }
      });
    });

    it('four processes compare-and-set a version 15 times each: every version is written once, by one process, in order', TIMEOUT, async () => {
      const at = await store.create();
      await withRegistry(store, at, (registry) => registry.register(minimalSpec('counter', { version: '0' })));
      const PROCESSES = 4;
      const EACH = 15;
      const results = await store.race(Array.from({ length: PROCESSES }, () => ({ ...at, action: 'bumpVersion', name: 'counter', count: EACH })));
      const wrote: number[] = [];
      for (const result of results) {
        const own = (expectOk(result).result as { wrote: string[] }).wrote.map(Number);
        // Each process's versions grow.
        expect(own).toEqual([...own].sort((a, b) => a - b));
        wrote.push(...own);
      }
      const versions = Array.from({ length: PROCESSES * EACH }, (_, i) => i + 1);
      // No lost update: every version was written by exactly one process.
      expect(wrote.sort((a, b) => a - b)).toEqual(versions);
      await withRegistry(store, at, async (registry) => {
        expect((await registry.get('counter'))?.spec.version).toBe(String(PROCESSES * EACH));
        expect(await actionsAndVersions(registry)).toEqual([['added', '0'], ...versions.map((version) => ['updated', String(version)])]);
      });
    });
  });
}
