// Pool connections the store checks out, guarded against their connection dying while out.
// node-postgres' pool listens for a client's 'error' only while the client is idle; a checked-out
// client whose connection ends (pg_terminate_backend, a server restart, a network cut) emits
// 'error' with no listener, and an EventEmitter 'error' without a listener crashes the process.
// And inside a transaction, the ROLLBACK that follows the failure fails too: Kysely would throw
// that second error ("Connection terminated unexpectedly") instead of the first, which says why
// (the server's FATAL with its SQLSTATE, 57P01 for pg_terminate_backend).
//
// A check-out waits for a free connection at most `waitMs`: a pool whose connections are all
// taken (a caller's pool busy with other work, or more concurrent calls than `max`) would
// otherwise keep a call waiting without bound, past busyTimeoutMs.
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/**
 * SQLSTATEs of the connection or the server going away, never of a statement: connection
 * exception (class 08), `admin_shutdown`, `crash_shutdown` and `cannot_connect_now` (57P01-03:
 * a restart, a server still recovering), `idle_session_timeout` (57P05: a DBA's setting ends a
 * connection idle in the pool, which a call can be handed before the pool has seen it),
 * `idle_in_transaction_session_timeout` (25P03), `transaction_timeout` (25P04, PostgreSQL 17: a
 * role's or database's limit that ends a long import's connection; it was a bare driver error,
 * a server's 500) and `too_many_connections` (53300).
 */
const CONNECTION_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[1235]|25P0[34]|53300)$/;
/** node-postgres' errors for a socket that ended, was refused or never answered (no SQLSTATE). */
const SOCKET_FAILURE = /^(ECONNRESET|ECONNREFUSED|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)$/;

/** node-postgres' words for a statement refused because its client had already failed: it was never sent. */
const DEAD_BEFORE_SENDING = /^Client has encountered a connection error and is not queryable\b/;

/**
 * Whether `error` says the connection to the server failed (refused, cut, the server shutting
 * down or restarting), as opposed to a statement failing: the next connection may well work.
 */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return CONNECTION_SQLSTATE.test(code) || SOCKET_FAILURE.test(code);
  // pg's own words for a connection that ended, and for a client used after its connection failed.
  // pg-pool's own connect timeout (connectionTimeoutMillis of a caller's pool) too.
  return /^(Connection terminated\b|Client has encountered a connection error\b|timeout exceeded when trying to connect\b)/.test(error.message);
}

/**
 * Whether `error` is node-postgres' client-side `query_timeout` (a caller's pool made with it):
 * the driver stopped waiting for the answer, but the statement runs on in the server, and the
 * connection stays busy with it. No SQLSTATE: told by the driver's words.
 */
export function isQueryReadTimeout(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === undefined && error.message === 'Query read timeout';
}

/** The client's query_timeout, noted on its timeout errors (noteQueryTimeout), for the message. */
const queryTimeouts = new WeakMap<object, number>();

/** Whether `error` is a query_timeout of `client`'s (then its limit is noted on it, for queryTimeoutWords). */
export function noteQueryTimeout(error: unknown, client: pg.ClientBase): boolean {
  if (!isQueryReadTimeout(error)) return false;
  // The client's own: the pool's options, a `query_timeout` in the URL, or pg.defaults.
  const ms = Number((client as unknown as { connectionParameters?: { query_timeout?: unknown } }).connectionParameters?.query_timeout);
  if (Number.isFinite(ms) && ms > 0) queryTimeouts.set(error as object, ms);
  return true;
}

/** What a query_timeout error's message and context say of it: the limit, when it was noted. */
export function queryTimeoutWords(cause: unknown): { text: string; context: { query_timeout_ms?: number } } {
  const ms = typeof cause === 'object' && cause !== null ? queryTimeouts.get(cause) : undefined;
  return {
    text: `the database did not answer within the pool's query_timeout${ms === undefined ? '' : ` (${ms} ms)`} (Query read timeout); the statement may still run on the server, and its connection was dropped from the pool`,
    context: ms === undefined ? {} : { query_timeout_ms: ms },
  };
}

/** No connection of the pool became free in time (the store turns it into STORAGE_BUSY). */
export class CheckoutTimeoutError extends Error {
  constructor(waitMs: number, pool: pg.Pool) {
    super(
      `no connection of the pool became free within ${waitMs} ms ` +
        `(${pool.totalCount} open, ${pool.idleCount} idle, ${pool.waitingCount} waiting)`,
    );
    this.name = 'CheckoutTimeoutError';
  }
}

/**
 * Whether `error` is a pooled connection found dead when a statement was sent on it (ended by
 * the server for idleness, or failed while idle): the pool drops it, so a call repeated after
 * it meets one dead connection fewer each time. Idle connections ended at once (a server's
 * idle_session_timeout, a blocked event loop) are handed out in turn before node has read
 * their ends, as promise continuations run between one socket's event and the next's.
 */
export function foundDeadInPool(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && ENDED_WHILE_IDLE.test(code)) || DEAD_BEFORE_SENDING.test(error.message);
}

/** The text of the statement a privilege error (42501) came from (noteRefusedStatement). */
const refusedStatements = new WeakMap<object, string>();

/**
 * Notes `text` on `error` when the server refused the statement for want of a privilege: what
 * the store was doing names the right it lacks (unavailable.ts), in any lc_messages.
 */
export function noteRefusedStatement(error: unknown, text: string): void {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '42501' && typeof error === 'object' && error !== null) refusedStatements.set(error, text);
}

/** The statement noted on `error` by noteRefusedStatement, if any. */
export function refusedStatement(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null ? refusedStatements.get(error) : undefined;
}

/** Errors of statements that never reached the server (a refused connect, a client found dead before sending). */
const notSent = new WeakSet<object>();

/** Errors of a check-out that had to connect and could not (refused, the server shutting down). */
const connectFailures = new WeakSet<object>();

function markConnectFailure(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) connectFailures.add(error);
  return error;
}

/** Whether `error` is a check-out's failure to connect (refused, or the server refused the login). */
export function failedToConnect(error: unknown): boolean {
  return typeof error === 'object' && error !== null && connectFailures.has(error);
}

/**
 * Whether `error` ended a statement on a connection the pool had, rather than a new
 * connection's attempt: the server may be up, and only its old connections gone (a
 * failover or a restart that node has not read yet), so a read tried again may get through.
 */
export function failedOnPooledConnection(error: unknown): boolean {
  return isConnectionFailure(error) && !connectFailures.has(error as object);
}

/** Marks `error` as the failure of a statement that was never sent; returns it. */
function markNotSent(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) notSent.add(error);
  return error;
}

/**
 * SQLSTATEs of a session the server ended while it sat idle waiting for the client: a DBA's
 * `idle_session_timeout` (57P05) or `idle_in_transaction_session_timeout` (25P03). The
 * statement that meets it was never run (a pooled connection ended so is handed out before
 * node has read the FATAL), and a transaction so ended was rolled back before its COMMIT.
 */
const ENDED_WHILE_IDLE = /^(57P05|25P03)$/;

/**
 * Whether `error` is known to have happened before anything reached the server's execution:
 * the connection was refused, the client was already dead when the statement was to be sent
 * (node-postgres: "not queryable"), or the server had ended the session for idleness. A write
 * that failed so did not happen; any other failure of a write may have committed.
 */
export function failedBeforeSending(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  return notSent.has(error) || (typeof code === 'string' && ENDED_WHILE_IDLE.test(code));
}

/**
 * Checks a client out of `pool` (waiting at most `waitMs` for one: CheckoutTimeoutError) with
 * an 'error' listener of ours for as long as it is out (the failure reaches the query that was
 * running, and the pool drops a client that can no longer query when it is released). Release
 * it as usual, exactly once. The listener is added in pg-pool's callback, synchronously: a new
 * connection whose server sends its FATAL in the same packet as the end of the handshake (a
 * `pg_terminate_backend` right after connecting) emits 'error' before a promise continuation
 * would run, and an 'error' without a listener crashes the process.
 */
export function checkOut(pool: pg.Pool, waitMs: number): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      reject(new CheckoutTimeoutError(waitMs, pool));
    }, Math.max(1, waitMs));
    pool.connect((error, client, done) => {
      clearTimeout(timer);
      if (error !== undefined && error !== null) {
        if (!settled) reject(markNotSent(markConnectFailure(error)));
        settled = true;
        return;
      }
      const checkedOut = client as pg.PoolClient;
      const ignore = (): void => {
        // The query in flight gets the error; release() hands the dead client back to be dropped.
      };
      checkedOut.on('error', ignore);
      checkedOut.release = (destroy?: Error | boolean): void => {
        checkedOut.off('error', ignore);
        done(destroy);
      };
      // A connection that arrives after the wait was given up goes straight back.
      if (settled) checkedOut.release();
      else resolve(checkedOut);
      settled = true;
    });
  });
}

/**
 * `pool` as Kysely's dialect uses it: guarded check-outs, and a ROLLBACK that fails (the
 * connection is gone) counted as done, so the transaction's first error is the one thrown. That
 * is true, not a pretence: the client is then destroyed on release, and a server whose
 * connection ends rolls its open transaction back. `waitMs()` bounds each check-out (asked at
 * the check-out: what is left of the call's time). `end()` leaves the pool alone: the engine
 * ends its own pool in close() and never a caller's.
 */
export function kyselyPool(pool: pg.Pool, waitMs: () => number): PostgresPool {
  return {
    connect: async () => {
      const client = await checkOut(pool, waitMs());
      let broken = false;
      const guarded = {
        // `name`: sent as a named prepared statement (the one-statement write's; Kysely never names one).
        query: async (sql: string, parameters: readonly unknown[], name?: string) => {
          const rollback = /^rollback$/i.test(sql);
          // The connection is dropped on release, and the server rolls back a transaction whose
          // connection ends: a ROLLBACK would queue behind a statement still running (query_timeout).
          if (rollback && broken) return { command: 'ROLLBACK', rowCount: 0, rows: [] } satisfies PostgresQueryResult<never>;
          try {
            return await (name === undefined ? client.query(sql, [...parameters]) : client.query({ name, text: sql, values: [...parameters] }));
          } catch (error) {
            // A statement outside a transaction has no ROLLBACK to find the connection gone:
            // its own failure says so (the server's FATAL can come before the socket closes).
            // One that query_timeout gave up on still runs there: not to be handed out again.
            if (rollback || isConnectionFailure(error) || noteQueryTimeout(error, client)) broken = true;
            if (DEAD_BEFORE_SENDING.test((error as Error).message ?? '')) markNotSent(error);
            noteRefusedStatement(error, sql);
            if (rollback) return { command: 'ROLLBACK', rowCount: 0, rows: [] } satisfies PostgresQueryResult<never>;
            throw error;
          }
        },
        release: (destroy?: boolean) => client.release(destroy === true || broken),
      };
      // Kysely's other query overload takes a cursor, used only for streaming, which the store never does.
      return guarded as unknown as PostgresPoolClient;
    },
    end: async () => {},
  };
}
