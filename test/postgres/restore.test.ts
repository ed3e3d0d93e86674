// Restores on PostgreSQL (issue 28). Item 1: a watch over a schema that a dump is restored
// into; the restored log hands the same revisions out again for other changes, so following
// it by number alone skips them. Item 8: a schema the first releases wrote, with numbers
// beyond ±(2^53 - 1) in a spec: verify() and a restore of its own export. The behaviour every
// store shares is in the conformance suite.
import { describe, expect, it, vi } from 'vitest';
import { canonicalJson, fingerprintOf, openPostgresToolRegistry } from '../../src/index.js';
import type { ToolRegistry } from '../../src/index.js';
import { expectCode, minimalSpec } from '../support/registry-helpers.js';
import { useFileDatabase } from './helpers.js';

const database = useFileDatabase();
const TABLES = ['tool_specs', 'tool_registrations', 'tool_changes', 'tool_registry_head'] as const;

/** A copy of every table's rows in schema `dump` (a dump at this revision). */
async function takeDump(pool: ReturnType<typeof database.pool>, schema: string, dump: string): Promise<void> {
  await pool.query(`CREATE SCHEMA ${dump}`);
  for (const table of TABLES) await pool.query(`CREATE TABLE ${dump}.${table} AS SELECT * FROM ${schema}.${table}`);
}

/** What pg_restore of the dump does: the rows replaced without the store's triggers. */
async function restoreDump(pool: ReturnType<typeof database.pool>, schema: string, dump: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    for (const table of TABLES) await client.query(`DELETE FROM ${schema}.${table}`);
    for (const table of TABLES) {
      const overriding = table === 'tool_specs' ? 'OVERRIDING SYSTEM VALUE' : '';
      await client.query(`INSERT INTO ${schema}.${table} ${overriding} SELECT * FROM ${dump}.${table}`);
    }
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

/** A registry with the read cache and one without it, on `schema`. */
async function openCachedAndNot(schema: string): Promise<{ cached: ToolRegistry; uncached: ToolRegistry }> {
  const cached = await openPostgresToolRegistry({ connectionString: database.url(), schema });
  return { cached, uncached: await openPostgresToolRegistry({ connectionString: database.url(), schema, cache: false }) };
}

describe('PostgreSQL: a watch over a restored dump', () => {
  it('a dump restored under a running watch ends it with CHANGES_EXPIRED (replaced), never a silent gap', async () => {
    const schema = database.schema();
    const dump = `${schema}_dump`;
    const pool = database.pool();
    const registry = await openPostgresToolRegistry({ connectionString: database.url(), schema });
    try {
      await registry.registerMany([minimalSpec('a'), minimalSpec('b'), minimalSpec('c')]);
      await takeDump(pool, schema, dump); // at revision 3
      await registry.register(minimalSpec('x'));
      await registry.register(minimalSpec('y'));
      const iterator = registry.watch()[Symbol.asyncIterator](); // from revision 5
      // Handled from now on: the watch may end before the last register below has returned.
      const failed = expectCode(iterator.next(), 'CHANGES_EXPIRED');
      // Its first read (at revision 5, marked) is done before the restore: an answer from the server.
      await registry.changes({ limit: 0 });
      await registry.changes({ limit: 0 });
      await restoreDump(pool, schema, dump);
      // The log is back at revision 3, and 4, 5 and 6 are handed out again: following by number alone delivered only f.
      for (const name of ['d', 'e', 'f']) await registry.register(minimalSpec(name));
      const error = await failed;
      expect(error.context).toMatchObject({ since: 5, replaced: true });
      expect((await registry.changes({ since: 3 })).events.map((event) => [event.revision, event.tool_name])).toEqual([
        [4, 'd'],
        [5, 'e'],
        [6, 'f'],
      ]);
    } finally {
      await registry.close();
    }
  });

  it.each([true, false])('search finds what the restored dump holds once the log moves on, not what its index held (cache %s)', async (cache) => {
    const schema = database.schema();
    const dump = `${schema}_dump`;
    const pool = database.pool();
    const registry = await openPostgresToolRegistry({ connectionString: database.url(), schema, cache });
    const described = (name: string): ReturnType<typeof minimalSpec> => minimalSpec(name, { description: 'A minimal tool.' });
    const names = async (): Promise<string[]> => (await registry.search('minimal', { limit: 100 })).results.map(({ registration }) => registration.spec.tool_name).sort();
    try {
      await registry.registerMany([described('a'), described('b'), described('c')]);
      await takeDump(pool, schema, dump); // at revision 3
      await registry.register(described('x'));
      await registry.register(described('y'));
      expect(await names()).toEqual(['a', 'b', 'c', 'x', 'y']); // the index, at revision 5
      await restoreDump(pool, schema, dump);
      // Revisions 4, 5 and 6 handed out again: following by number alone read only f.
      for (const name of ['d', 'e', 'f']) await registry.register(described(name));
      const listed = (await registry.listAll()).map((registration) => registration.spec.tool_name);
      expect(listed).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
      expect(await names()).toEqual(listed);
    } finally {
      await registry.close();
    }
  });

  // The index at revision 5 (a, b, c, x, y); then the schema holds a, b, c, d, e at revision 5:
  // a dump of another moment restored as it is, or a dump of revision 3 restored and written
  // on to 5. The revision alone did not tell: the search kept x and y until a write moved it.
  it.each([
    [true, 'restored'],
    [false, 'restored'],
    [true, 'written on'],
    [false, 'written on'],
  ])('search finds a dump restored at the very revision its index reflects at the next search (cache %s, %s)', async (cache, how) => {
    const schema = database.schema();
    const pool = database.pool();
    const registry = await openPostgresToolRegistry({ connectionString: database.url(), schema, cache });
    const described = (name: string): ReturnType<typeof minimalSpec> => minimalSpec(name, { description: 'A minimal tool.' });
    const names = async (): Promise<string[]> => (await registry.search('minimal', { limit: 100 })).results.map(({ registration }) => registration.spec.tool_name).sort();
    const listed = async (): Promise<string[]> => (await registry.listAll()).map((registration) => registration.spec.tool_name);
    try {
      await registry.registerMany([described('a'), described('b'), described('c')]);
      await takeDump(pool, schema, `${schema}_at3`);
      await registry.registerMany([described('d'), described('e')]);
      await takeDump(pool, schema, `${schema}_at5`);
      await restoreDump(pool, schema, `${schema}_at3`);
      await registry.registerMany([described('x'), described('y')]);
      expect(await names()).toEqual(['a', 'b', 'c', 'x', 'y']); // the index, at revision 5
      if (how === 'restored') {
        await restoreDump(pool, schema, `${schema}_at5`);
        // A restore sends no notification: a cache learns of it when its listener reconnects.
        if (cache) await pool.query('SELECT pg_terminate_backend($1)', [(await registry.status()).listenerPid]);
      } else {
        await restoreDump(pool, schema, `${schema}_at3`);
        await registry.registerMany([described('d'), described('e')]);
      }
      await vi.waitFor(async () => expect(await listed()).toEqual(['a', 'b', 'c', 'd', 'e']));
      expect(await names()).toEqual(['a', 'b', 'c', 'd', 'e']);
    } finally {
      await registry.close();
    }
  });
});

describe('PostgreSQL: a read cache over a dump restored at an older revision', () => {
  it("another instance's commit after the restore wakes it, though its revision is below the cache's", async () => {
    const schema = database.schema();
    const pool = database.pool();
    const { cached, uncached: other } = await openCachedAndNot(schema);
    try {
      await cached.registerMany([minimalSpec('a'), minimalSpec('b'), minimalSpec('c')]);
      await takeDump(pool, schema, `${schema}_at3`);
      await cached.registerMany([minimalSpec('x'), minimalSpec('y')]); // the cache, at revision 5
      expect(await cached.get('x')).toBeDefined();
      await restoreDump(pool, schema, `${schema}_at3`);
      await other.register(minimalSpec('z')); // revision 4, notified: the cache ignored it until the log passed 5
      await vi.waitFor(async () => expect((await cached.listAll()).map((tool) => tool.spec.tool_name)).toEqual(['a', 'b', 'c', 'z']), { timeout: 5000 });
    } finally {
      await other.close();
      await cached.close();
    }
  });
});

describe('PostgreSQL: a schema the first releases wrote, with numbers beyond ±(2^53 - 1) in a schema', () => {
  it('verify() passes it, and its own export imports back, as objects and as JSON text', async () => {
    const schema = database.schema();
    const pool = database.pool();
    // No cache: the hand edit below reaches a cache only when its notification arrives (within
    // the documented bound), and this test reads the stored rows right after it.
    const registry = await openPostgresToolRegistry({ connectionString: database.url(), schema, cache: false });
    const restored = await openPostgresToolRegistry({ connectionString: database.url(), schema: database.schema() });
    try {
      await registry.register(minimalSpec('old', { version: '1' }));
      const spec = { tool_name: 'old', version: '2', description: null, input_schema: { type: 'integer', maximum: 1e21 }, output_schema: { type: 'object' }, tags: [] };
      const fingerprint = fingerprintOf(canonicalJson(spec));
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(
          `INSERT INTO ${schema}.tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES ('old', $1, '2', $2, '2024-01-01T00:00:00.000Z')`,
          [fingerprint, JSON.stringify(spec)],
        );
        await client.query(`UPDATE ${schema}.tool_registrations SET fingerprint = $1 WHERE tool_name = 'old'`, [fingerprint]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      expect(await registry.verify()).toMatchObject({ ok: true, problems: [] });
      const exported = await registry.exportSnapshot();
      expect(exported.tools[0]?.spec.input_schema).toEqual({ type: 'integer', maximum: 1e21 });
      expect((await restored.importSnapshot(exported, { mode: 'replace' })).added).toBe(1);
      expect((await restored.importSnapshot(JSON.parse(JSON.stringify(exported)))).unchanged).toBe(1);
      expect(await restored.exportSnapshot()).toEqual(exported);
      expect((await restored.verify()).ok).toBe(true);
    } finally {
      await registry.close();
      await restored.close();
    }
  });
});

describe('PostgreSQL: the schema dropped under an open registry', () => {
  it('(a namespace a DBA dropped, a restore with --clean under way) reads and writes are STORAGE_UNAVAILABLE, a write not_written, never a bare driver error', async () => {
    const schema = database.schema();
    const pool = database.pool();
    const { cached, uncached } = await openCachedAndNot(schema);
    try {
      await cached.register(minimalSpec('a'));
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
      for (const registry of [cached, uncached]) {
        const write = await expectCode(registry.register(minimalSpec('b')), 'STORAGE_UNAVAILABLE');
        expect(write.context).toMatchObject({ operation: 'register', outcome: 'not_written' });
        expect(write.message).toContain(`the registry schema ${schema} or its tables are missing`);
        await expectCode(registry.setEnabled('a', false), 'STORAGE_UNAVAILABLE');
      }
      const read = await expectCode(uncached.get('a'), 'STORAGE_UNAVAILABLE');
      expect(read.context).not.toHaveProperty('outcome');
      await expectCode(uncached.changes(), 'STORAGE_UNAVAILABLE');
    } finally {
      await cached.close();
      await uncached.close();
    }
  });
});
