// Lock waits on PostgreSQL are bounded by the server (`SET LOCAL lock_timeout`), so an
// attempt never waits past the caller's budget; what failed for a reason that a later
// attempt can cure (a lock not obtained, a deadlock victim, a serialization failure) is
// retried here with capped, jittered backoff until busyTimeoutMs, then STORAGE_BUSY.
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageBusyError } from '../../core/errors.js';
import { queryTimeoutWords } from './connections.js';

/** SQLSTATEs a retry can cure: serialization_failure, deadlock_detected, lock_not_available. */
const RETRYABLE_CODES: ReadonlySet<string> = new Set(['40001', '40P01', '55P03']);

const MAX_BACKOFF_MS = 50;

/** The SQLSTATE of a node-postgres error, if it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Whether a failed attempt may succeed if run again (its transaction was rolled back). */
function isRetryable(error: unknown): boolean {
  const code = sqlState(error);
  return code !== undefined && RETRYABLE_CODES.has(code);
}

/** STORAGE_BUSY for an operation that did not get through in time, with the driver's error as `cause`. */
export function storageBusy(operation: string, timeoutMs: number, attempts: number, cause: unknown): StorageBusyError {
  const code = sqlState(cause);
  return new StorageBusyError(
    `${operation}: the database was busy (${code === undefined ? 'lock wait' : `SQLSTATE ${code}`}); ` +
      `no attempt got through within ${timeoutMs} ms (${attempts} attempt${attempts === 1 ? '' : 's'})`,
    { operation, busy_timeout_ms: timeoutMs, attempts, ...(code === undefined ? {} : { sqlstate: code }) },
    cause,
  );
}

/**
 * STORAGE_BUSY for a read (or an open) that a caller's pool's `query_timeout` gave up on (a
 * DBA's lock, a slow server): it did not get through in time, as for a statement_timeout.
 */
export function queryTimeoutBusy(operation: string, cause: unknown): StorageBusyError {
  const { text, context } = queryTimeoutWords(cause);
  return new StorageBusyError(`${operation}: ${text}`, { operation, ...context }, cause);
}

/** A STORAGE_BUSY of another operation (a read shared by several calls) as one of `operation`; any other error as it is. */
export function renamedBusy(error: unknown, operation: string): unknown {
  if (!(error instanceof StorageBusyError) || error.context.operation === operation) return error;
  const { busy_timeout_ms: timeoutMs, attempts } = error.context;
  // A statement the server cancelled by its own limit has no timeout of ours to quote.
  if (timeoutMs === undefined) {
    const from = `${String(error.context.operation)}:`;
    const message = error.message.startsWith(from) ? `${operation}:${error.message.slice(from.length)}` : error.message;
    return new StorageBusyError(message, { ...error.context, operation }, error.cause);
  }
  return storageBusy(operation, Number(timeoutMs), Number(attempts ?? 1), error.cause);
}

export interface RetryOptions {
  /** Total time allowed, lock waits included. */
  readonly timeoutMs: number;
  /** What was being done, for the error (`register`, `migrate`). */
  readonly operation: string;
  /** Called before each retry; throw to stop (for example when the registry was closed). */
  readonly beforeRetry?: () => void;
}

/**
 * Runs `attempt` until it does not fail with a retryable error. `attempt` gets the time
 * left in milliseconds (at least 1), to use as its `lock_timeout`; each attempt must be one
 * transaction that rolled back when it failed. After `timeoutMs`: STORAGE_BUSY with the
 * last driver error as `cause`. Any other error is thrown as it is.
 */
export async function retryWhileBusy<T>(options: RetryOptions, attempt: (remainingMs: number) => Promise<T>): Promise<T> {
  const deadline = performance.now() + options.timeoutMs;
  let delay = 2;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt(Math.max(1, Math.ceil(deadline - performance.now())));
    } catch (error) {
      if (!isRetryable(error)) throw error;
      const left = deadline - performance.now();
      if (left <= 0) throw storageBusy(options.operation, options.timeoutMs, tries, error);
      // Jitter spreads out instances that collided, so they do not retry in lock step.
      await sleep(Math.min(left, delay * (0.5 + Math.random())));
      delay = Math.min(delay * 2, MAX_BACKOFF_MS);
      options.beforeRetry?.();
    }
  }
}
