// The server or the connection going away, as the registry's STORAGE_UNAVAILABLE: translated
// once, at the store's edge (engine.ts), with the driver's error as `cause`.
import { StorageUnavailableError } from '../../core/errors.js';

/** What is known of a write that failed so: nothing of it is stored, or its commit's answer was lost. */
export type WriteOutcome = 'not_written' | 'unknown';

/** STORAGE_UNAVAILABLE for `operation`, naming the driver's error; `outcome` for a write. */
export function storageUnavailable(operation: string, cause: unknown, outcome?: WriteOutcome): StorageUnavailableError {
  const code = (cause as { code?: unknown } | null)?.code;
  const why = `${cause instanceof Error ? cause.message : String(cause)}${typeof code === 'string' ? ` (${code})` : ''}`;
  const known =
    outcome === undefined ? '' : outcome === 'not_written' ? '; nothing of this write is stored' : '; this write may have committed (read to find out, or repeat it)';
  return new StorageUnavailableError(`${operation}: the database cannot be reached: ${why}${known}`, {
    operation,
    ...(typeof code === 'string' ? { driver_code: code } : {}),
    ...(outcome === undefined ? {} : { outcome }),
  }, cause);
}
