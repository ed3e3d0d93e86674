// The server or the connection going away, as the registry's STORAGE_UNAVAILABLE: translated
// once, at the store's edge (engine.ts), with the driver's error as `cause`.
import { StorageUnavailableError } from '../../core/errors.js';
import type pg from 'pg';
import { nodePostgres } from '../../node-postgres.js';
import { checkOut, failedBeforeSending, queryTimeoutWords, refusedStatement } from './connections.js';

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

/** The schema's USAGE, and its tables and functions the role may not SELECT or EXECUTE, as the server has them now. */
const RIGHTS_QUERY = `SELECT has_schema_privilege(n.oid, 'USAGE') AS usage,
  ARRAY(SELECT CASE WHEN c.relkind IN ('v', 'm') THEN 'view ' ELSE 'table ' END || c.relname FROM pg_class c
        WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'm') AND NOT has_table_privilege(c.oid, 'SELECT') ORDER BY c.relname) AS tables,
  ARRAY(SELECT DISTINCT p.proname::text FROM pg_proc p WHERE p.pronamespace = n.oid AND NOT has_function_privilege(p.oid, 'EXECUTE')) AS functions
  FROM pg_namespace n WHERE n.nspname = $1`;

/** Whether `statement` names `name` as a whole identifier (quoted or not). */
function names(statement: string, name: string): boolean {
  return new RegExp(`(?<![\\w$])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w$])`).test(statement);
}

/**
 * What a read refused with SQLSTATE 42501 needs, told without the server's message (its words
 * follow lc_messages): a login refused is CONNECT on the database; otherwise the catalog says
 * which right the role lacks now, among what the refused statement (noted by the store)
 * reads. A generic sentence when neither tells.
 */
async function missingRight(pool: pg.Pool, waitMs: number, schema: string, cause: unknown): Promise<string> {
  const fallback = `a right the store needs in schema ${schema}`;
  if (failedBeforeSending(cause)) {
    // A database whose CONNECT was revoked from PUBLIC: the login itself is refused, by the
    // server's CheckMyDatabase (its `routine`, never translated). A login refused otherwise
    // (the URL's options set a parameter only a superuser may: set_config_with_handle) is not that.
    if ((cause as { routine?: unknown }).routine !== 'CheckMyDatabase') return `a right the login needs (see the server's words)`;
    const { database } = new (nodePostgres().Client)(pool.options);
    return `CONNECT on database ${database ?? '(the default)'}`;
  }
  let rights: { usage: boolean; tables: string[]; functions: string[] } | undefined;
  try {
    const client = await checkOut(pool, waitMs);
    try {
      rights = (await client.query<{ usage: boolean; tables: string[]; functions: string[] }>(RIGHTS_QUERY, [schema])).rows[0];
    } finally {
      client.release();
    }
  } catch {
    // Best effort: the refusal is reported either way.
    return fallback;
  }
  if (rights === undefined) return fallback;
  if (!rights.usage) return `USAGE on schema ${schema}`;
  const statement = refusedStatement(cause);
  const table = rights.tables.find((kindAndName) => statement === undefined || names(statement, kindAndName.slice(kindAndName.indexOf(' ') + 1)));
  if (table !== undefined) {
    const [kind, name] = table.split(' ') as [string, string];
    return `SELECT on ${kind} ${schema}.${name}`;
  }
  const fn = statement === undefined ? undefined : rights.functions.find((name) => names(statement, name));
  return fn === undefined ? fallback : `EXECUTE on function ${schema}.${fn}`;
}

/**
 * STORAGE_UNAVAILABLE for a read the server refused for want of a privilege (42501): the role
 * lacks USAGE on the registry's schema or SELECT on one of its tables. Not a bug of the
 * store's (a server answered it 500), and not READ_ONLY (nothing can be read either); it
 * holds until a DBA grants the right, so the message says which one (asking the server, on
 * one of `pool`'s connections, waiting at most `waitMs` for it).
 */
export async function readDenied(operation: string, schema: string, cause: unknown, pool: pg.Pool, waitMs: number): Promise<StorageUnavailableError> {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new StorageUnavailableError(
    `${operation}: this database role may not read the registry schema ${schema}: it lacks ${await missingRight(pool, waitMs, schema, cause)} ` +
      `(${message}, SQLSTATE 42501); a reading role needs USAGE on the schema and SELECT on its tables (docs/postgres.md, "Roles and rights")`,
    { operation, driver_code: '42501', schema },
    cause,
  );
}
