// The PostgreSQL store's queries against the real server: name locks that make a first
// registration race have one winner, bulk writes past the bind-parameter limit, the history
// text rule, the writers' lock, pages of the change log.
import { Kysely, PostgresDialect } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/stores/postgres/migrations.js';
import type { PostgresSchema } from '../../src/stores/postgres/schema.js';
import {
  deleteTools,
  lockAndRead,
  readChanges,
  readHead,
  readHistory,
  readRegistration,
  readRegistrations,
  readTools,
  writeEnabled,
  writeTools,
} from '../../src/stores/postgres/tables.js';
import type { Db, ToolWrite } from '../../src/stores/postgres/tables.js';
import { useFileDatabase } from './helpers.js';

const database = useFileDatabase();
let db: Db;
let schema: string;

beforeEach(async () => {
  const pool = database.pool({ max: 20 });
  schema = database.schema();
  await migrate({ pool, schema, busyTimeoutMs: 5000 });
  // Not destroyed: that would end the pool, which useFileDatabase ends after each test.
  db = new Kysely<PostgresSchema>({ dialect: new PostgresDialect({ pool }) }).withSchema(schema);
});

const fp = (n: number): string => n.toString(16).padStart(64, '0');

function tool(name: string, n: number, extra: Partial<ToolWrite> = {}): ToolWrite {
  return {
    tool_name: name,
    version: '1',
    fingerprint: fp(n),
    spec_json: JSON.stringify({ tool_name: name, version: '1', n }),
    enabled: true,
    created_at: '2026-01-01T00:00:00.000Z',
    first_registered_at: '2026-01-01T00:00:00.000Z',
    dep_message: null,
    dep_replacement: null,
    dep_sunset: null,
    ...extra,
  };
}

describe('PostgreSQL store queries', () => {
  it('16 connections race a first registration under the name lock (tool_registry_lock): one writes, 15 see it and conflict, no driver error', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        db.transaction().execute(async (trx) => {
          const [current] = await lockAndRead(trx, schema, 10_000, false, ['contested']);
          if (current === undefined) {
            await writeTools(trx, schema, [tool('contested', i + 1)]);
            return 'created';
          }
          return current.fingerprint === fp(i + 1) ? 'kept' : 'conflict';
        }),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === 'created')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'conflict')).toHaveLength(15);
    expect((await readHead(db)).revision).toBe(1);
  });

  it('writes 100,000 tools in one call (tool_registry_write: two JSON parameters) and lists them in code-point order', async () => {
    const tools = Array.from({ length: 100_000 }, (_, i) => tool(`t${String(i).padStart(6, '0')}`, i + 1));
    tools.push(tool('B_upper', 200_001), tool('a_lower', 200_002));
    await db.transaction().execute((trx) => writeTools(trx, schema, tools));
    const listed = await readRegistrations(db, { includeDisabled: true });
    expect(listed).toHaveLength(100_002);
    expect(listed.slice(0, 2).map((row) => row.tool_name)).toEqual(['B_upper', 'a_lower']);
    const head = await readHead(db);
    expect(head.revision).toBe(100_002);
    const page = await readChanges(db, schema, 0, 5);
    // One change per tool is kept when there are more than 10,000 tools.
    expect(page.oldestRevision).toBe(1);
    expect(page.changes).toHaveLength(5);
  });

  it('keeps the text of the spec a tool points at; a history row it does not point at takes the new text', async () => {
    const first = tool('t', 1, { spec_json: '{"b":1,"a":2}' });
    await db.transaction().execute((trx) => writeTools(trx, schema, [first]));
    await db.transaction().execute((trx) => writeTools(trx, schema, [tool('t', 2, { version: '2' })]));
    // Back to spec 1, registered with other key order: the history row is not current, so it takes the new text.
    await db.transaction().execute((trx) => writeTools(trx, schema, [{ ...first, spec_json: '{"a":2,"b":1}', created_at: 'later' }]));
    // The same spec again in a third order while current: the stored text stays.
    await db.transaction().execute((trx) => writeTools(trx, schema, [{ ...first, spec_json: '{ "a": 2, "b": 1 }', created_at: 'later' }]));
    expect((await readRegistration(db, 't'))?.spec_json).toBe('{"a":2,"b":1}');
    expect((await readHistory(db, 't')).map((row) => row.fingerprint)).toEqual([fp(1), fp(2)]);
    const page = await readChanges(db, schema, 0, 100);
    expect(page.changes.map((change) => [change.action, change.version])).toEqual([
      ['added', '1'],
      ['updated', '2'],
      ['updated', '1'],
    ]);
  });

  it('an import holding the writers lock exclusively makes a writer wait (and time out after its lock_timeout)', async () => {
    await db.transaction().execute(async (importer) => {
      await lockAndRead(importer, schema, 1000, true, []);
      const error = await db
        .transaction()
        .execute((trx) => lockAndRead(trx, schema, 150, false, ['any']))
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: '55P03' });
    });
  });

  it('setEnabled, delete and a page of changes after a revision', async () => {
    await db.transaction().execute((trx) => writeTools(trx, schema, [tool('a', 1), tool('b', 2), tool('c', 3)]));
    expect(await db.transaction().execute((trx) => writeEnabled(trx, 'b', false))).toBe(true);
    expect(await db.transaction().execute((trx) => writeEnabled(trx, 'nope', false))).toBe(false);
    expect(await db.transaction().execute((trx) => deleteTools(trx, schema, ['a', 'nope']))).toEqual(['a']);
    expect([...(await readTools(db)).keys()].sort()).toEqual(['b', 'c']);
    expect((await readRegistrations(db, { includeDisabled: false })).map((row) => row.tool_name)).toEqual(['c']);
    const page = await readChanges(db, schema, 3, 10);
    expect(page.head.revision).toBe(5);
    expect(page.oldestRevision).toBe(1);
    expect(page.changes.map((change) => [change.revision, change.tool_name, change.action])).toEqual([
      [4, 'b', 'disabled'],
      [5, 'a', 'removed'],
    ]);
    expect((await readChanges(db, schema, 5, 10)).changes).toEqual([]);
  });
});
