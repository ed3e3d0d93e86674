// A writer's connection dropped by the server (pg_terminate_backend from another session) while
// its write is in flight: held mid-statement by a test trigger, waiting for the registry's own
// advisory lock, or inside COMMIT. Nothing of the failed call is visible (through the same
// registry, cache on and off, and through a fresh one), what was committed before is intact,
// the caller gets STORAGE_UNAVAILABLE over the server's error (not one from the failed
// ROLLBACK), with what is known of the write's outcome, and the registry keeps
// working on a healthy connection without leaking the dead one. A lost COMMIT reply (a proxy
// that forwards the COMMIT and cuts the client off) is all-or-nothing, and the cache shows it.
import { createServer, connect } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresToolRegistry, ToolRegistryError } from '../../src/index.js';
import type { PostgresToolRegistry, ToolRegistration, ToolSpecInput } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { until } from '../support/waiting.js';
import { spawnPgWorker, useFileDatabase, withAppName } from './helpers.js';

const db = useFileDatabase();
/** Marks the registry's own connections in pg_stat_activity. */
const WRITER = 'tr-drop-writer';
/** Advisory-lock class of the test's holds (pg_advisory_lock(HOLD, n)): n = 1 mid-statement, 2 in COMMIT. */
const HOLD = 4242;
const MID_STATEMENT = 1;
const IN_COMMIT = 2;

const spec = (name: string, version = '1', extra: Partial<ToolSpecInput> = {}): ToolSpecInput => minimalSpec(name, { version, ...extra });



/**
 * Test triggers in the registry's schema: inserting a registration named `hold` waits for
 * advisory lock (HOLD, 1) in the middle of the write statement (rows before it in the batch are
 * already written); one named `hold-commit` waits for (HOLD, 2) in a deferred constraint
 * trigger, which runs inside COMMIT.
 */
async function installHolds(admin: pg.Pool, schema: string): Promise<void> {
  await admin.query(`
    CREATE FUNCTION ${schema}.test_hold() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(${HOLD}, TG_ARGV[0]::integer);
      RETURN NEW;
    END $$;
    CREATE TRIGGER test_hold BEFORE INSERT ON ${schema}.tool_registrations
      FOR EACH ROW WHEN (NEW.tool_name = 'hold') EXECUTE FUNCTION ${schema}.test_hold(${MID_STATEMENT});
    CREATE CONSTRAINT TRIGGER test_hold_commit AFTER INSERT ON ${schema}.tool_registrations
      DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW WHEN (NEW.tool_name = 'hold-commit') EXECUTE FUNCTION ${schema}.test_hold(${IN_COMMIT});`);
}

interface Waiter {
  readonly pid: number;
  readonly application_name: string;
  readonly query: string;
}

/** The backend of this database waiting for an advisory lock that `holderPid` holds (none yet: undefined). */
async function waiterFor(admin: pg.Pool, holderPid: number): Promise<Waiter | undefined> {
  const { rows } = await admin.query<Waiter>(
    `SELECT a.pid, a.application_name, a.query FROM pg_stat_activity AS a
     WHERE a.datname = current_database() AND a.wait_event_type = 'Lock' AND a.wait_event = 'advisory'
       AND $1 = ANY (pg_blocking_pids(a.pid))`,
    [holderPid],
  );
  return rows[0];
}

/**
 * Runs `call` while this test holds an advisory lock (taken by `lock`, a statement on a
 * connection of its own), waits until the registry's backend waits for it, terminates that
 * backend, and returns the call's error with the terminated backend's activity.
 */
async function dropWhileWaiting(admin: pg.Pool, lock: string, call: () => Promise<unknown>): Promise<{ error: unknown; waiter: Waiter }> {
  const holder = await admin.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(lock);
    const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number;
    const outcome = call().then(
      () => ({ ok: true as const }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    let waiter: Waiter | undefined;
    await until(async () => (waiter = await waiterFor(admin, holderPid)) !== undefined, 'the write to wait for the held lock');
    // Read it once more: pg_stat_activity gives the query text from a copy of every backend's
    // status made at the start of the reading statement, but the wait event live, so the
    // first sight of the wait can carry the statement the backend ran just before it (the
    // policy read; seen once in a loaded CI run). The backend now waits until it is
    // terminated, so a copy made from here on shows the statement that waits.
    waiter = await waiterFor(admin, holderPid);
    if (waiter === undefined) throw new Error('the write stopped waiting for the held lock before it was terminated');
    const terminated = await admin.query<{ done: boolean }>('SELECT pg_terminate_backend($1) AS done', [waiter.pid]);
    expect(terminated.rows[0]?.done).toBe(true);
    const settled = await outcome;
    if (settled.ok) throw new Error('the write succeeded although its connection was terminated');
    return { error: settled.error, waiter };
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
}

/** What a reader shows, comparable between registries. */
async function picture(registry: PostgresToolRegistry, names: readonly string[], since: number) {
  const history = Object.fromEntries(
    await Promise.all(names.map(async (name) => [name, (await registry.history(name)).map((entry) => entry.spec.version)] as const)),
  );
  const page = await registry.changes({ since });
  return {
    tools: (await registry.listAll({ includeDisabled: true })).map((r: ToolRegistration) => `${r.spec.tool_name}@${r.spec.version}`),
    got: await Promise.all(names.map(async (name) => (await registry.get(name))?.spec.version ?? null)),
    history,
    events: page.events.map((event) => `${event.revision} ${event.action} ${event.tool_name}@${event.version}`),
    revision: page.revision,
  };
}

/** A registry on a pool of our own, so the test can see the pool's connections. */
async function openOnPool(schema: string, options: { cache: boolean; max?: number; url?: string; listenConnectionString?: string }) {
  const pool = db.pool({ max: options.max ?? 2, application_name: WRITER, ...(options.url === undefined ? {} : { connectionString: options.url }) });
  const registry = await openPostgresToolRegistry({
    pool,
    schema,
    cache: options.cache,
    busyTimeoutMs: 30_000,
    ...(options.listenConnectionString === undefined ? {} : { listenConnectionString: options.listenConnectionString }),
  });
  return { pool, registry };
}

/**
 * Another instance on the test's admin pool, reading the tables themselves (no read cache, so
 * no LISTEN connection): a registry on a pool of its own cost the server two connections, about
 * 30 ms of CPU each (docs/testing.md, twelfth round).
 */
function anotherInstance(pool: pg.Pool, schema: string): Promise<PostgresToolRegistry> {
  return openPostgresToolRegistry({ pool, schema, cache: false });
}

/** A connection handed out and never given back would show as checked out while the registry is idle. */
function expectNoCheckedOutConnection(pool: pg.Pool): void {
  expect(pool.totalCount - pool.idleCount).toBe(0);
  expect(pool.waitingCount).toBe(0);
}

const BEFORE = ['kept', 'other'] as const;

/**
 * A connection lost under a write is STORAGE_UNAVAILABLE (issue 39), the driver's error its
 * cause (`driverCode`: the server's SQLSTATE, undefined when the connection ended without a
 * word), with what is known of the write: nothing of it stored, or a commit whose answer was lost.
 */
function expectUnavailable(error: unknown, driverCode: string | undefined, outcome: 'not_written' | 'unknown'): void {
  expect(error).toBeInstanceOf(ToolRegistryError);
  expect(error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', context: { outcome } });
  expect((error as Error).cause).toBeInstanceOf(Error);
  expect(((error as Error).cause as { code?: unknown }).code).toBe(driverCode);
}

for (const cache of [true, false]) {
  describe(`PostgreSQL registry, connection dropped mid-write (cache ${cache ? 'on' : 'off'})`, () => {
    let schema: string;
    let admin: pg.Pool;
    let pool: pg.Pool;
    let registry: PostgresToolRegistry;
    let since: number;

    beforeEach(async () => {
      schema = db.schema();
      admin = db.pool({ max: 3 });
      // max 1: a connection the registry leaked after the drop would leave it none to work with.
      ({ pool, registry } = await openOnPool(schema, { cache, max: 1 }));
      await installHolds(admin, schema);
      await registry.registerMany([spec('kept', '1'), spec('other', '1')]);
      await registry.register(spec('kept', '2'));
      since = (await registry.changes()).revision;
    });

    afterEach(async () => {
      await registry.close();
    });

    it('registerMany dropped mid-statement: none of its tools anywhere, what was committed intact, the server error', async () => {
      const names = ['a-new', 'kept', 'hold', 'z-new'];
      const before = await picture(registry, names, 0);
      const { error, waiter } = await dropWhileWaiting(admin, `SELECT pg_advisory_xact_lock(${HOLD}, ${MID_STATEMENT})`, () =>
        registry.registerMany([spec('a-new'), spec('kept', '3'), spec('hold'), spec('z-new')]),
      );
      expect(waiter.application_name).toBe(WRITER);
      expect(waiter.query).toMatch(/tool_registry_write/);
      // STORAGE_UNAVAILABLE over the driver's error for the server's "terminating connection due
      // to administrator command"; one statement (cache on) commits as it ends: unknown outcome.
      expectUnavailable(error, '57P01', cache ? 'unknown' : 'not_written');
      expect((error as Error).cause).toBeInstanceOf(pg.DatabaseError);
      expectNoCheckedOutConnection(pool);

      expect(await picture(registry, names, 0)).toEqual(before);
      expect((await registry.changes({ since })).events).toEqual([]);
      const fresh = await anotherInstance(admin, schema);
      try {
        expect(await picture(fresh, names, 0)).toEqual(before);
      } finally {
        await fresh.close();
      }
      expect(before.tools).toEqual(['kept@2', 'other@1']);
      expect(before.history).toEqual({ 'a-new': [], kept: ['1', '2'], hold: [], 'z-new': [] });
      const rows = await admin.query(`SELECT tool_name FROM ${schema}.tool_specs WHERE tool_name <> ALL ($1) ORDER BY tool_name`, [BEFORE]);
      expect(rows.rows).toEqual([]);
    });

    it('after the drop the same registry works on a healthy connection: register, get, listAll, changes, watch', async () => {
      const watched: string[] = [];
      const stop = new AbortController();
      const watching = (async () => {
        for await (const event of registry.watch({ since, signal: stop.signal })) watched.push(`${event.action} ${event.tool_name}@${event.version}`);
      })();
      await dropWhileWaiting(admin, `SELECT pg_advisory_xact_lock(${HOLD}, ${MID_STATEMENT})`, () =>
        registry.registerMany([spec('a-new'), spec('hold')]),
      );
      // The same batch again, without the hold: it goes through now.
      await registry.registerMany([spec('a-new'), spec('kept', '3')]);
      expect((await registry.get('a-new'))?.spec.version).toBe('1');
      expect((await registry.get('kept'))?.spec.version).toBe('3');
      await registry.setEnabled('other', false);
      expect((await registry.listAll({ includeDisabled: true })).map((r) => `${r.spec.tool_name}@${r.spec.version}:${r.enabled}`)).toEqual([
        'a-new@1:true',
        'kept@3:true',
        'other@1:false',
      ]);
      const events = (await registry.changes({ since })).events.map((event) => `${event.action} ${event.tool_name}@${event.version}`);
      // In the order of the batch, as every store logs it (migration 0004).
      expect(events).toEqual(['added a-new@1', 'updated kept@3', 'disabled other@1']);
      await until(() => watched.length >= 3, 'the watch to see the three changes');
      stop.abort();
      await watching;
      expect(watched).toEqual(events);
      // Another instance sees the same.
      const fresh = await anotherInstance(admin, schema);
      try {
        expect(await picture(fresh, ['a-new', 'kept', 'other'], since)).toEqual(await picture(registry, ['a-new', 'kept', 'other'], since));
      } finally {
        await fresh.close();
      }
      expectNoCheckedOutConnection(pool);
    });

    it("a write dropped while it waits for the registry's lock on its tool: nothing changed, the server error", async () => {
      const before = await picture(registry, ['kept'], 0);
      // Another session holds the tool's write lock (the key tool_registry_lock() takes for 'kept').
      const lock = `SELECT pg_advisory_xact_lock(hashtextextended('tool-registry ${schema} tool kept', 0))`;
      const { error, waiter } = await dropWhileWaiting(admin, lock, () => registry.register(spec('kept', '3')));
      expect(waiter.application_name).toBe(WRITER);
      // With the cache on, the write is one statement that takes the same lock (migration 0005).
      expect(waiter.query).toMatch(cache ? /tool_registry_write_if/ : /tool_registry_lock/);
      expectUnavailable(error, '57P01', cache ? 'unknown' : 'not_written');
      expectNoCheckedOutConnection(pool);
      expect(await picture(registry, ['kept'], 0)).toEqual(before);
      expect((await registry.register(spec('kept', '3'))).spec.version).toBe('3');
      expect((await registry.get('kept'))?.spec.version).toBe('3');
    });

    it('a write dropped inside COMMIT is all or nothing, and every reader agrees which', async () => {
      const names = ['c-1', 'hold-commit', 'c-2'];
      const { error, waiter } = await dropWhileWaiting(admin, `SELECT pg_advisory_xact_lock(${HOLD}, ${IN_COMMIT})`, () =>
        registry.registerMany(names.map((name) => spec(name))),
      );
      // A write in one statement (cache on) commits as that statement ends.
      if (cache) expect(waiter.query).toMatch(/tool_registry_write_if/);
      else expect(waiter.query.trim().toLowerCase()).toBe('commit');
      expectUnavailable(error, '57P01', 'unknown');
      expectNoCheckedOutConnection(pool);
      const seen = await picture(registry, names, since);
      const visible = seen.got.filter((version) => version !== null);
      expect([0, names.length]).toContain(visible.length);
      expect(seen.events).toHaveLength(visible.length);
      const fresh = await anotherInstance(admin, schema);
      try {
        expect(await picture(fresh, names, since)).toEqual(seen);
      } finally {
        await fresh.close();
      }
      await registry.register(spec('after'));
      expect((await registry.get('after'))?.spec.version).toBe('1');
    });
  });
}

interface TestProxy {
  readonly url: string;
  /**
   * Forward the COMMIT of the next write, then cut its client off: a transaction's COMMIT after
   * it called tool_registry_write, or a one-statement write (tool_registry_write_if), which
   * commits as it ends.
   */
  cutAfterNextCommit(): void;
  readonly cuts: () => number;
  /** Hold back what the server sends (notifications, heartbeat answers) until `release`. */
  holdReplies(): void;
  releaseReplies(): void;
  /** Ends every connection through the proxy (a restart's, a failover's), still accepting new ones. */
  cutAll(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of the server. Its COMMIT cut forwards the COMMIT and then ends the
 * client's side: the server receives the COMMIT before the end of the stream (TCP keeps the
 * order), so it commits, and the client never hears the reply.
 */
async function startProxy(serverUrl: string): Promise<TestProxy> {
  const target = new URL(serverUrl);
  let cutArmed = false;
  let cuts = 0;
  let held: (() => void)[] | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    let wrote = false;
    client.on('data', (chunk: Buffer) => {
      if (cutArmed && chunk.includes('tool_registry_write')) wrote = true;
      // A simple-protocol Query message: 'Q', its length, the SQL text and a NUL; or the whole
      // extended-protocol exchange of a one-statement write, ending in Sync ('S', length 4).
      const commits =
        (chunk[0] === 0x51 && chunk.includes('commit\0')) ||
        (chunk.includes('tool_registry_write_if') && chunk.subarray(-5).equals(Buffer.from([0x53, 0, 0, 0, 4])));
      if (cutArmed && wrote && commits) {
        cutArmed = false;
        cuts++;
        upstream.end(chunk);
        client.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (held !== undefined) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    client.on('error', () => upstream.destroy()).on('close', () => upstream.end());
    upstream.on('error', () => client.destroy()).on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(serverUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  const releaseReplies = (): void => {
    const pending = held ?? [];
    held = undefined;
    for (const write of pending) write();
  };
  return {
    url: proxied.toString(),
    cutAfterNextCommit: () => (cutArmed = true),
    cuts: () => cuts,
    holdReplies: () => (held ??= []),
    releaseReplies,
    cutAll: () => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: async () => {
      releaseReplies();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('PostgreSQL registry, the reply to COMMIT lost', () => {
  for (const cache of [true, false]) {
    it(`the write committed although the caller got an error; the same registry shows all of it at once (cache ${cache ? 'on' : 'off'})`, async () => {
      const pooled = await startProxy(db.url());
      const listening = await startProxy(db.url());
      try {
        const schema = db.schema();
        const { pool, registry } = await openOnPool(schema, { cache, url: pooled.url, listenConnectionString: listening.url });
        try {
          await registry.registerMany([spec('kept', '1'), spec('other', '1')]);
          const since = (await registry.changes()).revision;
          const names = ['c-1', 'kept', 'c-2'];
          // Warm the cache, so a stale one would show the old state.
          expect(await Promise.all(names.map(async (name) => (await registry.get(name))?.spec.version ?? null))).toEqual([null, '1', null]);
          // The write's notification must not be what tells the cache: the failed write itself must.
          listening.holdReplies();
          pooled.cutAfterNextCommit();
          const error = await registry.registerMany([spec('c-1'), spec('kept', '2'), spec('c-2')]).then(
            () => undefined,
            (caught: unknown) => caught,
          );
          expect(pooled.cuts()).toBe(1);
          // Over node-postgres' "Connection terminated unexpectedly": the server said nothing, so no code.
          expectUnavailable(error, undefined, 'unknown');
          expectNoCheckedOutConnection(pool);
          // The server may still be finishing the cut COMMIT when the client sees the cut:
          // wait until another connection sees it, then the registry must show all of it.
          const observer = db.pool({ max: 1 });
          await until(
            async () => ((await observer.query(`SELECT 1 FROM ${schema}.tool_registrations WHERE tool_name = 'c-1'`)).rowCount ?? 0) > 0,
            'the cut COMMIT to be visible',
          );
          expect(await Promise.all(names.map(async (name) => (await registry.get(name))?.spec.version ?? null))).toEqual(['1', '2', '1']);
          listening.releaseReplies();
          const seen = await picture(registry, names, since);
          expect(seen.got).toEqual(['1', '2', '1']);
          // One commit's events, consecutive.
          expect(seen.events.map((event) => event.replace(/^\d+ /, '')).sort()).toEqual(['added c-1@1', 'added c-2@1', 'updated kept@2']);
          expect(seen.events.map((event) => Number.parseInt(event, 10))).toEqual([since + 1, since + 2, since + 3]);
          const fresh = await anotherInstance(observer, schema);
          try {
            expect(await picture(fresh, names, since)).toEqual(seen);
          } finally {
            await fresh.close();
          }
        } finally {
          listening.releaseReplies();
          await registry.close();
        }
      } finally {
        await pooled.close();
        await listening.close();
      }
    });
  }
});

describe('PostgreSQL registry, the database gone before a write', () => {
  it("register's and registerMany's read before the write fails: STORAGE_UNAVAILABLE with outcome not_written", async () => {
    const proxy = await startProxy(db.url());
    try {
      const { registry } = await openOnPool(db.schema(), { cache: false, url: proxy.url });
      try {
        await registry.register(spec('there'));
        // Every connection cut and new ones refused: the read that looks for an identical spec fails first.
        await proxy.close();
        for (const call of [() => registry.register(spec('there')), () => registry.register(spec('new')), () => registry.registerMany([spec('there'), spec('new')])]) {
          const error = await call().then(
            () => undefined,
            (caught: unknown) => caught,
          );
          expect(error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', context: { outcome: 'not_written' } });
        }
      } finally {
        await registry.close();
      }
    } finally {
      await proxy.close();
    }
  });
});

describe('PostgreSQL registry in a real process, connection dropped mid-write', () => {
  it('the process survives (no unhandled error event), gets the server error, and goes on writing', async () => {
    const schema = db.schema();
    const admin = db.pool({ max: 3 });
    await (await anotherInstance(admin, schema)).close();
    await installHolds(admin, schema);
    const holder = await admin.connect();
    try {
      await holder.query(`SELECT pg_advisory_lock(${HOLD}, ${MID_STATEMENT})`);
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number;
      const worker = spawnPgWorker({
        url: withAppName(db.url(), WRITER),
        schema,
        action: 'registerManyThenRegister',
        specs: [spec('a-new'), spec('hold'), spec('z-new')],
        then: spec('after'),
      });
      let waiter: Waiter | undefined;
      await until(async () => (waiter = await waiterFor(admin, holderPid)) !== undefined, 'the worker to wait for the held lock');
      if (waiter === undefined) throw new Error('unreachable');
      expect(waiter.application_name).toBe(WRITER);
      await admin.query('SELECT pg_terminate_backend($1)', [waiter.pid]);
      const done = await worker.next('done');
      expect(done.ok, JSON.stringify(done.error) + worker.stderr()).toBe(true);
      expect(done.result).toEqual({ firstError: { name: 'StorageUnavailableError', code: 'STORAGE_UNAVAILABLE', causeCode: '57P01', toolRegistryError: true }, listed: ['after'] });
      expect(await worker.exited).toEqual({ code: 0, signal: null });
    } finally {
      await holder.query(`SELECT pg_advisory_unlock(${HOLD}, ${MID_STATEMENT})`);
      holder.release();
    }
  });
});

describe('PostgreSQL registry, connections the server ends for idleness', () => {
  it('a pooled connection idle_session_timeout ended (57P05) is a connection failure: the next calls answer or are STORAGE_UNAVAILABLE, never the bare driver error', async () => {
    // A DBA's idle_session_timeout (PostgreSQL 14+) ends a connection idle in the pool; the
    // next call may be handed it before the pool has seen the end.
    const url = new URL(db.url());
    url.searchParams.set('options', '-c idle_session_timeout=100');
    for (const cache of [true, false]) {
      // The schema is made and migrated first without the timeout: what races it here is the
      // calls below, not the migrations (on a loaded machine a pause between two of them passed 100 ms).
      const schema = db.schema();
      await (await openPostgresToolRegistry({ connectionString: db.url(), schema, cache: false })).close();
      // The open itself may race the timeout too (a loaded machine paused past 100 ms between
      // its connect and its first query): then it is STORAGE_UNAVAILABLE, and it is tried again.
      let registry: Awaited<ReturnType<typeof openPostgresToolRegistry>> | undefined;
      for (let attempt = 1; registry === undefined; attempt++) {
        try {
          registry = await openPostgresToolRegistry({ connectionString: url.toString(), schema, cache });
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(ToolRegistryError);
          expect((error as ToolRegistryError).code).toBe('STORAGE_UNAVAILABLE');
          if (attempt === 10) throw error;
        }
      }
      try {
        // Pauses about as long as the timeout: calls race the server ending their connection.
        for (let round = 0; round < 12; round++) {
          await new Promise((resolve) => setTimeout(resolve, 90 + (round % 5) * 5));
          for (const call of [() => registry.register(spec(`t${round}`)), () => registry.history(`t${round}`), () => registry.changes()]) {
            const error = await call().then(() => undefined, (caught: unknown) => caught);
            if (error === undefined) continue;
            expect(error, String(error)).toBeInstanceOf(ToolRegistryError);
            expect((error as ToolRegistryError).code).toBe('STORAGE_UNAVAILABLE');
          }
        }
      } finally {
        await registry.close();
      }
    }
  });
});

describe('PostgreSQL registry, a pooled connection idle_session_timeout ended unseen', () => {
  it('the next call, handed that connection (or several in turn) before the pool saw its end, answers: 57P05 says the statement never ran, so a write is sent again', async () => {
    const url = new URL(db.url());
    url.searchParams.set('options', '-c idle_session_timeout=150');
    const schema = db.schema();
    await (await openPostgresToolRegistry({ connectionString: db.url(), schema, cache: false })).close();
    const open = (): Promise<PostgresToolRegistry> => openPostgresToolRegistry({ connectionString: url.toString(), schema, cache: false });
    // The open's own connect may race the timeout on a loaded machine (a pause past 150 ms before its query): tried again.
    const registry = await open().catch(open).catch(open);
    // Blocks the event loop (no timers, no I/O) past the timeout: the server ends the idle
    // connection, and the pool hands it out again before node reads the FATAL.
    const idle = (): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    try {
      await registry.register(spec('a'));
      idle();
      await registry.register(spec('b'));
      // Several idle connections, all ended at once: the retry, handed the next one before node
      // read its FATAL, met the same end (a read was STORAGE_UNAVAILABLE after its one retry).
      const several = async (): Promise<void> => void (await Promise.all(Array.from({ length: 6 }, () => registry.history('a'))));
      await several();
      idle();
      expect((await registry.listAll()).map((tool) => tool.spec.tool_name)).toEqual(['a', 'b']);
      await several();
      idle();
      await registry.setEnabled('a', false);
      expect((await registry.get('a'))?.enabled).toBe(false);
    } finally {
      await registry.close();
    }
  });

  it('a read after every pooled connection was terminated at once (a failover node has not read yet) answers: tried on each, not failed at the second', async () => {
    const schema = db.schema();
    const name = 'tr-drop-all-idle';
    const registry = await openPostgresToolRegistry({ connectionString: withAppName(db.url(), name), schema, cache: false });
    try {
      await registry.register(spec('a'));
      await Promise.all(Array.from({ length: 6 }, () => registry.history('a')));
      await db.pool().query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [name]);
      // Blocks the event loop while the FATALs arrive: the pool still counts the connections idle.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
      expect((await registry.history('a')).length).toBe(1);
    } finally {
      await registry.close();
    }
  });
});

describe('PostgreSQL registry, search and status() while the server is away', () => {
  it('search answers from a cache within staleIfErrorMs as get() does: an index behind the cache, and one built then (it read the log, STORAGE_UNAVAILABLE)', async () => {
    const proxy = await startProxy(db.url());
    const schema = db.schema();
    const open = (): Promise<PostgresToolRegistry> => openPostgresToolRegistry({ connectionString: proxy.url, schema, staleIfErrorMs: 600_000 });
    const behind = await open();
    const fresh = await open();
    const found = async (registry: PostgresToolRegistry): Promise<string[]> => (await registry.search('minimal')).results.map(({ registration }) => registration.spec.tool_name).sort();
    try {
      const described = (name: string): ToolSpecInput => minimalSpec(name, { description: 'A minimal tool.' });
      await behind.registerMany([described('a'), described('b')]);
      expect(await found(behind)).toEqual(['a', 'b']);
      await behind.register(described('c')); // the cache has it, the index not yet
      // Both caches caught up with c (the first read after the notification catches up, the second answers from memory).
      for (const registry of [behind, fresh]) await until(async () => (await registry.get('c')) !== undefined && (await registry.get('c')) !== undefined, 'the caches to hold c');
      await proxy.close();
      for (const registry of [behind, fresh]) {
        expect((await registry.listAll()).map((registration) => registration.spec.tool_name)).toEqual(['a', 'b', 'c']);
        expect(await found(registry)).toEqual(['a', 'b', 'c']);
      }
    } finally {
      await behind.close();
      await fresh.close();
    }
  });

  it('status() answers over a fresh connection after the pooled one was cut, and is STORAGE_UNAVAILABLE while the server is away (it was the bare driver error)', async () => {
    const proxy = await startProxy(db.url());
    const registry = await openPostgresToolRegistry({ connectionString: proxy.url, schema: db.schema(), cache: false });
    try {
      await registry.register(minimalSpec('a'));
      expect((await registry.status()).tools).toBe(1);
      proxy.cutAll();
      expect((await registry.status()).tools).toBe(1);
      await proxy.close();
      const error = await registry.status().then(() => undefined, (caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', context: { operation: 'status' } });
    } finally {
      await registry.close();
    }
  });
});
