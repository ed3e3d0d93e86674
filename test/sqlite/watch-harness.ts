// A SQLite registry with a watch running under fake timers (setTimeout only: setImmediate and
// I/O stay real), for the poller's tests: every delay the poller asks for, every event the
// watch delivers, and a second connection that commits by hand.
import Database from 'better-sqlite3';
import { afterEach, beforeEach, vi } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import type { ChangeEvent, SqliteToolRegistry } from '../../src/index.js';
import { useTempFolder } from './helpers.js';

export interface WatchHarness {
  readonly registry: SqliteToolRegistry;
  /** Every setTimeout delay asked for since the watch started (tests may clear it). */
  readonly delays: number[];
  readonly events: ChangeEvent[];
  /** Another connection registers a tool by hand (the poller must notice it). */
  registerElsewhere(name: string): void;
}

/** Lets queued microtasks and promise chains run, without moving the fake clock. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

export function useWatchHarness(): WatchHarness {
  const temp = useTempFolder();
  let registry: SqliteToolRegistry;
  let other: Database.Database;
  let abort: AbortController;
  let watching: Promise<void>;
  const delays: number[] = [];
  const events: ChangeEvent[] = [];

  beforeEach(async () => {
    const file = temp.file('watch.db');
    registry = await openSqliteToolRegistry({ filename: file });
    other = new Database(file);
    other.pragma('busy_timeout = 5000');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    delays.length = 0;
    events.length = 0;
    const fakeSetTimeout = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number) => {
      delays.push(ms ?? 0);
      return fakeSetTimeout(callback, ms);
    }) as typeof setTimeout);
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

  return {
    get registry() {
      return registry;
    },
    delays,
    events,
    registerElsewhere(name) {
      other.prepare("INSERT INTO tool_specs VALUES (?, ?, '1', '{}', '2026-01-01T00:00:00Z')").run(name, 'f'.repeat(64));
      other.prepare("INSERT INTO tool_registrations VALUES (?, ?, 1, '2026-01-01T00:00:00Z')").run(name, 'f'.repeat(64));
    },
  };
}
