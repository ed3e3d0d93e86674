// SQLite-specific behaviour beyond the conformance suite: options, pragmas, ownership of
// the handle, read-only mode, locking, history, status and verify. Real databases only.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintOf, openSqliteToolRegistry, StorageBusyError } from '../../src/index.js';
import type { SqliteToolRegistry, SqliteToolRegistryOptions } from '../../src/index.js';
import { expectCode, expectPlainTypeError, fullSpec, manualClock, minimalSpec } from '../support/registry-helpers.js';
import { dumpDatabase, LATEST, SHIPPED, tempFolder } from './helpers.js';

let temp: ReturnType<typeof tempFolder>;
const toClose: { close(): unknown }[] = [];
beforeEach(() => {
  temp = tempFolder();
});
afterEach(async () => {
  for (const item of toClose.splice(0)) await item.close();
  temp.cleanup();
});

async function open(options: SqliteToolRegistryOptions): Promise<SqliteToolRegistry> {
  const registry = await openSqliteToolRegistry(options);
  toClose.push(registry);
  return registry;
}

function rawConnection(file: string, options: Database.Options = {}): Database.Database {
  const db = new Database(file, options);
  toClose.push(db);
  return db;
}

describe('openSqliteToolRegistry options', () => {
  const bad: [string, unknown][] = [
    ['no options', undefined],
    ['a string', 'file.db'],
    ['neither filename nor database', {}],
    ['both filename and database', { filename: ':memory:', database: new Database(':memory:') }],
    ['a numeric filename', { filename: 42 }],
    ['an empty filename', { filename: '' }],
    ['a database that is not a handle', { database: { name: 'x' } }],
    ['a closed database', { database: Object.assign(new Database(':memory:'), {}).close() }],
    ['a negative busyTimeoutMs', { filename: ':memory:', busyTimeoutMs: -1 }],
    ['a string busyTimeoutMs', { filename: ':memory:', busyTimeoutMs: '100' }],
    ['an infinite busyTimeoutMs', { filename: ':memory:', busyTimeoutMs: Infinity }],
    ['an unknown synchronous', { filename: ':memory:', synchronous: 'off' }],
    ['a string readonly', { filename: ':memory:', readonly: 'yes' }],
    ['readonly :memory:', { filename: ':memory:', readonly: true }],
    ['a clock that is not a function', { filename: ':memory:', clock: Date.now() }],
    ['a callRetention.maxRows of 0', { filename: ':memory:', callRetention: { maxRows: 0 } }],
    ['a string callRetention.maxAgeDays', { filename: ':memory:', callRetention: { maxAgeDays: '30' } }],
    // It opened a store that writes.
    ['a misspelt readonly (readOnly)', { filename: ':memory:', readOnly: true }],
  ];
  it.each(bad)('%s is a plain TypeError', async (_what, options) => {
    await expectPlainTypeError(() => openSqliteToolRegistry(options as SqliteToolRegistryOptions));
  });

  it("':memory:' opens migrated and empty, in memory journal mode", async () => {
    const registry = await open({ filename: ':memory:' });
    const status = await registry.status();
    expect(status).toMatchObject({ filename: ':memory:', schemaVersion: LATEST, tools: 0, journalMode: 'memory' });
    expect(status.appliedMigrations).toEqual(SHIPPED);
  });

  it('two :memory: registries share nothing', async () => {
    const a = await open({ filename: ':memory:' });
    const b = await open({ filename: ':memory:' });
    await a.register(minimalSpec('only_a'));
    expect(await b.has('only_a')).toBe(false);
  });
});

describe('files the store opens', () => {
  it('get WAL, synchronous FULL, foreign keys, a journal size limit and a WAL autocheckpoint', async () => {
    const registry = await open({ filename: temp.file('a.db') });
    const status = await registry.status();
    expect(status).toMatchObject({ journalMode: 'wal', synchronous: 'full', walAutocheckpoint: 1000 });
    expect(status.journalSizeLimit).toBeGreaterThan(0);
  });

  it("synchronous: 'normal' is honoured", async () => {
    const registry = await open({ filename: temp.file('a.db'), synchronous: 'normal' });
    expect((await registry.status()).synchronous).toBe('normal');
  });

  it('keep the -wal file bounded: after a large write it is truncated back to the limit', async () => {
    const file = temp.file('wal.db');
    const registry = await open({ filename: file });
    const limit = (await registry.status()).journalSizeLimit;
    // One transaction larger than the limit grows the WAL past it...
    const big = 'x'.repeat(limit + 1024 * 1024);
    await registry.register(minimalSpec('big', { description: big }));
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(limit);
    // ...the automatic checkpoint after it runs, and the next write resets and truncates the WAL.
    await registry.register(minimalSpec('small'));
    expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(limit);
    expect((await registry.get('big'))?.spec.description).toHaveLength(big.length);
  });

  it('close() closes the connection it opened (the -wal file goes away with the last connection)', async () => {
    const file = temp.file('closed.db');
    const registry = await openSqliteToolRegistry({ filename: file });
    await registry.register(minimalSpec('one'));
    expect(existsSync(`${file}-wal`)).toBe(true);
    await registry.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    await expectCode(registry.status(), 'REGISTRY_CLOSED');
    await expectCode(registry.verify(), 'REGISTRY_CLOSED');
  });
});

describe('a caller-supplied database handle', () => {
  it('is used, left open by close(), and its journal mode and synchronous are left alone', async () => {
    const file = temp.file('own.db');
    const db = rawConnection(file);
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = OFF');
    const registry = await openSqliteToolRegistry({ database: db });
    await registry.register(minimalSpec('mine'));
    await registry.close();
    expect(db.open).toBe(true);
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(db.pragma('synchronous', { simple: true })).toBe(0);
    expect(db.prepare('SELECT tool_name FROM tools').pluck().all()).toEqual(['mine']);
  });

  it("gets back the busy_timeout and foreign_keys it had when the last registry over it closes (issue 13, item 7)", async () => {
    const db = rawConnection(temp.file('pragmas.db'));
    db.pragma('busy_timeout = 4321');
    db.pragma('foreign_keys = OFF');
    const one = await openSqliteToolRegistry({ database: db });
    const two = await openSqliteToolRegistry({ database: db });
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    await one.close();
    // Still in use by the second registry: its settings stay.
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    await two.register(minimalSpec('still_works'));
    await two.close();
    expect(db.pragma('busy_timeout', { simple: true })).toBe(4321);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(0);
    // A failed open gives them back too.
    db.prepare("INSERT INTO schema_migrations VALUES ('9999_future', 'then')").run();
    await expectCode(openSqliteToolRegistry({ database: db }), 'SCHEMA_TOO_NEW');
    expect(db.pragma('busy_timeout', { simple: true })).toBe(4321);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(0);
  });

  it("inside the caller's own transaction, writes join it: the caller's rollback undoes them, its commit keeps them", async () => {
    const db = rawConnection(':memory:');
    const registry = await open({ database: db });
    db.exec('BEGIN IMMEDIATE');
    await registry.register(minimalSpec('undone'));
    expect(await registry.has('undone')).toBe(true);
    await expectCode(registry.register(minimalSpec('undone', { description: 'other' })), 'VERSION_CONFLICT');
    expect(db.inTransaction).toBe(true);
    db.exec('ROLLBACK');
    expect(await registry.has('undone')).toBe(false);

    db.exec('BEGIN IMMEDIATE');
    await registry.register(minimalSpec('kept'));
    await registry.importSnapshot({ tools: [{ spec: minimalSpec('also_kept') }] });
    db.exec('COMMIT');
    expect((await registry.listAll()).map((r) => r.spec.tool_name)).toEqual(['also_kept', 'kept']);
  });

  it('works when the handle returns integers as BigInt', async () => {
    const db = rawConnection(':memory:');
    db.defaultSafeIntegers(true);
    const registry = await open({ database: db });
    await registry.register(minimalSpec('big_ints'));
    await registry.setEnabled('big_ints', false);
    expect(await registry.get('big_ints')).toMatchObject({ enabled: false });
    expect(await registry.status()).toMatchObject({ tools: 1, enabled: 0, disabled: 1 });
  });

  it('a read-only handle gives a read-only registry', async () => {
    const file = temp.file('ro-handle.db');
    await (await openSqliteToolRegistry({ filename: file })).close();
    const registry = await open({ database: rawConnection(file, { readonly: true }) });
    await expectCode(registry.register(minimalSpec('nope')), 'READ_ONLY');
  });
});

describe('readonly: true', () => {
  async function seeded(file: string): Promise<void> {
    const writer = await openSqliteToolRegistry({ filename: file });
    await writer.register(fullSpec('search'));
    await writer.register(minimalSpec('other'));
    await writer.putUpstream({ name: 'gh', transport: { type: 'http', url: 'https://example.com/mcp', headers: {} } });
    await writer.recordCalls([{ at: new Date().toISOString(), token: null, persona: null, namespace: 'default', tool: 'search', version: null, fingerprint: null, upstream: null, duration_ms: 3, outcome: 'ok' }]);
    await writer.close();
  }

  it('reads everything and rejects every write with READ_ONLY, changing nothing', async () => {
    const file = temp.file('ro.db');
    await seeded(file);
    const before = dumpDatabase(file);
    const registry = await open({ filename: file, readonly: true });
    expect((await registry.listAll()).map((r) => r.spec.tool_name)).toEqual(['other', 'search']);
    expect(await registry.get('search')).toMatchObject({ spec: fullSpec('search'), enabled: true });
    expect((await registry.status()).readonly).toBe(true);
    expect((await registry.verify()).ok).toBe(true);
    const dry = await registry.importSnapshot({ tools: [] }, { mode: 'replace', dryRun: true });
    expect(dry.removed).toBe(2);
    await expectCode(registry.register(minimalSpec('new_one')), 'READ_ONLY');
    await expectCode(registry.registerMany([minimalSpec('new_two')]), 'READ_ONLY');
    await expectCode(registry.setEnabled('search', false), 'READ_ONLY');
    await expectCode(registry.remove('search'), 'READ_ONLY');
    await expectCode(registry.importSnapshot({ tools: [] }, { mode: 'replace' }), 'READ_ONLY');
    // The gateway's rows (issue 37): read, never written.
    expect((await registry.listUpstreams()).map((row) => row.name)).toEqual(['gh']);
    expect((await registry.getUpstream('gh'))?.prefix).toBe('gh_');
    expect((await registry.listCalls()).map((row) => row.tool)).toEqual(['search']);
    expect((await expectCode(registry.putUpstream({ name: 'gh', transport: { type: 'stdio', command: ['x'], env: {}, cwd: null } }), 'READ_ONLY')).context).toMatchObject({ method: 'putUpstream' });
    await expectCode(registry.removeUpstream('gh'), 'READ_ONLY');
    await expectCode(registry.recordCalls([{ at: new Date().toISOString(), token: null, persona: null, namespace: 'default', tool: 'x', version: null, fingerprint: null, upstream: null, duration_ms: 1, outcome: 'ok' }]), 'READ_ONLY');
    // Registering the identical spec writes nothing, so it is answered (rule 2).
    expect(await registry.register(minimalSpec('other'))).toMatchObject({ enabled: true });
    expect(dumpDatabase(file)).toEqual(before);
  });

  it('READ_ONLY names the tool a write named (context.tool_name), as every error where a tool is involved does', async () => {
    const file = temp.file('ro-names.db');
    await seeded(file);
    const registry = await open({ filename: file, readonly: true });
    expect((await expectCode(registry.register(minimalSpec('new_one')), 'READ_ONLY')).context).toMatchObject({ method: 'register', tool_name: 'new_one' });
    expect((await expectCode(registry.setEnabled('search', false), 'READ_ONLY')).context).toMatchObject({ method: 'setEnabled', tool_name: 'search' });
    expect((await expectCode(registry.remove('search'), 'READ_ONLY')).context).toMatchObject({ method: 'remove', tool_name: 'search' });
    // Storage that refuses the write (a read-only handle): the same context, SQLite's error as cause.
    const handle = await open({ database: rawConnection(file, { readonly: true }) });
    const refused = await expectCode(handle.setEnabled('search', false), 'READ_ONLY');
    expect(refused.context).toMatchObject({ method: 'setEnabled', tool_name: 'search' });
    expect((await expectCode(handle.removeUpstream('gh'), 'READ_ONLY')).context).toMatchObject({ method: 'removeUpstream' });
  });

  it('a missing file is an error and is not created', async () => {
    const file = temp.file('missing.db');
    const error = await openSqliteToolRegistry({ filename: file, readonly: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error & { cause?: { code?: string } }).cause?.code).toBe('SQLITE_CANTOPEN');
    expect(existsSync(file)).toBe(false);
  });

  it('a file that was never migrated is an error, and is not migrated', async () => {
    const file = temp.file('plain.db');
    const db = new Database(file);
    db.exec('CREATE TABLE unrelated (x INTEGER)');
    db.close();
    const before = dumpDatabase(file);
    // Like PostgreSQL's read-only open of an unmigrated schema, the error lists what is missing.
    await expect(openSqliteToolRegistry({ filename: file, readonly: true })).rejects.toMatchObject({ pendingMigrations: SHIPPED });
    expect(dumpDatabase(file)).toEqual(before);
  });

  it('reads a file another connection holds the write lock on', async () => {
    const file = temp.file('locked.db');
    await seeded(file);
    const locker = rawConnection(file);
    locker.exec('BEGIN IMMEDIATE');
    const registry = await open({ filename: file, readonly: true, busyTimeoutMs: 50 });
    expect(await registry.has('search')).toBe(true);
    locker.exec('ROLLBACK');
  });
});

describe('getUpstream, which keeps the rows it read until the next commit (a serving gateway reads its row at each upstream call)', () => {
  it("reads again after a commit of this connection, of another one, or a hand edit, and inside the caller's transaction", async () => {
    const file = temp.file('upstreams.db');
    const one = await open({ filename: file });
    const two = await open({ filename: file });
    await two.putUpstream({ name: 'gh', transport: { type: 'stdio', command: ['node', 'gh.js'], env: {}, cwd: null } });
    expect((await one.getUpstream('gh'))?.prefix).toBe('gh_');
    expect(await one.getUpstream('gh')).toBe(await one.getUpstream('gh'));
    await two.removeUpstream('gh');
    expect(await one.getUpstream('gh')).toBeUndefined();
    await one.putUpstream({ name: 'gh', prefix: 'hub_', transport: { type: 'stdio', command: ['node', 'gh.js'], env: {}, cwd: null } });
    expect((await one.getUpstream('gh'))?.prefix).toBe('hub_');
    rawConnection(file).prepare("UPDATE tool_upstreams SET prefix = 'raw_' WHERE name = 'gh'").run();
    expect((await one.getUpstream('gh'))?.prefix).toBe('raw_');
    // A caller's own handle: inside its transaction, what it wrote there, and after its rollback, the row as it was.
    const db = rawConnection(file);
    const own = await open({ database: db });
    expect((await own.getUpstream('gh'))?.prefix).toBe('raw_');
    db.exec('BEGIN');
    db.prepare("UPDATE tool_upstreams SET prefix = 'tx_' WHERE name = 'gh'").run();
    expect((await own.getUpstream('gh'))?.prefix).toBe('tx_');
    db.exec('ROLLBACK');
    expect((await own.getUpstream('gh'))?.prefix).toBe('raw_');
  });
});

describe('locking', () => {
  it('a write lock held longer than busyTimeoutMs is STORAGE_BUSY with the SQLITE_BUSY as cause, and nothing changes', async () => {
    const file = temp.file('busy.db');
    const registry = await open({ filename: file, busyTimeoutMs: 100 });
    await registry.register(minimalSpec('present'));
    const locker = rawConnection(file);
    locker.exec('BEGIN IMMEDIATE');
    try {
      for (const write of [
        () => registry.register(minimalSpec('blocked')),
        () => registry.setEnabled('present', false),
        () => registry.remove('present'),
        () => registry.importSnapshot({ tools: [] }, { mode: 'replace' }),
        () => registry.putUpstream({ name: 'gh', transport: { type: 'http', url: 'https://example.com/mcp', headers: {} } }),
        () => registry.removeUpstream('gh'),
        () => registry.recordCalls([{ at: new Date().toISOString(), token: null, persona: null, namespace: 'default', tool: 'present', version: null, fingerprint: null, upstream: null, duration_ms: 1, outcome: 'ok' }]),
      ]) {
        const error = await expectCode(write(), 'STORAGE_BUSY');
        expect(error).toBeInstanceOf(StorageBusyError);
        expect((error.cause as { code?: string }).code).toBe('SQLITE_BUSY');
        expect(error.context).toMatchObject({ busy_timeout_ms: 100 });
      }
      // Reads are not blocked by a writer in WAL mode.
      expect(await registry.get('present')).toMatchObject({ enabled: true });
      expect(await registry.listCalls()).toEqual([]);
      expect(await registry.listUpstreams()).toEqual([]);
    } finally {
      locker.exec('ROLLBACK');
    }
    expect(await registry.register(minimalSpec('after'))).toMatchObject({ enabled: true });
    expect(await registry.has('blocked')).toBe(false);
  });

  it('calls that share a batch which never got the lock each get their own STORAGE_BUSY: their method and tool', async () => {
    const file = temp.file('busy-batch.db');
    const registry = await open({ filename: file, busyTimeoutMs: 100 });
    await registry.registerMany([minimalSpec('present'), minimalSpec('other')]);
    const locker = rawConnection(file);
    locker.exec('BEGIN IMMEDIATE');
    let errors: unknown[];
    try {
      // Started in one turn: one group-commit batch, led by the register.
      errors = await Promise.all(
        [registry.register(minimalSpec('blocked')), registry.setEnabled('present', false), registry.remove('other'), registry.removeUpstream('gh')].map((call) =>
          call.then(() => 'resolved', (error: unknown) => error),
        ),
      );
    } finally {
      locker.exec('ROLLBACK');
    }
    expect(errors.map((error) => [(error as StorageBusyError).code, (error as StorageBusyError).context])).toEqual([
      ['STORAGE_BUSY', expect.objectContaining({ operation: 'register', tool_name: 'blocked', busy_timeout_ms: 100 })],
      ['STORAGE_BUSY', expect.objectContaining({ operation: 'setEnabled', tool_name: 'present', busy_timeout_ms: 100 })],
      ['STORAGE_BUSY', expect.objectContaining({ operation: 'remove', tool_name: 'other', busy_timeout_ms: 100 })],
      ['STORAGE_BUSY', expect.objectContaining({ operation: 'removeUpstream', busy_timeout_ms: 100 })],
    ]);
    expect((errors[3] as StorageBusyError).context.tool_name).toBeUndefined();
    expect((errors[1] as Error).message).toMatch(/^setEnabled\("present"\): /);
    expect(((errors[2] as Error).cause as { code?: string }).code).toBe('SQLITE_BUSY');
  });

  it.each([true, false])('an identical register takes no lock, also for a tool this registry never read (cache %s)', async (cache) => {
    const file = temp.file(`identical-${cache}.db`);
    const writer = await open({ filename: file });
    await writer.registerMany([minimalSpec('known'), minimalSpec('never_read', { version: '1' })]);
    const registry = await open({ filename: file, busyTimeoutMs: 100, cache });
    expect(await registry.get('known')).toMatchObject({ enabled: true });
    const locker = rawConnection(file);
    locker.exec('BEGIN IMMEDIATE');
    try {
      // The lock is held: a write that changes something waits and gives up.
      await expectCode(registry.register(minimalSpec('brand_new')), 'STORAGE_BUSY');
      // Writes that change nothing are answered from a read (docs/contract.md, "Decisions").
      expect(await registry.register(minimalSpec('known'))).toMatchObject({ spec: { tool_name: 'known' } });
      expect(await registry.register(minimalSpec('never_read', { version: '1' }))).toMatchObject({ spec: { version: '1' } });
      await expectCode(registry.register(minimalSpec('never_read', { version: '1', description: 'changed' })), 'STORAGE_BUSY');
    } finally {
      locker.exec('ROLLBACK');
    }
    await expectCode(registry.register(minimalSpec('never_read', { version: '1', description: 'changed' })), 'VERSION_CONFLICT');
    expect(await registry.has('brand_new')).toBe(false);
  });

  it('a write waits without freezing the event loop and succeeds once the lock is released', async () => {
    const file = temp.file('wait.db');
    const registry = await open({ filename: file, busyTimeoutMs: 10_000 });
    const locker = rawConnection(file);
    locker.exec('BEGIN IMMEDIATE');
    locker.prepare("CREATE TABLE locker_was_here (x INTEGER)").run();
    const write = registry.register(minimalSpec('patient'));
    // This timer can only fire while the write is waiting if the wait is asynchronous.
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        locker.exec('COMMIT');
        resolve();
      }, 50),
    );
    await released;
    expect(await write).toMatchObject({ enabled: true });
    expect(locker.prepare("SELECT count(*) FROM tools WHERE tool_name = 'patient'").pluck().get()).toBe(1);
  });

  it('in rollback-journal mode a read locked out longer than busyTimeoutMs is STORAGE_BUSY, never a raw SQLITE_BUSY (status and verify too)', async () => {
    const file = temp.file('delete-mode.db');
    const db = rawConnection(file);
    db.pragma('journal_mode = DELETE');
    const registry = await open({ database: db, busyTimeoutMs: 50 });
    await registry.register(minimalSpec('present'));
    const locker = rawConnection(file);
    locker.exec('BEGIN EXCLUSIVE');
    try {
      const busy = [
        await expectCode(registry.get('present'), 'STORAGE_BUSY'),
        await expectCode(registry.has('present'), 'STORAGE_BUSY'),
        await expectCode(registry.listAll(), 'STORAGE_BUSY'),
        await expectCode(registry.exportSnapshot(), 'STORAGE_BUSY'),
        await expectCode(registry.register(minimalSpec('present')), 'STORAGE_BUSY'),
        await expectCode(registry.importSnapshot({ tools: [] }, { dryRun: true }), 'STORAGE_BUSY'),
        await expectCode(registry.status(), 'STORAGE_BUSY'),
        await expectCode(registry.verify(), 'STORAGE_BUSY'),
      ];
      for (const error of busy) {
        expect((error.cause as { code?: string }).code).toBe('SQLITE_BUSY');
        expect(error.context).toMatchObject({ busy_timeout_ms: 50 });
      }
    } finally {
      locker.exec('ROLLBACK');
    }
    expect(await registry.has('present')).toBe(true);
  });

  it.each([
    ['get', (registry: SqliteToolRegistry) => registry.get('present')],
    ['has', (registry: SqliteToolRegistry) => registry.has('present')],
    ['listAll', (registry: SqliteToolRegistry) => registry.listAll()],
    ['exportSnapshot', (registry: SqliteToolRegistry) => registry.exportSnapshot()],
    ['status', (registry: SqliteToolRegistry) => registry.status()],
    ['verify', (registry: SqliteToolRegistry) => registry.verify()],
    ['a dry-run import', (registry: SqliteToolRegistry) => registry.importSnapshot({ tools: [] }, { dryRun: true })],
  ])('%s waits for a lock shorter than busyTimeoutMs, asynchronously, and succeeds (issue 13, item 5)', async (_what, read) => {
    const file = temp.file('wait-read.db');
    const db = rawConnection(file);
    db.pragma('journal_mode = DELETE');
    const registry = await open({ database: db, busyTimeoutMs: 5000 });
    await registry.register(minimalSpec('present'));
    const locker = rawConnection(file);
    locker.exec('BEGIN EXCLUSIVE');
    let released = false;
    // This timer can only fire while the read waits if the wait is asynchronous.
    setTimeout(() => {
      locker.exec('ROLLBACK');
      released = true;
    }, 150);
    await expect(read(registry)).resolves.toBeDefined();
    expect(released).toBe(true);
  });

  it('busyTimeoutMs 0 tries once', async () => {
    const file = temp.file('zero.db');
    const registry = await open({ filename: file, busyTimeoutMs: 0 });
    const locker = rawConnection(file);
    locker.exec('BEGIN IMMEDIATE');
    const error = await expectCode(registry.register(minimalSpec('x')), 'STORAGE_BUSY');
    expect(error.context).toMatchObject({ attempts: 1 });
    locker.exec('ROLLBACK');
  });

  it('a registry closed while its write waits for the lock rejects with REGISTRY_CLOSED', async () => {
    const file = temp.file('close-wait.db');
    const registry = await openSqliteToolRegistry({ filename: file, busyTimeoutMs: 10_000 });
    const locker = rawConnection(file);
    locker.exec('BEGIN IMMEDIATE');
    const write = registry.register(minimalSpec('never'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await registry.close();
    await expectCode(write, 'REGISTRY_CLOSED');
    locker.exec('ROLLBACK');
  });
});

describe("inside the caller's own transaction (issue 13, item 6)", () => {
  it('a snapshot made stale by another connection (SQLITE_BUSY_SNAPSHOT) is STORAGE_BUSY at once, without retries', async () => {
    const file = temp.file('stale-snapshot.db');
    const db = rawConnection(file);
    db.pragma('journal_mode = WAL');
    const registry = await open({ database: db, busyTimeoutMs: 3000 });
    await registry.register(minimalSpec('present'));
    const other = rawConnection(file);
    db.exec('BEGIN');
    db.prepare('SELECT count(*) FROM tool_registrations').get();
    other.prepare('UPDATE tool_registrations SET enabled = 0').run();
    const error = await expectCode(registry.register(minimalSpec('blocked')), 'STORAGE_BUSY');
    expect((error.cause as { code?: string }).code).toBe('SQLITE_BUSY_SNAPSHOT');
    expect(error.context).toMatchObject({ attempts: 1, in_caller_transaction: true });
    // The caller's transaction is still the caller's to end.
    expect(db.inTransaction).toBe(true);
    db.exec('ROLLBACK');
    expect(await registry.register(minimalSpec('after'))).toMatchObject({ enabled: true });
    expect(await registry.has('blocked')).toBe(false);
  });
});

describe('close() racing a call in flight', () => {
  it('a register called before close() commits like every write called before it; one called after rejects with REGISTRY_CLOSED', async () => {
    const file = temp.file('close-race.db');
    const registry = await openSqliteToolRegistry({ filename: file });
    const write = registry.register(minimalSpec('early'));
    const closing = registry.close();
    await expectCode(registry.register(minimalSpec('late')), 'REGISTRY_CLOSED');
    expect(await write).toMatchObject({ spec: { tool_name: 'early' } });
    await closing;
    const reopened = await openSqliteToolRegistry({ filename: file });
    expect((await reopened.listAll()).map((r) => r.spec.tool_name)).toEqual(['early']);
    await reopened.close();
  });
});

describe('schema and history', () => {
  it('the tools view shows one row per current tool with the agreed columns', async () => {
    const file = temp.file('view.db');
    const registry = await open({ filename: file, clock: manualClock('2025-01-01T00:00:00.000Z').now });
    await registry.register(fullSpec('search'));
    await registry.register(minimalSpec('plain'));
    await registry.setEnabled('plain', false);
    const db = rawConnection(file, { readonly: true });
    expect(db.prepare('SELECT * FROM tools ORDER BY tool_name').all()).toEqual([
      {
        tool_name: 'plain',
        version: null,
        enabled: 0,
        created_at: '2025-01-01T00:00:00.000Z',
        description: null,
        tags: '[]',
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        deprecation_message: null,
        deprecation_replacement: null,
        deprecation_sunset: null,
      },
      {
        tool_name: 'search',
        version: '1.0.0',
        enabled: 1,
        created_at: '2025-01-01T00:00:00.000Z',
        description: 'Searches the web (search)',
        tags: '["web","search"]',
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        deprecation_message: null,
        deprecation_replacement: null,
        deprecation_sunset: null,
      },
    ]);
  });

  it('keeps every distinct spec of a name; remove deletes the registration only; re-registering is a new tool', async () => {
    const file = temp.file('history.db');
    const clock = manualClock('2025-01-01T00:00:00.000Z');
    const registry = await open({ filename: file, clock: clock.now });
    await registry.register(minimalSpec('tool', { version: '1' }));
    clock.set('2025-02-01T00:00:00.000Z');
    await registry.register(minimalSpec('tool', { version: '2' }));
    await registry.setEnabled('tool', false);
    expect(await registry.remove('tool')).toBe(true);
    expect((await registry.status()).specHistory).toBe(2);
    clock.set('2025-03-01T00:00:00.000Z');
    expect(await registry.register(minimalSpec('tool', { version: '1' }))).toMatchObject({
      enabled: true,
      created_at: '2025-03-01T00:00:00.000Z',
    });
    const db = rawConnection(file, { readonly: true });
    expect(
      db.prepare("SELECT version, first_registered_at FROM tool_specs WHERE tool_name = 'tool' ORDER BY first_registered_at").all(),
    ).toEqual([
      { version: '1', first_registered_at: '2025-01-01T00:00:00.000Z' },
      { version: '2', first_registered_at: '2025-02-01T00:00:00.000Z' },
    ]);
    expect(db.prepare('SELECT count(*) FROM tool_registrations').pluck().get()).toBe(1);
  });

  it('stores the spec as registered, its fingerprint the SHA-256 of the canonical JSON, and the CHECKs hold', async () => {
    const file = temp.file('canonical.db');
    const registry = await open({ filename: file });
    await registry.register(minimalSpec('c', { input_schema: { z: 1, a: { y: 2, b: 3 } } }));
    const db = rawConnection(file);
    const row = db.prepare('SELECT spec_json, fingerprint FROM tool_specs').get() as { spec_json: string; fingerprint: string };
    expect(row.spec_json).toBe(
      '{"tool_name":"c","input_schema":{"z":1,"a":{"y":2,"b":3}},"output_schema":{"type":"object"},"version":null,"description":null,"tags":[]}',
    );
    const { createHash } = await import('node:crypto');
    const canonical =
      '{"description":null,"input_schema":{"a":{"b":3,"y":2},"z":1},"output_schema":{"type":"object"},"tags":[],"tool_name":"c","version":null}';
    expect(row.fingerprint).toBe(createHash('sha256').update(canonical).digest('hex'));
    expect((await registry.verify()).ok).toBe(true);
    expect(() =>
      db.prepare("INSERT INTO tool_specs VALUES ('x', ?, NULL, '{not json', 't')").run('0'.repeat(64)),
    ).toThrow(expect.objectContaining({ code: 'SQLITE_CONSTRAINT_CHECK' }));
    expect(() => db.prepare("UPDATE tool_registrations SET enabled = 2").run()).toThrow(
      expect.objectContaining({ code: 'SQLITE_CONSTRAINT_CHECK' }),
    );
    db.pragma('foreign_keys = ON');
    expect(() => db.prepare("INSERT INTO tool_registrations VALUES ('ghost', ?, 1, NULL)").run('0'.repeat(64))).toThrow(
      expect.objectContaining({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }),
    );
  });
});

describe("the registry's clock (issue 13, item 9)", () => {
  it('stamps the first registration time of an imported spec with the injected clock, not the wall clock', async () => {
    const file = temp.file('import-clock.db');
    const clock = manualClock('2001-02-03T04:05:06.000Z');
    const registry = await open({ filename: file, clock: clock.now });
    await registry.importSnapshot({ tools: [{ spec: minimalSpec('imported'), created_at: null }, { spec: minimalSpec('dated'), created_at: '2024-05-01T10:00:00.123456+02:00' }] });
    const db = rawConnection(file, { readonly: true });
    expect(db.prepare('SELECT tool_name, first_registered_at FROM tool_specs ORDER BY tool_name').all()).toEqual([
      { tool_name: 'dated', first_registered_at: '2001-02-03T04:05:06.000Z' },
      { tool_name: 'imported', first_registered_at: '2001-02-03T04:05:06.000Z' },
    ]);
  });
});

describe('status() and verify()', () => {
  it('status counts tools, enabled, disabled and the spec history', async () => {
    const registry = await open({ filename: temp.file('status.db') });
    await registry.register(minimalSpec('a', { version: '1' }));
    await registry.register(minimalSpec('a', { version: '2' }));
    await registry.register(minimalSpec('b'));
    await registry.register(minimalSpec('c'));
    await registry.setEnabled('c', false);
    await registry.remove('b');
    expect(await registry.status()).toMatchObject({
      schemaVersion: LATEST,
      tools: 2,
      enabled: 1,
      disabled: 1,
      specHistory: 4,
      readonly: false,
    });
  });

  it('verify is ok on a healthy file and names every kind of damage', async () => {
    const file = temp.file('verify.db');
    const registry = await open({ filename: file });
    for (const name of ['good', 'edited', 'broken', 'renamed']) await registry.register(minimalSpec(name));
    expect(await registry.verify()).toEqual({ ok: true, checkedTools: 4, problems: [] });

    const db = rawConnection(file);
    db.pragma('foreign_keys = OFF');
    db.prepare(
      "UPDATE tool_specs SET spec_json = json_set(spec_json, '$.description', 'edited by hand') WHERE tool_name = 'edited'",
    ).run();
    db.prepare("UPDATE tool_specs SET spec_json = json_set(spec_json, '$.tags', json('[1]')) WHERE tool_name = 'broken'").run();
    db.prepare(
      "UPDATE tool_specs SET spec_json = json_set(spec_json, '$.tool_name', 'other') WHERE tool_name = 'renamed'",
    ).run();
    db.prepare("INSERT INTO tool_registrations VALUES ('dangling', ?, 1, NULL)").run('0'.repeat(64));
    const report = await registry.verify();
    expect(report.ok).toBe(false);
    const kinds = report.problems.map((problem) => `${problem.kind}:${problem.tool_name ?? ''}`);
    expect(kinds).toEqual(
      expect.arrayContaining(['fingerprint:edited', 'contract:broken', 'contract:renamed', 'reference:']),
    );
    expect(kinds).not.toContain('fingerprint:good');
    expect(kinds).not.toContain('contract:good');
  });
});

describe('a file that is not a database', () => {
  it('is an error, not a crash, and the file is left as it was', async () => {
    const file = temp.file('text.db');
    const text = 'this is not sqlite, just text that is long enough to be read as a header..........';
    writeFileSync(file, text);
    const error = await openSqliteToolRegistry({ filename: file }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error & { cause?: { code?: string } }).cause?.code).toBe('SQLITE_NOTADB');
    expect(readFileSync(file, 'utf8')).toBe(text);
  });
});

describe('a file the first releases wrote, with numbers beyond ±(2^53 - 1) in a schema (issue 28, item 8)', () => {
  it('verify() passes it, and its own export imports back, as objects and as JSON text', async () => {
    const file = temp.file('old.db');
    const registry = await open({ filename: file });
    await registry.register(minimalSpec('old', { version: '1' }));
    // What the first releases stored: the spec text with 1e21, its fingerprint, the registration pointing at it.
    const spec = { tool_name: 'old', version: '2', description: null, input_schema: { type: 'integer', maximum: 1e21 }, output_schema: { type: 'object' }, tags: [] };
    const db = rawConnection(file);
    db.transaction(() => {
      db.prepare("INSERT INTO tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES ('old', ?, '2', ?, '2024-01-01T00:00:00.000Z')").run(
        fingerprintOf(canonicalJson(spec)),
        JSON.stringify(spec),
      );
      db.prepare("UPDATE tool_registrations SET fingerprint = ? WHERE tool_name = 'old'").run(fingerprintOf(canonicalJson(spec)));
    })();
    expect(await registry.verify()).toMatchObject({ ok: true, problems: [] });
    const exported = await registry.exportSnapshot();
    expect(exported.tools[0]?.spec.input_schema).toEqual({ type: 'integer', maximum: 1e21 });
    const restored = await open({ filename: temp.file('restored.db') });
    expect((await restored.importSnapshot(exported, { mode: 'replace' })).added).toBe(1);
    expect((await restored.importSnapshot(JSON.parse(JSON.stringify(exported)))).unchanged).toBe(1);
    expect(await restored.exportSnapshot()).toEqual(exported);
    expect((await restored.verify()).ok).toBe(true);
  });
});
