// The server or the connection going away, as the registry's STORAGE_UNAVAILABLE: translated
// once, at the store's edge (engine.ts), with the driver's error as `cause`.
import { StorageUnavailableError } from '../../core/errors.js';
import { queryTimeoutWords } from './connections.js';

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

/**
 * STORAGE_UNAVAILABLE for a write that a caller's pool's `query_timeout` gave up on: its
 * statement may still run and commit (`unknown`: a one-statement write, a COMMIT), unless its
 * transaction's COMMIT was never sent (`not_written`: the connection is ended, so the server
 * rolls it back).
 */
export function queryTimeoutUnavailable(operation: string, cause: unknown, outcome: WriteOutcome): StorageUnavailableError {
  const { text, context } = queryTimeoutWords(cause);
  const known = outcome === 'not_written' ? 'nothing of this write is stored' : 'this write may have committed (read to find out, or repeat it)';
  return new StorageUnavailableError(`${operation}: ${text}; ${known}`, { operation, ...context, outcome }, cause);
}

/** What a read needs for the object a `permission denied for KIND NAME` message names. */
function missingRight(message: string, schema: string): string {
  const denied = /permission denied for (database|schema|table|view|function) "?([^"\s]+)"?/.exec(message);
  if (denied === null) return `a right the store needs in schema ${schema}`;
  const [, kind, name] = denied as unknown as [string, string, string];
  // A database whose CONNECT was revoked from PUBLIC: the login itself is refused.
  if (kind === 'database') return `CONNECT on database ${name}`;
  if (kind === 'schema') return `USAGE on schema ${name}`;
  if (kind === 'function') return `EXECUTE on function ${name}`;
  return `SELECT on ${kind} ${name.includes('.') ? name : `${schema}.${name}`}`;
}

/**
 * STORAGE_UNAVAILABLE for a read the server refused for want of a privilege (42501): the role
 * lacks USAGE on the registry's schema or SELECT on one of its tables. Not a bug of the
 * store's (a server answered it 500), and not READ_ONLY (nothing can be read either); it
 * holds until a DBA grants the right, so the message says which one.
 */
export function readDenied(operation: string, schema: string, cause: unknown): StorageUnavailableError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new StorageUnavailableError(
    `${operation}: this database role may not read the registry schema ${schema}: it lacks ${missingRight(message, schema)} ` +
      `(${message}, SQLSTATE 42501); a reading role needs USAGE on the schema and SELECT on its tables (docs/postgres.md, "Roles and rights")`,
    { operation, driver_code: '42501', schema },
    cause,
  );
}
