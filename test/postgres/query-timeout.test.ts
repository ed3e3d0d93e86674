// A caller's pool made with node-postgres' `query_timeout` (client-side: the driver stops
// waiting for the answer, the statement runs on) meets a DBA's ACCESS EXCLUSIVE lock. The call
// failed with the driver's bare Error('Query read timeout'), no code (a server's 500), and the
// one-statement write's connection went back to the pool with its statement still waiting, so
// the next call was handed it and waited behind it. Now: a read is STORAGE_BUSY, a write
// STORAGE_UNAVAILABLE with what is known of it, and the connection is dropped from the pool.
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import type { PostgresToolRegistry } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { until } from '../support/waiting.js';
import { useFileDatabase } from './helpers.js';

const db = useFileDatabase();
/** The caller's pool's query_timeout: short, the locks below outlast it. */
const QUERY_TIMEOUT_MS = 150;

/** One migrated schema with the tool 'kept' for the file (a migration costs more than the tests); each test writes names of its own. */
let schema: string;
beforeAll(async () => {
  schema = db.schema();
  const setup = await openPostgresToolRegistry({ pool: db.pool({ max: 1 }), schema, cache: false });
  await setup.register(minimalSpec('kept'));
  await setup.close();
});

/** A registry on the file's schema, on a pool of one connection with query_timeout. */
async function seeded(cache: boolean): Promise<{ pool: pg.Pool; registry: PostgresToolRegistry }> {
  // max 1: a connection handed back with its statement still running is the one the next call gets.
  const pool = db.pool({ max: 1, query_timeout: QUERY_TIMEOUT_MS });
  // busyTimeoutMs far above query_timeout: the driver's limit is the one that ends the waits here.
  const registry = await openPostgresToolRegistry({ pool, schema, cache, busyTimeoutMs: 30_000 });
  expect((await registry.get('kept'))?.spec.tool_name).toBe('kept');
  return { pool, registry };
}

/** Runs `calls` while a DBA's transaction holds ACCESS EXCLUSIVE on `tables` of `schema`. */
async function whileLocked<T>(schema: string, tables: readonly string[], calls: () => Promise<T>): Promise<T> {
  const locker = await db.pool({ max: 1 }).connect();
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE ${tables.map((table) => `${schema}.${table}`).join(', ')} IN ACCESS EXCLUSIVE MODE`);
  try {
    return await calls();
  } finally {
    await locker.query('ROLLBACK');
    locker.release();
  }
}

const failure = (call: Promise<unknown>): Promise<unknown> =>
  call.then(
    () => 'ok',
    (error: unknown) => error,
  );

/** The driver's query_timeout error is the cause: the message says which limit it was. */
function expectQueryTimeout(error: unknown, code: string, operation: string): void {
  expect(error).toMatchObject({ code, context: { operation, query_timeout_ms: QUERY_TIMEOUT_MS } });
  expect(((error as Error).cause as Error).message).toBe('Query read timeout');
  expect((error as Error).message).toContain(`query_timeout (${QUERY_TIMEOUT_MS} ms)`);
}

describe("PostgreSQL store on a caller's pool with query_timeout", () => {
  it('reads past it are STORAGE_BUSY, and the next call gets a fresh connection', async () => {
    const { pool, registry } = await seeded(false);
    await whileLocked(schema, ['tool_registrations', 'schema_migrations'], async () => {
      expectQueryTimeout(await failure(registry.get('kept')), 'STORAGE_BUSY', 'get');
      expectQueryTimeout(await failure(registry.listAll()), 'STORAGE_BUSY', 'listAll');
      // status() reads the applied migrations on a connection of its own first.
      expectQueryTimeout(await failure(registry.status()), 'STORAGE_BUSY', 'status');
      // Not handed the connection whose statement still waits for the lock.
      expect(await registry.listUpstreams()).toEqual([]);
    });
    expect((await registry.get('kept'))?.spec.tool_name).toBe('kept');
    expect(pool.totalCount).toBe(1);
    await registry.close();
  });

  it('a write in a transaction past it is STORAGE_UNAVAILABLE, not_written: nothing stored', async () => {
    const { registry } = await seeded(false);
    await whileLocked(schema, ['tool_changes'], async () => {
      const error = await failure(registry.register(minimalSpec('rolled_back')));
      expectQueryTimeout(error, 'STORAGE_UNAVAILABLE', 'register');
      // Its COMMIT was never sent and its connection is ended: the server rolls it back.
      expect(error).toMatchObject({ context: { outcome: 'not_written' } });
      expect(await registry.listUpstreams()).toEqual([]);
    });
    expect(await registry.get('rolled_back')).toBe(undefined);
    expect((await registry.register(minimalSpec('after'))).spec.tool_name).toBe('after');
    await registry.close();
  });

  it('a one-statement write past it is STORAGE_UNAVAILABLE, unknown: it commits once the lock goes', async () => {
    const { pool, registry } = await seeded(true);
    await whileLocked(schema, ['tool_changes'], async () => {
      const error = await failure(registry.register(minimalSpec('blocked')));
      expectQueryTimeout(error, 'STORAGE_UNAVAILABLE', 'register');
      expect(error).toMatchObject({ context: { outcome: 'unknown' } });
      // Dropped from the pool, not handed back: its statement still waits for the lock.
      expect(pool.totalCount).toBe(0);
      expect(await registry.listUpstreams()).toEqual([]);
    });
    // The statement the driver stopped waiting for ran on, and committed.
    await until(async () => (await registry.get('blocked')) !== undefined, 'the timed-out write to commit');
    await registry.close();
  });

  it('an open past it is STORAGE_BUSY', async () => {
    const pool = db.pool({ max: 1, query_timeout: QUERY_TIMEOUT_MS });
    await whileLocked(schema, ['schema_migrations'], async () => {
      expectQueryTimeout(await failure(openPostgresToolRegistry({ pool, schema, cache: false, busyTimeoutMs: 30_000 })), 'STORAGE_BUSY', 'open');
      expect(pool.totalCount).toBe(0);
    });
    await (await openPostgresToolRegistry({ pool, schema, cache: false })).close();
  });
});
