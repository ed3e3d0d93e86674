// SQLite's own lock wait is synchronous in better-sqlite3 and would freeze the event loop,
// so the store keeps it short and retries here, asynchronously, with capped backoff.
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageBusyError } from '../../core/errors.js';

/** SQLite's synchronous wait per attempt (`PRAGMA busy_timeout`), in milliseconds. */
export const SYNC_BUSY_TIMEOUT_MS = 10;

const MAX_BACKOFF_MS = 25;

/** Whether a better-sqlite3 error means the lock was not obtained (SQLITE_BUSY and its extended codes). */
export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** STORAGE_BUSY for an operation that did not get its lock, with the SQLITE_BUSY as `cause`. */
export function storageBusy(operation: string, timeoutMs: number, attempts: number, cause: unknown): StorageBusyError {
  return new StorageBusyError(
    `${operation}: the database is locked by another connection; ` +
      `the lock was not obtained within ${timeoutMs} ms (${attempts} attempt${attempts === 1 ? '' : 's'})`,
    { operation, busy_timeout_ms: timeoutMs, attempts },
    cause,
  );
}

/** STORAGE_BUSY for an operation that met a lock inside the caller's own transaction, where the store does not wait. */
export function busyInCallersTransaction(operation: string, cause: unknown): StorageBusyError {
  const code = (cause as { code?: unknown } | null)?.code;
  return new StorageBusyError(
    `${operation}: the database is locked (${String(code)}) inside your own transaction on this handle; ` +
      'the store does not wait there (a retry could not succeed and would run between your statements): ' +
      'roll your transaction back and try again, or begin it with BEGIN IMMEDIATE',
    { operation, attempts: 1, in_caller_transaction: true },
    cause,
  );
}

export interface RetryOptions {
  /** Total time allowed to obtain the lock. */
  readonly timeoutMs: number;
  /** What was being done, for the error (`register`, `migrate`). */
  readonly operation: string;
  /** Called before each retry; throw to stop (for example when the registry was closed). */
  readonly beforeRetry?: () => void;
}

/**
 * Runs `attempt` until it does not fail with SQLITE_BUSY. Each attempt must be atomic (it
 * rolls itself back on failure); the store's are synchronous, so nothing else runs on the
 * connection in between. After `timeoutMs` (give or take SQLite's own short wait in the
 * last attempt): STORAGE_BUSY with the last SQLITE_BUSY as `cause`.
 */
export async function retryWhileBusy<T>(options: RetryOptions, attempt: () => T | Promise<T>): Promise<T> {
  const deadline = performance.now() + options.timeoutMs;
  let delay = 1;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isBusyError(error)) throw error;
      const left = deadline - performance.now();
      if (left <= 0) throw storageBusy(options.operation, options.timeoutMs, tries, error);
      // Jitter spreads out processes that collided, so they do not retry in lock step.
      await sleep(Math.min(left, delay * (0.5 + Math.random())));
      delay = Math.min(delay * 2, MAX_BACKOFF_MS);
      options.beforeRetry?.();
    }
  }
}
