// Group commit: concurrent writes from one process share one transaction, each call decided
// in arrival order and settled as if alone. Real files; the crash case in a real child
// process killed with SIGKILL.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, openSqliteToolRegistry } from '../../src/index.js';
import type { ToolRegistry, ToolSpecInput } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { poisonCommits, spawnWorker, useTempFolder } from './helpers.js';

const temp = useTempFolder();
const clock = () => new Date('2025-01-01T00:00:00.000Z');

/** Frames in the -wal file since the last checkpoint: every commit appends at least one. */
function walFrames(db: Database.Database): number {
  const [row] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
  return row?.log ?? 0;
}

type Call = (registry: ToolRegistry) => Promise<unknown>;

/** What a call came to: its value, or its error's code. */
async function outcomes(registry: ToolRegistry, calls: readonly Call[]): Promise<unknown[]> {
  const settled = await Promise.allSettled(calls.map((call) => call(registry)));
  return settled.map((result) =>
    result.status === 'fulfilled' ? { ok: result.value } : { error: (result.reason as { code?: unknown }).code },
  );
}

/** The same calls one after another, in arrival order, on the in-memory store. */
async function serially(calls: readonly Call[], setup: Call = async () => undefined): Promise<{ results: unknown[]; snapshot: unknown }> {
  const registry = new InMemoryToolRegistry({ clock });
  await setup(registry);
  const results: unknown[] = [];
  for (const call of calls) {
    try {
      results.push({ ok: await call(registry) });
    } catch (error) {
      results.push({ error: (error as { code?: unknown }).code });
    }
  }
  return { results, snapshot: await registry.exportSnapshot() };
}

describe('group commit', () => {
  it('64 concurrent registers, 3 of them conflicting: 61 stored, 3 VERSION_CONFLICT, as in a serial order, in fewer commits than calls', async () => {
    const file = temp.file('group.db');
    const registry = await openSqliteToolRegistry({ filename: file, clock });
    const observer = new Database(file);
    walFrames(observer);
    observer.pragma('wal_checkpoint(TRUNCATE)');
    const conflicting = new Map([[20, 3], [41, 12], [63, 40]]); // call index -> the earlier call it conflicts with
    const calls: Call[] = Array.from({ length: 64 }, (_, i) => {
      const of = conflicting.get(i);
      const spec: ToolSpecInput =
        of === undefined ? minimalSpec(`tool_${i}`, { version: '1' }) : minimalSpec(`tool_${of}`, { version: '1', description: `changed by ${i}` });
      return (r) => r.register(spec);
    });
    const got = await outcomes(registry, calls);
    const expected = await serially(calls);
    expect(got).toEqual(expected.results);
    expect(got.filter((o) => (o as { error?: string }).error === 'VERSION_CONFLICT')).toHaveLength(3);
    expect((await registry.exportSnapshot()).tools).toHaveLength(61);
    expect(await registry.exportSnapshot()).toEqual(expected.snapshot);
    // 64 separate commits would append at least 64 frames (each dirties several pages).
    expect(walFrames(observer)).toBeLessThan(64);
    observer.close();
    await registry.close();
    // Durable: a fresh open sees exactly the same.
    const reopened = await openSqliteToolRegistry({ filename: file });
    expect(await reopened.exportSnapshot()).toEqual(expected.snapshot);
    await reopened.close();
  });

  it('register, registerMany, setEnabled and remove in one turn: decided in call order, as the same calls one after another', async () => {
    const setup: Call = (r) => r.registerMany([minimalSpec('a'), minimalSpec('b'), minimalSpec('c', { version: '1' })]);
    const calls: Call[] = [
      (r) => r.setEnabled('a', false),
      (r) => r.register(minimalSpec('a')), // identical, after the flip: answers enabled: false
      (r) => r.register(minimalSpec('c', { version: '2' })), // a new version keeps enabled
      (r) => r.setEnabled('c', false),
      (r) => r.remove('b'),
      (r) => r.remove('b'), // idempotent: false
      (r) => r.setEnabled('b', true), // removed just before: TOOL_NOT_FOUND
      (r) => r.registerMany([minimalSpec('d'), minimalSpec('e')]),
      (r) => r.setEnabled('d', false), // registered by the call before
      (r) => r.registerMany([minimalSpec('f'), minimalSpec('c', { version: '2', description: 'conflict' })]), // all-or-nothing
      (r) => r.register(minimalSpec('f')),
      (r) => r.register({ tool_name: 'bad name!' } as unknown as ToolSpecInput),
      (r) => r.register(minimalSpec('c', { version: '3' })),
      (r) => r.remove('a'),
      (r) => r.register(minimalSpec('a')), // removed just before: added again
    ];
    const stores: (() => Promise<ToolRegistry>)[] = [
      () => openSqliteToolRegistry({ filename: temp.file('mixed-cache.db'), clock }),
      () => openSqliteToolRegistry({ filename: temp.file('mixed-nocache.db'), clock, cache: false }),
      async () => new InMemoryToolRegistry({ clock }), // the same calls at once on the memory store
    ];
    for (const open of stores) {
      const registry = await open();
      await setup(registry);
      const got = await outcomes(registry, calls);
      const expected = await serially(calls, setup);
      expect(got).toEqual(expected.results);
      expect(got.filter((o) => 'error' in (o as object)).map((o) => (o as { error: string }).error).sort()).toEqual([
        'TOOL_NOT_FOUND',
        'VALIDATION_FAILED',
        'VERSION_CONFLICT',
      ]);
      expect(await registry.exportSnapshot()).toEqual(expected.snapshot);
      await registry.close();
    }
  });

  it('a COMMIT that fails fails exactly the calls of its batch; what committed before stays, and later batches commit', async () => {
    const file = temp.file('commit-fails.db');
    await (await openSqliteToolRegistry({ filename: file })).close();
    // Registering a tool named poison_* makes the COMMIT of its transaction fail, whoever else is in it.
    poisonCommits(file);
    const registry = await openSqliteToolRegistry({ filename: file, clock });
    const before = await Promise.all(Array.from({ length: 8 }, (_, i) => registry.register(minimalSpec(`before_${i}`))));
    expect(before).toHaveLength(8);

    const batch = Array.from({ length: 8 }, (_, i) => registry.register(minimalSpec(i === 5 ? 'poison_5' : `batch_${i}`)));
    const settled = await Promise.allSettled(batch);
    expect(settled.map((s) => s.status)).toEqual(Array(8).fill('rejected'));
    for (const s of settled) expect((s as PromiseRejectedResult).reason.code).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');

    const after = await Promise.all(Array.from({ length: 4 }, (_, i) => registry.register(minimalSpec(`after_${i}`))));
    expect(after).toHaveLength(4);
    const names = (await registry.listAll()).map((r) => r.spec.tool_name);
    expect(names).toEqual([...Array.from({ length: 4 }, (_, i) => `after_${i}`), ...Array.from({ length: 8 }, (_, i) => `before_${i}`)]);
    await registry.close();
    const check = new Database(file, { readonly: true });
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(check.prepare('SELECT count(*) FROM tool_registrations').pluck().get()).toBe(12);
    check.close();
  });

  it.each([true, false])('a call that fails after it wrote is undone alone, history and feed included (cache %s)', async (cache) => {
    const file = temp.file(`half-written-${cache}.db`);
    await (await openSqliteToolRegistry({ filename: file })).close();
    // The spec row is written first; then the registration row of a refused_* tool is refused.
    const setup = new Database(file);
    setup.exec(`CREATE TRIGGER refused BEFORE INSERT ON tool_registrations WHEN NEW.tool_name LIKE 'refused%'
      BEGIN SELECT RAISE(ABORT, 'refused by the operator'); END;`);
    setup.close();
    const registry = await openSqliteToolRegistry({ filename: file, clock, cache });
    await registry.register(minimalSpec('tool_2', { version: '1' }));
    const calls: Call[] = [
      (r) => r.register(minimalSpec('tool_0')),
      (r) => r.register(minimalSpec('refused_1')),
      (r) => r.register(minimalSpec('tool_2', { version: '1', description: 'conflicts' })),
      (r) => r.registerMany([minimalSpec('tool_3'), minimalSpec('refused_3')]),
      (r) => r.register(minimalSpec('tool_4')),
    ];
    const got = await outcomes(registry, calls);
    expect(got.map((o) => (o as { error?: string }).error ?? 'ok')).toEqual(['ok', 'SQLITE_CONSTRAINT_TRIGGER', 'VERSION_CONFLICT', 'SQLITE_CONSTRAINT_TRIGGER', 'ok']);
    expect((await registry.listAll()).map((r) => r.spec.tool_name)).toEqual(['tool_0', 'tool_2', 'tool_4']);
    for (const name of ['refused_1', 'tool_3', 'refused_3']) expect(await registry.history(name)).toEqual([]);
    const { events } = await registry.changes({ since: 0 });
    expect(events.map((e) => `${e.action} ${e.tool_name}`)).toEqual(['added tool_2', 'added tool_0', 'added tool_4']);
    await registry.close();
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT tool_name FROM tool_specs ORDER BY tool_name').pluck().all()).toEqual(['tool_0', 'tool_2', 'tool_4']);
    check.close();
  });

  it('a full disk (max_page_count) fails the calls that needed space and loses nothing committed before', async () => {
    const file = temp.file('full.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    const registry = await openSqliteToolRegistry({ database: db, clock });
    await Promise.all(Array.from({ length: 8 }, (_, i) => registry.register(minimalSpec(`before_${i}`))));
    db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true }))}`);
    const big = (name: string) => minimalSpec(name, { description: 'x'.repeat(20_000) });
    const settled = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => registry.register(big(`full_${i}`))));
    expect(settled.map((s) => s.status)).toEqual(Array(8).fill('rejected'));
    for (const s of settled) expect((s as PromiseRejectedResult).reason.code).toBe('SQLITE_FULL');
    expect((await registry.listAll()).map((r) => r.spec.tool_name)).toEqual(Array.from({ length: 8 }, (_, i) => `before_${i}`));
    db.pragma('max_page_count = 1073741823');
    await registry.register(big('full_0'));
    expect(await registry.has('full_0')).toBe(true);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    await registry.close();
    db.close();
  });

  it('a batch that never gets the lock fails each call with STORAGE_BUSY naming that call: registerMany too, without a tool_name', async () => {
    // Regression (audit of issue 12): registerMany batched behind a register said operation 'register', tool_name of the other call.
    const file = temp.file('busy-batch.db');
    const registry = await openSqliteToolRegistry({ filename: file, busyTimeoutMs: 100 });
    await registry.registerMany([minimalSpec('x'), minimalSpec('y')]);
    const blocker = new Database(file);
    blocker.exec('BEGIN IMMEDIATE');
    try {
      const settled = await Promise.allSettled([
        registry.register(minimalSpec('a')),
        registry.registerMany([minimalSpec('m'), minimalSpec('n')]),
        registry.setEnabled('x', false),
        registry.remove('y'),
      ]);
      const contexts = settled.map((result) => {
        expect(result.status).toBe('rejected');
        const error = (result as PromiseRejectedResult).reason as { code: string; context: Record<string, unknown> };
        expect(error.code).toBe('STORAGE_BUSY');
        return [error.context.operation, error.context.tool_name];
      });
      expect(contexts).toEqual([
        ['register', 'a'],
        ['registerMany', undefined],
        ['setEnabled', 'x'],
        ['remove', 'y'],
      ]);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    expect((await registry.listAll()).map((r) => r.spec.tool_name)).toEqual(['x', 'y']);
    await registry.close();
  });

  it('writes queued before close() still commit; after close() they fail with REGISTRY_CLOSED', async () => {
    const file = temp.file('close.db');
    const registry = await openSqliteToolRegistry({ filename: file });
    await registry.registerMany([minimalSpec('one'), minimalSpec('two')]);
    // remove and setEnabled reach the store's queue in this very turn; close() drains it.
    const pending = [registry.remove('one'), registry.setEnabled('two', false)];
    await registry.close();
    const [removed, disabled] = await Promise.all(pending);
    expect(removed).toBe(true);
    expect(disabled).toMatchObject({ enabled: false });
    await expect(registry.register(minimalSpec('three'))).rejects.toMatchObject({ code: 'REGISTRY_CLOSED' });
    const reopened = await openSqliteToolRegistry({ filename: file });
    expect(await reopened.has('one')).toBe(false);
    expect((await reopened.get('two'))?.enabled).toBe(false);
    await reopened.close();
  });

  it('a child killed with SIGKILL while its batch of 1,000 registers is drained leaves none or all of that batch', async () => {
    const BEFORE = 20;
    const COUNT = 1000;
    const count = (file: string) => {
      const db = new Database(file);
      try {
        return {
          integrity: db.pragma('integrity_check', { simple: true }),
          before: db.prepare("SELECT count(*) FROM tool_registrations WHERE tool_name LIKE 'before%'").pluck().get(),
          batch: db.prepare("SELECT count(*) FROM tool_registrations WHERE tool_name LIKE 'batch%'").pluck().get() as number,
        };
      } finally {
        db.close();
      }
    };
    // How long an uninterrupted batch takes, to spread the kills over it.
    const first = spawnWorker({ file: temp.file('whole.db'), action: 'registerBatch', before: BEFORE, count: COUNT });
    await first.next('registering');
    const started = performance.now();
    expect((await first.next('done')).ok).toBe(true);
    const duration = performance.now() - started;
    expect(count(temp.file('whole.db'))).toEqual({ integrity: 'ok', before: BEFORE, batch: COUNT });

    const seen: string[] = [];
    const check = async (file: string, worker: ReturnType<typeof spawnWorker>, label: string) => {
      worker.child.kill('SIGKILL');
      const { signal } = await worker.exited;
      const after = count(file);
      expect(after.integrity).toBe('ok');
      expect(after.before).toBe(BEFORE);
      expect([0, COUNT]).toContain(after.batch);
      seen.push(`${label}:${signal ?? 'exited'}:${after.batch}`);
      return after.batch;
    };
    // Kills spread over an uninterrupted run's duration ...
    for (const [index, fraction] of [0.1, 0.4, 0.7, 0.95].entries()) {
      const file = temp.file(`killed-${index}.db`);
      const worker = spawnWorker({ file, action: 'registerBatch', before: BEFORE, count: COUNT });
      await worker.next('registering');
      await new Promise((resolve) => setTimeout(resolve, fraction * duration));
      await check(file, worker, String(fraction));
    }
    // ... and kills certainly inside the batch's transaction: a TEMP trigger on the child's
    // handle says when the 500th row is written and holds the transaction open for 5 s (the kill
    // ends the hold: 300 ms let a run slowed 2.6x commit the batch before its kill).
    for (const [index, delay] of [0, 50, 150].entries()) {
      const file = temp.file(`in-batch-${index}.db`);
      const worker = spawnWorker({ file, action: 'registerBatch', before: BEFORE, count: COUNT, announceAt: 'batch_00500', pauseMs: 5000 });
      await worker.next('in-batch');
      await new Promise((resolve) => setTimeout(resolve, delay));
      expect(await check(file, worker, `in-batch+${delay}ms`)).toBe(0);
    }
    expect(seen.some((s) => s.includes('SIGKILL'))).toBe(true);
    console.info(`batch of ${COUNT} took ${Math.round(duration)} ms; kills: ${seen.join(' ')}`);
  }, 120_000);
});
