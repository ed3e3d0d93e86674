// The PostgreSQL read cache with a real listener: other connections' commits reach it
// through NOTIFY and the log; a lost listener makes it step aside until it has caught up;
// a log it did not follow (a restored dump, a trimmed log) makes it reload.
import { Kysely, PostgresDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changeChannel } from '../../src/stores/postgres/identifiers.js';
import { ChangeListener } from '../../src/stores/postgres/listener.js';
import { migrate } from '../../src/stores/postgres/migrations.js';
import { PostgresReadCache } from '../../src/stores/postgres/read-cache.js';
import type { PostgresSchema } from '../../src/stores/postgres/schema.js';
import { writeTools } from '../../src/stores/postgres/tables.js';
import type { Db, ToolWrite } from '../../src/stores/postgres/tables.js';
import { until as untilHolds } from '../support/waiting.js';
import { useFileDatabase } from './helpers.js';

const until = (condition: () => boolean | Promise<boolean>, what: string) => untilHolds(condition, what, { timeoutMs: 10_000, pollMs: 1 });

const database = useFileDatabase();
const STALENESS_MS = 300;
let db: Db;
let schema: string;
let listener: ChangeListener;
let cache: PostgresReadCache<string>;
let pool: ReturnType<typeof database.pool>;

/** The cache's reads: one read-only REPEATABLE READ transaction, as the engine runs them. */
const inSnapshot = <R>(work: (trx: Db) => Promise<R>): Promise<R> =>
  db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(work);

const fp = (n: number): string => n.toString(16).padStart(64, '0');
function tool(name: string, n: number): ToolWrite {
  const spec_json = JSON.stringify({ tool_name: name, version: String(n) });
  return { tool_name: name, version: String(n), fingerprint: fp(n), spec_json, enabled: true, created_at: null, first_registered_at: 'now', dep_message: null, dep_replacement: null, dep_sunset: null };
}

/** Another instance's write: its own transaction on the pool. */
async function write(...tools: ToolWrite[]): Promise<void> {
  await db.transaction().execute((trx) => writeTools(trx, schema, tools));
}

/** What the cache answers for `name`, or 'uncached' when it steps aside. */
async function cached(name: string): Promise<string | undefined> {
  return (await cache.ready()) ? cache.get(name) : 'uncached';
}

beforeEach(async () => {
  pool = database.pool({ max: 6 });
  schema = database.schema();
  await migrate({ pool, schema, busyTimeoutMs: 5000 });
  db = new Kysely<PostgresSchema>({ dialect: new PostgresDialect({ pool }) }).withSchema(schema);
  listener = new ChangeListener({
    connection: { connectionString: database.url() },
    channel: changeChannel(schema),
    heartbeatMs: 100,
    reconnectMs: { initial: 20, max: 100 },
    onNotify: (payload) => cache.notified(payload),
    onConnect: () => cache.invalidate(),
    onDisconnect: () => cache.invalidate(),
  });
  cache = new PostgresReadCache({ read: inSnapshot, schema, listener, stalenessMs: STALENESS_MS, staleIfErrorMs: 0, convert: (row) => row.spec_json });
  expect(await listener.start()).toBe(true);
});

afterEach(async () => {
  await listener.close();
});

describe('PostgreSQL read cache', () => {
  it("sees another connection's commits after their notification, each well within the bound, by catching up (no reload)", async () => {
    await write(tool('a', 1));
    expect(await cached('a')).toBe(tool('a', 1).spec_json);
    const lags: number[] = [];
    for (let i = 2; i <= 40; i++) {
      await write(tool('a', i));
      const committed = performance.now();
      await until(async () => (await cached('a')) === tool('a', i).spec_json, `version ${i}`);
      lags.push(performance.now() - committed);
    }
    expect(Math.max(...lags)).toBeLessThan(STALENESS_MS);
    expect(cache.stats.reloads).toBe(1);
    expect(cache.stats.catchUps).toBeGreaterThanOrEqual(39);
    expect(cache.list(true)).toEqual([tool('a', 40).spec_json]);
  });

  it('its own commit is visible at once after invalidate() (no waiting for the notification)', async () => {
    expect(await cached('mine')).toBeUndefined();
    await write(tool('mine', 1));
    cache.invalidate();
    expect(await cached('mine')).toBe(tool('mine', 1).spec_json);
  });

  it("its own write whose notification arrives before the COMMIT's reply costs no catch-up", async () => {
    await write(tool('seed', 1));
    expect(await cached('seed')).toBe(tool('seed', 1).spec_json);
    const catchUps = cache.stats.catchUps;
    for (let i = 1; i <= 5; i++) {
      const mine = tool('own', i);
      const head = await db.transaction().execute((trx) => writeTools(trx, schema, [mine]));
      // The listener's connection often delivers the write's own notification first.
      cache.notified(String(head.revision));
      cache.ownWrite(1, head, new Map([['own', mine]]));
      expect(await cached('own')).toBe(mine.spec_json);
    }
    expect(cache.stats.catchUps).toBe(catchUps);
  });

  it('a notification of a later commit (or an invalidation) before its own write is reported still makes it catch up', async () => {
    await write(tool('p', 1));
    expect(await cached('p')).toBe(tool('p', 1).spec_json);
    const catchUps = cache.stats.catchUps;
    const mine = tool('p', 2);
    const head = await db.transaction().execute((trx) => writeTools(trx, schema, [mine]));
    await write(tool('q', 1));
    cache.notified(String(head.revision + 1));
    cache.ownWrite(1, head, new Map([['p', mine]]));
    expect(await cached('q')).toBe(tool('q', 1).spec_json);
    expect(cache.stats.catchUps).toBe(catchUps + 1);

    const again = tool('p', 3);
    const next = await db.transaction().execute((trx) => writeTools(trx, schema, [again]));
    await write(tool('q', 2));
    cache.invalidate();
    cache.ownWrite(1, next, new Map([['p', again]]));
    expect(await cached('q')).toBe(tool('q', 2).spec_json);
    expect(cache.stats.catchUps).toBe(catchUps + 2);
  });

  it('pg_terminate_backend of the listener: it steps aside at once, and after the reconnect catches up from the log', async () => {
    await write(tool('x', 1));
    expect(await cached('x')).toBe(tool('x', 1).spec_json);
    const pid = listener.backendPid;
    await pool.query('SELECT pg_terminate_backend($1)', [pid]);
    await until(() => !listener.listening, 'the listener to notice');
    expect(await cached('x')).toBe('uncached');
    await write(tool('x', 2), tool('y', 1));
    await until(() => listener.listening, 'the reconnect');
    expect(await cached('x')).toBe(tool('x', 2).spec_json);
    expect(await cached('y')).toBe(tool('y', 1).spec_json);
    expect(cache.stats.reloads).toBe(1);
  });

  it('steps aside while the heartbeat has not confirmed the listener within the bound', async () => {
    await write(tool('h', 1));
    expect(await cached('h')).toBe(tool('h', 1).spec_json);
    // A listener that stopped confirming (a silent network loss looks like this).
    const silent = { listening: true, confirmedAt: performance.now() - STALENESS_MS - 1, lastConfirmedAt: performance.now() - STALENESS_MS - 1 };
    const stale = new PostgresReadCache({ read: inSnapshot, schema, listener: silent, stalenessMs: STALENESS_MS, staleIfErrorMs: 0, convert: (row) => row.spec_json });
    expect(await stale.ready()).toBe(false);
  });

  it('a restored dump with the same head revision but another history: the cache notices and reloads', async () => {
    await write(tool('r', 1));
    expect(await cached('r')).toBe(tool('r', 1).spec_json);
    const client = await pool.connect();
    try {
      // What pg_restore of an older dump does: rows and the log replaced without the store's triggers.
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query(`DELETE FROM ${schema}.tool_changes`);
      await client.query(`DELETE FROM ${schema}.tool_registrations`);
      await client.query(`INSERT INTO ${schema}.tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES ('other', $1, '9', '{"restored":true}', 'then')`, [fp(9)]);
      await client.query(`INSERT INTO ${schema}.tool_registrations VALUES ('other', $1, true, NULL)`, [fp(9)]);
      await client.query(`INSERT INTO ${schema}.tool_changes VALUES (1, pg_current_xact_id(), 'other', 'added', '9', 'then', 'dump-token')`);
      await client.query(`UPDATE ${schema}.tool_registry_head SET token = 'dump-token'`);
      await client.query(`SELECT pg_notify($1, '1')`, [changeChannel(schema)]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    cache.invalidate();
    expect(await cached('r')).toBeUndefined();
    expect(await cached('other')).toBe('{"restored":true}');
    expect(cache.stats.reloads).toBe(2);
  });

  it('more changes since it looked than a catch-up takes (10,000): it reloads', async () => {
    await write(tool('first', 1));
    expect(await cached('first')).toBeDefined();
    await write(...Array.from({ length: 12_000 }, (_, i) => tool(`bulk${i}`, i + 2)));
    cache.invalidate();
    expect(await cached('bulk11999')).toBe(tool('bulk11999', 12_001).spec_json);
    expect(cache.stats.reloads).toBe(2);
    expect(cache.list(true)).toHaveLength(12_001);
  });
});
