// The command against PostgreSQL (--db postgres://… and TOOL_REGISTRY_DB), on the run's
// server: migrate/status/verify, every kind of command, and snapshots moved unchanged
// SQLite -> PostgreSQL -> export (identical bytes); watch and a conditional race between
// processes, as test/cli/changes.test.ts has them for SQLite.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, uniqueName } from '../support/postgres.js';
import type { TestDatabase } from '../support/postgres.js';
import { openPostgresToolRegistry } from '../../src/index.js';
import { migrate as migratePostgres, shippedMigrations as postgresMigrations } from '../../src/stores/postgres/migrations.js';
import { migrate as migrateSqlite, shippedMigrations as sqliteMigrations } from '../../src/stores/sqlite/migrations.js';
import { errorCode, plain, runCli, runCliAsync, spec, startCli, useTempDir, writeJson, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

/** A --db URL for a fresh schema of this file's database. */
function pgUrl(schema = uniqueName('cli')): string {
  const url = new URL(database.url);
  url.searchParams.set('schema', schema);
  return url.toString();
}

describe('tool-registry --db postgres://', () => {
  it('read-only commands refuse a schema that does not exist; migrate creates it once; status and verify report it', async () => {
    const cwd = tempDir();
    const db = pgUrl('cli_migrate');
    const missing = await runCli(['status', '--db', db], { cwd });
    expect(missing.code).toBe(1);
    expect(errorCode(missing.stderr)).toBe('DATABASE_NOT_FOUND');
    // A dry run plans against an empty registry there, as on a missing file, and creates nothing.
    const snapshot = writeJson(join(cwd, 'snap.json'), { tools: [{ spec: spec('a') }] });
    const dry = await runCli(['import', snapshot, '--dry-run', '--db', db], { cwd });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^add +a +tools\[0\]/m);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    expect((await client.query("SELECT 1 FROM pg_namespace WHERE nspname = 'cli_migrate'")).rowCount).toBe(0);
    await client.end();
    const first = await runCli(['migrate', '--db', db], { cwd });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^created schema cli_migrate in postgres:\/\/postgres:\*\*\*@/);
    expect(first.stdout).toContain('applied 0001_init');
    expect(first.stdout).toContain('applied 0002_generic_plans');
    expect(first.stdout).toContain('applied 0003_tools_view_nul');
    expect(first.stdout).toContain('applied 0004_batch_order');
    expect(first.stdout).toContain('applied 0005_write_if');
    const again = await runCli(['migrate', '--db', db], { cwd });
    expect(again.stdout).toMatch(/0 new/);
    const status = await runCli(['status', '--json', '--db', db], { cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ schema: 'cli_migrate', tools: 0, revision: 0, appliedMigrations: ['0001_init', '0002_generic_plans', '0003_tools_view_nul', '0004_batch_order', '0005_write_if', '0006_versions', '0007_gateway', '0008_write_if_inline', '0009_pg_temp_last'] });
    expect((await runCli(['status', '--db', db], { cwd })).stdout).toMatch(/^schema:\s+cli_migrate$/m);
    const verify = await runCli(['verify', '--db', db], { cwd });
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/^ok: 0 tools meet the contracts/);
  });

  it('a schema the server refuses to create (read-only transactions, as on a standby) is READ_ONLY naming the schema and the database', async () => {
    const cwd = tempDir();
    const url = new URL(pgUrl('cli_refused'));
    url.searchParams.set('options', '-c default_transaction_read_only=on');
    const file = writeJson(join(cwd, 'spec.json'), spec('t'));
    for (const args of [['register', file], ['migrate']]) {
      const result = await runCli([...args, '--db', url.toString()], { cwd });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(
        /^error READ_ONLY: cannot create or migrate the registry schema cli_refused in postgres:\/\/postgres:\*\*\*@.*: the server refuses this role's writes \(cannot execute CREATE SCHEMA in a read-only transaction\); nothing was changed\n$/,
      );
    }
  });

  it('a role that may not read the schema is IO_ERROR naming the schema and the right it lacks, never INTERNAL; a SELECT-only role reads and its writes are READ_ONLY', async () => {
    const cwd = tempDir();
    const schema = uniqueName('cli_roles');
    const file = writeJson(join(cwd, 'spec.json'), spec('t'));
    expect((await runCli(['register', file, '--db', pgUrl(schema)], { cwd })).code).toBe(0);
    const role = uniqueName('cli_role');
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      const url = new URL(pgUrl(schema));
      url.username = role;
      url.password = '';
      const db = url.toString();
      // No USAGE on the schema: every command fails at the open (an IO_ERROR with the bare driver error).
      for (const args of [['list'], ['register', file], ['migrate']]) {
        const result = await runCli([...args, '--db', db], { cwd });
        expect(result.code, result.stderr).toBe(1);
        expect(result.stderr).toMatch(new RegExp(`^error IO_ERROR: cannot open database postgres://${role}@.*: this database role may not read the registry schema ${schema}: it lacks USAGE on schema ${schema} \\(permission denied for schema ${schema}, SQLSTATE 42501\\).*"Roles and rights"\\)\n$`));
      }
      // serve fails at its start the same way (it exited INTERNAL with a stack).
      const serve = await runCli(['serve', '--port', '0', '--no-console', '--db', db], { cwd });
      expect(serve.code, serve.stderr).toBe(1);
      expect(serve.stderr).toMatch(new RegExp(`^error IO_ERROR: database postgres://${role}@.*: openPostgresToolRegistry: this database role may not read the registry schema ${schema}: it lacks USAGE on schema ${schema} `));
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      expect((await runCli(['list', '--db', db], { cwd })).stdout).toMatch(/^t\s/m);
      expect(errorCode((await runCli(['disable', 't', '--db', db], { cwd })).stderr)).toBe('READ_ONLY');
      // No SELECT on one table: the command that reads it fails naming it (it was INTERNAL with a stack).
      await admin.query(`REVOKE SELECT ON ${schema}.tool_specs FROM ${role}`);
      for (const args of [['list'], ['get', 't'], ['export']]) {
        const result = await runCli([...args, '--db', db], { cwd });
        expect(result.code, result.stderr).toBe(1);
        expect(result.stderr).toMatch(new RegExp(`^error IO_ERROR: database postgres://${role}@.*: [a-zA-Z]+(\\("t"\\))?: this database role may not read the registry schema ${schema}: it lacks SELECT on table ${schema}.tool_specs \\(permission denied for table tool_specs, SQLSTATE 42501\\)`));
        expect(result.stderr.split('\n')).toHaveLength(2);
      }
      // watch, on a log it may not read, says so and exits (it waited forever, printing nothing).
      await admin.query(`REVOKE SELECT ON ${schema}.tool_changes FROM ${role}`);
      const watch = await runCli(['watch', '--db', db], { cwd });
      expect(watch.code, watch.stderr).toBe(1);
      expect(watch.stderr).toMatch(new RegExp(`^error IO_ERROR: database postgres://${role}@.*: changes: this database role may not read the registry schema ${schema}: it lacks SELECT on table ${schema}.tool_changes `));
      // A schema a new release must migrate first (its last migration not applied): a write names what is pending.
      const last = postgresMigrations().at(-1)?.name;
      await admin.query(`DELETE FROM ${schema}.schema_migrations WHERE name = $1`, [last]);
      const pending = await runCli(['disable', 't', '--db', db], { cwd });
      expect(pending.stderr).toMatch(new RegExp(`^error READ_ONLY: cannot create or migrate the registry schema ${schema} .*; nothing was changed; the registry schema ${schema} needs migrations ${last}, which this role may not apply: run "tool-registry migrate" as the schema's owner`));
    } finally {
      await admin.query(`DROP OWNED BY ${role}; DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await admin.end();
    }
  });

  it("a ?schema= that names another application's schema, holding a table of one of ours: migrate and serve are IO_ERROR naming the schema and the table (STORAGE_UNAVAILABLE in the library), and nothing is left in it", async () => {
    const cwd = tempDir();
    const schema = uniqueName('cli_app');
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.tool_specs (id int)`);
      for (const args of [['migrate'], ['serve', '--port', '0', '--no-console']]) {
        const result = await runCli([...args, '--db', pgUrl(schema)], { cwd });
        expect(result.code, result.stderr).toBe(1);
        // serve exited INTERNAL with a stack.
        expect(result.stderr).toMatch(
          new RegExp(`^error IO_ERROR: (cannot open )?database postgres://postgres:\\*\\*\\*@.*: the PostgreSQL schema ${schema} holds an object that the registry's migrations would create, not made by them: table ${schema}\\.tool_specs; nothing was changed`),
        );
      }
      const { rows } = await admin.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [schema]);
      expect(rows).toEqual([{ tablename: 'tool_specs' }]);
    } finally {
      await admin.end();
    }
  });

  it('every kind of command works through TOOL_REGISTRY_DB', async () => {
    const cwd = tempDir();
    const env = { TOOL_REGISTRY_DB: pgUrl() };
    const spec = { tool_name: 'search', version: '1', input_schema: { type: 'object', properties: { q: { type: 'string' } } }, output_schema: {} };
    writeFileSync(join(cwd, 'spec.json'), JSON.stringify(spec));
    writeFileSync(join(cwd, 'spec2.json'), JSON.stringify({ ...spec, version: '2' }));
    const ok = async (args: string[]) => {
      const result = await runCli(args, { cwd, env });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      return result.stdout;
    };
    await ok(['register', 'spec.json']);
    await ok(['disable', 'search']);
    await ok(['register', 'spec2.json']);
    expect(JSON.parse(await ok(['get', 'search', '--json'])).spec.input_schema).toEqual(spec.input_schema);
    expect(await ok(['list', '--all'])).toContain('search');
    expect(await ok(['history', 'search'])).toContain('2');
    expect(await ok(['changes', '--json'])).toContain('"disabled"');
    await ok(['enable', 'search']);
    await ok(['remove', 'search']);
    const conflict = await runCli(['register', 'spec.json', '--expect-version', '7'], { cwd, env });
    expect(errorCode(conflict.stderr)).toBe('PRECONDITION_FAILED');
    await ok(['verify']);
  });

  it('a snapshot moves SQLite -> PostgreSQL -> export with identical bytes', async () => {
    const cwd = tempDir();
    const file = join(cwd, 'source.db');
    const specs = [
      { tool_name: 'zeta', version: '1.0', description: 'Ünïcödé 😀', input_schema: { z: 1, a: { y: [3, 1] } }, output_schema: { type: 'object' }, tags: ['b', 'a', 'b'] },
      { output_schema: {}, input_schema: { type: 'object' }, tool_name: 'alpha' },
    ];
    writeFileSync(join(cwd, 'specs.json'), JSON.stringify(specs));
    expect((await runCli(['register', 'specs.json', '--db', file], { cwd })).code).toBe(0);
    expect((await runCli(['disable', 'zeta', '--db', file], { cwd })).code).toBe(0);
    const fromSqlite = await runCli(['export', '--db', file], { cwd });
    expect(fromSqlite.code, fromSqlite.stderr).toBe(0);
    writeFileSync(join(cwd, 'snapshot.json'), fromSqlite.stdout);
    const db = pgUrl();
    const imported = await runCli(['import', 'snapshot.json', '--mode', 'replace', '--db', db], { cwd });
    expect(imported.code, imported.stderr).toBe(0);
    const fromPostgres = await runCli(['export', '--db', db], { cwd });
    expect(fromPostgres.code, fromPostgres.stderr).toBe(0);
    expect(fromPostgres.stdout).toBe(readFileSync(join(cwd, 'snapshot.json'), 'utf8'));
    expect(JSON.parse(fromPostgres.stdout).tools).toHaveLength(2);
  });

  it('five processes race one conditional switch: exactly one wins, four PRECONDITION_FAILED', async () => {
    const cwd = tempDir();
    const env = { TOOL_REGISTRY_DB: pgUrl() };
    expect((await runCli(['register', writeJson(join(cwd, 'v1.json'), spec('deploy', '1'))], { cwd, env })).code).toBe(0);
    const files = Array.from({ length: 5 }, (_, i) => writeJson(join(cwd, `v2-${i}.json`), spec('deploy', `2.${i}`)));
    const results = await Promise.all(files.map((file) => runCliAsync(['register', file, '--expect-version', '1'], { cwd, env })));
    const winners = results.filter((result) => result.code === 0);
    expect(winners).toHaveLength(1);
    expect(results.filter((result) => result.code !== 0).map((result) => errorCode(result.stderr))).toEqual(Array(4).fill('PRECONDITION_FAILED'));
    const current = JSON.parse((await runCli(['get', 'deploy', '--json'], { cwd, env })).stdout) as { spec: { version: string } };
    expect(`2.${results.findIndex((result) => result.code === 0)}`).toBe(current.spec.version);
    expect(winners[0]?.stdout).toBe(`replaced deploy 1 -> ${current.spec.version} (kept enabled)\n`);
    const feed = JSON.parse((await runCli(['changes', '--json'], { cwd, env })).stdout) as { events: { action: string }[] };
    expect(feed.events.map((event) => event.action)).toEqual(['added', 'updated']);
  });

  it('watch prints one JSON event per line as other processes commit, and exits 0 on SIGINT and SIGTERM', async () => {
    const cwd = tempDir();
    const db = pgUrl();
    const env = { TOOL_REGISTRY_DB: db };
    const events = async () => {
      const url = new URL(db);
      const schema = url.searchParams.get('schema') as string;
      url.searchParams.delete('schema');
      const registry = await openPostgresToolRegistry({ connectionString: url.toString(), schema, readonly: true });
      try {
        return plain((await registry.changes()).events) as unknown[];
      } finally {
        await registry.close();
      }
    };
    expect((await runCli(['register', writeJson(join(cwd, 'first.json'), spec('first'))], { cwd, env })).code).toBe(0);
    const others = ['a', 'b', 'c'];
    const files = others.map((name) => writeJson(join(cwd, `${name}.json`), spec(name)));
    // Each round: three processes at once, then two commands in turn in this process (another
    // process than the watch's, without two more node starts); the watch prints everything since 0.
    const rounds = {
      SIGINT: { together: files.map((file) => ['register', file]), inTurn: [['disable', 'first'], ['enable', 'first']], total: 6 },
      SIGTERM: { together: others.map((name) => ['remove', name]), inTurn: [['disable', 'first'], ['remove', 'first']], total: 11 },
    };
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const round = rounds[signal];
      const watch = startCli(['watch', '--since', '0'], { cwd, env });
      try {
        await watch.lines(1);
        const together = await Promise.all(round.together.map((args) => runCliAsync(args, { cwd, env })));
        for (const result of together) expect(result.code, result.stderr).toBe(0);
        for (const args of round.inTurn) {
          const result = await runCli(args, { cwd, env });
          expect(result.code, result.stderr).toBe(0);
        }
        const expected = await events();
        expect(expected).toHaveLength(round.total);
        await watch.lines(expected.length);
        watch.child.kill(signal);
        expect(await watch.exited, watch.stderr()).toBe(0);
        expect(watch.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual(expected);
      } finally {
        watch.child.kill('SIGKILL');
      }
    }
  });

  // Parity with SQLite's file failures (IO_ERROR, test/cli/damaged-database.test.ts): the
  // server ending the command's connection is the database failing, not a bug in the command.
  it('a connection the server ends mid-command is IO_ERROR (no stack trace), and nothing is written', async () => {
    const cwd = tempDir();
    const schema = uniqueName('cli_cut');
    const db = pgUrl(schema);
    expect((await runCli(['migrate', '--db', db], { cwd })).code).toBe(0);
    writeJson(join(cwd, 'snapshot.json'), { tools: [{ spec: spec('cut'), enabled: true, created_at: null }] });
    const holder = new pg.Client({ connectionString: database.url });
    // Not the holder: inside its transaction pg_stat_activity stays as it first read it.
    const watcher = new pg.Client({ connectionString: database.url });
    await Promise.all([holder.connect(), watcher.connect()]);
    try {
      // The command's statements queue behind this lock; the one that waits is then ended.
      await holder.query(`BEGIN; LOCK TABLE ${schema}.tool_registrations IN ACCESS EXCLUSIVE MODE`);
      const running = runCliAsync(['import', 'snapshot.json', '--db', db], { cwd });
      let finished = false;
      void running.finally(() => (finished = true));
      let ended = 0;
      while (ended === 0 && !finished) {
        const waiting = await watcher.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        for (const { pid } of waiting.rows) ended += (await watcher.query('SELECT pg_terminate_backend($1)', [pid])).rowCount ?? 0;
        // A 5 ms poll, not back-to-back queries: while the command's process starts, they kept a
        // backend and this worker busy for nothing.
        if (ended === 0) await sleep(5);
      }
      await holder.query('COMMIT');
      const result = await running;
      expect(ended, result.stderr).toBe(1);
      expect(result.code).toBe(1);
      expect(errorCode(result.stderr)).toBe('IO_ERROR');
      expect(result.stderr).not.toMatch(/^\s+at /m);
      expect(JSON.parse((await runCli(['list', '--all', '--json', '--db', db], { cwd })).stdout)).toEqual([]);
    } finally {
      await Promise.all([holder.end(), watcher.end()]);
    }
  });

  // Parity with SQLite: a file an older release migrated is IO_ERROR for a read-only command
  // (and names what is missing); DATABASE_NOT_FOUND is for no registry at all.
  it('a schema an older release migrated is IO_ERROR for read-only commands, and is left as it was', async () => {
    const cwd = tempDir();
    const schema = uniqueName('cli_old');
    const db = pgUrl(schema);
    expect((await runCli(['migrate', '--db', db], { cwd })).code).toBe(0);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const last = (await client.query<{ name: string }>(`DELETE FROM ${schema}.schema_migrations WHERE name = (SELECT max(name) FROM ${schema}.schema_migrations) RETURNING name`)).rows;
      expect(last).toHaveLength(1);
      for (const command of [['list'], ['status', '--json'], ['export']]) {
        const result = await runCli([...command, '--db', db], { cwd });
        expect(result.code, command.join(' ')).toBe(1);
        expect(errorCode(result.stderr), command.join(' ')).toBe('IO_ERROR');
      }
      const after = (await client.query<{ count: string }>(`SELECT count(*) FROM ${schema}.schema_migrations WHERE name = $1`, [last[0]?.name])).rows[0];
      expect(after?.count).toBe('0');
      // An empty schema (a DBA made it for the registry) holds no registry yet: DATABASE_NOT_FOUND.
      const empty = uniqueName('cli_empty');
      await client.query(`CREATE SCHEMA ${empty}`);
      expect(errorCode((await runCli(['list', '--db', pgUrl(empty)], { cwd })).stderr)).toBe('DATABASE_NOT_FOUND');
    } finally {
      await client.end();
    }
  });

  // Both stores: `migrate` of a registry an older release made lists exactly the migrations it
  // lacked (the read-only look before it cannot open such a registry; its error says what lacks).
  it('migrate of a registry an older release made says which migrations are new, on SQLite and PostgreSQL alike', async () => {
    const cwd = tempDir();
    const file = join(cwd, 'old.db');
    const sqliteLast = sqliteMigrations().at(-1)?.name;
    const db = new Database(file);
    await migrateSqlite({ db, migrations: sqliteMigrations().slice(0, -1), busyTimeoutMs: 1000, filename: file });
    db.close();
    const schema = uniqueName('cli_older');
    const postgresLast = postgresMigrations().at(-1)?.name;
    const pool = new pg.Pool({ connectionString: database.url });
    await migratePostgres({ pool, schema, busyTimeoutMs: 5000, migrations: postgresMigrations().slice(0, -1) });
    await pool.end();
    for (const [target, last] of [[file, sqliteLast], [pgUrl(schema), postgresLast]] as const) {
      const result = await runCli(['migrate', '--db', target], { cwd });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.split('\n').filter((line) => line.startsWith('applied ') || line.startsWith('created '))).toEqual([`applied ${last}`]);
      expect(result.stdout).toMatch(/, 1 new\)$/m);
    }
  });
});
