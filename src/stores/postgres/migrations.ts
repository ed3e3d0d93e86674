// Plain-SQL migrations for PostgreSQL: the provider reads the package's migrations/postgres/,
// the runner applies what is missing, each
// file in its own transaction, under a transaction-scoped advisory lock taken before
// anything is created, so N instances starting together apply each file exactly once.
import { readMigrationFiles } from '../../core/migration-files.js';
import { packageFile } from '../../package-files.js';
import type { Migration } from '../../core/migration-files.js';
import type pg from 'pg';
import { ReadOnlyError, SchemaTooNewError, StorageUnavailableError } from '../../core/errors.js';
import { retryWhileBusy, sqlState, storageBusy } from './busy.js';
import { CheckoutTimeoutError, checkOut, isQueryReadTimeout, noteQueryTimeout, noteRefusedStatement } from './connections.js';
import { lockKeys, quoteIdentifier } from './identifiers.js';

/** The folder of the shipped PostgreSQL migrations. */
export const MIGRATIONS_FOLDER = packageFile('migrations/postgres/');

let shipped: readonly Migration[] | undefined;

/** The migrations this release ships, in name order (read once per process). */
export function shippedMigrations(): readonly Migration[] {
  shipped ??= readMigrations(MIGRATIONS_FOLDER);
  return shipped;
}

/** Reads `NNNN_name.sql` files of a folder in name order. */
export function readMigrations(folder: URL): readonly Migration[] {
  return readMigrationFiles(folder, 'PostgreSQL');
}

/** SQLSTATEs of a missing schema (3F000) or table (42P01): nothing recorded yet. */
const MISSING_RELATION: ReadonlySet<string | undefined> = new Set(['3F000', '42P01']);

/** Names of the migrations recorded in the schema, in name order ([] when it has none yet). One round trip. */
export async function appliedMigrations(client: pg.ClientBase, schema: string): Promise<string[]> {
  const text = `SELECT name FROM ${quoteIdentifier(schema)}.schema_migrations ORDER BY name`;
  try {
    const rows = await client.query<{ name: string }>(text);
    return rows.rows.map((row) => row.name);
  } catch (error) {
    noteRefusedStatement(error, text);
    // Outside a transaction (open, status), a failed statement leaves the connection as it was.
    if (MISSING_RELATION.has(sqlState(error))) return [];
    throw foreignMigrationsTable(schema, error);
  }
}

/**
 * The schema holds objects the registry did not make under names its migrations would
 * create (another application's table, a function of the same name), or a `schema_migrations`
 * that is not the registry's: STORAGE_UNAVAILABLE (the store cannot be used until an operator
 * acts, as for a schema dropped under it), refused before anything was written (the transaction that found
 * them rolled back, the schema too if it made it). Until this check a migration failed on the
 * first of them, after the ones before it had committed: a half-migrated schema, and a server's 500.
 */
export class SchemaOccupiedError extends StorageUnavailableError {
  readonly schema: string;
  /** Each object, as `table s.tool_specs`. */
  readonly objects: readonly string[];
  constructor(schema: string, objects: readonly string[], cause?: unknown) {
    super(
      `the PostgreSQL schema ${schema} holds ${objects.length === 1 ? 'an object' : 'objects'} that the registry's migrations would create, ` +
        `not made by them: ${objects.join(', ')}; nothing was changed: drop or rename ${objects.length === 1 ? 'it' : 'them'}, or use another schema (for a namespace, another name)`,
      { schema, objects: [...objects] },
      cause,
    );
    this.schema = schema;
    this.objects = objects;
  }
}

/** A `schema_migrations` of other columns (42703 undefined_column on its `name`) as SchemaOccupiedError; any other error as it is. */
function foreignMigrationsTable(schema: string, error: unknown): unknown {
  return sqlState(error) === '42703' ? new SchemaOccupiedError(schema, [`table ${schema}.schema_migrations (its columns are not the registry's)`], error) : error;
}

/** `CREATE [OR REPLACE] [UNIQUE] KIND [IF NOT EXISTS] name` in a migration file. */
const CREATES = /\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:UNIQUE\s+)?(TABLE|VIEW|FUNCTION|INDEX|SEQUENCE|TYPE)\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)/gi;

const createdNames = new WeakMap<Migration, ReadonlySet<string>>();

/** The names of the tables, views, functions, indexes, sequences and types a migration file creates (comments left out). */
function namesCreatedBy(migration: Migration): ReadonlySet<string> {
  let names = createdNames.get(migration);
  if (names === undefined) {
    names = new Set([...migration.sql.replace(/--[^\n]*/g, '').matchAll(CREATES)].map((match) => (match[2] as string).toLowerCase()));
    createdNames.set(migration, names);
  }
  return names;
}

/**
 * A query of the schema's objects named as something a migration creates: relations (tables,
 * views, indexes, sequences), other types and functions. Literals, not parameters: it goes in
 * a simple-protocol message with the statements around it.
 */
function occupantsQuery(client: pg.ClientBase, schema: string, migrations: readonly Migration[]): string {
  const names = [...new Set(migrations.flatMap((migration) => [...namesCreatedBy(migration)]))];
  const list = names.length === 0 ? "''" : names.map((name) => client.escapeLiteral(name)).join(', ');
  // Each branch filters on its catalog's own name and namespace columns, so the catalogs' (name, namespace) indexes serve it
  // (a filter on the names cast to text scanned all of pg_proc: 5 ms a file).
  const space = `(SELECT oid FROM pg_namespace WHERE nspname = ${client.escapeLiteral(schema)})`;
  return (
    `SELECT CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' ` +
    `WHEN 'i' THEN 'index' WHEN 'I' THEN 'index' WHEN 'S' THEN 'sequence' WHEN 'c' THEN 'type' ELSE 'relation' END AS kind, c.relname::text AS name ` +
    `FROM pg_class c WHERE c.relname IN (${list}) AND c.relnamespace = ${space} ` +
    `UNION ALL SELECT 'type', t.typname::text FROM pg_type t WHERE t.typname IN (${list}) AND t.typnamespace = ${space} AND t.typrelid = 0 AND t.typcategory <> 'A' ` +
    `UNION ALL SELECT 'function', p.proname::text FROM pg_proc p WHERE p.proname IN (${list}) AND p.pronamespace = ${space} ` +
    `ORDER BY name, kind`
  );
}

/** The objects found whose names only pending migrations create (an applied one's are the registry's own). */
function occupants(found: readonly { kind: string; name: string }[], applied: readonly string[], migrations: readonly Migration[], schema: string): string[] {
  const done = new Set(applied);
  const ours = new Set(migrations.filter((migration) => done.has(migration.name)).flatMap((migration) => [...namesCreatedBy(migration)]));
  return found.filter((object) => !ours.has(object.name)).map((object) => `${object.kind} ${schema}.${object.name}`);
}

/** Throws SCHEMA_TOO_NEW when the schema records a migration unknown to this release. */
export function assertKnown(applied: readonly string[], known: readonly Migration[], schema: string): void {
  const names = new Set(known.map((migration) => migration.name));
  const unknown = applied.filter((name) => !names.has(name));
  if (unknown.length === 0) return;
  throw new SchemaTooNewError(
    `the PostgreSQL schema ${schema} was migrated by a newer release of tool-registry ` +
      `(unknown migrations: ${unknown.join(', ')}; this release knows ${[...names].join(', ')}); it was left untouched`,
    { schema, unknown_migrations: unknown, known_migrations: [...names] },
  );
}

/** The migrations still to apply. */
export function pendingMigrations(applied: readonly string[], known: readonly Migration[]): Migration[] {
  const done = new Set(applied);
  return known.filter((migration) => !done.has(migration.name));
}

/** A migration file that failed; its transaction was rolled back. */
export class MigrationFailedError extends Error {
  readonly migration: string;
  constructor(migration: string, cause: unknown) {
    super(`PostgreSQL migration ${migration} failed and was rolled back: ${String(cause)}`, { cause });
    this.name = 'MigrationFailedError';
    this.migration = migration;
  }
}

export interface MigrateOptions {
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly busyTimeoutMs: number;
  readonly migrations?: readonly Migration[];
}

/**
 * Applies the pending migrations to `schema` (created if missing), each file in its own
 * transaction. Every transaction first takes the schema's migration lock
 * (`pg_advisory_xact_lock`), then creates the schema and the migrations table if missing and
 * re-reads what is applied, so instances racing on a new database wait for each other and
 * find the work done. A schema that records an unknown migration is refused (SCHEMA_TOO_NEW)
 * before anything changes. Waiting for the lock past `busyTimeoutMs` is STORAGE_BUSY.
 * A current schema costs one query; each pending file three round trips.
 * @returns the names applied by this call
 */
export async function migrate(options: MigrateOptions): Promise<string[]> {
  const { pool, schema } = options;
  const migrations = options.migrations ?? shippedMigrations();
  const client = await checkOut(pool, options.busyTimeoutMs).catch((error: unknown) => {
    throw error instanceof CheckoutTimeoutError ? storageBusy('migrate', options.busyTimeoutMs, 1, error) : error;
  });
  let failed: unknown;
  try {
    const before = await appliedMigrations(client, schema);
    assertKnown(before, migrations, schema);
    if (pendingMigrations(before, migrations).length === 0) return [];
    const appliedNow: string[] = [];
    for (;;) {
      const step = await retryWhileBusy({ timeoutMs: options.busyTimeoutMs, operation: 'migrate' }, (remainingMs) =>
        // Only the first file this call applies looks for objects in the way of every pending one.
        applyNext(client, schema, migrations, remainingMs, appliedNow.length === 0),
      ).catch((error: unknown) => {
        // A role that may not create the schema or its tables (42501), a standby (25006): the
        // storage refuses writes, as for the store's writes; a server answered the bare driver
        // error 500 (creating a namespace). A role that may not even read it fails above (the
        // open makes that STORAGE_UNAVAILABLE).
        // A statement of a migration file the role may not run (a function it does not own,
        // "must be owner of function"): the same refusal, inside the file's MigrationFailedError.
        const refused = error instanceof MigrationFailedError && sqlState(error.cause) === '42501' ? error.cause : error;
        const state = sqlState(refused);
        if (state === '25006') throw new ReadOnlyError('openPostgresToolRegistry', { cause: error });
        if (state !== '42501') throw error;
        // Say what was to be done: a GET of a namespace whose schema a new release must migrate
        // was a bare "permission denied for schema" (a server's 409).
        const pending = pendingMigrations(before, migrations).map((migration) => migration.name).filter((name) => !appliedNow.includes(name));
        const detail =
          before.length === 0
            ? `the registry schema ${schema} is missing or empty, and this role may not create it`
            : `the registry schema ${schema} needs migrations ${pending.join(', ')}, which this role may not apply: run "tool-registry migrate" as the schema's owner (docs/postgres.md, "Roles and rights")`;
        throw new ReadOnlyError('openPostgresToolRegistry', { cause: refused, detail });
      });
      if (step.applied !== undefined) appliedNow.push(step.applied);
      if (step.pendingAfter === 0) return appliedNow;
    }
  } catch (error) {
    failed = error;
    throw error;
  } finally {
    // One that a caller's pool's query_timeout gave up on still runs on the server: dropped.
    client.release(noteQueryTimeout(failed instanceof MigrationFailedError ? failed.cause : failed, client));
  }
}

/** Results of a multi-statement query, one per statement (node-postgres gives one unwrapped for a single statement). */
function resultsOf(result: pg.QueryResult | pg.QueryResult[]): pg.QueryResult[] {
  return Array.isArray(result) ? result : [result];
}

/**
 * One transaction: lock, create what is missing, apply the next pending migration; returns
 * what it applied and how many were still pending after it. Statements without parameters go
 * as one message each step (the simple protocol runs them in order, and stops at the first
 * error): three round trips instead of one per statement. `lookForOccupants`: the second
 * message also lists the schema's objects under the names pending migrations would create
 * (about 1 ms of the server's; SchemaOccupiedError when there are any).
 */
async function applyNext(
  client: pg.ClientBase,
  schema: string,
  migrations: readonly Migration[],
  lockTimeoutMs: number,
  lookForOccupants: boolean,
): Promise<{ applied: string | undefined; pendingAfter: number }> {
  const quoted = quoteIdentifier(schema);
  const key = client.escapeLiteral(lockKeys.migrate(schema));
  const literal = client.escapeLiteral(schema);
  try {
    // The lock before anything else; the schema is looked up after it (a statement of its own: a snapshot taken after the lock).
    // READ COMMITTED whatever the role's default_transaction_isolation: under REPEATABLE READ the
    // snapshot was the first statement's, taken before the lock, and instances starting together
    // on a new schema failed ("schema already exists", 42P06) or applied a migration twice.
    const locked = resultsOf(
      await client.query(
        `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '${Math.max(1, Math.ceil(lockTimeoutMs))}ms'; ` +
          `SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0)); ` +
          `SELECT 1 FROM pg_namespace WHERE nspname = ${literal}`,
      ),
    );
    // Checked before CREATE: CREATE SCHEMA needs the CREATE privilege even when the schema exists.
    const exists = (locked.at(-1)?.rowCount ?? 0) > 0;
    // With the look for objects in the way of the pending migrations, in the same message (no round trip more).
    // pg_temp last: the functions keep this search_path (SET search_path FROM CURRENT), and
    // with the schema alone a session's temporary table of a store table's name took their
    // writes (0009_pg_temp_last).
    const prepared = resultsOf(
      await client
        .query(
          `${exists ? '' : `CREATE SCHEMA ${quoted}; `}SET LOCAL search_path = ${quoted}, pg_temp; ` +
            `CREATE TABLE IF NOT EXISTS ${quoted}.schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now()); ` +
            `${lookForOccupants ? `${occupantsQuery(client, schema, migrations)}; ` : ''}` +
            `SELECT name FROM ${quoted}.schema_migrations ORDER BY name`,
        )
        .catch((error: unknown) => {
          throw foreignMigrationsTable(schema, error);
        }),
    );
    const applied = (prepared.at(-1)?.rows ?? []).map((row: { name: string }) => row.name);
    assertKnown(applied, migrations, schema);
    const pending = pendingMigrations(applied, migrations);
    // Checked under the lock, before the first pending file: none of them is applied when one would fail on such an object.
    const inTheWay = lookForOccupants ? occupants((prepared.at(-2)?.rows ?? []) as { kind: string; name: string }[], applied, migrations, schema) : [];
    if (pending.length > 0 && inTheWay.length > 0) throw new SchemaOccupiedError(schema, inTheWay);
    const migration = pending[0];
    if (migration === undefined) {
      await client.query('COMMIT');
      return { applied: undefined, pendingAfter: 0 };
    }
    try {
      // No parameters: the simple protocol runs every statement of the file, then records it and commits.
      await client.query(`${migration.sql}\n;\nINSERT INTO ${quoted}.schema_migrations (name) VALUES (${client.escapeLiteral(migration.name)}); COMMIT`);
    } catch (error) {
      throw new MigrationFailedError(migration.name, error);
    }
    return { applied: migration.name, pendingAfter: pending.length - 1 };
  } catch (error) {
    // After a query_timeout a ROLLBACK would wait behind the statement still running; the
    // connection is dropped instead (migrate()), and the server rolls back with it.
    if (!isQueryReadTimeout(error instanceof MigrationFailedError ? error.cause : error)) await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** Runs `work` in BEGIN … COMMIT on `client`, rolling back when it throws. */
export async function inTransaction<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
