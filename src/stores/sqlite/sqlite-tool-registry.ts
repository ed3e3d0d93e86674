// The SQLite store: better-sqlite3 for the connection, Kysely-built statements prepared once,
// every write one BEGIN IMMEDIATE transaction retried asynchronously while the lock is busy.
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { checkStoredRow } from '../../core/stored-row.js';
import type { StoreStatus, StoreVerifyProblem, StoreVerifyReport } from '../../core/stored-row.js';
import type { ToolRegistration as ToolRegistrationType } from '../../core/contracts.js';
import { BaseToolRegistry, refuseUnknownOptions, runPlanSync } from '../../core/base-tool-registry.js';
import type { ChangeLogPage, FollowRead, StoredTool, StoreReader, StoreScope, StoreWriter, WritePlan } from '../../core/base-tool-registry.js';
import type { SearchHead } from '../../core/search/registry-search.js';
import { logMark, logReplaced } from '../../core/change-log-mark.js';
import { ReadOnlyError, RegistryClosedError } from '../../core/errors.js';
import type { ChangeAction, ChangeEvent, HistoryEntry, RegistryOptions, ToolRegistry } from '../../core/registry.js';
import { materializeSpec } from '../../core/validation.js';
import { policyOf } from '../../core/versions.js';
import type { RegistryPolicy } from '../../core/versions.js';
import type { ToolRecord } from '../../core/rules.js';
import { busyInCallersTransaction, isBusyError, retryWhileBusy, storageBusy, SYNC_BUSY_TIMEOUT_MS } from './busy.js';
import { isDamagedFile, isReadOnlyStorage } from './file-errors.js';
import { watchDatabaseFiles } from './file-wakeup.js';
import type { DatabaseFilesWatch } from './file-wakeup.js';
import { appliedMigrations, assertKnown, migrate, pendingMigrations, shippedMigrations } from './migrations.js';
import { GroupCommit } from './group-commit.js';
import type { BatchObserver } from './group-commit.js';
import { SqliteReadCache } from './read-cache.js';
import type { OwnWrite } from './read-cache.js';
import { callsStatement, prepareCommitMarks, prepareStatements, toRecord, toRegistration } from './statements.js';
import type { CallFilters, CommitMarks, Statements, ToolCallsRow } from './statements.js';
import type { Statement } from './statement.js';
import { resolveCallRetention, upstreamFromRow, upstreamToRow } from '../../core/upstreams.js';
import type { CallPrune, CallRecord, CallRecordInput, CallRetention, ParsedCallsQuery, Upstream } from '../../core/upstreams.js';

export interface SqliteToolRegistryOptions extends RegistryOptions {
  /** A path, or `':memory:'`. Exactly one of `filename` and `database`. */
  readonly filename?: string;
  /**
   * An open better-sqlite3 handle; `close()` leaves it open, and its journal mode and
   * `synchronous` are left alone. The store sets `busy_timeout` and `foreign_keys = ON` on
   * it and puts back your values when the last registry over it closes. Inside a
   * transaction you opened on it, the registry's reads and writes join yours as a
   * savepoint, and a lock they cannot get there is `STORAGE_BUSY` at once (no waiting).
   */
  readonly database?: BetterSqlite3.Database;
  /** How long a read or a write waits for a lock before `STORAGE_BUSY`. Default 5000. */
  readonly busyTimeoutMs?: number;
  /** For files the store opens itself. Default `'full'`. */
  readonly synchronous?: 'full' | 'normal';
  /** Open without migrating or writing; every write fails with `READ_ONLY`. The file must exist. */
  readonly readonly?: boolean;
  /**
   * Serve reads from memory. Default `true`. Never stale: each read first asks SQLite, in two
   * tiny statements, whether any connection committed since, and then reloads only the tools
   * that changed (a trigger-kept change log, migrations 0002 and 0003), or everything when
   * the log is not the one it followed (a restored backup). The registry's own writes are
   * applied to it once committed. `false` reads through SQL every time.
   */
  readonly cache?: boolean;
}

/** What `status()` reports (the CLI's `status`). */
export interface SqliteStatus extends StoreStatus {
  /** The database file's path, or `':memory:'`. */
  readonly filename: string;
  readonly journalMode: string;
  /** This connection's `PRAGMA synchronous`: `'off'`, `'normal'`, `'full'` or `'extra'`. */
  readonly synchronous: string;
  /** This connection's `PRAGMA journal_size_limit` in bytes (-1: no limit). */
  readonly journalSizeLimit: number;
  /** This connection's `PRAGMA wal_autocheckpoint` in pages (0: off). */
  readonly walAutocheckpoint: number;
}

/** One problem `verify()` found (`integrity`: `PRAGMA integrity_check`; `reference`: `PRAGMA foreign_key_check`). */
export type VerifyProblem = StoreVerifyProblem<'integrity' | 'reference'>;

/** What `verify()` reports: `ok` when `PRAGMA integrity_check` says ok and every row meets the contracts. */
export type VerifyReport = StoreVerifyReport<VerifyProblem>;

export interface SqliteToolRegistry extends ToolRegistry {
  /** Counts, applied migrations and journal mode, for operators and the CLI. */
  status(): Promise<SqliteStatus>;
  /**
   * Checks the file: `PRAGMA integrity_check`, `PRAGMA foreign_key_check`, and that every
   * current row's spec parses, meets the `ToolRegistration` contract, and that its fingerprint
   * is the SHA-256 of the canonical form of the stored text (the text keeps the registered key order). Never throws for a problem found; reports it.
   */
  verify(): Promise<VerifyReport>;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;
/**
 * How often a watch asks SQLite whether anything was committed: every 50 ms after a change,
 * twice as long after each quiet look, up to 250 ms. Each look is a timer wake-up, which on a
 * virtual machine can cost more than the look itself. Where the database's folder can be
 * watched (file-wakeup.ts), a write to the file starts the 50 ms looks over and the timer only
 * backs up the file events, up to once every 10 s: an idle watch then hardly wakes. Once the
 * timer finds another connection's commit that no file event announced (a file system that
 * does not report writes), the poller stops counting on the events: up to 250 ms again.
 */
const WATCH_POLL_MS = 50;
const WATCH_POLL_MAX_MS = 250;
const WATCH_POLL_MAX_WITH_FILE_EVENTS_MS = 10_000;
/** How long after a file event a commit the timer finds still counts as announced by it (a slow fsync). */
const FILE_EVENT_GRACE_MS = 5_000;
/** Bytes the -wal file is truncated to after a checkpoint. */
const JOURNAL_SIZE_LIMIT = 16 * 1024 * 1024;
/** Pages written before an automatic checkpoint (SQLite's default, set explicitly). */
const WAL_AUTOCHECKPOINT_PAGES = 1000;

const SYNCHRONOUS_NAMES = ['off', 'normal', 'full', 'extra'];

/** The upstream rows `_getUpstream` keeps between two commits (by name). */
const UPSTREAM_ROWS_KEPT = 64;

/** A watch waiting for the revision to pass `revision`. */
interface Waiter {
  readonly revision: number;
  readonly wake: () => void;
}

interface ResolvedOptions {
  readonly filename: string | undefined;
  readonly database: BetterSqlite3.Database | undefined;
  readonly busyTimeoutMs: number;
  readonly synchronous: 'full' | 'normal';
  readonly readonly: boolean;
  readonly cache: boolean;
  readonly clock: (() => Date) | undefined;
  readonly callRetention: CallRetention;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return typeof value;
}

/** Every option `openSqliteToolRegistry` takes (any other is refused). */
const SQLITE_OPTIONS = ['filename', 'database', 'busyTimeoutMs', 'synchronous', 'readonly', 'cache', 'clock', 'callRetention'] as const satisfies readonly (keyof SqliteToolRegistryOptions)[];

function resolveOptions(options: unknown): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`openSqliteToolRegistry(): options must be an object, got ${describe(options)}`);
  }
  refuseUnknownOptions('openSqliteToolRegistry', options, SQLITE_OPTIONS);
  const {
    filename,
    database,
    busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS,
    synchronous = 'full',
    readonly = false,
    cache = true,
    clock,
    callRetention,
  } = options as SqliteToolRegistryOptions;
  if ((filename === undefined) === (database === undefined)) {
    throw new TypeError('openSqliteToolRegistry(): give exactly one of filename and database');
  }
  if (filename !== undefined && (typeof filename !== 'string' || filename === '')) {
    throw new TypeError(`openSqliteToolRegistry(): filename must be a non-empty string, got ${describe(filename)}`);
  }
  if (
    database !== undefined &&
    (typeof database !== 'object' ||
      database === null ||
      typeof (database as { prepare?: unknown }).prepare !== 'function' ||
      typeof (database as { exec?: unknown }).exec !== 'function')
  ) {
    throw new TypeError(`openSqliteToolRegistry(): database must be a better-sqlite3 Database, got ${describe(database)}`);
  }
  if (database !== undefined && !database.open) {
    throw new TypeError('openSqliteToolRegistry(): database must be open, got a closed better-sqlite3 Database');
  }
  if (typeof busyTimeoutMs !== 'number' || !Number.isFinite(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new TypeError(`openSqliteToolRegistry(): busyTimeoutMs must be a finite number >= 0, got ${describe(busyTimeoutMs)}`);
  }
  if (synchronous !== 'full' && synchronous !== 'normal') {
    throw new TypeError(`openSqliteToolRegistry(): synchronous must be 'full' or 'normal', got ${describe(synchronous)}`);
  }
  if (typeof readonly !== 'boolean') {
    throw new TypeError(`openSqliteToolRegistry(): readonly must be a boolean, got ${describe(readonly)}`);
  }
  if (readonly && filename === ':memory:') {
    throw new TypeError("openSqliteToolRegistry(): readonly cannot be used with filename ':memory:' (it would be empty)");
  }
  if (typeof cache !== 'boolean') {
    throw new TypeError(`openSqliteToolRegistry(): cache must be a boolean, got ${describe(cache)}`);
  }
  if (clock !== undefined && typeof clock !== 'function') {
    throw new TypeError(`openSqliteToolRegistry(): clock must be a function, got ${describe(clock)}`);
  }
  return { filename, database, busyTimeoutMs, synchronous, readonly, cache, clock, callRetention: resolveCallRetention(callRetention) };
}

function openFile(options: ResolvedOptions, filename: string): BetterSqlite3.Database {
  try {
    return new Database(filename, options.readonly ? { readonly: true, fileMustExist: true } : {});
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = code === 'SQLITE_CANTOPEN' && options.readonly ? 'it does not exist or cannot be read' : String(error);
    throw new Error(`cannot open the SQLite registry ${filename}${options.readonly ? ' read-only' : ''}: ${why}`, {
      cause: error,
    });
  }
}

/**
 * Opens (creating and migrating when needed) a registry kept in SQLite: a file several
 * processes may share, `':memory:'`, or a better-sqlite3 handle you own (`database`; left
 * open by `close()`, its journal mode and `synchronous` untouched). Files the store opens
 * get WAL, `synchronous=FULL` (or `'normal'`), `foreign_keys=ON` and a bounded WAL.
 * Every write is one `BEGIN IMMEDIATE` transaction; a lock not obtained within
 * `busyTimeoutMs` (default 5000) is `STORAGE_BUSY`, for reads too. `readonly: true` opens an existing,
 * migrated file without writing anything; writes then fail with `READ_ONLY`.
 * @throws TypeError for bad options, SCHEMA_TOO_NEW for a database migrated by a newer
 *   release (left untouched), STORAGE_BUSY when migrating could not get the lock in time
 */
export async function openSqliteToolRegistry(options: SqliteToolRegistryOptions): Promise<SqliteToolRegistry> {
  const resolved = resolveOptions(options);
  const owned = resolved.database === undefined;
  const db = resolved.database ?? openFile(resolved, resolved.filename as string);
  try {
    return await SqliteToolRegistryImpl.open(db, owned, resolved);
  } catch (error) {
    if (owned && db.open) db.close();
    // SQLite's own errors (not a database, disk I/O...) say which file; ours pass unchanged.
    if (error instanceof Database.SqliteError) {
      const where = resolved.filename ?? (db.memory ? ':memory:' : db.name);
      throw new Error(`cannot open the SQLite registry ${where}: ${error.message} (${error.code})`, { cause: error });
    }
    throw error;
  }
}

/** What the store changes on a caller's handle, as the caller had it, and how many registries use the handle. */
interface BorrowedHandle {
  users: number;
  readonly busyTimeout: number;
  readonly foreignKeys: number;
}

const borrowed = new WeakMap<BetterSqlite3.Database, BorrowedHandle>();

/** Notes the caller's pragmas before the first registry over `db` changes them. */
function borrowHandle(db: BetterSqlite3.Database): void {
  const known = borrowed.get(db);
  if (known !== undefined) {
    known.users++;
    return;
  }
  borrowed.set(db, {
    users: 1,
    busyTimeout: Number(db.pragma('busy_timeout', { simple: true })),
    foreignKeys: Number(db.pragma('foreign_keys', { simple: true })),
  });
}

/** The last registry over `db` to close puts the caller's pragmas back. */
function releaseHandle(db: BetterSqlite3.Database): void {
  const known = borrowed.get(db);
  if (known === undefined || --known.users > 0) return;
  borrowed.delete(db);
  if (!db.open) return;
  db.pragma(`busy_timeout = ${known.busyTimeout}`);
  // A no-op inside the caller's transaction (SQLite's rule); the caller's own setting then stays ON.
  db.pragma(`foreign_keys = ${known.foreignKeys === 1 ? 'ON' : 'OFF'}`);
}

class SqliteToolRegistryImpl extends BaseToolRegistry implements SqliteToolRegistry {
  readonly #db: BetterSqlite3.Database;
  readonly #owned: boolean;
  readonly #readonly: boolean;
  readonly #busyTimeoutMs: number;
  readonly #sql: Statements;
  /** Set once close() has let the calls made before it finish: their later steps are refused from then on. */
  #released = false;
  readonly #beginRead: BetterSqlite3.Statement;
  readonly #beginWrite: BetterSqlite3.Statement;
  readonly #commit: BetterSqlite3.Statement;
  readonly #rollback: BetterSqlite3.Statement;
  readonly #cache: SqliteReadCache | undefined;
  readonly #group: GroupCommit;
  /** A reader over the cache (built once: every read would build the same). */
  readonly #cachedReader: StoreReader | undefined;
  /** The batch transaction being written now, when the cache follows it (see `OwnWrite`). */
  #own: OwnWrite | undefined;
  /** Write statements started by `#writer()`'s writes, ever: group commit's "did the call write?". */
  #writes = 0;
  /** Whether any connection committed since the last look (the watch poller's). */
  readonly #commitMarks: () => CommitMarks;
  /** Watches started inside the caller's transaction, waiting for it to end (`_revision`). */
  readonly #starts = new Set<() => void>();
  /** Watches waiting for a commit past their revision, and the poller's state. */
  readonly #waiting = new Set<Waiter>();
  #pollTimer: NodeJS.Timeout | undefined;
  #pollDelay = WATCH_POLL_MS;
  #lookScheduled = false;
  #seen: CommitMarks = { dataVersion: -1, totalChanges: -1 };
  /** The last revision page read (`changes({ limit: 0 })`) and the commit marks it was read under. */
  #heads: { readonly marks: CommitMarks; readonly page: ChangeLogPage } | undefined;
  /**
   * Upstream rows read by name (`_getUpstream`, which a serving gateway asks at each upstream
   * call) and the commit marks they were read under: read again after any commit. At most
   * `UPSTREAM_ROWS_KEPT` names; the rows are frozen, so they are shared.
   */
  #upstreamRows: { readonly marks: CommitMarks; readonly rows: Map<string, Upstream | undefined> } | undefined;
  /** `_searchRevision`'s last answer, for the `#heads` page it was read at. */
  #searchHead: { readonly page: ChangeLogPage; readonly head: SearchHead } | undefined;
  /** The file, resolved at open (the working folder may change later); undefined in memory. */
  readonly #path: string | undefined;
  /** Write events of the database's files, started by the first watch. */
  #files: DatabaseFilesWatch | undefined;
  #filesTried = false;
  /** When the last file event came (performance.now()); undefined before the first. */
  #lastFileEventAt: number | undefined;
  /** The timer found another connection's commit that no file event announced: the events are not to be counted on. */
  #fileEventsMissed = false;

  private constructor(db: BetterSqlite3.Database, owned: boolean, options: ResolvedOptions) {
    super(options.clock === undefined ? { callRetention: options.callRetention } : { clock: options.clock, callRetention: options.callRetention });
    this.#db = db;
    this.#owned = owned;
    this.#readonly = options.readonly || db.readonly;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#sql = prepareStatements(db);
    this.#beginRead = db.prepare('BEGIN');
    this.#beginWrite = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#commitMarks = prepareCommitMarks(db);
    this.#path = db.memory || db.name === '' ? undefined : resolve(db.name);
    const sql = this.#sql;
    const cache = options.cache
      ? new SqliteReadCache(db, { row: (toolName) => sql.findRow.get({ tool_name: toolName }), rows: () => sql.rows.iterate() })
      : undefined;
    this.#cache = cache;
    this.#cachedReader = cache === undefined ? undefined : { ...cache.reader(), revision: () => this.#head(), policy: () => this.#policy() };
    // With the cache on, each batch transaction the store opens itself is followed, and its
    // changes are applied to the cache once it committed: the next read has nothing to catch up on.
    const observer: BatchObserver | undefined =
      cache === undefined
        ? undefined
        : {
            // A batch that changes only tools the cache does not hold is not followed: nothing
            // of it would be kept, and the next read's catch-up moves the cache past it.
            begun: (names) => {
              this.#own = names !== undefined && !names.some((name) => cache.holds(name)) ? undefined : cache.beginWrite();
            },
            mark: () => this.#own?.mark() ?? 0,
            undone: (mark) => this.#own?.undo(mark),
            committing: () => {
              if (this.#own !== undefined) cache.finishWrite(this.#own);
            },
            committed: () => {
              if (this.#own !== undefined) cache.applyWrite(this.#own);
              this.#own = undefined;
            },
            abandoned: () => {
              this.#own = undefined;
            },
          };
    this.#group = new GroupCommit(db, {
      busyTimeoutMs: options.busyTimeoutMs,
      assertOpen: (method) => this.#assertCallable(method),
      writes: () => this.#writes,
      ...(observer === undefined ? {} : { observer }),
    });
  }

  static async open(db: BetterSqlite3.Database, owned: boolean, options: ResolvedOptions): Promise<SqliteToolRegistryImpl> {
    const filename = db.memory ? ':memory:' : db.name;
    const readonly = options.readonly || db.readonly;
    if (!owned) borrowHandle(db);
    try {
      return await SqliteToolRegistryImpl.#open(db, owned, options, filename, readonly);
    } catch (error) {
      if (!owned) releaseHandle(db);
      throw error;
    }
  }

  static async #open(
    db: BetterSqlite3.Database,
    owned: boolean,
    options: ResolvedOptions,
    filename: string,
    readonly: boolean,
  ): Promise<SqliteToolRegistryImpl> {
    // SQLite's own wait blocks the event loop: keep it short, retry asynchronously instead.
    db.pragma(`busy_timeout = ${Math.min(SYNC_BUSY_TIMEOUT_MS, Math.floor(options.busyTimeoutMs))}`);
    db.pragma('foreign_keys = ON');
    const migrations = shippedMigrations();
    // A schema from a newer release is refused before anything, the journal mode included, changes.
    const applied = await retryWhileBusy({ timeoutMs: options.busyTimeoutMs, operation: 'open' }, () =>
      appliedMigrations(db),
    );
    assertKnown(applied, migrations, filename);
    if (readonly) {
      const pending = pendingMigrations(applied, migrations);
      if (pending.length > 0) {
        // The same data as PostgreSQL's read-only open of an unmigrated schema: what is missing.
        throw Object.assign(
          new Error(
            `cannot open ${filename} read-only: it is not a tool-registry database of this release ` +
              `(missing migrations: ${pending.map((migration) => migration.name).join(', ')}); open it once read-write to migrate it`,
          ),
          { filename, pendingMigrations: pending.map((migration) => migration.name) },
        );
      }
    } else {
      if (owned && !db.memory) {
        // Switching to WAL takes the lock briefly: a new file opened by several processes at once contends here.
        await retryWhileBusy({ timeoutMs: options.busyTimeoutMs, operation: 'open' }, () => {
          const mode = db.pragma('journal_mode = WAL', { simple: true });
          if (mode !== 'wal') throw new Error(`could not switch ${filename} to WAL (journal_mode is ${String(mode)})`);
        });
        db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
        db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
        db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      }
      await migrate({ db, migrations, busyTimeoutMs: options.busyTimeoutMs, filename });
    }
    return new SqliteToolRegistryImpl(db, owned, options);
  }

  // --- reads -------------------------------------------------------------------------

  // A single-statement read needs no transaction: it sees one committed state. A read locked
  // out (rollback-journal files, or a catch-up of the cache) waits like a write does.

  protected _find(toolName: string): ToolRecord | undefined | Promise<ToolRecord | undefined> {
    return this.#whileBusy('has', () => this.#findNow(toolName));
  }

  protected _get(toolName: string): ToolRegistrationType | undefined | Promise<ToolRegistrationType | undefined> {
    return this.#whileBusy('get', () => this.#getNow(toolName));
  }

  protected _list(includeDisabled: boolean): readonly ToolRegistrationType[] | Promise<readonly ToolRegistrationType[]> {
    return this.#whileBusy('listAll', () => {
      if (this.#cache?.sync()) return this.#cache.list(includeDisabled);
      return (includeDisabled ? this.#sql.rows.all() : this.#sql.enabledRows.all()).map(toRegistration);
    });
  }

  /** From the cache when it is on and may be used (never inside a transaction), else through SQL. */
  #findNow(toolName: string): ToolRecord | undefined {
    if (this.#cache?.sync()) return this.#cache.find(toolName);
    const row = this.#sql.findRecord.get({ tool_name: toolName });
    return row === undefined ? undefined : toRecord(row);
  }

  #getNow(toolName: string): ToolRegistrationType | undefined {
    if (this.#cache?.sync()) return this.#cache.get(toolName);
    const row = this.#sql.findRegistration.get({ tool_name: toolName });
    return row === undefined ? undefined : toRegistration(row);
  }

  /**
   * Runs `attempt` now and, while the lock is busy, again asynchronously until `busyTimeoutMs`
   * (then STORAGE_BUSY). Inside the caller's own transaction it never waits: its snapshot or
   * its lock is the caller's, a retry could not succeed (SQLITE_BUSY_SNAPSHOT) and would run
   * between the caller's statements; STORAGE_BUSY at once. Each attempt is atomic.
   */
  #whileBusy<T>(operation: string, attempt: () => T): T | Promise<T> {
    try {
      return attempt();
    } catch (error) {
      if (!isBusyError(error)) throw error;
      if (this.#db.inTransaction) throw busyInCallersTransaction(operation, error);
      return retryWhileBusy(
        { timeoutMs: this.#busyTimeoutMs, operation, beforeRetry: () => this.#assertCallable(operation) },
        attempt,
      );
    }
  }

  /** Several reads in one read transaction, so they see one snapshot. */
  protected _read<T>(scope: StoreScope, work: (reader: StoreReader) => T, operation: string): T | Promise<T> {
    // The core checked for close() before its first await; the registry may have closed since.
    this.#assertOpen(operation);
    return this.#whileBusy(operation, () => {
      // A one-name read (register's identical-spec check) of a tool the cache does not hold
      // starts with one key lookup: a tool that does not exist (a new one, the usual case)
      // needs nothing more, and a write that follows decides inside its transaction as always.
      // A lone register of a new tool saves two statements and a read transaction.
      const name = 'names' in scope && scope.names.length === 1 ? (scope.names[0] as string) : undefined;
      if (name !== undefined && this.#cache?.holds(name) !== true && this.#sql.registered.get({ tool_name: name }) === undefined) {
        return work({ find: () => undefined, get: () => undefined, records: () => this.#records(), revision: () => this.#head(), policy: () => this.#policy() });
      }
      if (this.#cache?.sync()) return work(this.#cachedReader as StoreReader);
      return this.#inTransaction(this.#beginRead, () =>
        work({
          find: (toolName) => this.#findNow(toolName),
          get: (toolName) => this.#getNow(toolName),
          records: () => this.#records(),
          revision: () => this.#head(),
          policy: () => this.#policy(),
        }),
      );
    });
  }

  /**
   * For the steps of a call: a call made before close() (a search catching up its index) takes
   * its next steps while close() waits for it; only once the store is released are they refused.
   */
  #assertOpen(operation: string): void {
    if (this.#released) throw new RegistryClosedError(operation);
  }

  /**
   * Refused from close() on: a call of this store's own (status, verify), and a wait for a lock
   * (close() does not wait out busyTimeoutMs: the waiting call is REGISTRY_CLOSED).
   */
  #assertCallable(operation: string): void {
    if (this.closed) throw new RegistryClosedError(operation);
  }

  /** The registry's policies, read now (inside a write: in its transaction). */
  #policy(): RegistryPolicy {
    return policyOf(this.#sql.policy.all().map((row) => [row.name, row.value] as const));
  }

  /** The current revision: the newest change-log entry (0 before the first). */
  #head(): number {
    return this.#sql.head.get()?.revision ?? 0;
  }

  protected _revision(): number | Promise<number> {
    if (this.#db.inTransaction) return this.#revisionAfterCallersTransaction();
    // Synchronous (watch() reads it at the call); WAL readers are never locked out.
    try {
      return this.#head();
    } catch (error) {
      if (isBusyError(error)) throw storageBusy('watch', 0, 1, error);
      throw error;
    }
  }

  /**
   * A watch started inside a transaction the caller opened on its handle: this connection
   * sees that transaction's own changes, which a ROLLBACK takes back (their revisions are
   * handed out again), so the feed starts at the revision once the transaction has ended:
   * read when the next write through this registry is called, or at the next look (every
   * 50 ms), whichever comes first.
   */
  #revisionAfterCallersTransaction(): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const start = (): void => {
        this.#starts.delete(start);
        clearTimeout(timer);
        if (this.closed) return resolve(0); // the watch ends at once
        try {
          resolve(this._revision());
        } catch (error) {
          reject(error as Error);
        }
      };
      const look = (): void => {
        if (this.closed || !this.#db.inTransaction) start();
        else timer = setTimeout(look, WATCH_POLL_MS);
      };
      this.#starts.add(start);
      timer = setTimeout(look, WATCH_POLL_MS);
    });
  }

  /**
   * Resolves once no transaction is open on the connection (the caller's own, on its handle:
   * the store's own never outlive a synchronous call), or when `signal` aborts or the registry
   * closes. Looked at every 50 ms: a transaction of the caller's sends no event when it ends.
   */
  async #afterCallersTransaction(signal: AbortSignal | undefined): Promise<void> {
    while (this.#db.inTransaction && signal?.aborted !== true && !this.closed) {
      await sleep(WATCH_POLL_MS, undefined, signal === undefined ? {} : { signal }).catch(() => {});
    }
  }

  protected async _history(toolName: string): Promise<readonly HistoryEntry[]> {
    const rows = await this.#whileBusy('history', () => this.#sql.history.all({ tool_name: toolName }));
    return rows.map((row) =>
      Object.freeze({ spec: materializeSpec(row.spec_json), fingerprint: row.fingerprint, first_registered_at: row.first_registered_at }),
    );
  }

  protected async _changes(since: number, limit: number, follow?: FollowRead): Promise<ChangeLogPage> {
    this.#assertOpen('changes');
    // The revision alone (limit 0: what LiveToolSet.latest() asks before every MCP tools/call)
    // is one statement, which reads the newest and oldest revisions in one snapshot of its own.
    if (follow === undefined && limit === 0) return this.#whileBusy('changes', () => this.#revisions());
    // One read transaction: the revision, the oldest event, the page and its marks agree.
    if (follow === undefined || follow.now === true) return this.#whileBusy('changes', () => this.#inTransaction(this.#beginRead, () => this.#changesPage(since, limit, follow)));
    for (;;) {
      // A watch delivers committed events only: inside the caller's transaction on its handle
      // this connection would read that transaction's changes, which a ROLLBACK takes back.
      await this.#afterCallersTransaction(follow.signal);
      this.#assertOpen('changes');
      if (follow.signal.aborted) return { revision: since, oldestRevision: since + 1, events: [] };
      // A busy read is retried after a wait, in which the caller may have begun a transaction: then wait for it first.
      const page = await this.#whileBusy('changes', () =>
        this.#db.inTransaction ? undefined : this.#inTransaction(this.#beginRead, () => this.#changesPage(since, limit, follow)),
      );
      if (page !== undefined) return page;
    }
  }

  /**
   * Search (issue 26): the revision with the log's mark there, so that a backup restored onto
   * the file at the very revision the search index reflects is found too. Read again only
   * after a commit of any connection (`#revisions`).
   */
  protected override _searchRevision(): SearchHead | Promise<SearchHead> {
    // Inside the caller's transaction a search reads it as get() does (waiting for its end, as
    // a watch does, hung a search awaited inside it); a ROLLBACK moves the revision back or
    // hands it out again under another mark, and the index builds anew.
    if (this.#db.inTransaction) return this.#whileBusy('search', () => this.#markedHead(this.#head()));
    return this.#whileBusy('search', () => {
      const page = this.#revisions();
      if (this.#searchHead?.page === page) return this.#searchHead.head;
      const head = this.#markedHead(page.revision);
      this.#searchHead = { page, head };
      return head;
    });
  }

  #markedHead(revision: number): SearchHead {
    const at = this.#sql.markAt.get({ revision });
    return { revision, mark: logMark(at?.generation, at?.token) };
  }

  /**
   * The revisions alone. Asked before every MCP tools/call, so the last answer is kept while
   * no connection committed since (the commit marks, `PRAGMA data_version` and
   * `total_changes()`, cost about half the statement). Inside a transaction of the caller's,
   * always read.
   */
  #revisions(): ChangeLogPage {
    if (this.#db.inTransaction) return this.#changesPage(0, 0, undefined);
    const marks = this.#commitMarks();
    const known = this.#heads;
    if (known !== undefined && known.marks.dataVersion === marks.dataVersion && known.marks.totalChanges === marks.totalChanges) return known.page;
    // Read after the marks: a commit in between moves them, and the next call reads again.
    const page = this.#changesPage(0, 0, undefined);
    this.#heads = { marks, page };
    return page;
  }

  #changesPage(since: number, limit: number, follow: FollowRead | undefined): ChangeLogPage {
    const { revision, oldest } = this.#sql.revisions.get() ?? { revision: null, oldest: null };
    const head = revision ?? 0;
    const events =
      limit === 0
        ? []
        : this.#sql.events.all({ since, limit }).map((row) =>
            Object.freeze({
              revision: row.revision,
              tool_name: row.tool_name,
              action: row.action as ChangeAction,
              version: row.version,
              at: row.at ?? '',
              ...(row.rollback === 1 ? { rollback: true as const } : {}),
            }),
          );
    const page = { revision: head, oldestRevision: oldest ?? head + 1, events };
    if (follow === undefined) return page;
    const atSince = this.#sql.markAt.get({ revision: since });
    const end = events.length === limit && limit > 0 ? (events.at(-1) as ChangeEvent).revision : head;
    const atEnd = end === since ? atSince : this.#sql.markAt.get({ revision: end });
    return {
      ...page,
      mark: logMark(atEnd?.generation, atEnd?.token),
      replaced: logReplaced(follow.mark, since, atSince?.generation, atSince?.token),
    };
  }

  /**
   * One poller for every watch of this registry: each tick asks SQLite, as the read cache does
   * (`prepareCommitMarks`), whether any connection committed; only then is the revision read
   * and the watches it passed woken.
   * No busy loop: idle, the registry costs one probe per tick, however many watches wait.
   */
  protected _waitForChange(revision: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        revision,
        wake: () => {
          this.#waiting.delete(waiter);
          signal.removeEventListener('abort', waiter.wake);
          resolve();
        },
      };
      signal.addEventListener('abort', waiter.wake, { once: true });
      this.#waiting.add(waiter);
      this.#watchFiles();
      // A commit may have landed since the caller read its page: look at once.
      this.#poll(true);
    });
  }

  /**
   * From the first watch on, a write to the database's files (by any process) makes the poller
   * look at once and every 50 ms again: the event can come before the commit shows (SQLite
   * writes the -wal, then syncs, then publishes the commit), so one look may be too early.
   */
  #watchFiles(): void {
    if (this.#filesTried || this.#path === undefined) return;
    this.#filesTried = true;
    this.#files = watchDatabaseFiles(this.#path, () => {
      this.#lastFileEventAt = performance.now();
      this.#pollDelay = WATCH_POLL_MS;
      this.#lookSoon();
    });
  }

  /** Polls once at the end of this turn (however many writes settled in it). */
  #lookSoon(): void {
    if (this.#lookScheduled || this.#waiting.size === 0) return;
    this.#lookScheduled = true;
    queueMicrotask(() => {
      this.#lookScheduled = false;
      this.#poll(false);
    });
  }

  /** Looks whether anything was committed; `byTimer` when the safety-net timer asked (not a file event, a write or a new watch). */
  #poll(force: boolean, byTimer = false): void {
    clearTimeout(this.#pollTimer);
    this.#pollTimer = undefined;
    if (this.#waiting.size === 0) return;
    const wakeAll = (): void => {
      for (const waiter of [...this.#waiting]) waiter.wake();
    };
    if (this.closed) return wakeAll();
    let changed = force;
    try {
      const marks = this.#commitMarks();
      const otherCommitted = marks.dataVersion !== this.#seen.dataVersion;
      changed ||= otherCommitted || marks.totalChanges !== this.#seen.totalChanges;
      if (changed) {
        // The events are there to announce other connections' commits: one the timer found,
        // with no event for a while before it, was missed. (A commit shows a little after its
        // first write, so a recent event may well have been this commit's.)
        if (byTimer && otherCommitted && !this.#fileEventRecently()) this.#fileEventsMissed = true;
        this.#seen = marks;
        const head = this.#head();
        for (const waiter of [...this.#waiting]) if (head > waiter.revision) waiter.wake();
      }
    } catch (error) {
      // Busy: look again next tick. Anything else: wake the watches; their next read reports it.
      if (!isBusyError(error)) return wakeAll();
    }
    const longest = this.#files?.active === true && !this.#fileEventsMissed ? WATCH_POLL_MAX_WITH_FILE_EVENTS_MS : WATCH_POLL_MAX_MS;
    this.#pollDelay = changed ? WATCH_POLL_MS : Math.min(this.#pollDelay * 2, longest);
    if (this.#waiting.size > 0) this.#pollTimer = setTimeout(() => this.#poll(false, true), this.#pollDelay);
  }

  #fileEventRecently(): boolean {
    return this.#lastFileEventAt !== undefined && performance.now() - this.#lastFileEventAt <= FILE_EVENT_GRACE_MS;
  }

  #records(): Map<string, ToolRecord> {
    const records = new Map<string, ToolRecord>();
    for (const row of this.#sql.records.iterate()) records.set(row.tool_name, toRecord(row));
    return records;
  }

  // --- writes ------------------------------------------------------------------------

  protected async _write<T>(method: string, plan: WritePlan<T>): Promise<T> {
    this.#assertOpen(method);
    // The core adds the tool a single-tool call named (context.tool_name).
    if (this.#readonly) throw new ReadOnlyError(method);
    try {
      return await this.#writeNow(method, plan);
    } catch (error) {
      // SQLite opens a file it may not write read-only without a word; its first write then fails.
      throw isReadOnlyStorage(error) ? new ReadOnlyError(method, { cause: error }) : error;
    }
  }

  #writeNow<T>(method: string, plan: WritePlan<T>): T | Promise<T> {
    // Watches started inside the caller's transaction, which has ended: they start before this write.
    if (this.#starts.size > 0 && !this.#db.inTransaction) for (const start of [...this.#starts]) start();
    // Read, decide and apply synchronously inside one BEGIN IMMEDIATE transaction: nothing is awaited inside.
    const work = (): T => {
      // An import writes chunk by chunk to bound its memory: it is not followed tool by tool
      // (reads inside it go through SQL, as before) and the next read catches up on it.
      if (method === 'importSnapshot') this.#own = undefined;
      return runPlanSync(this.#writer(), plan);
    };
    if (this.#db.inTransaction) {
      // Inside the caller's own transaction on its handle: join it now, as a savepoint.
      return this.#whileBusy(method, () => this.#inTransaction(this.#beginWrite, work));
    }
    // Concurrent writes share one transaction (group-commit.ts); an import runs alone.
    const written = this.#group.run(method, work, {
      alone: method === 'importSnapshot',
      ...('names' in plan.scope ? { names: plan.scope.names } : {}),
    });
    // This registry's watches see its own commits at once, not when the backed-off poll looks.
    return this.#waiting.size === 0 ? written : written.finally(() => this.#lookSoon());
  }

  protected override _writesPending(): boolean {
    return !this.#group.idle;
  }

  /**
   * One synchronous BEGIN ... COMMIT; rolled back on any throw (a busy COMMIT included).
   * Inside a transaction the caller opened on its own handle, the step joins it as a
   * savepoint instead (its lock mode, and so its cross-process guarantee, is the caller's).
   */
  #inTransaction<T>(begin: BetterSqlite3.Statement, work: () => T): T {
    if (this.#db.inTransaction) return this.#inSavepoint(work);
    begin.run();
    try {
      const result = work();
      this.#commit.run();
      return result;
    } catch (error) {
      if (this.#db.inTransaction) this.#rollback.run();
      throw error;
    }
  }

  #inSavepoint<T>(work: () => T): T {
    this.#db.exec('SAVEPOINT tool_registry');
    try {
      const result = work();
      this.#db.exec('RELEASE tool_registry');
      return result;
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec('ROLLBACK TO tool_registry; RELEASE tool_registry');
      throw error;
    }
  }

  #writer(): StoreWriter {
    const sql = this.#sql;
    // A followed write reads through the cache (its starting state) and its own changes; else SQL.
    const own = this.#own;
    const find = own === undefined ? (toolName: string) => this.#findNow(toolName) : (toolName: string) => own.find(toolName);
    const row = (toolName: string) => sql.findRow.get({ tool_name: toolName });
    return {
      find,
      get: own === undefined ? (toolName) => this.#getNow(toolName) : (toolName) => own.get(toolName),
      records: () => this.#records(),
      revision: () => this.#head(),
      policy: () => this.#policy(),
      put: (tool: StoredTool) => {
        this.#writes++;
        const { record } = tool;
        const inserted =
          sql.insertSpec.run({
            tool_name: record.tool_name,
            fingerprint: record.fingerprint,
            version: record.version,
            spec_json: tool.json,
            first_registered_at: tool.firstRegisteredAt,
          }).changes > 0;
        // A spec seen before under the name takes the given text (key order), unless the tool
        // shows it right now: then the stored text is kept.
        const textKept = !inserted && find(record.tool_name)?.fingerprint === record.fingerprint;
        if (!inserted && !textKept) {
          sql.updateSpecText.run({ tool_name: record.tool_name, fingerprint: record.fingerprint, spec_json: tool.json });
        }
        sql.upsertRegistration.run({
          tool_name: record.tool_name,
          fingerprint: record.fingerprint,
          enabled: record.enabled ? 1 : 0,
          created_at: record.created_at,
        });
        if (tool.rollback === true) sql.markRollback.run({ tool_name: record.tool_name });
        own?.put(tool, textKept, () => row(record.tool_name));
      },
      setDeprecation: (toolName, deprecation) => {
        this.#writes++;
        if (deprecation === null) sql.deleteDeprecation.run({ tool_name: toolName });
        else sql.upsertDeprecation.run({ tool_name: toolName, ...deprecation });
        own?.setDeprecation(toolName, deprecation, () => row(toolName));
      },
      setPolicy: (policy) => {
        this.#writes++;
        sql.setPolicy.run({ name: 'versionOrder', value: policy.versionOrder });
        sql.setPolicy.run({ name: 'compatibility', value: policy.compatibility });
      },
      setEnabled: (toolName, enabled) => {
        this.#writes++;
        if (sql.setEnabled.run({ tool_name: toolName, enabled: enabled ? 1 : 0 }).changes > 0) {
          own?.setEnabled(toolName, enabled, () => row(toolName));
        }
      },
      delete: (toolName) => {
        this.#writes++;
        const deleted = sql.deleteRegistration.run({ tool_name: toolName }).changes > 0;
        if (deleted) own?.delete(toolName);
        return deleted;
      },
    };
  }

  // --- the gateway's rows (migration 0007): plain statements, outside the change log ---

  protected async _putUpstream(upstream: Upstream): Promise<Upstream> {
    const row = await this.#writeRows('putUpstream', () => {
      this.#writes++;
      return this.#sql.putUpstream.get(upstreamToRow(upstream));
    });
    if (row === undefined) throw new Error('internal: the upsert of tool_upstreams returned no row');
    return upstreamFromRow(row);
  }

  protected _getUpstream(name: string): Upstream | undefined | Promise<Upstream | undefined> {
    this.#assertOpen('getUpstream');
    return this.#whileBusy('getUpstream', () => {
      if (this.#db.inTransaction) return this.#upstreamRow(name);
      const marks = this.#commitMarks();
      let known = this.#upstreamRows;
      if (known === undefined || known.marks.dataVersion !== marks.dataVersion || known.marks.totalChanges !== marks.totalChanges || known.rows.size >= UPSTREAM_ROWS_KEPT) {
        known = { marks, rows: new Map() };
        this.#upstreamRows = known;
      }
      if (known.rows.has(name)) return known.rows.get(name);
      // Read after the marks: a commit in between moves them, and the next call reads again.
      const upstream = this.#upstreamRow(name);
      known.rows.set(name, upstream);
      return upstream;
    });
  }

  #upstreamRow(name: string): Upstream | undefined {
    const row = this.#sql.upstream.get({ name });
    return row === undefined ? undefined : upstreamFromRow(row);
  }

  protected _listUpstreams(): readonly Upstream[] | Promise<readonly Upstream[]> {
    this.#assertOpen('listUpstreams');
    return this.#whileBusy('listUpstreams', () => this.#sql.upstreams.all().map(upstreamFromRow));
  }

  protected _removeUpstream(name: string): Promise<boolean> {
    return this.#writeRows('removeUpstream', () => {
      this.#writes++;
      return this.#sql.deleteUpstream.run({ name }).changes > 0;
    });
  }

  protected _recordCalls(calls: readonly CallRecordInput[], prune: CallPrune): Promise<void> {
    return this.#writeRows('recordCalls', () => {
      const sql = this.#sql;
      for (const call of calls) {
        this.#writes++;
        sql.insertCall.run(call);
      }
      sql.pruneCallsByCount.run({ max_rows: prune.maxRows });
      sql.pruneCallsByAge.run({ oldest_at: prune.oldestAt });
    });
  }

  protected _listCalls(query: ParsedCallsQuery): readonly CallRecord[] | Promise<readonly CallRecord[]> {
    this.#assertOpen('listCalls');
    const filters: CallFilters = { tool: query.tool !== undefined, token: query.token !== undefined, since: query.since !== undefined, before: query.before !== undefined };
    const key = `${+filters.tool}${+filters.token}${+filters.since}${+filters.before}`;
    let statement = this.#callQueries.get(key);
    if (statement === undefined) {
      statement = callsStatement(filters).prepare(this.#db);
      this.#callQueries.set(key, statement);
    }
    const prepared = statement;
    // Unused filters are not in the statement; their names bind nothing.
    const params = { tool: query.tool ?? '', token: query.token ?? '', since: query.since ?? '', before: query.before ?? 0, limit: query.limit };
    return this.#whileBusy('listCalls', () => prepared.all(params).map((row) => Object.freeze({ ...row })));
  }

  /** `listCalls` statements prepared on this connection, by filter combination. */
  readonly #callQueries = new Map<string, Statement<{ tool: string; token: string; since: string; before: number; limit: number }, ToolCallsRow>>();

  /**
   * A write of the gateway's rows: synchronous `work` in the store's write transaction (a
   * group-commit batch, or a savepoint of the caller's own), READ_ONLY and STORAGE_BUSY as
   * every write. It changes no tool, so the read cache does not follow it.
   */
  async #writeRows<T>(method: string, work: () => T): Promise<T> {
    this.#assertOpen(method);
    if (this.#readonly) throw new ReadOnlyError(method);
    try {
      if (this.#db.inTransaction) return await this.#whileBusy(method, () => this.#inTransaction(this.#beginWrite, work));
      return await this.#group.run(method, work, { names: [] });
    } catch (error) {
      throw isReadOnlyStorage(error) ? new ReadOnlyError(method, { cause: error }) : error;
    }
  }

  // --- lifecycle ---------------------------------------------------------------------

  protected async _close(): Promise<void> {
    // Writes called before close() still run (they were queued for the next batch).
    await this.#group.flush();
    this.#released = true;
    clearTimeout(this.#pollTimer);
    this.#files?.close();
    for (const waiter of [...this.#waiting]) waiter.wake();
    for (const start of [...this.#starts]) start();
    this.#cache?.clear();
    if (!this.#owned) {
      releaseHandle(this.#db);
      return;
    }
    if (!this.#db.open) return;
    if (!this.#readonly && !this.#db.memory) {
      // Keep the -wal file small between runs; another connection's read may block it, which is fine.
      try {
        this.#db.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // a busy checkpoint is retried by the next writer's automatic checkpoint
      }
    }
    this.#db.close();
  }

  // --- operator tools ----------------------------------------------------------------

  async status(): Promise<SqliteStatus> {
    this.#assertCallable('status');
    return this.#whileBusy('status', () => this.#inTransaction(this.#beginRead, () => this.#status()));
  }

  #status(): SqliteStatus {
    const applied = appliedMigrations(this.#db);
    const counts = this.#sql.counts.get();
    const tools = Number(counts?.tools ?? 0);
    const enabled = Number(counts?.enabled ?? 0);
    return Object.freeze({
      filename: this.#db.memory ? ':memory:' : this.#db.name,
      schemaVersion: applied.at(-1) ?? '',
      appliedMigrations: Object.freeze(applied),
      tools,
      enabled,
      disabled: tools - enabled,
      revision: this.#head(),
      specHistory: Number(counts?.specHistory ?? 0),
      journalMode: String(this.#db.pragma('journal_mode', { simple: true })),
      readonly: this.#readonly,
      synchronous: SYNCHRONOUS_NAMES[Number(this.#db.pragma('synchronous', { simple: true }))] ?? 'unknown',
      journalSizeLimit: Number(this.#db.pragma('journal_size_limit', { simple: true })),
      walAutocheckpoint: Number(this.#db.pragma('wal_autocheckpoint', { simple: true })),
    });
  }

  async verify(): Promise<VerifyReport> {
    this.#assertCallable('verify');
    const problems: VerifyProblem[] = [];
    const checked = { tools: 0 };
    try {
      // One read transaction: every check sees the same snapshot.
      await this.#whileBusy('verify', () => this.#inTransaction(this.#beginRead, () => this.#verify(problems, checked)));
    } catch (error) {
      // A damaged file is what verify() is for: reported, not thrown (SQLite fails the rest of
      // the transaction, its COMMIT included, so the checks stop there).
      if (!isDamagedFile(error)) throw error;
      const { message, code } = error as Error & { code: string };
      problems.push({ kind: 'integrity', message: `the file is damaged: ${message} (${code})` });
    }
    return Object.freeze({ ok: problems.length === 0, checkedTools: checked.tools, problems: Object.freeze(problems) });
  }

  /** Adds what it finds to `problems` as it goes, so what it found before a failure is kept. */
  #verify(problems: VerifyProblem[], checked: { tools: number }): void {
    // A busy attempt is run again from the start.
    problems.length = 0;
    checked.tools = 0;
    const integrity = this.#db.pragma('integrity_check') as { integrity_check: string }[];
    for (const { integrity_check: line } of integrity) {
      if (line !== 'ok') problems.push({ kind: 'integrity', message: `integrity_check: ${line}` });
    }
    const foreign = this.#db.pragma('foreign_key_check') as { table: string; rowid: number | null; parent: string }[];
    for (const row of foreign) {
      problems.push({ kind: 'reference', message: `foreign_key_check: a row of ${row.table} points at a missing ${row.parent} row` });
    }
    for (const row of this.#sql.rows.iterate()) {
      checked.tools++;
      problems.push(...checkStoredRow({ ...row, enabled: row.enabled === 1 }));
    }
  }
}
