// A watch over a PostgreSQL schema that a dump is restored into (issue 28, item 1): the
// restored log hands the same revisions out again for other changes, so following it by
// number alone skips them. The behaviour every store shares is in the conformance suite.
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { expectCode, minimalSpec } from '../support/registry-helpers.js';
import { useFileDatabase } from './helpers.js';

const database = useFileDatabase();
const TABLES = ['tool_specs', 'tool_registrations', 'tool_changes', 'tool_registry_head'] as const;

describe('PostgreSQL: a watch over a restored dump', () => {
  it('a dump restored under a running watch ends it with CHANGES_EXPIRED (replaced), never a silent gap', async () => {
    const schema = database.schema();
    const dump = `${schema}_dump`;
    const pool = database.pool();
    const registry = await openPostgresToolRegistry({ connectionString: database.url(), schema });
    try {
      await registry.registerMany([minimalSpec('a'), minimalSpec('b'), minimalSpec('c')]);
      // The dump, at revision 3: a copy of every table's rows.
      await pool.query(`CREATE SCHEMA ${dump}`);
      for (const table of TABLES) await pool.query(`CREATE TABLE ${dump}.${table} AS SELECT * FROM ${schema}.${table}`);
      await registry.register(minimalSpec('x'));
      await registry.register(minimalSpec('y'));
      const iterator = registry.watch()[Symbol.asyncIterator](); // from revision 5
      // Handled from now on: the watch may end before the last register below has returned.
      const failed = expectCode(iterator.next(), 'CHANGES_EXPIRED');
      // Its first read (at revision 5, marked) is done before the restore: an answer from the server.
      await registry.changes({ limit: 0 });
      await registry.changes({ limit: 0 });
      // What pg_restore of the dump does: the rows replaced without the store's triggers.
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
});
