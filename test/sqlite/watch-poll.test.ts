// The SQLite watch poller under fake timers, where the database's folder can be watched (as
// on any local disk): another process's commit wakes the watch through the file system, without
// the timer; the timer only backs that up, backing off to one look every 10 s while idle; and
// this registry's own commits are delivered at once. watch-poll-fallback.test.ts covers a
// folder that cannot be watched, watch-poll-silent.test.ts one whose events never come.
import { describe, expect, it, vi } from 'vitest';
import { minimalSpec } from '../support/registry-helpers.js';
import { until } from '../support/waiting.js';
import { settle, useWatchHarness } from './watch-harness.js';

const watch = useWatchHarness();

describe('SQLite watch poller with file events', () => {
  it('an idle watch backs off to one look every 10 s: at most 14 wake-ups in 60 idle seconds', async () => {
    await vi.advanceTimersByTimeAsync(60_000);
    expect(watch.delays.length).toBeLessThanOrEqual(14);
    expect(watch.delays.slice(0, 9)).toEqual([50, 100, 200, 400, 800, 1600, 3200, 6400, 10_000]);
    expect(Math.max(...watch.delays)).toBe(10_000);
    expect(watch.events).toEqual([]);
  });

  it("another connection's commit is delivered by the file event, with the clock standing still, and the looks start over at 50 ms", async () => {
    await vi.advanceTimersByTimeAsync(5_000);
    watch.delays.length = 0;
    watch.registerElsewhere('elsewhere');
    await until(() => watch.events.length > 0, "the other connection's event");
    expect(watch.events.map((event) => [event.tool_name, event.action])).toEqual([['elsewhere', 'added']]);
    expect(watch.delays[0]).toBe(50);
    // Announced by its event, so the safety net still backs off to 10 s.
    watch.delays.length = 0;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(Math.max(...watch.delays)).toBe(10_000);
  });

  it("this registry's own commit is delivered at once, with the timer backed off and not advanced", async () => {
    await vi.advanceTimersByTimeAsync(5_000);
    const registered = watch.registry.register(minimalSpec('mine'));
    // Group commit drains on setImmediate, which is not faked.
    await registered;
    await settle();
    expect(watch.events.map((event) => [event.tool_name, event.action])).toEqual([['mine', 'added']]);
  });
});
