// The SQLite watch poller where the database's folder can be watched but its events never come
// (a file system that does not report writes, such as a network one): the safety-net timer finds
// another connection's commit, and from then on the poller stops counting on file events and
// backs off to four looks a second at most, as where the folder cannot be watched at all.
import { EventEmitter } from 'node:events';
import type * as NodeFs from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { useWatchHarness } from './watch-harness.js';

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof NodeFs>();
  // A watcher that starts and stays silent.
  return { ...fs, watch: () => Object.assign(new EventEmitter(), { close: () => {} }) };
});

const watch = useWatchHarness();

describe('SQLite watch poller whose file events never come', () => {
  it("finds another connection's commit on the safety-net timer, then looks at least every 250 ms", async () => {
    await vi.advanceTimersByTimeAsync(30_000);
    expect(Math.max(...watch.delays)).toBe(10_000);
    watch.delays.length = 0;
    watch.registerElsewhere('elsewhere');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(watch.events.map((event) => [event.tool_name, event.action])).toEqual([['elsewhere', 'added']]);
    // The look that found it starts over at 50 ms and backs off no further than 250 ms.
    const afterIt = watch.delays.slice(watch.delays.indexOf(50));
    expect(afterIt.slice(0, 4)).toEqual([50, 100, 200, 250]);
    watch.delays.length = 0;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(Math.max(...afterIt, ...watch.delays)).toBe(250);
    // The next commit is seen within 250 ms.
    watch.registerElsewhere('again');
    await vi.advanceTimersByTimeAsync(250);
    expect(watch.events.map((event) => event.tool_name)).toEqual(['elsewhere', 'again']);
  });
});
