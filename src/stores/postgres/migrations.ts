// Plain-SQL migrations for PostgreSQL: the provider reads migrations/postgres/ next to the
// package root (resolved from this module's URL), the runner applies what is missing, each
// file in its own transaction, under a transaction-scoped advisory lock taken before
// anything is created, so N instances starting together apply each file exactly once.
import { readMigrationFiles } from '../../core/migration-files.js';
import type { Migration } from '../../core/migration-files.js';
import type pg from 'pg';
import { SchemaTooNewError } from '../../core/errors.js';
import { retryWhileBusy, storageBusy } from './busy.js';
import { CheckoutTimeoutError, checkOut } from './connections.js';
import { lockKeys, quoteIdentifier } from './identifiers.js';

/** The folder of the shipped PostgreSQL migrations. */
export const MIGRATIONS_FOLDER = new URL('../../../migrations/postgres/', import.meta.url);

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

/** Names of the migrations recorded in the schema, in name order ([] when it has none yet). */
export async function appliedMigrations(client: pg.ClientBase, schema: string): Promise<string[]> {
  const table = await client.query<{ found: string | null }>(
    `SELECT to_regclass(format('%I.schema_migrations', $1::text))::text AS found`,
    [schema],
  );
  if (table.rows[0]?.found == null) return [];
  const rows = await client.query<{ name: string }>(`SELECT name FROM ${quoteIdentifier(schema)}.schema_migrations ORDER BY name`);
  return rows.rows.map((row) => row.name);
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
 * @returns the names applied by this call
 */
export async function migrate(options: MigrateOptions): Promise<string[]> {
  const { pool, schema } = options;
  const migrations = options.migrations ?? shippedMigrations();
  const client = await checkOut(pool, options.busyTimeoutMs).catch((error: unknown) => {
    throw error instanceof CheckoutTimeoutError ? storageBusy('migrate', options.busyTimeoutMs, 1, error) : error;
  });
  try {
    const before = await appliedMigrations(client, schema);
    assertKnown(before, migrations, schema);
    if (pendingMigrations(before, migrations).length === 0) return [];
    const appliedNow: string[] = [];
    for (;;) {
      const next = await retryWhileBusy({ timeoutMs: options.busyTimeoutMs, operation: 'migrate' }, (remainingMs) =>
        inTransaction(client, () => applyNext(client, schema, migrations, remainingMs)),
      );
      if (next === undefined) return appliedNow;
      appliedNow.push(next);
    }
  } finally {
    client.release();
  }
}

/** One transaction: lock, create what is missing, apply the next pending migration. */
async function applyNext(
  client: pg.ClientBase,
  schema: string,
  migrations: readonly Migration[],
  lockTimeoutMs: number,
): Promise<string | undefined> {
  const quoted = quoteIdentifier(schema);
  await client.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
  await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [lockKeys.migrate(schema)]);
  // Checked before CREATE: CREATE SCHEMA needs the CREATE privilege even when the schema exists.
  const exists = await client.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema]);
  if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${quoted}`);
  await client.query(`SELECT set_config('search_path', $1, true)`, [quoted]);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${quoted}.schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  const applied = await appliedMigrations(client, schema);
  assertKnown(applied, migrations, schema);
  const migration = pendingMigrations(applied, migrations)[0];
  if (migration === undefined) return undefined;
  try {
    // No parameters: the simple protocol runs every statement of the file.
    await client.query(migration.sql);
  } catch (error) {
    throw new MigrationFailedError(migration.name, error);
  }
  await client.query(`INSERT INTO ${quoted}.schema_migrations (name) VALUES ($1)`, [migration.name]);
  return migration.name;
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
