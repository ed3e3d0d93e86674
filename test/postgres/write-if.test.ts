// A write decided on the read cache and sent as one statement (migration 0005,
// tool_registry_write_if): one round trip when the cache is current; when another writer got
// there first, the statement writes nothing and the write is decided again under its locks.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import type { ChangeEvent, PostgresToolRegistry } from '../../src/index.js';
import { useFileDatabase } from './helpers.js';

const database = useFileDatabase();

function spec(name: string, version: string, description = `Tool ${name} ${version}.`) {
  return { tool_name: name, version, description, input_schema: { type: 'object' }, output_schema: {}, tags: [] };
}

/** A pool whose clients record the text of every statement they send. */
function countingPool(): { pool: pg.Pool; statements: string[] } {
  const pool = database.pool();
  const statements: string[] = [];
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0];
      statements.push(typeof first === 'string' ? first : String((first as { text?: unknown }).text));
      return query(...args);
    };
  });
  return { pool, statements };
}

async function open(pool: pg.Pool, schema: string, cache = true): Promise<PostgresToolRegistry> {
  const registry = await openPostgresToolRegistry({ pool, schema, cache });
  // The cache answers once its listener is confirmed.
  await registry.listAll();
  return registry;
}

/**
 * A hand edit that fires no trigger (session_replication_role = replica): no log entry, no
 * notification, so an instance's cache cannot know of it. The surest way to a cache behind.
 */
async function silently(sql: string, values: unknown[] = []): Promise<void> {
  // One connection per test for the hand edits, in replica mode from its start: a connection
  // costs the server about 30 ms of CPU, one per edit cost more than the edits (docs/testing.md).
  handEdits ??= database.pool({ max: 1, options: '-c session_replication_role=replica' });
  await handEdits.query(sql, values);
}
let handEdits: pg.Pool | undefined;
afterEach(() => {
  // useFileDatabase ends the pool after each test.
  handEdits = undefined;
});

/** A tool registered by a silent hand edit. */
async function silentlyRegister(schema: string, name: string, version: string, enabled: boolean): Promise<void> {
  const fingerprint = 'f'.repeat(64);
  const json = JSON.stringify(spec(name, version, 'Written by hand.'));
  await silently(`INSERT INTO ${schema}.tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES ($1, $2, $3, $4, '2026-01-01T00:00:00.000Z')`, [
    name,
    fingerprint,
    version,
    json,
  ]);
  await silently(`INSERT INTO ${schema}.tool_registrations (tool_name, fingerprint, enabled, created_at) VALUES ($1, $2, $3, '2026-01-01T00:00:00.000Z')`, [name, fingerprint, enabled]);
}

const writeIfCalls = (statements: readonly string[]) => statements.filter((text) => text.includes('tool_registry_write_if')).length;
const lockedWrites = (statements: readonly string[]) => statements.filter((text) => text.includes('tool_registry_lock')).length;

describe('PostgreSQL: a write in one round trip from a current cache', () => {
  it('registers a new tool, and a new version of one, with one statement each when the cache is current', async () => {
    const { pool, statements } = countingPool();
    const registry = await open(pool, database.schema());
    try {
      statements.length = 0;
      await registry.register(spec('search', '1.0.0'));
      expect(statements.filter((text) => !/^(LISTEN|SELECT 1)/.test(text))).toHaveLength(1);
      expect(writeIfCalls(statements)).toBe(1);
      statements.length = 0;
      await registry.setEnabled('search', false);
      // A switch is one statement too; remove keeps the locked way.
      expect([writeIfCalls(statements), lockedWrites(statements)]).toEqual([1, 0]);
      statements.length = 0;
      const updated = await registry.register(spec('search', '2.0.0'));
      expect(writeIfCalls(statements)).toBe(1);
      expect(lockedWrites(statements)).toBe(0);
      // The rule ran on the cached row: the disabled flag carries over.
      expect(updated.enabled).toBe(false);
      expect((await registry.changes()).events.map(({ tool_name, action, version }) => [tool_name, action, version])).toEqual([
        ['search', 'added', '1.0.0'],
        ['search', 'disabled', '1.0.0'],
        ['search', 'updated', '2.0.0'],
      ]);
    } finally {
      await registry.close();
    }
  });

  it('prepares the statement once per connection; a connection that lost it (DISCARD ALL, a pooler) or holds its name for another statement makes it go unnamed, and nothing is lost', async () => {
    // One connection, so that pg_prepared_statements (per session) shows the store's.
    const pool = database.pool({ max: 1 });
    const registry = await open(pool, database.schema());
    const prepared = async () =>
      (await pool.query(`SELECT name FROM pg_prepared_statements WHERE statement LIKE '%tool_registry_write_if%'`)).rows.map((row: { name: string }) => row.name);
    try {
      await registry.register(spec('one', '1.0.0'));
      await registry.register(spec('two', '1.0.0'));
      expect(await prepared()).toEqual([expect.stringMatching(/^tool_registry_write_if_[0-9a-f]{16}$/)]);
      // node-postgres still takes the statement for prepared: the server refuses its Bind (26000) before it runs.
      await pool.query('DEALLOCATE ALL');
      await registry.register(spec('three', '1.0.0'));
      await registry.register(spec('four', '1.0.0'));
      expect(await prepared()).toEqual([]);
      expect((await registry.listAll()).map((tool) => tool.spec.tool_name)).toEqual(['four', 'one', 'three', 'two']);
      expect((await registry.changes()).events.map(({ tool_name, action }) => [tool_name, action])).toEqual([
        ['one', 'added'],
        ['two', 'added'],
        ['three', 'added'],
        ['four', 'added'],
      ]);
    } finally {
      await registry.close();
    }
    // A connection that already holds the name for another statement: its Parse is refused (42P05).
    const schema = database.schema();
    const taken = database.pool({ max: 1 });
    await taken.query(`PREPARE tool_registry_write_if_${createHash('sha256').update(schema).digest('hex').slice(0, 16)} AS SELECT 1`);
    const second = await open(taken, schema);
    try {
      expect((await second.register(spec('five', '1.0.0'))).spec.tool_name).toBe('five');
      expect((await second.listAll()).map((tool) => tool.spec.tool_name)).toEqual(['five']);
    } finally {
      await second.close();
    }
  });

  it("a function whose result type a migration changed (0A000, cached plan) makes it go unnamed, told by the error's routine, which lc_messages does not translate", async () => {
    const pool = database.pool({ max: 1 });
    const schema = database.schema();
    const registry = await open(pool, schema);
    const args = 'integer, json, json, json, json';
    try {
      await registry.register(spec('one', '1.0.0')); // prepared on the pool's one connection
      // What a later release's migration may do: the same function, another result type.
      await pool.query(
        `ALTER FUNCTION ${schema}.tool_registry_write_if(${args}) RENAME TO write_if_before; ` +
          `CREATE FUNCTION ${schema}.tool_registry_write_if(l integer, e json, s json, r json, p json) RETURNS TABLE (written boolean, revision numeric, token text) ` +
          `LANGUAGE sql AS $$ SELECT w.written, w.revision::numeric, w.token FROM ${schema}.write_if_before(l, e, s, r, p) AS w $$`,
      );
      expect((await registry.register(spec('two', '1.0.0'))).spec.tool_name).toBe('two');
      expect((await registry.listAll()).map((tool) => tool.spec.tool_name)).toEqual(['one', 'two']);
      // The server's error for it, on a statement of the test's own: the routine is the mark.
      await pool.query(`PREPARE probe AS SELECT * FROM ${schema}.tool_registry_write_if(0, '[]', '[]', '[]', 'null')`).catch(() => {});
      await pool.query(`ALTER FUNCTION ${schema}.tool_registry_write_if(${args}) RENAME TO write_if_numeric; ALTER FUNCTION ${schema}.write_if_before(${args}) RENAME TO tool_registry_write_if`);
      const error = await pool.query('EXECUTE probe').then(() => undefined, (caught: unknown) => caught);
      expect(error).toMatchObject({ code: '0A000', routine: 'RevalidateCachedQuery' });
    } finally {
      await registry.close();
    }
  });

  it('a cache that missed a write decides nothing: the statement writes nothing and the rule runs again under the locks', async () => {
    const { pool, statements } = countingPool();
    const schema = database.schema();
    const registry = await open(pool, schema);
    try {
      await registry.register(spec('known', '1.0.0'));
      await silentlyRegister(schema, 'hidden', '1.0.0', false);
      // The cache does not know the tool, so it would decide "added, enabled".
      expect(await registry.has('hidden')).toBe(false);

      statements.length = 0;
      await expect(registry.register(spec('hidden', '1.0.0'))).rejects.toMatchObject({ code: 'VERSION_CONFLICT', context: { tool_name: 'hidden' } });
      expect(writeIfCalls(statements)).toBe(1);
      expect(lockedWrites(statements)).toBe(1);

      // Another version replaces it and keeps the hand-written disabled flag.
      const replaced = await registry.register(spec('hidden', '2.0.0'));
      expect(replaced.enabled).toBe(false);
      expect((await registry.get('hidden'))?.spec.version).toBe('2.0.0');
      const rows = await pool.query(`SELECT tool_name, enabled FROM ${schema}.tool_registrations ORDER BY tool_name`);
      expect(rows.rows).toEqual([
        { tool_name: 'hidden', enabled: false },
        { tool_name: 'known', enabled: true },
      ]);
      // One event for the replace; the hand edit logged none.
      expect((await registry.changes()).events.map(({ tool_name, action }) => [tool_name, action])).toEqual([
        ['known', 'added'],
        ['hidden', 'updated'],
      ]);
    } finally {
      await registry.close();
    }
  });

  it('a row that differs only in its enabled flag, created_at or spec text is a differing row too', async () => {
    const schema = database.schema();
    const registry = await open(database.pool(), schema);
    try {
      await registry.register(spec('tool', '1.0.0'));
      // Disabled behind the cache's back: a register of 2.0.0 keeps it disabled.
      await silently(`UPDATE ${schema}.tool_registrations SET enabled = false WHERE tool_name = 'tool'`);
      expect((await registry.register(spec('tool', '2.0.0'))).enabled).toBe(false);
      // created_at changed behind its back: a batch that keeps the tool (identical) and adds
      // another answers with the stored row, not the cached one.
      await silently(`UPDATE ${schema}.tool_registrations SET created_at = '2020-01-01T00:00:00.000Z' WHERE tool_name = 'tool'`);
      const [kept] = await registry.registerMany([spec('tool', '2.0.0'), spec('other', '1.0.0')]);
      expect(kept?.created_at).toBe('2020-01-01T00:00:00.000Z');
      // The same spec in another key order (the same fingerprint): the stored text is the answer.
      const reordered = JSON.stringify(Object.fromEntries(Object.entries(spec('tool', '2.0.0')).reverse()));
      await silently(`UPDATE ${schema}.tool_specs SET spec_json = $1 WHERE tool_name = 'tool' AND version = '2.0.0'`, [reordered]);
      const [again] = await registry.registerMany([spec('tool', '2.0.0'), spec('third', '1.0.0')]);
      expect(Object.keys(again?.spec ?? {})).toEqual(Object.keys(JSON.parse(reordered) as object));
    } finally {
      await registry.close();
    }
  });

  it('setEnabled from a cache behind: a tool the cache lacks, and a flag switched behind its back, are decided under the locks', async () => {
    const { pool, statements } = countingPool();
    const schema = database.schema();
    const registry = await open(pool, schema);
    try {
      await silentlyRegister(schema, 'unseen', '1.0.0', false);
      // The cache says TOOL_NOT_FOUND; under the locks the tool is there.
      statements.length = 0;
      expect((await registry.setEnabled('unseen', true)).enabled).toBe(true);
      expect([writeIfCalls(statements), lockedWrites(statements)]).toEqual([0, 1]);

      await registry.register(spec('tool', '1.0.0'));
      await silently(`UPDATE ${schema}.tool_registrations SET enabled = false WHERE tool_name = 'tool'`);
      // The cache would switch it off; it is off already: nothing is written, no event.
      const before = (await registry.changes()).revision;
      statements.length = 0;
      expect((await registry.setEnabled('tool', false)).enabled).toBe(false);
      expect([writeIfCalls(statements), lockedWrites(statements)]).toEqual([1, 1]);
      expect((await registry.changes({ since: before })).events).toEqual([]);
      const rows = await pool.query(`SELECT tool_name, enabled FROM ${schema}.tool_registrations ORDER BY tool_name`);
      expect(rows.rows).toEqual([
        { tool_name: 'tool', enabled: false },
        { tool_name: 'unseen', enabled: true },
      ]);
    } finally {
      await registry.close();
    }
  });

  it("a cache told of another instance's commit writes without catching up first: one statement for a new tool; a tool it has not read yet is decided under the locks", async () => {
    const { pool, statements } = countingPool();
    const schema = database.schema();
    const registry = await open(pool, schema);
    const other = await open(database.pool(), schema);
    // Our own LISTEN: once it hears the other instance's commit, the registry's listener has
    // (in practice) heard it too, and its cache knows it is behind.
    const listen = new pg.Client({ connectionString: database.url() });
    await listen.connect();
    try {
      await listen.query(`LISTEN "tool_registry_changes_${schema}"`);
      const heard = new Promise((resolve) => listen.once('notification', resolve));
      await other.register(spec('theirs', '1.0.0'));
      await heard;
      await new Promise((resolve) => setTimeout(resolve, 50));

      statements.length = 0;
      await registry.register(spec('mine', '1.0.0'));
      // Before: a read transaction (the catch-up) came first.
      expect(statements.filter((text) => !/^(LISTEN|SELECT 1)/.test(text))).toHaveLength(1);
      expect(writeIfCalls(statements)).toBe(1);

      // The cache has not read 'theirs' yet: the same version with another spec is decided
      // "added" on memory, the statement writes nothing, and under the locks it is a conflict.
      statements.length = 0;
      await expect(registry.register(spec('theirs', '1.0.0', 'Another description.'))).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
      expect([writeIfCalls(statements), lockedWrites(statements)]).toEqual([1, 1]);
      // Its own spec again is no change, answered the same way.
      expect((await registry.register(spec('theirs', '1.0.0'))).spec.description).toBe('Tool theirs 1.0.0.');

      // Reads catch up first, as before: both tools, and one event each.
      expect((await registry.listAll()).map((tool) => tool.spec.tool_name)).toEqual(['mine', 'theirs']);
      expect((await registry.changes()).events.map(({ tool_name, action }) => [tool_name, action])).toEqual([
        ['theirs', 'added'],
        ['mine', 'added'],
      ]);
    } finally {
      await listen.end();
      await other.close();
      await registry.close();
    }
  });

  it('registerMany of new tools is one statement, and all or nothing when one of them is behind the cache', async () => {
    const { pool, statements } = countingPool();
    const schema = database.schema();
    const registry = await open(pool, schema);
    try {
      statements.length = 0;
      await registry.registerMany([spec('a', '1'), spec('b', '1'), spec('c', '1')]);
      expect(writeIfCalls(statements)).toBe(1);
      expect(lockedWrites(statements)).toBe(0);

      await silentlyRegister(schema, 'e', '1', true);
      await expect(registry.registerMany([spec('d', '1'), spec('e', '1'), spec('f', '1')])).rejects.toMatchObject({ code: 'VERSION_CONFLICT', context: { tool_name: 'e' } });
      const names = await pool.query(`SELECT tool_name FROM ${schema}.tool_registrations ORDER BY tool_name`);
      expect(names.rows.map((row: { tool_name: string }) => row.tool_name)).toEqual(['a', 'b', 'c', 'e']);
    } finally {
      await registry.close();
    }
  });

  it('three instances racing on five tools: the rule holds, every cache ends equal to the database, the log replays to it', async () => {
    const schema = database.schema();
    const registries = await Promise.all([0, 1, 2].map(() => open(database.pool(), schema)));
    // A seeded generator: the same calls in every run (their interleaving is the server's).
    let seed = 12345;
    // mulberry32
    const random = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
    };
    const refused = new Map<string, number>();
    const call = async (registry: PostgresToolRegistry): Promise<void> => {
      const name = ['a', 'b', 'c', 'd', 'e'][random(5)] as string;
      const kind = random(10);
      try {
        if (kind < 6) await registry.register(spec(name, String(random(4)), `variant ${random(3)}`));
        else if (kind < 9) await registry.setEnabled(name, random(2) === 0);
        else await registry.remove(name);
      } catch (error) {
        const code = (error as { code?: string }).code ?? String(error);
        refused.set(code, (refused.get(code) ?? 0) + 1);
      }
    };
    try {
      for (let round = 0; round < 100; round++) await Promise.all(registries.flatMap((registry) => [call(registry), call(registry)]));
      expect([...refused.keys()].filter((code) => code !== 'VERSION_CONFLICT' && code !== 'TOOL_NOT_FOUND')).toEqual([]);
      const fresh = await openPostgresToolRegistry({ connectionString: database.url(), schema, cache: false });
      try {
        const truth = await fresh.listAll({ includeDisabled: true });
        for (const registry of registries) {
          // Each cache catches up on the others' last commits, then shows what the database holds.
          await expect.poll(() => registry.listAll({ includeDisabled: true }), { timeout: 5000 }).toEqual(truth);
        }
        const { events } = await fresh.changes({ since: 0, limit: 10_000 });
        expect(events.map((event) => event.revision)).toEqual(events.map((_, index) => index + 1));
        const replayed = new Map<string, { version: string | null; enabled: boolean }>();
        let sameVersionReplacements = 0;
        for (const event of events) {
          const before = replayed.get(event.tool_name);
          if (event.action === 'removed') replayed.delete(event.tool_name);
          else if (event.action === 'added') replayed.set(event.tool_name, { version: event.version, enabled: true });
          else if (event.action === 'updated') {
            // Rule 4: the same version with another spec is a conflict, never a replacement.
            if (before?.version === event.version) sameVersionReplacements++;
            replayed.set(event.tool_name, { version: event.version, enabled: before?.enabled ?? true });
          } else replayed.set(event.tool_name, { version: event.version, enabled: event.action === 'enabled' });
        }
        expect(sameVersionReplacements).toBe(0);
        expect(Object.fromEntries(replayed)).toEqual(
          Object.fromEntries(truth.map((registration) => [registration.spec.tool_name, { version: registration.spec.version, enabled: registration.enabled }])),
        );
        expect(events.length).toBeGreaterThan(100);
      } finally {
        await fresh.close();
      }
    } finally {
      await Promise.all(registries.map((registry) => registry.close()));
    }
    // 600 writes racing on three pools passed the default 30 s on a loaded machine.
  }, 120_000);

  it('without a cache, or with a statement timeout, a write takes the locked way', async () => {
    for (const options of [{ cache: false }, { cache: true, statementTimeoutMs: 10_000 }]) {
      const { pool, statements } = countingPool();
      const registry = await openPostgresToolRegistry({ pool, schema: database.schema(), ...options });
      try {
        await registry.listAll();
        statements.length = 0;
        await registry.register(spec('tool', '1.0.0'));
        expect(writeIfCalls(statements), JSON.stringify(options)).toBe(0);
        expect(lockedWrites(statements), JSON.stringify(options)).toBe(1);
        expect((await registry.get('tool'))?.spec.version).toBe('1.0.0');
      } finally {
        await registry.close();
      }
    }
  });
});

describe('PostgreSQL: group commit of the writes decided on the cache', () => {
  /** The change log's rows, oldest first. */
  async function changeLog(schema: string): Promise<{ revision: string; xid: string; tool_name: string; action: string }[]> {
    const client = new pg.Client({ connectionString: database.url() });
    await client.connect();
    try {
      return (await client.query(`SELECT revision, xid::text AS xid, tool_name, action FROM ${schema}.tool_changes ORDER BY revision`)).rows;
    } finally {
      await client.end();
    }
  }

  it('64 concurrent registers of new tools on one instance share statements and transactions; the log is gap-free', async () => {
    const { pool, statements } = countingPool();
    const schema = database.schema();
    const registry = await open(pool, schema);
    try {
      statements.length = 0;
      const names = Array.from({ length: 64 }, (_, i) => `tool_${String(i).padStart(2, '0')}`);
      await Promise.all(names.map((name) => registry.register(spec(name, '1.0.0'))));
      // Before group commit: 64 statements, 64 transactions, 64 updates of the head row.
      expect(writeIfCalls(statements)).toBeLessThanOrEqual(8);
      expect(lockedWrites(statements)).toBe(0);
      const log = await changeLog(schema);
      expect(log.map((row) => Number(row.revision))).toEqual(names.map((_, i) => i + 1));
      expect(log.map((row) => row.tool_name).sort()).toEqual(names);
      expect(new Set(log.map((row) => row.xid)).size).toBe(writeIfCalls(statements));
      expect((await registry.listAll()).map((registration) => registration.spec.tool_name)).toEqual(names);
    } finally {
      await registry.close();
    }
  });

  it('four instances registering 16 new tools each at once, twice: a watch on a fifth sees every event once, in revision order; every cache ends equal to the database', async () => {
    const schema = database.schema();
    const writers = await Promise.all([0, 1, 2, 3].map(() => open(database.pool(), schema)));
    const watching = await open(database.pool(), schema);
    const stop = new AbortController();
    const seen: ChangeEvent[] = [];
    const total = 2 * 64;
    const watched = (async () => {
      for await (const event of watching.watch({ since: 0, signal: stop.signal })) {
        seen.push(event);
        if (seen.length === total) return;
      }
    })();
    try {
      for (let burst = 0; burst < 2; burst++) {
        // Each writer's cache is behind the others' commits of the burst before: it writes without catching up.
        await Promise.all(
          Array.from({ length: 64 }, (_, i) => (writers[i % 4] as PostgresToolRegistry).register(spec(`b${burst}_${String(i).padStart(2, '0')}`, '1.0.0'))),
        );
      }
      await watched;
      expect(seen.map((event) => event.revision)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      expect(seen.every((event) => event.action === 'added')).toBe(true);
      const names = seen.map((event) => event.tool_name);
      expect(new Set(names).size).toBe(total);
      const truth = (await watching.listAll()).map((registration) => registration.spec.tool_name);
      expect([...names].sort()).toEqual(truth);
      for (const writer of writers) expect((await writer.listAll()).map((registration) => registration.spec.tool_name)).toEqual(truth);
    } finally {
      stop.abort();
      await Promise.all([...writers, watching].map((registry) => registry.close()));
    }
  });

  it('one name twice in one turn: the second call is decided again on the first one\'s write (a conflict, or nothing to do)', async () => {
    const { pool } = countingPool();
    const schema = database.schema();
    const registry = await open(pool, schema);
    try {
      const outcomes = await Promise.allSettled([
        registry.register(spec('same', '1.0.0')),
        registry.register(spec('same', '1.0.0')),
        registry.register(spec('clash', '1.0.0')),
        registry.register(spec('clash', '1.0.0', 'Another text under the same version.')),
        registry.register(spec('other', '1.0.0')),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect((outcomes[3] as PromiseRejectedResult).reason).toMatchObject({ code: 'VERSION_CONFLICT' });
      const log = await changeLog(schema);
      expect(log.map((row) => `${row.tool_name} ${row.action}`).sort()).toEqual(['clash added', 'other added', 'same added']);
      expect((await registry.get('clash'))?.spec.description).toBe('Tool clash 1.0.0.');
    } finally {
      await registry.close();
    }
  });

  it('a batch with one row behind the cache writes nothing, and each of its calls is decided again under its locks', async () => {
    const { pool, statements } = countingPool();
    const schema = database.schema();
    const registry = await open(pool, schema);
    try {
      await silentlyRegister(schema, 'behind', '1.0.0', true);
      statements.length = 0;
      await Promise.all([registry.register(spec('behind', '2.0.0')), registry.register(spec('new_a', '1.0.0')), registry.register(spec('new_b', '1.0.0'))]);
      // One statement for the batch, then the locked way for each call (before: three statements, one locked write).
      expect(writeIfCalls(statements)).toBe(1);
      expect(lockedWrites(statements)).toBe(3);
      const log = await changeLog(schema);
      expect(log.map((row) => `${row.tool_name} ${row.action}`).sort()).toEqual(['behind updated', 'new_a added', 'new_b added']);
      expect((await registry.get('behind'))?.spec.version).toBe('2.0.0');
    } finally {
      await registry.close();
    }
  });
  it('the one statement finds the current rows by key, whatever the size of the registry: no scan of a table (migration 0008)', async () => {
    // The plans of every statement run inside the function, as the server chose them (auto_explain).
    const pool = database.pool();
    const plans: string[] = [];
    pool.on('connect', (client) => {
      client.on('notice', (notice) => plans.push(notice.message ?? ''));
      void client.query("LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = 'notice'");
    });
    const schema = database.schema();
    const registry = await open(pool, schema);
    try {
      await registry.importSnapshot({ tools: Array.from({ length: 2000 }, (_, i) => ({ spec: spec(`tool_${i}`, '1.0.0') })) });
      await registry.listAll();
      // A write takes this statement only when the read cache may answer: on a loaded machine
      // the listener's heartbeat can be late (the cache stale), and the write then rightly takes
      // the locked way. So the pair of writes is tried again, with new names and versions, until
      // both went as the one statement (on a quiet machine the first time).
      let attempts = 0;
      let statements = 0;
      const events: string[] = [];
      while (statements !== 2 && attempts < 20) {
        attempts++;
        plans.length = 0;
        await registry.register(spec(`tool_new_${attempts}`, '1.0.0'));
        await registry.register(spec('tool_7', `${attempts + 1}.0.0`));
        events.push(`tool_new_${attempts} added`, 'tool_7 updated');
        statements = plans.filter((plan) => plan.includes('tool_registry_write_if(')).length;
      }
      expect(statements).toBe(2);
      const inside = plans.filter((plan) => !plan.includes('tool_registry_write_if('));
      expect(inside.length).toBeGreaterThan(0);
      // Before 0007 the log's actions were found by hashing the JSON rows and scanning all of tool_registrations.
      expect(inside.filter((plan) => /Seq Scan on (tool_registrations|tool_specs|tool_deprecations)\b/.test(plan))).toEqual([]);
      expect((await registry.get('tool_7'))?.spec.version).toBe(`${attempts + 1}.0.0`);
      expect((await registry.changes({ since: 2000 })).events.map((event) => `${event.tool_name} ${event.action}`)).toEqual(events);
    } finally {
      await registry.close();
    }
  });
});
