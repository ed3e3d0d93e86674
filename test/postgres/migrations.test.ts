// PostgreSQL migrations against the run's real server: applied once, in order, under the
// advisory lock (also by racing processes), refused when newer, busy as STORAGE_BUSY.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type pg from 'pg';
import { lockKeys } from '../../src/stores/postgres/identifiers.js';
import { MigrationFailedError, SchemaOccupiedError, migrate, readMigrations, shippedMigrations } from '../../src/stores/postgres/migrations.js';
import { openPostgresToolRegistry } from '../../src/index.js';
import { createToolRegistryServer, postgresNamespaces } from '../../src/server/index.js';
import { racePgWorkers, SHIPPED, useFileDatabase } from './helpers.js';

const db = useFileDatabase();

async function tablesOf(pool: ReturnType<typeof db.pool>, schema: string): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'v') ORDER BY 1`,
    [schema],
  );
  return rows.map((row) => row.name);
}

describe('PostgreSQL migrations', () => {
  it('creates the schema with every shipped migration once; a second run applies nothing', async () => {
    const pool = db.pool();
    const schema = db.schema();
    expect(await migrate({ pool, schema, busyTimeoutMs: 5000 })).toEqual(SHIPPED);
    expect(await migrate({ pool, schema, busyTimeoutMs: 5000 })).toEqual([]);
    const { rows } = await pool.query(`SELECT name FROM ${schema}.schema_migrations ORDER BY name`);
    expect(rows.map((row) => row.name)).toEqual(SHIPPED);
    expect(await tablesOf(pool, schema)).toEqual(
      ['schema_migrations', 'tool_calls', 'tool_changes', 'tool_deprecations', 'tool_registrations', 'tool_registry_head', 'tool_registry_policy', 'tool_specs', 'tool_upstreams', 'tools'].sort(),
    );
  });

  it('eight processes migrating one fresh database at once: each migration recorded once, applied by exactly one', async () => {
    const schema = db.schema();
    const results = await racePgWorkers(Array.from({ length: 8 }, () => ({ url: db.url(), schema, action: 'migrate' })));
    for (const result of results) expect(result.ok, JSON.stringify(result.error)).toBe(true);
    const appliedBy = results.flatMap((result) => result.result as string[]);
    expect(appliedBy.sort()).toEqual(SHIPPED);
    const { rows } = await db.pool().query(`SELECT name, count(*)::int AS n FROM ${schema}.schema_migrations GROUP BY name ORDER BY name`);
    expect(rows).toEqual(SHIPPED.map((name) => ({ name, n: 1 })));
  });

  it("instances starting together under a role whose transactions default to SERIALIZABLE: each migration recorded once, every open succeeds", async () => {
    // The lock's snapshot was the transaction's first (REPEATABLE READ and SERIALIZABLE take one
    // for the whole transaction): the schema looked missing after the lock, "already exists" (42P06).
    const pools = [1, 2, 3, 4].map(() => db.pool({ options: '-c default_transaction_isolation=serializable' }));
    for (let round = 0; round < 4; round++) {
      const schema = db.schema();
      const results = await Promise.allSettled(pools.map((pool) => migrate({ pool, schema, busyTimeoutMs: 10_000 })));
      expect(results.map((result) => (result.status === 'rejected' ? String(result.reason) : 'ok'))).toEqual(['ok', 'ok', 'ok', 'ok']);
      expect(results.flatMap((result) => (result.status === 'fulfilled' ? result.value : [])).sort()).toEqual(SHIPPED);
    }
  });

  it('a schema migrated by a newer release is refused with SCHEMA_TOO_NEW and left untouched', async () => {
    const pool = db.pool();
    const schema = db.schema();
    await migrate({ pool, schema, busyTimeoutMs: 5000 });
    await pool.query(`INSERT INTO ${schema}.schema_migrations (name) VALUES ('9999_from_the_future')`);
    const before = await pool.query(`SELECT name, applied_at FROM ${schema}.schema_migrations ORDER BY name`);
    const longer = [...shippedMigrations(), { name: '0999_next', sql: 'CREATE TABLE should_not_exist (x int);' }];
    await expect(migrate({ pool, schema, busyTimeoutMs: 5000, migrations: longer })).rejects.toMatchObject({
      code: 'SCHEMA_TOO_NEW',
      context: { schema, unknown_migrations: ['9999_from_the_future'] },
    });
    expect((await pool.query(`SELECT name, applied_at FROM ${schema}.schema_migrations ORDER BY name`)).rows).toEqual(before.rows);
    expect(await tablesOf(pool, schema)).not.toContain('should_not_exist');
  });

  it('waiting for another migrator past busyTimeoutMs is STORAGE_BUSY with the lock timeout as cause; nothing is created', async () => {
    const pool = db.pool();
    const schema = db.schema();
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockKeys.migrate(schema)]);
      const started = performance.now();
      const error = await migrate({ pool, schema, busyTimeoutMs: 300 }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'STORAGE_BUSY', context: { operation: 'migrate', sqlstate: '55P03' } });
      expect((error as Error).cause).toMatchObject({ code: '55P03' });
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const { rows } = await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    expect(rows).toHaveLength(0);
    // Once the lock is free the same call goes through.
    expect(await migrate({ pool, schema, busyTimeoutMs: 300 })).toEqual(SHIPPED);
  });

  it('a current schema costs one query; each pending file one transaction of three round trips', async () => {
    const pool = db.pool();
    const schema = db.schema();
    const sent: string[] = [];
    // Counts what migrate() sends on the connections it checks out of the pool.
    const counting = new Proxy(pool, {
      get(target, property, receiver) {
        if (property !== 'connect') return Reflect.get(target, property, receiver) as unknown;
        const counted = (client: pg.PoolClient): pg.PoolClient => {
          const query = client.query.bind(client) as (text: string) => Promise<unknown>;
          return Object.assign(Object.create(client) as typeof client, {
            query: (text: string, ...rest: unknown[]) => {
              sent.push(text);
              return (query as (...args: unknown[]) => Promise<unknown>)(text, ...rest);
            },
          });
        };
        // Both of pg.Pool's forms: the store checks out with a callback (its error listener goes on at once).
        return (callback?: (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void) => {
          if (callback === undefined) return target.connect().then(counted);
          target.connect((error, client, done) => callback(error, client === undefined ? undefined : counted(client), done));
          return undefined;
        };
      },
    });
    expect(await migrate({ pool: counting, schema, busyTimeoutMs: 5000 })).toEqual(SHIPPED);
    // One look (no table yet), then per file: lock and look, create and read, apply and commit.
    expect(sent).toHaveLength(1 + 3 * SHIPPED.length);
    expect(sent.filter((text) => text.startsWith('BEGIN'))).toHaveLength(SHIPPED.length);
    sent.length = 0;
    expect(await migrate({ pool: counting, schema, busyTimeoutMs: 5000 })).toEqual([]);
    expect(sent).toEqual([`SELECT name FROM "${schema}".schema_migrations ORDER BY name`]);
  });

  it('a failing migration is rolled back and named; the ones before it stay applied', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'tool-registry-pg-migrations-'));
    try {
      writeFileSync(join(folder, '0001_first.sql'), 'CREATE TABLE first_table (x int);');
      writeFileSync(join(folder, '0002_broken.sql'), 'CREATE TABLE second_table (x int);\nSELECT no_such_function();');
      const migrations = readMigrations(pathToFileURL(`${folder}/`));
      const pool = db.pool();
      const schema = db.schema();
      const error = await migrate({ pool, schema, busyTimeoutMs: 5000, migrations }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(MigrationFailedError);
      expect(error).toMatchObject({ migration: '0002_broken', cause: { code: '42883' } });
      expect(await tablesOf(pool, schema)).toEqual(['first_table', 'schema_migrations']);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("a schema holding another's objects under the migrations' names is refused naming the schema and each object, nothing written (library; a server's namespace: 503 STORAGE_UNAVAILABLE saying so; the command: test/cli/postgres.test.ts)", async () => {
    const pool = db.pool();
    // A table of 0001 with other columns and one of 0007: all migrations before 0007 were applied, then it failed (half-migrated).
    const [first, later, ledger] = [db.schema(), db.schema(), db.schema()];
    await pool.query(
      `CREATE SCHEMA ${first}; CREATE TABLE ${first}.tool_registrations (id int); CREATE TABLE ${first}.tool_upstreams (x int); ` +
        `CREATE SCHEMA ${later}; CREATE TABLE ${later}.tool_upstreams (x int); ` +
        `CREATE SCHEMA ${ledger}; CREATE TABLE ${ledger}.schema_migrations (id int)`,
    );
    const refused = async (schema: string, opening: Promise<unknown>, objects: string[]): Promise<void> => {
      const error = await opening.then(() => 'opened', (caught: unknown) => caught);
      expect(error).toBeInstanceOf(SchemaOccupiedError);
      expect((error as Error).message).toContain(`the PostgreSQL schema ${schema} holds`);
      expect((error as SchemaOccupiedError).objects).toEqual(objects);
    };
    await refused(first, migrate({ pool, schema: first, busyTimeoutMs: 5000 }), [`table ${first}.tool_registrations`, `table ${first}.tool_upstreams`]);
    await refused(later, openPostgresToolRegistry({ connectionString: db.url(), schema: later, cache: false }), [`table ${later}.tool_upstreams`]);
    for (const readonly of [false, true]) {
      await refused(ledger, openPostgresToolRegistry({ connectionString: db.url(), schema: ledger, cache: false, readonly }), [`table ${ledger}.schema_migrations (its columns are not the registry's)`]);
    }
    expect(await tablesOf(pool, first)).toEqual(['tool_registrations', 'tool_upstreams']);
    expect(await tablesOf(pool, later)).toEqual(['tool_upstreams']);
    // A server's namespace whose schema another made so: STORAGE_UNAVAILABLE naming the schema and the object, never a bare 500; still nothing written.
    const base = db.schema();
    await pool.query(`CREATE SCHEMA ${base}_ns_taken; CREATE TABLE ${base}_ns_taken.tool_registrations (id int)`);
    const server = createToolRegistryServer({ registries: postgresNamespaces({ connectionString: db.url(), schema: base, maxConnections: 2 }) });
    try {
      for (const request of [new Request('http://localhost/v1/namespaces/taken', { method: 'PUT' }), new Request('http://localhost/v1/namespaces/taken/tools')]) {
        const response = await server.fetch(request);
        const body = (await response.json()) as { code: string; detail: string; context: Record<string, unknown> };
        expect([request.method, response.status, body.code]).toEqual([request.method, 503, 'STORAGE_UNAVAILABLE']);
        expect(body.detail).toContain(`the PostgreSQL schema ${base}_ns_taken holds an object`);
        expect(body.context).toMatchObject({ schema: `${base}_ns_taken`, objects: [`table ${base}_ns_taken.tool_registrations`] });
      }
      const document = server.openapi() as { paths: Record<string, { put: { responses: Record<string, { description: string }> } }> };
      expect(document.paths['/v1/namespaces/{ns}']?.put.responses['503']?.description).toContain('STORAGE_UNAVAILABLE');
    } finally {
      await server.close();
    }
    expect(await tablesOf(pool, `${base}_ns_taken`)).toEqual(['tool_registrations']);
  });

  // The functions searched the registry's schema alone (SET search_path FROM CURRENT), so
  // PostgreSQL searched pg_temp first: a hand edit from a session holding a temporary table
  // named tool_changes was logged into it, never into the registry's log.
  it("a session's temporary table named like a store table does not take the triggers' writes: on a fresh schema, and on one migrated before 0009_pg_temp_last once it is applied", async () => {
    // One connection: the temporary table lives in the session that makes the hand edits.
    const pool = db.pool({ max: 1 });
    const fresh = db.schema();
    const old = db.schema();
    await migrate({ pool, schema: fresh, busyTimeoutMs: 5000 });
    await migrate({ pool, schema: old, busyTimeoutMs: 5000, migrations: shippedMigrations().filter((migration) => migration.name < '0009_pg_temp_last') });
    // As a release before 0009 left them: the schema alone.
    await pool.query(
      `DO $$ DECLARE f regprocedure; BEGIN FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace ` +
        `WHERE n.nspname = '${old}' AND p.proconfig IS NOT NULL LOOP EXECUTE format('ALTER FUNCTION %s SET search_path = %I', f, '${old}'); END LOOP; END $$`,
    );
    /** Adds a tool by hand from the session with the temporary table: [entries in the schema's log, entries the temporary table took]. */
    const handEdit = async (schema: string, name: string): Promise<[number, number]> => {
      const client = await pool.connect();
      try {
        await client.query(`CREATE TEMP TABLE IF NOT EXISTS tool_changes (LIKE ${schema}.tool_changes INCLUDING ALL)`);
        await client.query('BEGIN');
        await client.query(`INSERT INTO ${schema}.tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES ($1, $2, '1', '{}', 'now')`, [name, '0'.repeat(64)]);
        await client.query(`INSERT INTO ${schema}.tool_registrations VALUES ($1, $2, true, '2026-01-01T00:00:00Z')`, [name, '0'.repeat(64)]);
        await client.query('COMMIT');
        const count = async (table: string): Promise<number> => (await client.query(`SELECT count(*)::int AS n FROM ${table} WHERE tool_name = $1`, [name])).rows[0].n;
        return [await count(`${schema}.tool_changes`), await count('pg_temp.tool_changes')];
      } finally {
        client.release();
      }
    };
    expect(await handEdit(old, 'before')).toEqual([0, 1]);
    expect(await migrate({ pool, schema: old, busyTimeoutMs: 5000 })).toEqual(['0009_pg_temp_last']);
    for (const schema of [old, fresh]) {
      expect(await handEdit(schema, 'after')).toEqual([1, 0]);
      const { rows } = await pool.query(
        `SELECT DISTINCT c.setting FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace, unnest(p.proconfig) AS c(setting) WHERE n.nspname = $1 AND c.setting LIKE 'search%'`,
        [schema],
      );
      expect(rows).toEqual([{ setting: `search_path=${schema}, pg_temp` }]);
    }
    // A later migration's function made the usual way (SET search_path FROM CURRENT) gets it too.
    const next = { name: '0999_next', sql: "CREATE FUNCTION next_path() RETURNS text LANGUAGE sql SET search_path FROM CURRENT AS $$ SELECT current_setting('search_path') $$;" };
    await migrate({ pool, schema: fresh, busyTimeoutMs: 5000, migrations: [...shippedMigrations(), next] });
    expect((await pool.query(`SELECT ${fresh}.next_path() AS path`)).rows).toEqual([{ path: `${fresh}, pg_temp` }]);
  });

  it('schemas are independent: two registries in one database migrate separately', async () => {
    const pool = db.pool();
    const [a, b] = [db.schema(), db.schema()];
    expect(await migrate({ pool, schema: a, busyTimeoutMs: 5000 })).toEqual(SHIPPED);
    expect(await migrate({ pool, schema: b, busyTimeoutMs: 5000 })).toEqual(SHIPPED);
    await pool.query(`INSERT INTO ${a}.tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES ('t', repeat('a', 64), '1', '{}', 'now')`);
    expect((await pool.query(`SELECT count(*)::int AS n FROM ${b}.tool_specs`)).rows[0]).toEqual({ n: 0 });
  });
});
