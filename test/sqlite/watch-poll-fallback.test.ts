// The SQLite watch poller where the database's folder cannot be watched (fs.watch throws, as
// when no inotify instance is left): the timer alone finds other connections' commits, backing
// off to four looks a second while idle, and own commits are still delivered at once.
import type * as NodeFs from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { minimalSpec } from '../support/registry-helpers.js';
import { settle, useWatchHarness } from './watch-harness.js';

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof NodeFs>();
  return {
    ...fs,
    watch: () => {
      throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' });
    },
  };
});

const watch = useWatchHarness();

describe('SQLite watch poller without file events', () => {
  it('an idle watch backs off to one look every 250 ms: at most 45 wake-ups in 10 idle seconds', async () => {
    await vi.advanceTimersByTimeAsync(10_000);
    expect(watch.delays.length).toBeLessThanOrEqual(45);
    expect(watch.delays.slice(0, 4)).toEqual([50, 100, 200, 250]);
    expect(Math.max(...watch.delays)).toBe(250);
    expect(watch.events).toEqual([]);
  });

  it("another connection's commit is seen within 250 ms of an idle wait, and the poller looks every 50 ms again after it", async () => {
    await vi.advanceTimersByTimeAsync(5_000);
    watch.registerElsewhere('elsewhere');
    watch.delays.length = 0;
    await vi.advanceTimersByTimeAsync(250);
    expect(watch.events.map((event) => [event.tool_name, event.action])).toEqual([['elsewhere', 'added']]);
    // The look that saw it starts over at 50 ms, then backs off again.
    expect(watch.delays.slice(0, 2)).toEqual([50, 100]);
  });

  it("this registry's own commit is delivered at once", async () => {
    await vi.advanceTimersByTimeAsync(5_000);
    await watch.registry.register(minimalSpec('mine'));
    await settle();
    expect(watch.events.map((event) => [event.tool_name, event.action])).toEqual([['mine', 'added']]);
  });
});
