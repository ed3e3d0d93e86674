// Pool connections the store checks out, guarded against their connection dying while out.
// node-postgres' pool listens for a client's 'error' only while the client is idle; a checked-out
// client whose connection ends (pg_terminate_backend, a server restart, a network cut) emits
// 'error' with no listener, and an EventEmitter 'error' without a listener crashes the process.
// And inside a transaction, the ROLLBACK that follows the failure fails too: Kysely would throw
// that second error ("Connection terminated unexpectedly") instead of the first, which says why
// (the server's FATAL with its SQLSTATE, 57P01 for pg_terminate_backend).
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/**
 * Checks a client out of `pool` with an 'error' listener of ours for as long as it is out (the
 * failure reaches the query that was running, and the pool drops a client that can no longer
 * query when it is released). Release it as usual, exactly once.
 */
export async function checkOut(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  const ignore = (): void => {
    // The query in flight gets the error; release() hands the dead client back to be dropped.
  };
  client.on('error', ignore);
  // The pool sets a fresh `release` at every check-out: this wrapper lasts for this one.
  const release = client.release;
  client.release = (destroy?: Error | boolean): void => {
    client.off('error', ignore);
    release(destroy);
  };
  return client;
}

/**
 * `pool` as Kysely's dialect uses it: guarded check-outs, and a ROLLBACK that fails (the
 * connection is gone) counted as done, so the transaction's first error is the one thrown. That
 * is true, not a pretence: the client is then destroyed on release, and a server whose
 * connection ends rolls its open transaction back. `end()` leaves the pool alone: the engine
 * ends its own pool in close() and never a caller's.
 */
export function kyselyPool(pool: pg.Pool): PostgresPool {
  return {
    connect: async () => {
      const client = await checkOut(pool);
      let broken = false;
      const guarded = {
        query: async (sql: string, parameters: readonly unknown[]) => {
          if (!/^rollback$/i.test(sql)) return client.query(sql, [...parameters]);
          try {
            return await client.query(sql, [...parameters]);
          } catch {
            broken = true;
            return { command: 'ROLLBACK', rowCount: 0, rows: [] } satisfies PostgresQueryResult<never>;
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
