// Waiting in tests without timing assertions: a generous deadline, after which the caller
// learns what never came (`until` throws naming it; a count waiter resolves and lets the
// caller's assertions show what did come).
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `condition` until it holds, then an error naming `what` after `timeoutMs`. It sleeps
 * on node:timers/promises, which vitest's fake timers leave real, so it also waits for real
 * I/O while a test holds the fake clock still.
 */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs = 20_000, pollMs = 5 }: { timeoutMs?: number; pollMs?: number } = {},
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(pollMs);
  }
}

/**
 * Waits for something that only grows (lines of output, events seen) to reach a count:
 * `wait(count)` resolves once `current()` is at least `count`, or after `deadlineMs`; call
 * `check()` whenever it may have grown.
 */
export function countWaiter(current: () => number, defaultDeadlineMs: number) {
  const waiting: { count: number; resolve: () => void }[] = [];
  return {
    check(): void {
      for (const waiter of waiting.filter((one) => current() >= one.count)) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
    wait(count: number, deadlineMs = defaultDeadlineMs): Promise<void> {
      return new Promise<void>((resolve) => {
        if (current() >= count) return resolve();
        const deadline = setTimeout(resolve, deadlineMs);
        waiting.push({
          count,
          resolve: () => {
            clearTimeout(deadline);
            resolve();
          },
        });
      });
    },
  };
}
