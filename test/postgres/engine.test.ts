// The PostgreSQL store's machinery against the real server: options, the caller's pool left
// open, the pool's error handler, write locks (names shared, imports exclusive), timeouts as
// STORAGE_BUSY, read-only opens, waiting for another instance's change, status.
import pg from 'pg';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ToolRegistryError, openPostgresToolRegistry } from '../../src/index.js';
import { PostgresEngine } from '../../src/stores/postgres/engine.js';
import { lockKeys } from '../../src/stores/postgres/identifiers.js';
import { writeTools } from '../../src/stores/postgres/tables.js';
import type { RegistrationRow, ToolWrite } from '../../src/stores/postgres/tables.js';
import { until } from '../support/waiting.js';
import { SHIPPED, useFileDatabase } from './helpers.js';

const database = useFileDatabase();
const convert = (row: RegistrationRow): string => row.spec_json;

function tool(name: string, n = 1): ToolWrite {
  return {
    tool_name: name,
    version: String(n),
    fingerprint: n.toString(16).padStart(64, '0'),
    spec_json: JSON.stringify({ tool_name: name, version: String(n) }),
    enabled: true,
    created_at: null,
    first_registered_at: 'now',
    dep_message: null,
    dep_replacement: null,
    dep_sunset: null,
  };
}

function open(schema: string, extra: Record<string, unknown> = {}): Promise<PostgresEngine<string>> {
  return PostgresEngine.open({ connectionString: database.url(), schema, convert, ...extra });
}

describe('PostgreSQL engine', () => {
  it('refuses bad options with a TypeError naming the option and the value', async () => {
    const url = database.url();
    await expect(PostgresEngine.open({ convert } as never)).rejects.toThrow(TypeError);
    await expect(PostgresEngine.open({ connectionString: url, pool: database.pool(), convert })).rejects.toThrow(/exactly one/);
    await expect(open('bad-name')).rejects.toThrow(/schema .*"bad-name"/);
    await expect(open('s', { busyTimeoutMs: -1 })).rejects.toThrow(/busyTimeoutMs .*-1/);
    await expect(open('s', { cache: 'yes' })).rejects.toThrow(/cache .*"yes"/);
    await expect(PostgresEngine.open({ pool: {} as pg.Pool, convert })).rejects.toThrow(/pool must be a pg Pool/);
  });

  it("refuses a busyTimeoutMs or statementTimeoutMs beyond PostgreSQL's longest timeout before connecting (it opened, and every call failed)", async () => {
    const nowhere = 'postgres://127.0.0.1:1/nothing';
    for (const name of ['busyTimeoutMs', 'statementTimeoutMs']) {
      const error = await PostgresEngine.open({ connectionString: nowhere, convert, [name]: 2 ** 31 }).then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe(`openPostgresToolRegistry(): ${name} must be at most 2147483647 ms (PostgreSQL's longest timeout), got 2147483648`);
    }
    const registry = await openPostgresToolRegistry({ connectionString: database.url(), schema: database.schema(), busyTimeoutMs: 2 ** 31 - 1, statementTimeoutMs: 2 ** 31 - 1 });
    try {
      expect((await registry.register({ tool_name: 'a', version: '1', input_schema: {}, output_schema: {} })).spec.tool_name).toBe('a');
    } finally {
      await registry.close();
    }
  });

  it('openPostgresToolRegistry refuses an option it does not know with a TypeError naming it, before connecting (a misspelt readonly opened a store that writes)', async () => {
    const error = await openPostgresToolRegistry({ connectionString: 'postgres://127.0.0.1:1/nothing', readOnly: true } as never).then(() => undefined, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^openPostgresToolRegistry\(\): unknown option "readOnly" \(the options are .*readonly/);
  });

  it('refuses a system schema name (the reserved pg_ prefix, information_schema) with a TypeError, before connecting', async () => {
    // Nothing listens on port 1: a check made after connecting would fail with ECONNREFUSED instead.
    const nowhere = 'postgres://127.0.0.1:1/nothing';
    for (const schema of ['pg_tools', 'pg_catalog', 'pg_temp', 'pg_', 'information_schema']) {
      const error = await PostgresEngine.open({ connectionString: nowhere, schema, convert }).then(() => undefined, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as { code?: unknown }).code).toBeUndefined();
      expect((error as Error).message).toMatch(/^schema /);
      expect((error as Error).message).toContain(JSON.stringify(schema));
    }
    // PostgreSQL's rule is case-sensitive and our names are quoted: PG_... is an ordinary schema.
    const engine = await open(`PG_${database.schema()}`);
    await engine.close();
  });

  it('a login the server refuses for its settings is STORAGE_UNAVAILABLE naming the database, the role, the option or the SSL request (it was the bare driver error)', async () => {
    const cases: [edit: (url: URL) => void, message: string, context: Record<string, unknown>, sqlstate: string | undefined][] = [
      [(url) => void (url.pathname = '/no_such_db'), 'open: the database no_such_db does not exist on the server (database "no_such_db" does not exist, SQLSTATE 3D000)', { database: 'no_such_db' }, '3D000'],
      [
        (url) => void ((url.username = 'no_such_role'), (url.password = '')),
        `open: the server refused the login of role no_such_role to database ${new URL(database.url()).pathname.slice(1)} (role "no_such_role" does not exist, SQLSTATE 28000)`,
        { role: 'no_such_role' },
        '28000',
      ],
      [(url) => url.searchParams.set('options', '-c no_such_setting=1'), `open: the server refused the connection's options "-c no_such_setting=1" (unrecognized configuration parameter "no_such_setting", SQLSTATE 42704)`, { options: '-c no_such_setting=1' }, '42704'],
      [(url) => url.searchParams.set('options', '-c statement_timeout=soon'), `open: the server refused the connection's options "-c statement_timeout=soon" (invalid value for parameter "statement_timeout": "soon", SQLSTATE 22023)`, { options: '-c statement_timeout=soon' }, '22023'],
      [
        (url) => url.searchParams.set('sslmode', 'verify-full'),
        'open: the server does not support SSL connections, and this connection asks for SSL (sslmode=verify-full): connect without SSL, or to a server that has it',
        { ssl: 'sslmode=verify-full' },
        undefined,
      ],
    ];
    for (const [edit, message, context, sqlstate] of cases) {
      const url = new URL(database.url());
      edit(url);
      // Both ways of opening: migrating (read-write) and checking the schema (readonly).
      for (const readonly of [false, true]) {
        const error = await openPostgresToolRegistry({ connectionString: url.toString(), schema: 's', cache: false, readonly }).then(
          async (registry) => registry.close(),
          (caught: unknown) => caught,
        );
        expect(error, message).toBeInstanceOf(ToolRegistryError);
        expect(error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', message, context: { operation: 'open', ...context, ...(sqlstate === undefined ? {} : { driver_code: sqlstate }) } });
        const cause = (error as Error).cause as { code?: unknown; message: string };
        expect(cause).toBeInstanceOf(Error);
        if (sqlstate !== undefined) expect(cause.code).toBe(sqlstate);
        else expect(cause.message).toBe('The server does not support SSL connections');
      }
    }
  });

  it("a caller's pool stays open after close(), and its error handler is removed again", async () => {
    const pool = new pg.Pool({ connectionString: database.url() });
    try {
      const engine = await PostgresEngine.open({ pool, schema: database.schema(), convert });
      expect(pool.listenerCount('error')).toBe(1);
      await engine.close();
      await engine.close();
      expect(pool.listenerCount('error')).toBe(0);
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it("an idle pool connection ended by the server does not crash the process (the caller's pool had no error handler)", async () => {
    const pool = new pg.Pool({ connectionString: database.url(), max: 3 });
    const engine = await PostgresEngine.open({ pool, schema: database.schema(), convert, cache: false });
    try {
      await Promise.all([engine.revision(), engine.revision(), engine.revision()]);
      expect(pool.idleCount).toBeGreaterThan(0);
      const admin = database.pool();
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle' AND query <> 'SELECT 1' AND backend_type = 'client backend'
           AND query NOT LIKE 'LISTEN%'`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      // The pool replaces what it lost.
      expect(await engine.revision()).toBe(0);
    } finally {
      await engine.close();
      await pool.end();
    }
  });

  it('writes of different names do not wait for each other; an import waits for all of them and they for it', async () => {
    const schema = database.schema();
    const a = await open(schema);
    // b's pool has its connections open before b does anything: its 300 ms are for the lock
    // waits below, and a new connection on a loaded machine took longer than that (the open's
    // own migration check then failed, no pool connection free within 300 ms).
    const warm = new pg.Pool({ connectionString: database.url(), max: 3 });
    await Promise.all([warm.connect(), warm.connect(), warm.connect()]).then((clients) => clients.forEach((client) => client.release()));
    const b = await PostgresEngine.open({ pool: warm, schema, convert, busyTimeoutMs: 300 });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const slow = a.write('register', { names: ['one'] }, async () => {
        locked();
        await held;
      });
      await isLocked;
      // Another name goes through while "one" is held.
      await b.write('register', { names: ['two'] }, (trx) => writeTools(trx, schema, [tool('two')]));
      // The same name, or an import, waits and then gives up: STORAGE_BUSY.
      await expect(b.write('register', { names: ['one'] }, async () => 'never')).rejects.toMatchObject({ code: 'STORAGE_BUSY' });
      await expect(b.write('importSnapshot', { exclusive: true }, async () => 'never')).rejects.toMatchObject({
        code: 'STORAGE_BUSY',
        cause: { code: '55P03' },
      });
      release();
      await slow;
      expect(await b.write('importSnapshot', { exclusive: true }, async () => 'done')).toBe('done');
    } finally {
      await a.close();
      await b.close();
      await warm.end();
    }
  });

  it('a statement past statementTimeoutMs is STORAGE_BUSY with the cancellation as cause', async () => {
    const engine = await open(database.schema(), { statementTimeoutMs: 100 });
    try {
      const error = await engine.write('register', { names: ['x'] }, async (trx) => {
        await sql`SELECT pg_sleep(2)`.execute(trx);
      }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'STORAGE_BUSY', cause: { code: '57014' } });
    } finally {
      await engine.close();
    }
  });

  it("a statement the server cancels by its own statement_timeout (the role's, the database's, the URL's options) is STORAGE_BUSY, not a bare driver error", async () => {
    // No statementTimeoutMs: the limit is the session's, as a DBA's ALTER ROLE … SET statement_timeout gives it.
    const url = new URL(database.url());
    url.searchParams.set('options', '-c statement_timeout=200');
    // Migrated first, without the limit: its statements are not what is tested.
    const schema = database.schema();
    await (await open(schema)).close();
    const engine = await open(schema, { connectionString: url.toString() });
    try {
      const sleep = async (trx: Parameters<Parameters<typeof engine.read>[0]>[0]): Promise<void> => {
        await sql`SELECT pg_sleep(2)`.execute(trx);
      };
      for (const error of [
        await engine.write('register', { names: ['x'] }, sleep).catch((caught: unknown) => caught),
        await engine.read(sleep, 'get').catch((caught: unknown) => caught),
      ]) {
        expect(error).toMatchObject({ code: 'STORAGE_BUSY', context: { sqlstate: '57014' }, cause: { code: '57014' } });
        expect((error as Error).message).toMatch(/cancelled the statement \(canceling statement due to statement timeout, SQLSTATE 57014\)/);
      }
      // Nothing of the write is stored, and the next call works.
      expect(await engine.read(async (trx) => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(engine.schema)}.tool_registrations`.execute(trx)).rows[0]?.n)).toBe(0);
    } finally {
      await engine.close();
    }
  });

  it("an open whose wait for another instance's migration the server's statement_timeout cancels is STORAGE_BUSY, not a bare driver error", async () => {
    const schema = database.schema();
    const url = new URL(database.url());
    url.searchParams.set('options', '-c statement_timeout=100');
    // Another instance migrating: it holds the schema's migration lock.
    const holder = await database.pool({ max: 1 }).connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockKeys.migrate(schema)]);
      const error = await open(schema, { connectionString: url.toString() }).then(() => undefined, (caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'STORAGE_BUSY', context: { operation: 'open', sqlstate: '57014' }, cause: { code: '57014' } });
      expect((error as Error).message).toMatch(/^open: the database cancelled the statement \(canceling statement due to statement timeout, SQLSTATE 57014\)$/);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  });

  it("a session's extra_float_digits (a role's or a database's setting) does not round what reads return", async () => {
    const url = new URL(database.url());
    url.searchParams.set('options', '-c extra_float_digits=-15');
    const registry = await openPostgresToolRegistry({ connectionString: url.toString(), schema: database.schema(), cache: false });
    try {
      const call = { at: new Date().toISOString(), token: null, persona: null, namespace: 'default', tool: 't', version: null, fingerprint: null, upstream: null, outcome: 'ok' };
      await registry.recordCalls([{ ...call, duration_ms: 35.5 }, { ...call, duration_ms: 0.1 + 0.2 }]);
      expect((await registry.listCalls()).map((row) => row.duration_ms).sort()).toEqual([0.1 + 0.2, 35.5].sort());
    } finally {
      await registry.close();
    }
  });

  it('status() needs one connection at a time: a pool of one (a role with CONNECTION LIMIT 1) answers it', async () => {
    const schema = database.schema();
    await (await open(schema)).close();
    const pool = database.pool({ max: 1 });
    const registry = await openPostgresToolRegistry({ pool, schema, cache: false, busyTimeoutMs: 1000 });
    try {
      await registry.register({ tool_name: 'a', version: '1', input_schema: {}, output_schema: {} });
      // It held its first connection while it waited for a second: STORAGE_BUSY every time.
      expect(await registry.status()).toMatchObject({ schema, tools: 1, revision: 1, appliedMigrations: SHIPPED });
    } finally {
      await registry.close();
    }
  });

  it("a transaction the server ends by its transaction_timeout (PostgreSQL 17: a role's or a database's) is STORAGE_UNAVAILABLE, nothing stored, not a bare driver error", async (context) => {
    const version = await database.pool().query<{ v: number }>("SELECT current_setting('server_version_num')::int AS v");
    if ((version.rows[0]?.v ?? 0) < 170000) context.skip('transaction_timeout is PostgreSQL 17 and later');
    const schema = database.schema();
    await (await open(schema)).close();
    const url = new URL(database.url());
    url.searchParams.set('options', '-c transaction_timeout=200');
    const engine = await open(schema, { connectionString: url.toString() });
    try {
      // A long transaction, as a large import is: the server ends its connection (FATAL 25P04).
      const error = await engine
        .write('importSnapshot', { exclusive: true }, async (trx) => {
          await sql`SELECT pg_sleep(2)`.execute(trx);
        })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', context: { driver_code: '25P04', outcome: 'not_written' }, cause: { code: '25P04' } });
      // The next call works, on a fresh connection.
      expect(await engine.read(async (trx) => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.id(engine.schema)}.tool_registrations`.execute(trx)).rows[0]?.n)).toBe(0);
    } finally {
      await engine.close();
    }
  });

  it("a cache's catch-up the server's statement_timeout cancels is STORAGE_BUSY named after the call that waited for it", async () => {
    const schema = database.schema();
    const writer = await openPostgresToolRegistry({ connectionString: database.url(), schema, cache: false });
    const url = new URL(database.url());
    url.searchParams.set('options', '-c statement_timeout=200');
    const reader = await openPostgresToolRegistry({ connectionString: url.toString(), schema });
    const admin = database.pool();
    const held = await admin.connect();
    try {
      await reader.listAll();
      // The reader hears of the commit (its cache's catch-up is then due) before the log is
      // locked: its watch wakes on the same notification.
      const heard = reader.watch({ since: 0 })[Symbol.asyncIterator]().next();
      await writer.register({ tool_name: 'a', version: '1', input_schema: {}, output_schema: {} });
      expect((await heard).value).toMatchObject({ revision: 1 });
      await held.query(`BEGIN; LOCK TABLE ${schema}.tool_changes IN ACCESS EXCLUSIVE MODE`);
      for (const [call, operation] of [[() => reader.get('a'), 'get'], [() => reader.register({ tool_name: 'b', version: '1', input_schema: {}, output_schema: {} }), 'register']] as const) {
        const error = (await call().catch((caught: unknown) => caught)) as { code?: string; message: string; context: Record<string, unknown> };
        expect(error).toMatchObject({ code: 'STORAGE_BUSY', context: { operation, sqlstate: '57014' } });
        expect(error.message).toMatch(new RegExp(`^${operation}(\\("[a-z]"\\))?: the database cancelled the statement`));
        expect(error.context).not.toHaveProperty('busy_timeout_ms');
      }
    } finally {
      await held.query('ROLLBACK');
      held.release();
      await reader.close();
      await writer.close();
    }
  });

  it('a read runs in one read-only REPEATABLE READ snapshot, its statements bounded by statementTimeoutMs', async () => {
    const engine = await open(database.schema(), { statementTimeoutMs: 100 });
    try {
      const settings = await engine.read(async (trx) => {
        const { rows } = await sql<{ isolation: string; readOnly: string; statementTimeout: string; lockTimeout: string }>`
          SELECT current_setting('transaction_isolation') AS isolation, current_setting('transaction_read_only') AS "readOnly",
                 current_setting('statement_timeout') AS "statementTimeout", current_setting('lock_timeout') AS "lockTimeout"`.execute(trx);
        return rows[0];
      });
      expect(settings).toMatchObject({ isolation: 'repeatable read', readOnly: 'on', statementTimeout: '100ms' });
      expect(settings?.lockTimeout).not.toBe('0');
      const error = await engine.read(async (trx) => {
        await sql`SELECT pg_sleep(2)`.execute(trx);
      }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'STORAGE_BUSY', cause: { code: '57014' } });
      // The connection went back to the pool in a usable state: the next read succeeds.
      expect(await engine.read(async (trx) => (await sql<{ one: number }>`SELECT 1 AS one`.execute(trx)).rows[0]?.one)).toBe(1);
    } finally {
      await engine.close();
    }
  });

  it('read-only: writes are READ_ONLY; an unmigrated schema is refused and left alone; a newer one is SCHEMA_TOO_NEW', async () => {
    const schema = database.schema();
    await expect(open(schema, { readonly: true })).rejects.toMatchObject({ pendingMigrations: SHIPPED });
    const pool = database.pool();
    expect((await pool.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount).toBe(0);
    await (await open(schema)).close();
    const reader = await open(schema, { readonly: true });
    try {
      await expect(reader.write('register', { names: ['x'] }, async () => 1)).rejects.toMatchObject({ code: 'READ_ONLY' });
      expect((await reader.status()).readonly).toBe(true);
    } finally {
      await reader.close();
    }
    await pool.query(`INSERT INTO ${schema}.schema_migrations (name) VALUES ('9999_future')`);
    await expect(open(schema, { readonly: true })).rejects.toMatchObject({ code: 'SCHEMA_TOO_NEW' });
    await expect(open(schema)).rejects.toMatchObject({ code: 'SCHEMA_TOO_NEW' });
  });

  it("waitForChange wakes on another instance's commit, and on abort", async () => {
    const schema = database.schema();
    const watcher = await open(schema);
    const writer = await open(schema);
    try {
      // While its listener is up, a waiter wakes only by a notification (or an own write): the
      // poll does not read the revision then. So waking proves the notification, with no clock.
      await until(() => watcher.listener?.listening === true, 'the watcher to listen');
      const stop = new AbortController();
      const waiting = watcher.waitForChange(0, stop.signal);
      await writer.write('register', { names: ['w'] }, (trx) => writeTools(trx, schema, [tool('w')]));
      // Without the notification this wait would never end (the test's timeout fails it).
      await waiting;
      expect(watcher.listener?.listening).toBe(true);
      expect(await watcher.revision()).toBe(1);
      const aborted = new AbortController();
      const idle = watcher.waitForChange(1, aborted.signal);
      aborted.abort();
      await idle;
    } finally {
      await watcher.close();
      await writer.close();
    }
  });

  it('leaves nothing per engine on the promises of the process: a registry opened and closed costs later promises nothing', async () => {
    // On Node 20 each enabled AsyncLocalStorage is a symbol-keyed slot that every new promise
    // gets (an init hook walks them all); an instance per engine made every promise of the
    // process slower with each registry ever opened. Newer Node keeps none on the promise.
    const slots = (): number => Object.getOwnPropertySymbols((async () => {})()).length;
    const schema = database.schema();
    const warm = await open(schema);
    await warm.revision();
    await warm.close();
    const before = slots();
    for (let i = 0; i < 5; i++) {
      const engine = await open(schema);
      await engine.revision();
      await engine.write('register', { names: [`t${i}`] }, (trx) => writeTools(trx, schema, [tool(`t${i}`)]));
      await engine.close();
    }
    expect(slots()).toBe(before);
  });

  it('status() counts tools, history and the revision', async () => {
    const schema = database.schema();
    const engine = await open(schema);
    try {
      await engine.write('register', { names: ['a', 'b'] }, (trx) => writeTools(trx, schema, [tool('a'), tool('b')]));
      await engine.write('register', { names: ['a'] }, (trx) => writeTools(trx, schema, [{ ...tool('a', 2), enabled: false }]));
      expect(await engine.status()).toEqual({
        schema,
        schemaVersion: SHIPPED.at(-1),
        appliedMigrations: SHIPPED,
        tools: 2,
        enabled: 1,
        disabled: 1,
        revision: 3,
        specHistory: 3,
        readonly: false,
        cache: true,
        listening: true,
        listenerPid: expect.any(Number),
      });
    } finally {
      await engine.close();
    }
  });
});
