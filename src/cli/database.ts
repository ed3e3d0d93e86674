// Opening the database: read-only commands never create or migrate it.
import { stat } from 'node:fs/promises';
import { ToolRegistryError, isConnectionFailure, openSqliteToolRegistry } from '../index.js';
import type { CallRetention, PostgresToolRegistry, SqliteToolRegistry } from '../index.js';
import { CliError, describeSystemError } from './errors.js';

/** A registry the command opened: SQLite (a file) or PostgreSQL (a URL). */
export type CliRegistry = SqliteToolRegistry | PostgresToolRegistry;

/** Whether `--db` names a PostgreSQL database (`postgres://…` or `postgresql://…`) rather than a file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

/**
 * The connection string and schema of a PostgreSQL `--db`: `?schema=name` picks the registry's
 * schema (default tool_registry) and is not passed on to the server.
 */
export function postgresTarget(database: string): { connectionString: string; schema: string | undefined } {
  const url = new URL(database);
  const schemas = url.searchParams.getAll('schema');
  // Two registries named at once: which one was meant must not be guessed.
  if (schemas.length > 1) throw new Error(`?schema= is given ${schemas.length} times (${schemas.map((name) => JSON.stringify(name)).join(', ')}); give it once`);
  const schema = schemas[0];
  url.searchParams.delete('schema');
  return { connectionString: url.toString(), schema };
}

/** The URL without its password, for messages. */
export function describeDatabase(database: string): string {
  if (!isPostgresUrl(database)) return database;
  const url = new URL(database);
  if (url.password !== '') url.password = '***';
  return url.toString();
}

/** What a command may pass on to the store it opens for writing: the audit log's bounds. */
export interface OpenOptions {
  readonly callRetention?: Partial<CallRetention>;
}

async function openPostgres(database: string, readonly: boolean, options: OpenOptions = {}): Promise<PostgresToolRegistry> {
  let target: { connectionString: string; schema: string | undefined };
  try {
    target = postgresTarget(database);
  } catch (error) {
    // Not parsed, so describeDatabase cannot hide the password: hide whatever stands before '@'.
    const shown = database.replace(/^([^:]+:\/\/)[^@/]*@/, '$1***@');
    throw new CliError('USAGE', `the database ${shown} is not a valid PostgreSQL URL: ${(error as Error).message}`, { cause: error });
  }
  const { connectionString, schema } = target;
  try {
    // node-postgres is loaded by the first PostgreSQL store (src/node-postgres.ts), never by a SQLite command.
    // One command, one read: no cache to keep coherent.
    const { openPostgresToolRegistry } = await import('./postgres-store.js');
    return await openPostgresToolRegistry({ ...options, connectionString, readonly, cache: false, ...(schema === undefined ? {} : { schema }) });
  } catch (caught) {
    const error = driverError(caught);
    if (error instanceof CliError) throw new CliError(error.code, `cannot open database ${describeDatabase(database)}: ${error.message}`, { cause: caught });
    if (error instanceof ToolRegistryError && error.code === 'READ_ONLY' && error.context.method === 'openPostgresToolRegistry') {
      // The store's message names no database: say which schema could not be made.
      const why = error.cause instanceof Error ? error.cause.message : String(error.cause);
      // The migrations a new release must apply first, when the store names them.
      const pending = typeof error.context.detail === 'string' && error.context.detail.includes(' needs migrations ') ? `; ${error.context.detail}` : '';
      throw new CliError(
        'READ_ONLY',
        `cannot create or migrate the registry schema ${schema ?? 'tool_registry'} in ${describeDatabase(database)}: the server refuses this role's writes (${why}); nothing was changed${pending}`,
        { cause: error },
      );
    }
    if (error instanceof ToolRegistryError) throw error;
    // The options come from the URL (?schema=): a bad one is the user's value, not a bug.
    if (error instanceof TypeError) throw new CliError('USAGE', `the database URL ${describeDatabase(database)}: ${error.message}`, { cause: error });
    const pending = (error as { pendingMigrations?: unknown }).pendingMigrations;
    if (Array.isArray(pending)) {
      const where = `the registry schema ${schema ?? 'tool_registry'} in ${describeDatabase(database)}`;
      // No registry there at all is the missing file's case; one an older release migrated
      // is the old file's case (IO_ERROR, naming what is missing), as for SQLite.
      // Migrations apply in order from 0001: the first one pending means none was applied.
      if (pending.some((name) => typeof name === 'string' && name.startsWith('0001_'))) {
        throw new CliError(
          'DATABASE_NOT_FOUND',
          `${where} does not exist or holds no registry; read-only commands never create one (run "tool-registry migrate" or register a tool first)`,
        );
      }
      throw new CliError(
        'IO_ERROR',
        `cannot open ${where} read-only: it is not a tool-registry schema of this release ` +
          `(missing migrations: ${pending.join(', ')}); run "tool-registry migrate" to migrate it`,
        { cause: error },
      );
    }
    const reason = error instanceof Error ? describeSystemError(error) : String(error);
    throw new CliError('IO_ERROR', `cannot open database ${describeDatabase(database)}: ${reason}`, { cause: error });
  }
}

/**
 * A failure to open the file (not a database, a missing folder, no permission) is the
 * file's problem, reported as IO_ERROR; the registry's own errors (SCHEMA_TOO_NEW) pass.
 * A WAL database in a folder this process may not write (SQLite cannot create the `-shm`
 * file beside it) is READ_ONLY for a command that writes, and an IO_ERROR that says so for
 * one that reads.
 */
export function openFailure(filename: string, error: unknown, access: 'readonly' | 'readwrite'): unknown {
  if (error instanceof ToolRegistryError || error instanceof CliError || !(error instanceof Error)) return error;
  // The store wraps the driver's error; its cause says what was wrong.
  const inner = error.cause instanceof Error ? error.cause : error;
  if ((inner as { code?: unknown }).code === 'SQLITE_READONLY_DIRECTORY') {
    const folder = `its folder cannot be written by this process, and SQLite must create ${filename}-shm there to use a WAL database (SQLITE_READONLY_DIRECTORY)`;
    if (access === 'readwrite') return new CliError('READ_ONLY', `cannot write database ${filename}: ${folder}; nothing was changed`, { cause: error });
    return new CliError(
      'IO_ERROR',
      `cannot read database ${filename}: ${folder}; run the command as the file's owner, or while the service has the file open`,
      { cause: error },
    );
  }
  const reason = describeSystemError(inner);
  const message = reason.startsWith('cannot open') ? reason : `cannot open database ${filename}: ${reason}`;
  return new CliError('IO_ERROR', message, { cause: error });
}

/** A database path naming a folder, a FIFO or a device: SQLite said "disk I/O error" of it, and left a journal beside it. */
export function notRegularFile(filename: string): CliError {
  return new CliError('IO_ERROR', `cannot open database ${filename}: it is not a regular file`);
}

/**
 * Opens an existing database read-only.
 * @throws DATABASE_NOT_FOUND when the file does not exist (nothing is created), IO_ERROR
 *   when it is not a readable database, SCHEMA_TOO_NEW
 */
export async function openReadOnly(filename: string): Promise<CliRegistry> {
  if (isPostgresUrl(filename)) return openPostgres(filename, true);
  try {
    const info = await stat(filename);
    if (!info.isFile()) throw notRegularFile(filename);
  } catch (error) {
    if (error instanceof CliError) throw error;
    if ((error as { code?: unknown }).code === 'ENOENT') {
      throw new CliError(
        'DATABASE_NOT_FOUND',
        `database ${filename} does not exist; read-only commands never create one (run "tool-registry migrate" or register a tool first)`,
      );
    }
    throw new CliError('IO_ERROR', `cannot open database ${filename}: ${describeSystemError(error)}`, { cause: error });
  }
  try {
    return await openSqliteToolRegistry({ filename, readonly: true });
  } catch (error) {
    throw openFailure(filename, error, 'readonly');
  }
}

/** Opens the database for writing, creating and migrating it as needed. */
export async function openReadWrite(filename: string, options: OpenOptions = {}): Promise<CliRegistry> {
  if (isPostgresUrl(filename)) return openPostgres(filename, false, options);
  // As for a read: SQLite opened a FIFO, a device or a folder and failed with "disk I/O error"
  // or "unable to open", and left a journal beside it (`migrate --db /dev/null`: /dev/null-journal).
  const info = await stat(filename).catch(() => undefined);
  if (info !== undefined && !info.isFile()) throw notRegularFile(filename);
  try {
    return await openSqliteToolRegistry({ ...options, filename });
  } catch (error) {
    throw openFailure(filename, error, 'readwrite');
  }
}

/** SQLite's codes for a file that cannot be read or written as a database (damaged, full, gone). */
const FILE_FAILURE = /^SQLITE_(CORRUPT|NOTADB|IOERR|FULL|CANTOPEN|READONLY|PERM)/;

/**
 * PostgreSQL's counterpart: SQLSTATE classes of the server or the connection failing, never of
 * our statements: connection exception (08), insufficient resources (53: disk full, too many
 * connections), operator intervention (57: pg_terminate_backend, shutdown, a cancel), system
 * error (58) and data corrupted (XX001, XX002).
 */
const SERVER_FAILURE = /^(08|53|57|58|XX00[12])/;
const SQLSTATE = /^[0-9A-Z]{5}$/;

/** The code to name in the message when `error` is the database failing (not our statement), else undefined. */
export function storageFailureCode(database: string, error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  if (!isPostgresUrl(database)) return typeof code === 'string' && FILE_FAILURE.test(code) ? code : undefined;
  // A lost connection first: node's EPIPE has the shape of a SQLSTATE (five capitals) but is none.
  if (isConnectionFailure(error)) return typeof code !== 'string' ? 'connection lost' : SERVER_FAILURE.test(code) ? `SQLSTATE ${code}` : code;
  return typeof code === 'string' && SQLSTATE.test(code) && SERVER_FAILURE.test(code) ? `SQLSTATE ${code}` : undefined;
}

/**
 * The driver's error under a STORAGE_UNAVAILABLE (the server or the connection went away), which
 * the command reports as IO_ERROR like any failure of its database; anything else as it is.
 */
function driverError(error: unknown): unknown {
  if (!(error instanceof ToolRegistryError) || error.code !== 'STORAGE_UNAVAILABLE') return error;
  // The server or the connection went away: the driver's error says it, with its code.
  if (error.cause instanceof Error && isConnectionFailure(error.cause)) return error.cause;
  // The store's own diagnosis (a role that may not read the schema, a schema dropped while the
  // command ran), which names the schema and what is missing: its message, as IO_ERROR. The
  // driver's error alone was printed as INTERNAL with a stack. The open's (a database or role
  // the server does not know) without its "open: ": the command says "cannot open database …".
  const message = error.context.operation === 'open' ? error.message.replace(/^open: /, '') : error.message;
  return new CliError('IO_ERROR', message, { cause: error });
}

/**
 * A failure of the database itself, met after it opened (SQLite: pages damaged since, a full
 * disk; PostgreSQL: the connection ended, the server shut down or ran out of space), is
 * IO_ERROR like a database that cannot be opened, on every store; anything else passes unchanged.
 */
export function storageFailure(database: string, caught: unknown): unknown {
  const error = driverError(caught);
  // The command's own errors (VERIFY_FAILED with its details) pass as they are; only the store's diagnosis gets the database named.
  if (error instanceof CliError && error !== caught) return new CliError(error.code, `database ${describeDatabase(database)}: ${error.message}`, { cause: caught });
  if (error instanceof CliError) return error;
  if (error instanceof ToolRegistryError || !(error instanceof Error)) return error;
  const code = storageFailureCode(database, error);
  if (code === undefined) return error;
  return new CliError('IO_ERROR', `database ${describeDatabase(database)}: ${error.message} (${code})`, { cause: error });
}

/**
 * Runs `work` with the registry open and always closes it. `existing`: a write that can only
 * change a tool already stored (enable, disable, remove, deprecate, undeprecate); on a SQLite
 * file that does not exist it runs against an empty registry in memory, so it fails
 * (TOOL_NOT_FOUND) or does nothing (`remove`) exactly as on an empty file, and creates none (a
 * mistyped --db left an empty database behind).
 */
export async function withRegistry<T>(
  filename: string,
  access: 'readonly' | 'readwrite' | 'existing',
  work: (registry: CliRegistry) => Promise<T>,
): Promise<T> {
  const missing = access === 'existing' && !isPostgresUrl(filename) && (await stat(filename).then(() => false, (error: unknown) => (error as { code?: unknown }).code === 'ENOENT'));
  const registry = access === 'readonly' ? await openReadOnly(filename) : missing ? await openSqliteToolRegistry({ filename: ':memory:' }) : await openReadWrite(filename);
  try {
    return await work(registry);
  } catch (error) {
    throw storageFailure(filename, error);
  } finally {
    await registry.close();
  }
}
