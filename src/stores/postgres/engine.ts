// The PostgreSQL store's machinery, apart from the registry contract: the pool (ours, or the
// caller's, never ended by close()), migrations at open, write transactions with their locks,
// timeouts and retries, the listener and the read cache, waiting for changes, status.
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { PostgresPool } from 'kysely';
import type pg from 'pg';
import { ReadOnlyError, RegistryClosedError, StorageBusyError, StorageUnavailableError } from '../../core/errors.js';
import type { StoreStatus } from '../../core/stored-row.js';
import { queryTimeoutBusy, retryWhileBusy, sqlState, storageBusy } from './busy.js';
import { CheckoutTimeoutError, checkOut, failedBeforeSending, failedOnPooledConnection, failedToConnect, foundDeadInPool, isConnectionFailure, isQueryReadTimeout, kyselyPool, noteQueryTimeout } from './connections.js';
import { changeChannel, checkSchemaName } from './identifiers.js';
import { safeInteger } from './integers.js';
import { nodePostgres } from '../../node-postgres.js';
import { ChangeListener } from './listener.js';
import { MigrationFailedError, appliedMigrations, assertKnown, migrate, pendingMigrations, shippedMigrations } from './migrations.js';
import { CACHED_TABLES, PostgresReadCache } from './read-cache.js';
import type { PostgresSchema } from './schema.js';
import { beginBoundedRead, lockAndRead, readHead, readPolicyAndDeprecations, setStatementTimeout } from './tables.js';
import type { Db, Head, RegistrationRow, StatementRunner } from './tables.js';
import { loginRefused, queryTimeoutUnavailable, readDenied, storageUnavailable } from './unavailable.js';
import type { WriteOutcome } from './unavailable.js';

export interface EngineOptions<T> {
  readonly connectionString?: string;
  readonly pool?: pg.Pool;
  readonly schema?: string;
  readonly busyTimeoutMs?: number;
  readonly statementTimeoutMs?: number;
  readonly readonly?: boolean;
  readonly cache?: boolean;
  /** While the database cannot be reached, reads may answer from the cache for this long after the listener last confirmed it. */
  readonly staleIfErrorMs?: number;
  /** Where the LISTEN connection goes, when the pool's server cannot LISTEN (PgBouncer in transaction mode). */
  readonly listenConnectionString?: string;
  /** Builds the cached value of a row. */
  readonly convert: (row: RegistrationRow) => T;
}

/** What a write locks: these names (shared writers' lock plus one lock per name), or everything (an import). */
export type WriteScope = { readonly names: readonly string[] } | { readonly exclusive: true };

const NO_DEPRECATION = Object.freeze({ dep_message: null, dep_replacement: null, dep_sunset: null });

/** More names than this in one write take the writers' lock exclusively instead of one lock each. */
const MAX_NAME_LOCKS = 64;
const DEFAULT_BUSY_TIMEOUT_MS = 5000;
const DEFAULT_STALE_IF_ERROR_MS = 5000;
/** The listener's heartbeat; the cache's staleness bound is twice this. */
const HEARTBEAT_MS = 500;
/** How often a watch looks at the log while no listener is up. */
const POLL_MS = 250;

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return typeof value;
}

/** The longest `statement_timeout` and `lock_timeout` PostgreSQL takes (and Node's longest timer). */
const MAX_TIMEOUT_MS = 2_147_483_647;

function optionalMs(name: string, value: unknown, fallback: number | undefined, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`openPostgresToolRegistry(): ${name} must be an integer number of milliseconds >= 0, got ${describe(value)}`);
  }
  // Longer was taken, and every call then failed: the server refused the setting (a bare
  // 22023 on writes, 25P02 on reads), a busy wait ended at once as STORAGE_BUSY.
  if (value > max) {
    throw new TypeError(`openPostgresToolRegistry(): ${name} must be at most ${max} ms (PostgreSQL's longest timeout), got ${describe(value)}`);
  }
  return value;
}

function optionalBoolean(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`openPostgresToolRegistry(): ${name} must be a boolean, got ${describe(value)}`);
  return value;
}

/**
 * Whether the server refused a named prepared statement before running it (see
 * writeInOneStatement). "cached plan must not change result type" is told by the server's
 * routine, which lc_messages does not translate (the English text is kept for a server that
 * sends no routine).
 */
function refusedPreparedStatement(error: unknown): boolean {
  const state = sqlState(error);
  if (state === '26000' || state === '42P05') return true;
  return state === '0A000' && ((error as { routine?: unknown }).routine === 'RevalidateCachedQuery' || /cached plan/.test((error as Error).message));
}

/**
 * The deadline (performance.now()) of the call in progress, for its pool check-outs. One for
 * the module, not one per engine: on Node 20 every enabled AsyncLocalStorage stays in a
 * process-wide list that each new promise walks (an init hook), so an instance per engine made
 * every promise of the process slower with each registry ever opened, closed ones included
 * (about half a test worker's CPU after a few hundred opens).
 */
const callDeadline = new AsyncLocalStorage<number>();

/**
 * Each registry on a pool listens for its errors: the pool's bound on listeners grows and
 * shrinks with them (one left unbounded stays so), so that the registries sharing one pool (a
 * server's namespaces: ten of them) are not Node's MaxListenersExceededWarning, "possible
 * memory leak", while a real leak still is.
 */
function listenerRoom(pool: pg.Pool, by: 1 | -1): void {
  const bound = pool.getMaxListeners();
  if (bound !== 0) pool.setMaxListeners(Math.max(1, bound + by));
}

/** SQLSTATEs of a schema, table or function that does not exist: 3F000 invalid_schema_name, 42P01 undefined_table, 42883 undefined_function. */
const MISSING_OBJECT_STATES: ReadonlySet<string> = new Set(['3F000', '42P01', '42883']);

export class PostgresEngine<T> {
  readonly schema: string;
  readonly db: Db;
  readonly pool: pg.Pool;
  readonly readonly: boolean;
  readonly busyTimeoutMs: number;
  readonly statementTimeoutMs: number | undefined;
  readonly cache: PostgresReadCache<T> | undefined;
  readonly listener: ChangeListener | undefined;
  readonly #ownsPool: boolean;
  /** The pool as Kysely uses it (guarded check-outs), also for the statements sent without Kysely. */
  readonly #guardedPool: PostgresPool;
  readonly #onPoolError = (): void => {
    // An idle connection the server ended: the pool drops it and opens another when needed.
  };
  readonly #waiters = new Set<() => void>();
  /** Revision reads in flight (see revision()). */
  readonly #revisionReads = new Set<Promise<unknown>>();
  #closed = false;
  #closing = false;
  /** Reads and writes under way (`#timed`), and who waits for there to be none. */
  #running = 0;
  #whenIdle: (() => void)[] = [];
  /** Write transactions committed (storeMetrics). */
  writeBatches = 0;
  /**
   * Whether the one-statement write goes as a named statement, parsed and planned once per
   * connection (docs/postgres.md, "Benchmarks"); false for good after a connection refused one.
   */
  #namedStatements = true;
  /** False for good once the server refused this role tool_registry_write_if (refusedOneStatement). */
  #oneStatement = true;
  /** The listener's first connection, once something needed it (see #listen). */
  #listenerStarted: Promise<boolean> | undefined;

  private constructor(init: {
    schema: string;
    pool: pg.Pool;
    ownsPool: boolean;
    readonly: boolean;
    busyTimeoutMs: number;
    statementTimeoutMs: number | undefined;
    listenConfig: pg.ClientConfig | undefined;
    /** The pool's role, when the listener logs in as given elsewhere (listenConnectionString); else its own current_user is the pool's. */
    poolRole: string | undefined;
    cache: boolean;
    staleIfErrorMs: number;
    convert: (row: RegistrationRow) => T;
  }) {
    this.schema = init.schema;
    this.pool = init.pool;
    this.#ownsPool = init.ownsPool;
    this.readonly = init.readonly;
    this.busyTimeoutMs = init.busyTimeoutMs;
    this.statementTimeoutMs = init.statementTimeoutMs;
    listenerRoom(this.pool, 1);
    this.pool.on('error', this.#onPoolError);
    this.#guardedPool = kyselyPool(init.pool, () => this.#timeLeft());
    this.db = new Kysely<PostgresSchema>({ dialect: new PostgresDialect({ pool: this.#guardedPool }) }).withSchema(init.schema);
    if (init.listenConfig !== undefined) {
      let cache: PostgresReadCache<T> | undefined;
      this.listener = new ChangeListener({
        connection: init.listenConfig,
        channel: changeChannel(init.schema),
        // The registries on one pool share one LISTEN connection (one server process).
        shareKey: init.pool,
        heartbeatMs: HEARTBEAT_MS,
        // A REVOKE sends no notification: the heartbeat checks the rights memory answers on.
        ...(init.cache ? { rights: { schema: init.schema, role: init.poolRole, tables: CACHED_TABLES }, onRights: (readable: boolean) => cache?.rights(readable) } : {}),
        onNotify: (payload) => {
          cache?.notified(payload);
          this.#wake();
        },
        onConnect: () => {
          cache?.invalidate();
          this.#wake();
        },
        // The loss alone does not keep memory from answering while the database is away (staleIfErrorMs).
        onDisconnect: () => cache?.invalidate(false),
      });
      if (init.cache) {
        cache = new PostgresReadCache({
          read: (work) => this.read(work),
          schema: init.schema,
          listener: this.listener,
          stalenessMs: 2 * HEARTBEAT_MS,
          staleIfErrorMs: init.staleIfErrorMs,
          convert: init.convert,
        });
      }
      this.cache = cache;
    }
  }

  /** Checks the options, connects, migrates (unless read-only) and starts listening. */
  static async open<T>(options: EngineOptions<T>): Promise<PostgresEngine<T>> {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`openPostgresToolRegistry(): options must be an object, got ${describe(options)}`);
    }
    const { connectionString, pool } = options;
    if ((connectionString === undefined) === (pool === undefined)) {
      throw new TypeError('openPostgresToolRegistry(): give exactly one of connectionString and pool');
    }
    if (connectionString !== undefined && (typeof connectionString !== 'string' || connectionString === '')) {
      throw new TypeError(`openPostgresToolRegistry(): connectionString must be a non-empty string, got ${describe(connectionString)}`);
    }
    if (pool !== undefined && !(pool instanceof nodePostgres().Pool)) {
      throw new TypeError(`openPostgresToolRegistry(): pool must be a pg Pool, got ${describe(pool)}`);
    }
    const schema = checkSchemaName(options.schema ?? 'tool_registry');
    const busyTimeoutMs = optionalMs('busyTimeoutMs', options.busyTimeoutMs, DEFAULT_BUSY_TIMEOUT_MS, MAX_TIMEOUT_MS) as number;
    const statementTimeoutMs = optionalMs('statementTimeoutMs', options.statementTimeoutMs, undefined, MAX_TIMEOUT_MS);
    const readonly = optionalBoolean('readonly', options.readonly, false);
    const cache = optionalBoolean('cache', options.cache, true);
    const staleIfErrorMs = optionalMs('staleIfErrorMs', options.staleIfErrorMs, DEFAULT_STALE_IF_ERROR_MS) as number;
    const listen = options.listenConnectionString;
    if (listen !== undefined && (typeof listen !== 'string' || listen === '')) {
      throw new TypeError(`openPostgresToolRegistry(): listenConnectionString must be a non-empty string, got ${describe(listen)}`);
    }
    const ownPool = pool === undefined ? new (nodePostgres().Pool)({ connectionString }) : undefined;
    // A pool without an 'error' listener crashes the process when an idle connection dies.
    ownPool?.on('error', () => {});
    const thePool = pool ?? (ownPool as pg.Pool);
    const listenConfig: pg.ClientConfig =
      listen !== undefined ? { connectionString: listen } : connectionString !== undefined ? { connectionString } : { ...thePool.options };
    const engine = new PostgresEngine<T>({
      schema,
      pool: thePool,
      ownsPool: ownPool !== undefined,
      readonly,
      busyTimeoutMs,
      statementTimeoutMs,
      listenConfig,
      poolRole: listen !== undefined ? new (nodePostgres().Client)(thePool.options).user : undefined,
      cache,
      staleIfErrorMs,
      convert: options.convert,
    });
    try {
      // The read cache needs the LISTEN connection from the start; without the cache only a
      // waiter (watch()) does, and a command or a worker that never watches costs the server
      // one process less (#listen). It connects while the schema is checked.
      const listening = cache ? engine.#listen() : undefined;
      await engine.#prepareSchema();
      await listening;
      return engine;
    } catch (error) {
      // Reading what is applied failed for want of a right (no USAGE on the schema, no SELECT
      // on schema_migrations); a migration's own refusals are READ_ONLY already (migrate()).
      // Which right is asked of the server before the pool is closed.
      const denied = sqlState(error) === '42501' ? await readDenied('openPostgresToolRegistry', schema, error, thePool, busyTimeoutMs) : undefined;
      await engine.close();
      if (isConnectionFailure(error)) throw storageUnavailable('open', error);
      // The server refused the login for what it was given (no such database or role, a bad
      // option, SSL): the bare driver error until now.
      const refused = failedToConnect(error) ? loginRefused('open', error, thePool) : undefined;
      if (refused !== undefined) throw refused;
      if (denied !== undefined) throw denied;
      // A statement_timeout of the role, the database or the URL's options that ended a wait
      // for another instance's migration, or a migration itself (rolled back): STORAGE_BUSY, as
      // for any call (it was the bare driver error).
      const cancelled = error instanceof MigrationFailedError ? error.cause : error;
      // A caller's pool's query_timeout that gave up on the same waits (migrate() dropped the connection).
      if (isQueryReadTimeout(cancelled)) throw queryTimeoutBusy('open', cancelled);
      if (sqlState(cancelled) === '57014') {
        throw new StorageBusyError(`open: the database cancelled the statement (${(cancelled as Error).message}, SQLSTATE 57014)`, { operation: 'open', sqlstate: '57014' }, cancelled);
      }
      throw error;
    }
  }

  async #prepareSchema(): Promise<void> {
    const migrations = shippedMigrations();
    if (!this.readonly) {
      await migrate({ pool: this.pool, schema: this.schema, busyTimeoutMs: this.busyTimeoutMs, migrations });
      return;
    }
    const client = await this.#timed('open', () => checkOut(this.pool, this.busyTimeoutMs));
    let failed: unknown;
    try {
      const applied = await appliedMigrations(client, this.schema);
      assertKnown(applied, migrations, this.schema);
      const pending = pendingMigrations(applied, migrations);
      if (pending.length > 0) {
        // Too old or missing (not SCHEMA_TOO_NEW), and a read-only open must not fix it.
        throw Object.assign(new Error(
          `the PostgreSQL schema ${this.schema} is not migrated to this release (missing: ${pending.map((m) => m.name).join(', ')}); ` +
            `a read-only registry does not migrate: run \`tool-registry migrate\` or open it once without readonly`,
        ), { schema: this.schema, pendingMigrations: pending.map((m) => m.name) });
      }
    } catch (error) {
      failed = error;
      throw error;
    } finally {
      // One that query_timeout gave up on still runs on the server: not to be handed out again.
      client.release(noteQueryTimeout(failed, client));
    }
  }

  #assertOpen(operation: string): void {
    if (this.#closed || this.#closing) throw new RegistryClosedError(operation);
  }

  /**
   * The registry is closing: calls under way finish, but a wait for a lock is given up
   * (REGISTRY_CLOSED at its next try), so close() does not wait out busyTimeoutMs.
   */
  closing(): void {
    this.#closing = true;
  }

  /** Whether `close()` has run: the pool and the listener are gone. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Whether a read or a write is under way. */
  get busy(): boolean {
    return this.#running > 0;
  }

  /** Resolves once no read or write is under way (the registry's close() waits for it). */
  idle(): Promise<void> {
    return this.#running === 0 ? Promise.resolve() : new Promise((resolve) => this.#whenIdle.push(resolve));
  }

  /**
   * Runs `work` as one transaction that holds the locks of `scope`, with the current rows of
   * the scope's names read after the locks were taken (one round trip): lock waits bounded by
   * what is left of busyTimeoutMs, retried on lock timeouts, deadlocks and serialization
   * failures, then STORAGE_BUSY. After a failure the read cache looks at the log before its
   * next answer (a lost COMMIT acknowledgement may still have committed); after a success the
   * caller tells the cache what it wrote.
   */
  async write<R>(operation: string, scope: WriteScope, work: (trx: Db, rows: RegistrationRow[], policy: readonly [string, string][]) => Promise<R>): Promise<R> {
    const names = 'names' in scope && scope.names.length <= MAX_NAME_LOCKS ? scope.names : undefined;
    return this.#writing(operation, (lockTimeoutMs, progress) =>
      this.db.transaction().execute(async (trx) => {
        if (this.statementTimeoutMs !== undefined) await setStatementTimeout(trx, this.statementTimeoutMs);
        const lockedNames = names ?? ('names' in scope ? scope.names : []);
        const locked = await lockAndRead(trx, this.schema, lockTimeoutMs(), names === undefined, lockedNames);
        // Read after the locks are held (READ COMMITTED: a fresh snapshot): the policies and
        // the locked tools' deprecations (migration 0006), in one more round trip.
        const { policy, deprecations } = await readPolicyAndDeprecations(trx, lockedNames);
        const rows = locked.map((row) => ({ ...row, ...(deprecations.get(row.tool_name) ?? NO_DEPRECATION) }));
        const result = await work(trx, rows, policy);
        // Kysely sends COMMIT next: a connection lost from here on leaves the outcome unknown.
        progress.commitSent = true;
        return result;
      }),
    );
  }

  /**
   * Runs `work` as one transaction that takes none of the registry's locks: a write of rows
   * beside the tools (the gateway's upstreams and audit log), which no rule decides and the
   * read cache does not hold. Waits, retries, STORAGE_BUSY, STORAGE_UNAVAILABLE and READ_ONLY
   * as for `write`.
   */
  async writeRows<R>(operation: string, work: (trx: Db) => Promise<R>): Promise<R> {
    return this.#writing(operation, (_lockTimeoutMs, progress) =>
      this.db.transaction().execute(async (trx) => {
        if (this.statementTimeoutMs !== undefined) await setStatementTimeout(trx, this.statementTimeoutMs);
        const result = await work(trx);
        progress.commitSent = true;
        return result;
      }),
    );
  }

  /**
   * Whether a write of `names` may be sent as one statement (`writeInOneStatement`): few
   * enough names to lock one by one, and no statement timeout (a statement cannot bound itself).
   */
  canWriteInOneStatement(names: readonly string[]): boolean {
    return this.#oneStatement && names.length <= MAX_NAME_LOCKS && this.statementTimeoutMs === undefined;
  }

  /**
   * Whether `error` (a one-statement write's) is the server refusing this role EXECUTE on
   * tool_registry_write_if: then nothing was written, this engine stops sending it, and the
   * caller writes the locked way, which needs no right on that function. The uncached store
   * never calls it, so a role without the right wrote there and was READ_ONLY with the cache.
   * Told by what lc_messages does not translate: the SQLSTATE and the function's name in the
   * message (a table the function may not write is 42501 too, naming the table).
   */
  refusedOneStatement(error: unknown): boolean {
    const cause = error instanceof ReadOnlyError ? error.cause : undefined;
    if (sqlState(cause) !== '42501' || !/(?<![\w$])tool_registry_write_if(?![\w$])/.test((cause as Error).message)) return false;
    this.#oneStatement = false;
    return true;
  }

  /**
   * Runs `work`, a single statement that takes its own locks (lock waits bounded by the
   * milliseconds it is given), outside a transaction: it commits when it returns, one round
   * trip. Waits, retries, STORAGE_BUSY, READ_ONLY and the cache as for `write`. The statement
   * goes to the pool's client as it is, not through Kysely: on the hot path of every cached
   * `register`, Kysely's connection provider, query compilation and result transformation
   * cost more than the statement's own client work (docs/postgres.md, "Benchmarks").
   */
  async writeInOneStatement<R>(operation: string, work: (query: StatementRunner, lockTimeoutMs: number) => Promise<R>): Promise<R> {
    return this.#writing(operation, async (lockTimeoutMs, progress) => {
      const client = await this.#guardedPool.connect();
      try {
        // The statement commits as it ends: once sent, a lost connection leaves the outcome unknown.
        progress.commitSent = true;
        return await work(async (text, values, name) => {
          // The guarded client's query (connections.ts) takes the statement's name third.
          const guarded = client as unknown as { query(text: string, values: readonly unknown[], name?: string): Promise<{ rows: Record<string, unknown>[] }> };
          if (name !== undefined && this.#namedStatements) {
            try {
              return (await guarded.query(text, values, name)).rows;
            } catch (error) {
              // A pooler that does not keep a session's prepared statements (PgBouncer in transaction
              // mode before 1.21 or without max_prepared_statements; a DISCARD ALL), or a function
              // whose result a newer migration changed: the statement was refused before it ran
              // (26000 at Bind, 42P05 at Parse, 0A000 "cached plan must not change result type").
              // Sent unnamed from now on.
              if (!refusedPreparedStatement(error)) throw error;
              this.#namedStatements = false;
            }
          }
          return (await guarded.query(text, values)).rows;
        }, lockTimeoutMs());
      } finally {
        client.release();
      }
    });
  }

  /**
   * What every write shares: one attempt at a time until it is not busy, within busyTimeoutMs.
   * A write whose statement never reached the server (a refused connect, a pooled connection
   * found dead) is tried once more on a fresh connection; any other connection failure is
   * STORAGE_UNAVAILABLE, `outcome: 'not_written'` before its commit was sent, else `'unknown'`
   * (never repeated: it may have committed).
   */
  async #writing<R>(operation: string, attempt: (lockTimeoutMs: () => number, progress: { commitSent: boolean }) => Promise<R>): Promise<R> {
    if (this.readonly) throw new ReadOnlyError(operation);
    if (this.#revisionReads.size > 0) await Promise.allSettled([...this.#revisionReads]);
    const deadline = performance.now() + this.busyTimeoutMs;
    // What is left after waiting for a connection bounds the lock waits.
    const lockTimeoutMs = (): number => deadline - performance.now();
    let outcome: WriteOutcome | undefined;
    try {
      const result = await this.#timed(
        operation,
        () =>
          callDeadline.run(deadline, async () => {
            for (let tries = 1; ; tries++) {
              const progress = { commitSent: false };
              try {
                return await retryWhileBusy({ timeoutMs: this.busyTimeoutMs, operation, beforeRetry: () => this.#assertOpen(operation) }, () => attempt(lockTimeoutMs, progress));
              } catch (error) {
                // query_timeout: the driver stopped waiting, the statement runs on (connections.ts).
                if (!isConnectionFailure(error) && !isQueryReadTimeout(error)) throw error;
                const unsent = failedBeforeSending(error);
                outcome = progress.commitSent && !unsent ? 'unknown' : 'not_written';
                // Only a statement that never reached the server is sent again: one that did and
                // was cut (a backend an operator terminated) may be what the operator stopped.
                // Once, or while each try meets another dead pooled connection (connections.ts).
                if (!unsent || (tries > 1 && !this.#anotherDeadInPool(error, tries)) || this.#closed || lockTimeoutMs() <= 0) throw error;
              }
            }
          }),
        () => outcome,
      );
      this.writeBatches++;
      return result;
    } catch (error) {
      // A write that failed may still have committed (a lost COMMIT reply): the cache looks at
      // the log before its next answer. A commit it missed so is after the listener's last
      // confirmation, which bounds what the cache may serve while the database is away.
      this.cache?.invalidate(false);
      // A standby or read-only session (25006), a role without write grants (42501): the
      // storage refuses writes, as a SQLite file this process may not write does.
      const state = sqlState(error);
      if (state === '25006') throw new ReadOnlyError(operation, { cause: error });
      if (state === '42501') {
        throw new ReadOnlyError(operation, {
          cause: error,
          detail: `a role that writes to the registry schema ${this.schema} needs USAGE on it and SELECT, INSERT, UPDATE and DELETE on its tables (and EXECUTE on its functions and on the advisory locks, PUBLIC's by default; docs/postgres.md, "Roles and rights")`,
        });
      }
      throw error;
    } finally {
      this.#wake();
    }
  }

  /**
   * Runs `work` in a read-only REPEATABLE READ transaction (one snapshot). Every read of the
   * store goes through here, so that waiting for a connection and for locks is bounded by
   * busyTimeoutMs and each statement by statementTimeoutMs, as for writes.
   */
  async read<R>(work: (trx: Db) => Promise<R>, operation = 'read'): Promise<R> {
    const deadline = performance.now() + this.busyTimeoutMs;
    return this.#timed(operation, () =>
      callDeadline.run(deadline, async () => {
        for (let tries = 1; ; tries++) {
          try {
            return await this.#readOnce(work, deadline);
          } catch (error) {
            // A read-only transaction is safe to repeat: once, on a fresh connection (the dead one
            // was dropped), so the first call after a killed backend or a restart still answers;
            // again while each try fails on another connection the pool had (all of them ended
            // at once, handed out before node read their ends), never after a refused connect.
            if (!isConnectionFailure(error) || this.#closed || deadline - performance.now() <= 0) throw error;
            if (tries > 1 && !(failedOnPooledConnection(error) && tries <= (this.pool.options.max ?? 10))) throw error;
          }
        }
      }),
    );
  }

  /**
   * Whether try number `tries` failed on a dead pooled connection and the pool may hold another
   * (there are no more of them than its `max`): then one more try is worth it.
   */
  #anotherDeadInPool(error: unknown, tries: number): boolean {
    return foundDeadInPool(error) && tries <= (this.pool.options.max ?? 10);
  }

  #readOnce<R>(work: (trx: Db) => Promise<R>, deadline: number): Promise<R> {
    // By hand rather than Kysely's transaction(): the BEGIN and the limits share one round
    // trip, so a one-statement read costs three (an uncached get measured 4 with Kysely's).
    return this.db.connection().execute(async (connection) => {
      await beginBoundedRead(connection, deadline - performance.now(), this.statementTimeoutMs);
      let result: R;
      try {
        result = await work(connection);
      } catch (error) {
        // A ROLLBACK that fails (the connection is gone) must not hide why the read failed.
        await sql`ROLLBACK`.execute(connection).catch(() => {});
        throw error;
      }
      await sql`COMMIT`.execute(connection);
      return result;
    });
  }

  /** What is left of the current call's time (busyTimeoutMs outside a call), for a pool check-out. */
  #timeLeft(): number {
    const deadline = callDeadline.getStore();
    return deadline === undefined ? this.busyTimeoutMs : Math.max(1, deadline - performance.now());
  }

  /**
   * A call that ran out of time is STORAGE_BUSY (with the driver's error as cause): no pool
   * connection free within busyTimeoutMs, a read's lock wait past it (55P03; a write's lock
   * waits are retried and end as STORAGE_BUSY in retryWhileBusy), a statement cancelled by
   * statementTimeoutMs (57014). A call whose connection failed (refused, cut, the server
   * shutting down or restarting) is STORAGE_UNAVAILABLE, with what is known of a write.
   */
  async #timed<R>(operation: string, run: () => Promise<R>, outcome?: () => WriteOutcome | undefined): Promise<R> {
    this.#running++;
    try {
      return await run();
    } catch (error) {
      if (isConnectionFailure(error)) throw storageUnavailable(operation, error, outcome?.());
      // A caller's pool's query_timeout: a read did not get through in time (as for a
      // statement_timeout); a write's statement may still commit, so its outcome is told.
      if (isQueryReadTimeout(error)) throw outcome === undefined ? queryTimeoutBusy(operation, error) : queryTimeoutUnavailable(operation, error, outcome() ?? 'unknown');
      if (sqlState(error) === '57014') {
        if (this.statementTimeoutMs !== undefined) throw storageBusy(operation, this.statementTimeoutMs, 1, error);
        // The server's own limit (a statement_timeout of the role, the database or the URL's
        // options) or an operator's pg_cancel_backend: the call did not get through, as for
        // ours, and its transaction rolled back. Not a bug of the store's (a 500).
        throw new StorageBusyError(`${operation}: the database cancelled the statement (${(error as Error).message}, SQLSTATE 57014)`, { operation, sqlstate: '57014' }, error);
      }
      if (error instanceof CheckoutTimeoutError || sqlState(error) === '55P03') throw storageBusy(operation, this.busyTimeoutMs, 1, error);
      const state = sqlState(error);
      // A write's 42501 is READ_ONLY (#writing); a read's is a role that may not read at all.
      if (state === '42501' && outcome === undefined) throw await readDenied(operation, this.schema, error, this.pool, this.busyTimeoutMs);
      if (state !== undefined && MISSING_OBJECT_STATES.has(state)) {
        // The schema or its objects went away under the open registry (a DBA dropped a
        // namespace's schema, a restore with --clean is under way): not a bug of the store's
        // (a server answered 500); retried later, a restore may have finished. A write's
        // statement failed, so its transaction rolled back.
        const write = outcome !== undefined;
        throw new StorageUnavailableError(
          `${operation}: the registry schema ${this.schema} or its tables are missing (${(error as Error).message}, SQLSTATE ${state}): ` +
            `dropped, or being restored, while the registry is open${write ? '; nothing of this write is stored' : ''}`,
          { operation, driver_code: state, ...(write ? { outcome: 'not_written' } : {}) },
          error,
        );
      }
      throw error;
    } finally {
      if (--this.#running === 0) for (const wake of this.#whenIdle.splice(0)) wake();
    }
  }

  /**
   * The current revision, read now. This instance's writes started after the call wait for
   * the answer, so a `watch()` started before a `register()` sees its event.
   */
  async revision(): Promise<number> {
    return (await this.head()).revision;
  }

  /** The head (revision, token, generation), read now, as `revision()` reads it. */
  async head(): Promise<Head> {
    const read = this.read(readHead, 'revision');
    this.#revisionReads.add(read);
    try {
      return await read;
    } finally {
      this.#revisionReads.delete(read);
    }
  }

  /**
   * Resolves when the revision may have passed `revision` (a notification, an own write, a
   * listener reconnect; without a listener, a poll every 250 ms) or when `signal` aborts.
   */
  async waitForChange(revision: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    // Without the cache the listener starts with the first waiter; until it is up, this polls
    // (and its first connect wakes every waiter).
    void this.#listen();
    const woken = new Promise<void>((resolve) => {
      const done = (): void => {
        this.#waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
    // A commit between the caller's read and this call would have no wake-up left: look once.
    if ((await this.revision().catch(() => revision + 1)) > revision) {
      this.#wake();
      return woken;
    }
    for (;;) {
      const listening = this.listener?.listening === true;
      const outcome = await Promise.race([woken.then(() => 'woken' as const), sleep(POLL_MS, 'poll' as const, { ref: false })]);
      if (outcome === 'woken' || signal.aborted) return;
      if (!listening && (await this.revision().catch(() => revision)) > revision) {
        this.#wake();
        return;
      }
    }
  }

  /** Starts the listener once (and never after close()); resolves as ChangeListener.start() does. */
  #listen(): Promise<boolean> | undefined {
    if (this.listener === undefined || this.#closed) return undefined;
    this.#listenerStarted ??= this.listener.start();
    return this.#listenerStarted;
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }

  /** Counts and the schema's state, for operators and the CLI. */
  async status(): Promise<PostgresEngineStatus> {
    const readApplied = async (): Promise<string[]> => {
      const client = await checkOut(this.pool, this.busyTimeoutMs);
      let failed: unknown;
      try {
        return await appliedMigrations(client, this.schema);
      } catch (error) {
        failed = error;
        throw error;
      } finally {
        // Given back before the counts' read takes a connection: holding it meanwhile made status()
        // wait for a second connection, which a pool of one (a role with CONNECTION LIMIT 1, a
        // caller's pool with max 1) never has: STORAGE_BUSY every time. A dead one is dropped.
        client.release(isConnectionFailure(failed) || noteQueryTimeout(failed, client));
      }
    };
    // As every read (#timed: STORAGE_UNAVAILABLE, not the driver's bare error, when the server is
    // away; 42501 as a read's), and once more on a fresh connection after a killed backend.
    const applied = await this.#timed('status', () =>
      readApplied().catch((error: unknown) => {
        if (!isConnectionFailure(error) || this.#closed) throw error;
        return readApplied();
      }),
    );
    const counts = await this.read(async (trx) => {
      const row = await trx
        .selectFrom('tool_registrations')
        .select((eb) => [
          eb.fn.countAll<string>().as('tools'),
          eb.fn.countAll<string>().filterWhere('enabled', '=', true).as('enabled'),
        ])
        .executeTakeFirstOrThrow();
      const history = await trx.selectFrom('tool_specs').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      const head = await readHead(trx);
      return { tools: safeInteger(row.tools, 'tools'), enabled: safeInteger(row.enabled, 'enabled'), history: safeInteger(history.n, 'history'), revision: head.revision };
    }, 'status');
    return {
      schema: this.schema,
      schemaVersion: applied.at(-1) ?? '',
      // Frozen as every object handed out is (the registry freezes the status itself).
      appliedMigrations: Object.freeze(applied),
      tools: counts.tools,
      enabled: counts.enabled,
      disabled: counts.tools - counts.enabled,
      revision: counts.revision,
      specHistory: counts.history,
      readonly: this.readonly,
      cache: this.cache !== undefined,
      listening: this.listener?.listening === true,
      listenerPid: this.listener?.backendPid ?? null,
    };
  }

  /** Stops listening, ends the pool if it is ours (a caller's pool is left open). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#wake();
    await this.listener?.close();
    this.pool.off('error', this.#onPoolError);
    listenerRoom(this.pool, -1);
    if (this.#ownsPool) await this.pool.end();
  }
}

/** What `status()` reports for a PostgreSQL registry. */
export interface PostgresEngineStatus extends StoreStatus {
  readonly schema: string;
  /** Whether reads are served from the read cache. */
  readonly cache: boolean;
  /** Whether the LISTEN connection is up now. */
  readonly listening: boolean;
  /** The server process of the LISTEN connection (pg_stat_activity.pid), while listening. */
  readonly listenerPid: number | null;
}
