// Plain-SQL migrations: the provider reads the package's migrations/sqlite/, the runner
// applies what is missing.
import { packageFile } from '../../package-files.js';
import { readMigrationFiles } from '../../core/migration-files.js';
import type { Migration } from '../../core/migration-files.js';
import type BetterSqlite3 from 'better-sqlite3';
import { SchemaTooNewError } from '../../core/errors.js';
import { isBusyError, retryWhileBusy } from './busy.js';
import { compileStatement, once, queries } from './statement.js';

/** The folder of the shipped SQLite migrations. */
export const MIGRATIONS_FOLDER = packageFile('migrations/sqlite/');

let shipped: readonly Migration[] | undefined;

/** The migrations this release ships, in name order (read once per process). */
export function shippedMigrations(): readonly Migration[] {
  shipped ??= readMigrations(MIGRATIONS_FOLDER);
  return shipped;
}

/** Reads `NNNN_name.sql` files of a folder in name order. */
export function readMigrations(folder: URL): readonly Migration[] {
  return readMigrationFiles(folder, 'SQLite');
}

/** The runner's queries, compiled once per process (on first use); prepared per call, since the tables they read may not exist yet. */
const compiledQueries = once(() => ({
  migrationsTable: compileStatement(() =>
    queries.selectFrom('sqlite_master').select('name').where('type', '=', 'table').where('name', '=', 'schema_migrations'),
  ),
  applied: compileStatement(() => queries.selectFrom('schema_migrations').select('name').orderBy('name')),
  record: compileStatement((p: { name: string; applied_at: string }) =>
    queries.insertInto('schema_migrations').values({ name: p.name, applied_at: p.applied_at }),
  ),
}));

/** Names of the migrations recorded in the database, in name order ([] for a new database). */
export function appliedMigrations(db: BetterSqlite3.Database): string[] {
  const compiled = compiledQueries();
  if (compiled.migrationsTable.prepare(db).get() === undefined) return [];
  return compiled.applied
    .prepare(db)
    .all()
    .map((row) => row.name);
}

/** Throws SCHEMA_TOO_NEW when the database records a migration unknown to this release. */
export function assertKnown(applied: readonly string[], known: readonly Migration[], filename: string): void {
  const names = new Set(known.map((migration) => migration.name));
  const unknown = applied.filter((name) => !names.has(name));
  if (unknown.length === 0) return;
  throw new SchemaTooNewError(
    `the database ${filename} was migrated by a newer release of tool-registry ` +
      `(unknown migrations: ${unknown.join(', ')}; this release knows ${[...names].join(', ')}); it was left untouched`,
    { filename, unknown_migrations: unknown, known_migrations: [...names] },
  );
}

/** The migrations still to apply. */
export function pendingMigrations(applied: readonly string[], known: readonly Migration[]): Migration[] {
  const done = new Set(applied);
  return known.filter((migration) => !done.has(migration.name));
}

export interface MigrateOptions {
  readonly db: BetterSqlite3.Database;
  readonly migrations: readonly Migration[];
  readonly busyTimeoutMs: number;
  readonly filename: string;
}

/**
 * Applies the pending migrations, each in its own BEGIN IMMEDIATE transaction. Safe when
 * several processes open a new file at once: the applied list is re-read under the write
 * lock, so whoever gets the lock second finds the work done. Each migration runs
 * synchronously from BEGIN to COMMIT, so two opens sharing one connection cannot interleave
 * inside it. Refuses (SCHEMA_TOO_NEW) a database that records an unknown migration before
 * changing anything.
 * @returns the names applied by this call
 */
export async function migrate(options: MigrateOptions): Promise<string[]> {
  const { db, migrations, filename } = options;
  const before = appliedMigrations(db);
  assertKnown(before, migrations, filename);
  if (pendingMigrations(before, migrations).length === 0) return [];
  const appliedNow: string[] = [];
  for (;;) {
    const next = await retryWhileBusy({ timeoutMs: options.busyTimeoutMs, operation: 'migrate' }, () =>
      applyNext(db, migrations, filename),
    );
    if (next === undefined) return appliedNow;
    appliedNow.push(next);
  }
}

/** Applies the first pending migration in one synchronous transaction; its name, or undefined when none is left. */
function applyNext(db: BetterSqlite3.Database, migrations: readonly Migration[], filename: string): string | undefined {
  db.exec('BEGIN IMMEDIATE');
  try {
    const applied = appliedMigrations(db);
    assertKnown(applied, migrations, filename);
    const migration = pendingMigrations(applied, migrations)[0];
    if (migration !== undefined) {
      // A multi-statement file needs exec(); it runs on this same connection, inside the transaction.
      try {
        db.exec(migration.sql);
      } catch (error) {
        if (isBusyError(error)) throw error;
        throw Object.assign(
          new Error(`SQLite migration ${migration.name} failed and was rolled back: ${String(error)}`, { cause: error }),
          { migration: migration.name },
        );
      }
      compiledQueries().record.prepare(db).run({ name: migration.name, applied_at: new Date().toISOString() });
    }
    db.exec('COMMIT');
    return migration?.name;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

