// The SQLite watch poller under fake timers: it backs off while nothing is committed (an idle
// watch wakes at most four times a second), looks again every 50 ms once something is, sees
// another connection's commit within the longest wait, and sees this registry's own commits
// at once, without waiting for the timer.
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import type { ChangeEvent, SqliteToolRegistry } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { useTempFolder } from './helpers.js';

const temp = useTempFolder();

/** Lets queued microtasks and promise chains run, without moving the fake clock. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

describe('SQLite watch poller', () => {
  let registry: SqliteToolRegistry;
  let other: Database.Database;
  let events: ChangeEvent[];
  let abort: AbortController;
  let watching: Promise<void>;
  let delays: number[];

  beforeEach(async () => {
    const file = temp.file('watch.db');
    registry = await openSqliteToolRegistry({ filename: file });
    other = new Database(file);
    other.pragma('busy_timeout = 5000');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    delays = [];
    const fakeSetTimeout = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number) => {
      delays.push(ms ?? 0);
      return fakeSetTimeout(callback, ms);
    }) as typeof setTimeout);
    events = [];
    abort = new AbortController();
    watching = (async () => {
      for await (const event of registry.watch({ signal: abort.signal })) events.push(event);
    })();
    await settle();
  });

  afterEach(async () => {
    abort.abort();
    vi.useRealTimers();
    vi.restoreAllMocks();
    await watching;
    other.close();
    await registry.close();
  });

  /** Another connection registers a tool by hand (the poller must notice it). */
  function registerElsewhere(name: string): void {
    other.prepare("INSERT INTO tool_specs VALUES (?, ?, '1', '{}', '2026-01-01T00:00:00Z')").run(name, 'f'.repeat(64));
    other.prepare("INSERT INTO tool_registrations VALUES (?, ?, 1, '2026-01-01T00:00:00Z')").run(name, 'f'.repeat(64));
  }

  it('an idle watch backs off to one look every 250 ms: at most 45 wake-ups in 10 idle seconds', async () => {
    await vi.advanceTimersByTimeAsync(10_000);
    expect(delays.length).toBeLessThanOrEqual(45);
    expect(delays.slice(0, 4)).toEqual([50, 100, 200, 250]);
    expect(Math.max(...delays)).toBe(250);
    expect(events).toEqual([]);
  });

  it("another connection's commit is seen within 250 ms of an idle wait, and the poller looks every 50 ms again after it", async () => {
    await vi.advanceTimersByTimeAsync(5_000);
    registerElsewhere('elsewhere');
    delays.length = 0;
    await vi.advanceTimersByTimeAsync(250);
    expect(events.map((event) => [event.tool_name, event.action])).toEqual([['elsewhere', 'added']]);
    // The look that saw it starts over at 50 ms, then backs off again.
    expect(delays.slice(0, 2)).toEqual([50, 100]);
  });

  it("this registry's own commit is delivered at once, with the timer backed off and not advanced", async () => {
    await vi.advanceTimersByTimeAsync(5_000);
    const registered = registry.register(minimalSpec('mine'));
    // Group commit drains on setImmediate, which is not faked.
    await registered;
    await settle();
    expect(events.map((event) => [event.tool_name, event.action])).toEqual([['mine', 'added']]);
  });
});
