// Every call of the PostgreSQL store waits at most busyTimeoutMs, reads as much as writes
// (as SQLite's do): for a free connection of the pool (a caller's pool busy with its own work,
// or more concurrent calls than its `max`), and for a lock a DBA's statement holds (LOCK TABLE,
// ALTER TABLE, TRUNCATE and VACUUM FULL take ACCESS EXCLUSIVE, which blocks reads too). Past
// it: STORAGE_BUSY, and the registry works again once the pool or the lock is free.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { until } from '../support/waiting.js';
import type { PostgresToolRegistry } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { useFileDatabase } from './helpers.js';

const db = useFileDatabase();
const BUSY_MS = 200;
/** Far above BUSY_MS: a call still waiting then waits without bound. */
const GIVE_UP_MS = 15_000;

/** The code the call failed with, 'ok', or 'still waiting' when it neither settled within GIVE_UP_MS. */
async function outcome(call: Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const waiting = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve('still waiting'), GIVE_UP_MS);
  });
  try {
    return await Promise.race([call.then(() => 'ok', (error: unknown) => String((error as { code?: unknown }).code)), waiting]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every read and write of the registry, one after another, each with its outcome. */
async function everyCall(registry: PostgresToolRegistry): Promise<Record<string, string>> {
  return {
    get: await outcome(registry.get('kept')),
    has: await outcome(registry.has('kept')),
    listAll: await outcome(registry.listAll()),
    exportSnapshot: await outcome(registry.exportSnapshot()),
    changes: await outcome(registry.changes()),
    history: await outcome(registry.history('kept')),
    status: await outcome(registry.status()),
    verify: await outcome(registry.verify()),
    register: await outcome(registry.register(minimalSpec('new_one'))),
    setEnabled: await outcome(registry.setEnabled('kept', false)),
    remove: await outcome(registry.remove('kept')),
    // The gateway's rows (issue 37): never cached, so always a connection.
    putUpstream: await outcome(registry.putUpstream({ name: 'gh', transport: { type: 'http', url: 'https://example.com/mcp', headers: {} } })),
    getUpstream: await outcome(registry.getUpstream('gh')),
    listUpstreams: await outcome(registry.listUpstreams()),
    removeUpstream: await outcome(registry.removeUpstream('gh')),
    recordCalls: await outcome(registry.recordCalls([{ at: new Date().toISOString(), token: null, persona: null, namespace: 'default', tool: 'kept', version: null, fingerprint: null, upstream: null, duration_ms: 1, outcome: 'ok' }])),
    listCalls: await outcome(registry.listCalls()),
  };
}

async function seeded(pool: pg.Pool, schema: string, cache: boolean): Promise<PostgresToolRegistry> {
  // Migrated and seeded with the default budget first: a fresh schema's migration on a loaded
  // machine can take longer than BUSY_MS, and the calls under test are the ones after it.
  const setup = await openPostgresToolRegistry({ pool, schema });
  await setup.register(minimalSpec('kept'));
  await setup.close();
  const registry = await openPostgresToolRegistry({ pool, schema, busyTimeoutMs: BUSY_MS, cache });
  // These reads open the pool's connections; on a loaded machine opening one can take longer
  // than BUSY_MS, which is STORAGE_BUSY as designed, and not what these tests are about: retried.
  const unlessBusy = async (read: () => Promise<boolean>): Promise<boolean> =>
    read().catch((error: unknown) => {
      if ((error as { code?: unknown }).code === 'STORAGE_BUSY') return false;
      throw error;
    });
  // A cache answers from memory once it listens and has caught up (a first read).
  if (cache) await until(() => unlessBusy(async () => (await registry.status()).listening), 'the cache to listen');
  await until(() => unlessBusy(async () => (await registry.get('kept')) !== undefined), "a first read of 'kept'");
  return registry;
}

describe.each([true, false])('PostgreSQL store, cache %s: waits are bounded by busyTimeoutMs', (cache) => {
  it("a caller's pool with no free connection: every call is STORAGE_BUSY, none waits for good; then all work", async () => {
    const pool = db.pool({ max: 2 });
    const registry = await seeded(pool, db.schema(), cache);
    const held = [await pool.connect(), await pool.connect()];
    try {
      const outcomes = await everyCall(registry);
      // A cache that is caught up answers reads from memory, without a connection.
      const fromMemory = cache ? ['get', 'has', 'listAll', 'exportSnapshot'] : [];
      expect(outcomes).toEqual(Object.fromEntries(Object.keys(outcomes).map((call) => [call, fromMemory.includes(call) ? 'ok' : 'STORAGE_BUSY'])));
      const busy = await registry.register(minimalSpec('other')).catch((error: unknown) => error);
      // Named after the call, also when its first read (the identical-spec check) is what waited.
      expect(busy).toMatchObject({ code: 'STORAGE_BUSY', context: { operation: 'register', tool_name: 'other', busy_timeout_ms: BUSY_MS } });
      // A read that goes to the database is named after its method, as SQLite names it.
      if (!cache) expect(await registry.get('kept').catch((error: unknown) => error)).toMatchObject({ code: 'STORAGE_BUSY', context: { operation: 'get', tool_name: 'kept' } });
      expect(await registry.listCalls().catch((error: unknown) => error)).toMatchObject({ code: 'STORAGE_BUSY', context: { operation: 'listCalls', busy_timeout_ms: BUSY_MS } });
    } finally {
      for (const client of held) client.release();
    }
    // Nothing was written while busy, and the connections that arrived late went back to the pool.
    expect((await registry.listAll()).map((registration) => registration.spec.tool_name)).toEqual(['kept']);
    expect(await everyCall(registry)).toMatchObject({ get: 'ok', listAll: 'ok', changes: 'ok', register: 'ok', setEnabled: 'ok', remove: 'ok', putUpstream: 'ok', recordCalls: 'ok', listCalls: 'ok' });
    expect(pool.totalCount).toBeLessThanOrEqual(2);
    await registry.close();
  });

  it.each(['tool_registrations', 'tool_changes', 'tool_registry_head'])(
    'a DBA holds ACCESS EXCLUSIVE on %s: the calls that need it are STORAGE_BUSY, none waits for good',
    async (table) => {
      const pool = db.pool({ max: 6 });
      const schema = db.schema();
      const registry = await seeded(pool, schema, cache);
      const dba = db.pool({ max: 1 });
      const locker = await dba.connect();
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${schema}.${table} IN ACCESS EXCLUSIVE MODE`);
      let outcomes: Record<string, string>;
      try {
        outcomes = await everyCall(registry);
      } finally {
        await locker.query('ROLLBACK');
        locker.release();
      }
      expect(Object.values(outcomes).filter((one) => one !== 'ok' && one !== 'STORAGE_BUSY'), JSON.stringify(outcomes)).toEqual([]);
      // Each table is read by these calls (the cache too: it must catch up after its own failed writes).
      const needs: Record<string, string[]> = {
        tool_registrations: ['status', 'verify', 'register', 'setEnabled', 'remove'],
        tool_changes: ['changes', 'register', 'setEnabled', 'remove'],
        tool_registry_head: ['changes', 'status', 'register', 'setEnabled', 'remove'],
      };
      for (const call of needs[table] ?? []) expect(outcomes[call], call).toBe('STORAGE_BUSY');
      expect(await everyCall(registry)).toMatchObject({ get: 'ok', changes: 'ok', status: 'ok', register: 'ok', remove: 'ok' });
      await registry.close();
    },
    60_000,
  );
});

describe('PostgreSQL store: a watch waits out STORAGE_BUSY', () => {
  it("a DBA's lock on the change log past busyTimeoutMs: the watch keeps its place and delivers once it is released", async () => {
    const pool = db.pool({ max: 6 });
    const schema = db.schema();
    const registry = await seeded(pool, schema, true);
    const since = (await registry.changes({ limit: 0 })).revision;
    const dba = db.pool({ max: 1 });
    const locker = await dba.connect();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${schema}.tool_changes IN ACCESS EXCLUSIVE MODE`);
    const controller = new AbortController();
    const seen: string[] = [];
    let ended: unknown = null;
    // Started while the lock is held: its first read of the log is STORAGE_BUSY.
    const watching = (async () => {
      try {
        for await (const event of registry.watch({ since, signal: controller.signal })) seen.push(event.tool_name);
      } catch (error) {
        ended = error;
      }
    })();
    try {
      // Several busy timeouts long: the watch read, timed out, and reads again.
      await new Promise((resolve) => setTimeout(resolve, BUSY_MS * 4));
      expect(await outcome(registry.changes({ since }))).toBe('STORAGE_BUSY');
      expect(ended).toBe(null);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    await registry.register(minimalSpec('after_lock'));
    const deadline = Date.now() + GIVE_UP_MS;
    while (!seen.includes('after_lock') && ended === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect([ended, seen]).toEqual([null, ['after_lock']]);
    controller.abort();
    await watching;
    await registry.close();
  }, 180_000);
});
