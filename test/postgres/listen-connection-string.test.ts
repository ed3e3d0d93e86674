// The `listenConnectionString` option: the LISTEN connection goes to that URL instead of the
// pool's settings (for a pool behind PgBouncer in transaction mode), and another instance's
// commits reach the cache through it. A URL that cannot connect does not fail the open: every
// read is then a query (never stale), and watch() polls, while the listener keeps retrying.
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import type { PostgresToolRegistry } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { until } from '../support/waiting.js';
import { useFileDatabase, withAppName } from './helpers.js';

const db = useFileDatabase();



const versionOf = async (registry: PostgresToolRegistry, name: string): Promise<string | null | undefined> => (await registry.get(name))?.spec.version;

/** B on a pool of the test's own (application_name tr-b-pool), counting the connections it checks out. */
async function openB(schema: string, listenConnectionString: string) {
  const pool = db.pool({ max: 2, application_name: 'tr-b-pool' });
  const checkOuts = { count: 0 };
  pool.on('acquire', () => checkOuts.count++);
  const registry = await openPostgresToolRegistry({ pool, schema, listenConnectionString });
  return { registry, checkOuts };
}

describe('PostgreSQL listenConnectionString', () => {
  it("B listens on its own URL, and A's commits reach B's cache through it", async () => {
    const schema = db.schema();
    const admin = db.pool();
    const a = await openPostgresToolRegistry({ connectionString: db.url(), schema });
    const { registry: b, checkOuts } = await openB(schema, withAppName(db.url(), 'tr-b-listen'));
    try {
      const status = await b.status();
      expect(status.listening).toBe(true);
      const listener = await admin.query<{ application_name: string }>('SELECT application_name FROM pg_stat_activity WHERE pid = $1', [
        status.listenerPid,
      ]);
      // The pool's settings would have named it tr-b-pool.
      expect(listener.rows).toEqual([{ application_name: 'tr-b-listen' }]);

      await a.register(minimalSpec('t', { version: '1' }));
      await until(async () => (await versionOf(b, 't')) === '1', "B to see A's first commit");
      // B answers from memory now: several reads in a row check out no connection.
      await until(async () => {
        const before = checkOuts.count;
        for (let i = 0; i < 5; i++) expect(await versionOf(b, 't')).toBe('1');
        return checkOuts.count === before;
      }, 'B to serve reads from its cache');

      // While B serves from memory, only a notification on its listener can make it look at the log.
      await a.register(minimalSpec('t', { version: '2' }));
      await until(async () => (await versionOf(b, 't')) === '2', "B's cache to show A's second commit");
      expect((await b.status()).listenerPid).toBe(status.listenerPid);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('a listenConnectionString that cannot connect: the open succeeds, every read is a query (never stale), watch() polls', async () => {
    const schema = db.schema();
    const a = await openPostgresToolRegistry({ connectionString: db.url(), schema });
    const nowhere = new URL(db.url());
    nowhere.port = '1';
    const { registry: b, checkOuts } = await openB(schema, nowhere.toString());
    try {
      expect(await b.status()).toMatchObject({ cache: true, listening: false, listenerPid: null });
      const stop = new AbortController();
      const watched: string[] = [];
      const since = (await b.changes()).revision;
      const watching = (async () => {
        for await (const event of b.watch({ since, signal: stop.signal })) watched.push(`${event.action} ${event.tool_name}@${event.version}`);
      })();

      await a.register(minimalSpec('t', { version: '1' }));
      // At once, no waiting: B has no cache it trusts, so its read goes to the database.
      expect(await versionOf(b, 't')).toBe('1');
      const before = checkOuts.count;
      for (let i = 0; i < 5; i++) expect(await versionOf(b, 't')).toBe('1');
      expect(checkOuts.count - before).toBeGreaterThanOrEqual(5);
      await a.register(minimalSpec('t', { version: '2' }));
      expect(await versionOf(b, 't')).toBe('2');

      await until(() => watched.length >= 2, "B's watch to see both commits");
      expect(watched).toEqual(['added t@1', 'updated t@2']);
      stop.abort();
      await watching;
      expect((await b.status()).listening).toBe(false);
    } finally {
      // close() also stops the listener's reconnect attempts.
      await b.close();
      await a.close();
    }
  });

  it('with the cache off, the LISTEN connection opens with the first watch(), not with the open', async () => {
    const schema = db.schema();
    const admin = db.pool();
    // B's listener is the only connection named tr-lazy-listen (its pool's are tr-b-pool).
    const listeners = async (): Promise<number> =>
      Number((await admin.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'tr-lazy-listen'")).rows[0]?.n);
    const a = await openPostgresToolRegistry({ connectionString: db.url(), schema });
    const pool = db.pool({ max: 2, application_name: 'tr-b-pool' });
    const b = await openPostgresToolRegistry({ pool, schema, cache: false, listenConnectionString: withAppName(db.url(), 'tr-lazy-listen') });
    try {
      await b.register(minimalSpec('own', { version: '1' }));
      expect(await versionOf(b, 'own')).toBe('1');
      expect(await b.status()).toMatchObject({ cache: false, listening: false, listenerPid: null });
      expect(await listeners()).toBe(0);

      const stop = new AbortController();
      const watched: string[] = [];
      const since = (await b.changes()).revision;
      const watching = (async () => {
        for await (const event of b.watch({ since, signal: stop.signal })) watched.push(`${event.action} ${event.tool_name}@${event.version}`);
      })();
      await until(async () => (await b.status()).listening, "B's listener to connect for the watch");
      expect(await listeners()).toBe(1);
      await a.register(minimalSpec('t', { version: '1' }));
      await until(() => watched.length >= 1, "B's watch to see A's commit");
      expect(watched).toEqual(['added t@1']);
      stop.abort();
      await watching;
    } finally {
      await b.close();
      await a.close();
    }
    await until(async () => (await listeners()) === 0, "B's listener to close");
  });
});
