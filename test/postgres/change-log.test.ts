// The change log of migrations/postgres/0001_init at the SQL level: what the triggers log for
// the store's writes and for a DBA's hand edits in psql, gap-free revisions in commit order
// under concurrent writers, and the bound on what the log keeps.
import type pg from 'pg';
import { beforeEach, describe, expect, it } from 'vitest';
import { migrate } from '../../src/stores/postgres/migrations.js';
import { useFileDatabase } from './helpers.js';

const db = useFileDatabase();
const FP = (n: number): string => n.toString(16).padStart(64, '0');

let pool: pg.Pool;
let schema: string;

beforeEach(async () => {
  pool = db.pool({ max: 12 });
  schema = db.schema();
  await migrate({ pool, schema, busyTimeoutMs: 5000 });
  await pool.query(`SET search_path TO ${schema}`);
});

/** Adds a tool the way the store does: its spec row, then its registration (one transaction). */
async function addTool(client: pg.ClientBase, name: string, version: string | null, fp = FP(1)): Promise<void> {
  await client.query(
    `INSERT INTO ${schema}.tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES ($1, $2, $3, $4, 'now')`,
    [name, fp, version, JSON.stringify({ tool_name: name, version })],
  );
  await client.query(`INSERT INTO ${schema}.tool_registrations VALUES ($1, $2, true, '2026-01-01T00:00:00Z')`, [name, fp]);
}

async function log(): Promise<{ revision: number; tool_name: string; action: string; version: string | null }[]> {
  const { rows } = await pool.query(
    `SELECT revision::int, tool_name, action, version FROM ${schema}.tool_changes ORDER BY revision`,
  );
  return rows;
}

async function head(): Promise<number> {
  return (await pool.query(`SELECT revision::int AS r FROM ${schema}.tool_registry_head`)).rows[0].r;
}

describe('PostgreSQL change log', () => {
  it('logs adds, toggles, updates and removals with the version; an update that changes nothing is not logged', async () => {
    const client = await pool.connect();
    try {
      await addTool(client, 'search', '1.0');
    } finally {
      client.release();
    }
    const t = `${schema}.tool_registrations`;
    await pool.query(`UPDATE ${t} SET enabled = false WHERE tool_name = 'search'`);
    await pool.query(`UPDATE ${t} SET enabled = false WHERE tool_name = 'search'`);
    await pool.query(`UPDATE ${t} SET created_at = 'later' WHERE tool_name = 'search'`);
    await pool.query(`UPDATE ${t} SET enabled = true WHERE tool_name = 'search'`);
    await pool.query(`DELETE FROM ${t} WHERE tool_name = 'search'`);
    expect(await log()).toEqual([
      { revision: 1, tool_name: 'search', action: 'added', version: '1.0' },
      { revision: 2, tool_name: 'search', action: 'disabled', version: '1.0' },
      { revision: 3, tool_name: 'search', action: 'updated', version: '1.0' },
      { revision: 4, tool_name: 'search', action: 'enabled', version: '1.0' },
      { revision: 5, tool_name: 'search', action: 'removed', version: '1.0' },
    ]);
    expect(await head()).toBe(5);
    const { rows } = await pool.query(`SELECT xid::text, at FROM ${schema}.tool_changes ORDER BY revision LIMIT 1`);
    expect(rows[0].xid).toMatch(/^\d+$/);
    expect(rows[0].at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("logs a DBA's hand edits from a psql session with the default search_path: spec text, rename, TRUNCATE", async () => {
    const client = await pool.connect();
    try {
      await addTool(client, 'a', '1');
      await addTool(client, 'b', '2');
      await client.query('SET search_path TO public');
      await client.query(`UPDATE ${schema}.tool_specs SET spec_json = '{"edited":true}' WHERE tool_name = 'a'`);
      // A spec row no tool points at is history: editing it changes nothing a tool shows.
      await client.query(
        `INSERT INTO ${schema}.tool_specs VALUES ('a', $1, '0', '{}', 'then')`,
        [FP(2)],
      );
      await client.query(`UPDATE ${schema}.tool_specs SET spec_json = '{"old":true}' WHERE fingerprint = $1`, [FP(2)]);
      await client.query(`UPDATE ${schema}.tool_specs SET tool_name = 'c' WHERE tool_name = 'a' AND fingerprint = $1`, [FP(2)]);
      // CASCADE: tool_deprecations refers to the registrations (PostgreSQL refuses a TRUNCATE without it).
      await client.query(`TRUNCATE ${schema}.tool_registrations CASCADE`);
    } finally {
      client.release();
    }
    expect((await log()).map(({ tool_name, action, version }) => [tool_name, action, version])).toEqual([
      ['a', 'added', '1'],
      ['b', 'added', '2'],
      ['a', 'updated', '1'],
      ['a', 'removed', '1'],
      ['b', 'removed', '2'],
    ]);
  });

  it('a change cannot become visible before an earlier one: the second writer waits for the first to commit', async () => {
    const first = await pool.connect();
    const second = await pool.connect();
    try {
      await first.query('BEGIN');
      await addTool(first, 'one', '1');
      const secondPid = (await second.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await second.query('BEGIN');
      const secondDone = addTool(second, 'two', '1').then(() => second.query('COMMIT'));
      // The second transaction is queued on the head row while the first is open.
      let waiting = false;
      for (let i = 0; i < 200 && !waiting; i++) {
        const { rows } = await pool.query('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [secondPid]);
        waiting = rows[0]?.wait_event_type === 'Lock';
        if (!waiting) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(waiting).toBe(true);
      expect(await log()).toEqual([]);
      await first.query('COMMIT');
      await secondDone;
    } finally {
      first.release();
      second.release();
    }
    expect((await log()).map((row) => [row.revision, row.tool_name])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ]);
  });

  it('eight concurrent writers: revisions are gap-free and each transaction’s changes contiguous', async () => {
    const writers = Array.from({ length: 8 }, async (_, w) => {
      const client = await pool.connect();
      try {
        for (let t = 0; t < 15; t++) {
          await client.query('BEGIN');
          await addTool(client, `w${w}_t${t}_a`, '1');
          await addTool(client, `w${w}_t${t}_b`, '1');
          await client.query('COMMIT');
        }
      } finally {
        client.release();
      }
    });
    await Promise.all(writers);
    const { rows } = await pool.query<{ revision: number; xid: string }>(
      `SELECT revision::int, xid::text FROM ${schema}.tool_changes ORDER BY revision`,
    );
    expect(rows.map((row) => row.revision)).toEqual(Array.from({ length: 240 }, (_, i) => i + 1));
    const blocks = new Map<string, number[]>();
    for (const row of rows) blocks.set(row.xid, [...(blocks.get(row.xid) ?? []), row.revision]);
    expect(blocks.size).toBe(120);
    for (const revisions of blocks.values()) expect(revisions[1]).toBe((revisions[0] ?? 0) + 1);
    expect(await head()).toBe(240);
  });

  it('trims at each multiple of 1,000 to max(10,000, tools): 12,345 added then removed in two statements leave 10,690', async () => {
    await pool.query(
      `INSERT INTO ${schema}.tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at)
       SELECT 't' || i, $1, '1', '{}', 'now' FROM generate_series(1, 12345) AS i`,
      [FP(3)],
    );
    await pool.query(`INSERT INTO ${schema}.tool_registrations SELECT 't' || i, $1, true, NULL FROM generate_series(1, 12345) AS i`, [
      FP(3),
    ]);
    const span = `SELECT min(revision)::int AS oldest, max(revision)::int AS newest, count(*)::int AS n FROM ${schema}.tool_changes`;
    // With 12,345 tools the log keeps one change per tool.
    expect((await pool.query(span)).rows[0]).toEqual({ oldest: 1, newest: 12345, n: 12345 });
    await pool.query(`DELETE FROM ${schema}.tool_registrations`);
    // Head 24,690; trimmed at 24,000 to the 10,000 before it (no tools left).
    expect((await pool.query(span)).rows[0]).toEqual({ oldest: 14001, newest: 24690, n: 10690 });
    expect(await head()).toBe(24690);
  });
});
