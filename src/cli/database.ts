// Opening the database: read-only commands never create or migrate it.
import { stat } from 'node:fs/promises';
import { ToolRegistryError } from '../core/errors.js';
import { openSqliteToolRegistry } from '../stores/sqlite/sqlite-tool-registry.js';
import type { SqliteToolRegistry } from '../stores/sqlite/sqlite-tool-registry.js';
import { CliError, describeSystemError } from './errors.js';

/**
 * A failure to open the file (not a database, a missing folder, no permission) is the
 * file's problem, reported as IO_ERROR; the registry's own errors (SCHEMA_TOO_NEW) pass.
 */
function openFailure(filename: string, error: unknown): unknown {
  if (error instanceof ToolRegistryError || !(error instanceof Error)) return error;
  // The store wraps the driver's error; its cause says what was wrong.
  const inner = error.cause instanceof Error ? error.cause : error;
  const reason = describeSystemError(inner);
  const message = reason.startsWith('cannot open') ? reason : `cannot open database ${filename}: ${reason}`;
  return new CliError('IO_ERROR', message, { cause: error });
}

/**
 * Opens an existing database read-only.
 * @throws DATABASE_NOT_FOUND when the file does not exist (nothing is created), IO_ERROR
 *   when it is not a readable database, SCHEMA_TOO_NEW
 */
export async function openReadOnly(filename: string): Promise<SqliteToolRegistry> {
  try {
    const info = await stat(filename);
    if (!info.isFile()) throw new CliError('IO_ERROR', `cannot open database ${filename}: it is not a regular file`);
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
    throw openFailure(filename, error);
  }
}

/** Opens the database for writing, creating and migrating it as needed. */
export async function openReadWrite(filename: string): Promise<SqliteToolRegistry> {
  try {
    return await openSqliteToolRegistry({ filename });
  } catch (error) {
    throw openFailure(filename, error);
  }
}

/** Runs `work` with the registry open and always closes it. */
export async function withRegistry<T>(
  filename: string,
  access: 'readonly' | 'readwrite',
  work: (registry: SqliteToolRegistry) => Promise<T>,
): Promise<T> {
  const registry = access === 'readonly' ? await openReadOnly(filename) : await openReadWrite(filename);
  try {
    return await work(registry);
  } finally {
    await registry.close();
  }
}
