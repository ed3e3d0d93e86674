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

/** node-postgres' own words (never the server's) for a server that answered its SSL request with no. */
const NO_SSL = 'The server does not support SSL connections';

/** SQLSTATEs of a login refused for a setting of the connection's `options` (`-c name=value`): a bad value, an unknown or unsettable parameter. */
const OPTION_REFUSED = /^(22023|42704|55P02)$/;

/** Where the connection's SSL request came from: the URL's sslmode or ssl, PGSSLMODE, or the pool's `ssl`. */
function sslSetting(options: pg.PoolConfig): string {
  const [, name, value] = /[?&](sslmode|ssl)=([^&#]*)/.exec(options.connectionString ?? '') ?? [];
  if (name !== undefined) return `${name}=${decodeURIComponent(value ?? '')}`;
  return options.ssl === undefined && process.env.PGSSLMODE !== undefined ? `PGSSLMODE=${process.env.PGSSLMODE}` : "the pool's ssl option";
}

/**
 * STORAGE_UNAVAILABLE for a new connection of `pool` that the server refused for what it was
 * given, not for being down (that is storageUnavailable): a database that does not exist
 * (3D000), a login refused (class 28: no such role, one that may not log in, no pg_hba.conf
 * entry, a wrong password), an option of `options` it rejects, SSL asked of a server without
 * it. It holds until the settings change, so the message names the one at fault, from the
 * settings (the server's words follow lc_messages). Undefined for any other error.
 */
export function loginRefused(operation: string, cause: unknown, pool: pg.Pool): StorageUnavailableError | undefined {
  if (!(cause instanceof Error)) return undefined;
  // The settings as node-postgres resolves them: the URL's, the pool's own, the PG* variables.
  const client = new (nodePostgres().Client)(pool.options) as pg.Client & { connectionParameters?: { options?: unknown } };
  const database = client.database ?? '(the default)';
  if (cause.message === NO_SSL) {
    const ssl = sslSetting(pool.options);
    return new StorageUnavailableError(
      `${operation}: the server does not support SSL connections, and this connection asks for SSL (${ssl}): connect without SSL, or to a server that has it`,
      { operation, ssl },
      cause,
    );
  }
  const code = (cause as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  const why = `(${cause.message}, SQLSTATE ${code})`;
  if (code === '3D000') {
    return new StorageUnavailableError(`${operation}: the database ${database} does not exist on the server ${why}`, { operation, driver_code: code, database }, cause);
  }
  if (code.startsWith('28')) {
    const role = client.user ?? '(the default)';
    return new StorageUnavailableError(`${operation}: the server refused the login of role ${role} to database ${database} ${why}`, { operation, driver_code: code, role, database }, cause);
  }
  const options = client.connectionParameters?.options;
  if (OPTION_REFUSED.test(code) && typeof options === 'string' && options !== '') {
    return new StorageUnavailableError(`${operation}: the server refused the connection's options ${JSON.stringify(options)} ${why}`, { operation, driver_code: code, options }, cause);
  }
  return undefined;
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
