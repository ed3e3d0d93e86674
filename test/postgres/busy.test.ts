// Retries of what a later attempt can cure (lock timeouts, deadlocks, serialization
// failures) against the real server, STORAGE_BUSY past the budget, other errors untouched;
// bigint/count values as numbers.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { retryWhileBusy } from '../../src/stores/postgres/busy.js';
import { safeInteger } from '../../src/stores/postgres/integers.js';
import { inTransaction } from '../../src/stores/postgres/migrations.js';
import { useFileDatabase } from './helpers.js';

const db = useFileDatabase();

async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await work(client);
  } finally {
    client.release();
  }
}

/** One attempt: in a transaction with lock_timeout = the time left, lock row `first`, wait for `locked`, then lock row `second` of `table`. */
function lockInOrder(client: pg.ClientBase, table: string, first: number, second: number, locked: () => Promise<void>) {
  return (remainingMs: number) =>
    inTransaction(client, async () => {
      await client.query(`SELECT set_config('lock_timeout', $1, true)`, [`${remainingMs}ms`]);
      await client.query(`UPDATE ${table} SET n = n + 1 WHERE id = $1`, [first]);
      await locked();
      await client.query(`UPDATE ${table} SET n = n + 1 WHERE id = $1`, [second]);
    });
}

describe('PostgreSQL busy handling', () => {
  it('a deadlock victim is retried: both writers complete, every increment counted once', async () => {
    const pool = db.pool({ max: 4 });
    const table = db.schema();
    await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, n int NOT NULL)`);
    await pool.query(`INSERT INTO ${table} VALUES (1, 0), (2, 0)`);
    let deadlocks = 0;
    // Each writer's first lock is taken before either asks for its second (a barrier, not a
    // 100 ms pause: on a loaded machine one writer could otherwise finish before the other began).
    let firstLocks = 0;
    let bothLocked!: () => void;
    const barrier = new Promise<void>((resolve) => (bothLocked = resolve));
    const locked = (): Promise<void> => {
      if (++firstLocks === 2) bothLocked();
      return barrier;
    };
    const run = (first: number, second: number) =>
      withClient(pool, async (client) => {
        const attempt = lockInOrder(client, table, first, second, locked);
        return retryWhileBusy({ timeoutMs: 10_000, operation: 'test' }, async (remaining) => {
          try {
            return await attempt(remaining);
          } catch (error) {
            if ((error as { code?: string }).code === '40P01') deadlocks++;
            throw error;
          }
        });
      });
    await Promise.all([run(1, 2), run(2, 1)]);
    expect(deadlocks).toBe(1);
    expect((await pool.query(`SELECT id, n FROM ${table} ORDER BY id`)).rows).toEqual([
      { id: 1, n: 2 },
      { id: 2, n: 2 },
    ]);
  });

  it('a serialization failure is retried until it goes through', async () => {
    const pool = db.pool({ max: 4 });
    const table = db.schema();
    await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, on_call boolean NOT NULL)`);
    await pool.query(`INSERT INTO ${table} VALUES (1, true), (2, true)`);
    let failures = 0;
    // Both first attempts read before either writes (a barrier, not a sleep: on a loaded
    // machine one transaction could otherwise commit before the other began, and no failure occur).
    let read = 0;
    let bothRead!: () => void;
    const barrier = new Promise<void>((resolve) => (bothRead = resolve));
    // Write skew: each takes itself off call if someone else is on call; SERIALIZABLE lets only one do so at a time.
    const offCall = (id: number) =>
      withClient(pool, (client) =>
        retryWhileBusy({ timeoutMs: 10_000, operation: 'test' }, async () => {
          try {
            await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
            const { rows } = await client.query(`SELECT count(*) AS n FROM ${table} WHERE on_call`);
            if (++read === 2) bothRead();
            await barrier;
            if (safeInteger(rows[0].n, 'count') > 1) await client.query(`UPDATE ${table} SET on_call = false WHERE id = $1`, [id]);
            await client.query('COMMIT');
          } catch (error) {
            await client.query('ROLLBACK');
            if ((error as { code?: string }).code === '40001') failures++;
            throw error;
          }
        }),
      );
    await Promise.all([offCall(1), offCall(2)]);
    expect(failures).toBeGreaterThanOrEqual(1);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE on_call`)).rows[0].n).toBe(1);
  });

  it('a lock held past the budget is STORAGE_BUSY with the lock timeout as cause, after about the budget', async () => {
    const pool = db.pool({ max: 4 });
    const table = db.schema();
    await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, n int NOT NULL)`);
    await pool.query(`INSERT INTO ${table} VALUES (1, 0)`);
    await withClient(pool, async (holder) => {
      await holder.query('BEGIN');
      await holder.query(`SELECT * FROM ${table} WHERE id = 1 FOR UPDATE`);
      try {
        const started = performance.now();
        const error = await withClient(pool, (client) =>
          retryWhileBusy({ timeoutMs: 400, operation: 'register' }, (remaining) =>
            inTransaction(client, async () => {
              await client.query(`SELECT set_config('lock_timeout', $1, true)`, [`${remaining}ms`]);
              await client.query(`UPDATE ${table} SET n = 1 WHERE id = 1`);
            }),
          ),
        ).catch((caught: unknown) => caught);
        const elapsed = performance.now() - started;
        expect(error).toMatchObject({ code: 'STORAGE_BUSY', context: { operation: 'register', busy_timeout_ms: 400, sqlstate: '55P03' } });
        expect((error as Error).cause).toMatchObject({ code: '55P03' });
        expect(elapsed).toBeGreaterThanOrEqual(390);
        expect(elapsed).toBeLessThan(2000);
      } finally {
        await holder.query('ROLLBACK');
      }
    });
    expect((await pool.query(`SELECT n FROM ${table}`)).rows[0].n).toBe(0);
  });

  it('any other error is thrown at once, untouched', async () => {
    const pool = db.pool();
    let attempts = 0;
    const error = await retryWhileBusy({ timeoutMs: 5000, operation: 'test' }, async () => {
      attempts++;
      await pool.query('SELECT 1/0');
    }).catch((caught: unknown) => caught);
    expect(attempts).toBe(1);
    expect(error).toMatchObject({ code: '22012' });
  });

  it('bigint and count(*) come back as strings; safeInteger makes them numbers and refuses what a number cannot hold', async () => {
    const pool = db.pool();
    const { rows } = await pool.query(`SELECT count(*) AS n, 9007199254740991::bigint AS max, 9007199254740993::bigint AS over`);
    expect(rows[0].n).toBe('1');
    expect(safeInteger(rows[0].n, 'count')).toBe(1);
    expect(safeInteger(rows[0].max, 'max')).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => safeInteger(rows[0].over, 'revision')).toThrow(RangeError);
    expect(() => safeInteger('1.5', 'revision')).toThrow(RangeError);
  });
});
