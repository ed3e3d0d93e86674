// STUB: the SQLite store (issue 3) replaces this file. The exported names and option
// types below are the agreed contract the CLI builds against.
import type BetterSqlite3 from 'better-sqlite3';
import type { RegistryOptions, ToolRegistry } from '../registry.js';

export interface SqliteToolRegistryOptions extends RegistryOptions {
  /** A path, or `':memory:'`. Exactly one of `filename` and `database`. */
  readonly filename?: string;
  /** An open better-sqlite3 handle; `close()` leaves it open. */
  readonly database?: BetterSqlite3.Database;
  /** How long a write waits for the lock before `STORAGE_BUSY`. Default 5000. */
  readonly busyTimeoutMs?: number;
  /** For files the store opens itself. Default `'full'`. */
  readonly synchronous?: 'full' | 'normal';
  /** Open without migrating or writing; every write fails with `READ_ONLY`. The file must exist. */
  readonly readonly?: boolean;
}

/** What `status()` reports (the CLI's `status`). */
export interface SqliteStatus {
  /** The database file's path, or `':memory:'`. */
  readonly filename: string;
  /** The name of the last applied migration, such as `0001_init`. */
  readonly schemaVersion: string;
  readonly appliedMigrations: readonly string[];
  readonly tools: number;
  readonly enabled: number;
  readonly disabled: number;
  /** Rows in the spec history (every distinct spec ever registered under a current or former name). */
  readonly specHistory: number;
  readonly journalMode: string;
}

/** One problem `verify()` found. */
export interface VerifyProblem {
  readonly kind: 'integrity' | 'contract' | 'fingerprint' | 'reference';
  readonly tool_name?: string;
  readonly message: string;
}

/** What `verify()` reports: `ok` when `PRAGMA integrity_check` says ok and every row meets the contracts. */
export interface VerifyReport {
  readonly ok: boolean;
  readonly checkedTools: number;
  readonly problems: readonly VerifyProblem[];
}

export interface SqliteToolRegistry extends ToolRegistry {
  status(): Promise<SqliteStatus>;
  verify(): Promise<VerifyReport>;
}

export async function openSqliteToolRegistry(_options: SqliteToolRegistryOptions): Promise<SqliteToolRegistry> {
  throw new Error('not implemented yet (issue 3)');
}
