// Several real processes sharing one SQLite file (children run dist/, built by pretest).
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { openSqliteToolRegistry } from '../../src/index.js';
import { fullSpec, minimalSpec } from '../support/registry-helpers.js';
import { raceWorkers, SHIPPED, spawnWorker, useTempFolder } from './helpers.js';

const temp = useTempFolder();

describe('SQLite file shared by processes', () => {
  it('what this process writes, a fresh process reads back identically', async () => {
    const file = temp.file('shared.db');
    const registry = await openSqliteToolRegistry({ filename: file });
    await registry.register(fullSpec('search'));
    await registry.register(minimalSpec('zeta', { tags: ['b', 'a', 'b'], input_schema: { z: 1, a: { y: [3, 1] } } }));
    await registry.register(minimalSpec('alpha', { version: '2' }));
    await registry.setEnabled('alpha', false);
    await registry.importSnapshot({
      tools: [{ spec: minimalSpec('imported'), enabled: false, created_at: '2024-05-01T10:00:00.123456+02:00' }],
    });
    const names = ['alpha', 'imported', 'search', 'zeta'];
    const expected = {
      snapshot: await registry.exportSnapshot(),
      enabled: await registry.listAll(),
      gets: await Promise.all(names.map((name) => registry.get(name))),
      has: names.map(() => true),
    };
    await registry.close();

    const reader = spawnWorker({ file, action: 'dump' });
    const done = await reader.next('done');
    expect(done.ok, JSON.stringify(done.error)).toBe(true);
    expect(done.result).toEqual(JSON.parse(JSON.stringify(expected)));
    expect((done.result as { snapshot: { tools: unknown[] } }).snapshot.tools).toHaveLength(4);
  });

  it('what a child process writes, this process reads back after it exits', async () => {
    const file = temp.file('child-writes.db');
    const [done] = await raceWorkers(temp.file('go'), [
      { file, action: 'register', spec: fullSpec('from_child') },
    ]);
    expect(done?.ok, JSON.stringify(done?.error)).toBe(true);
    const registry = await openSqliteToolRegistry({ filename: file });
    expect(await registry.get('from_child')).toEqual(done?.result);
    await registry.close();
  });

  it('six processes register the same name and version with different specs: one wins, five VERSION_CONFLICT, no SQLITE_BUSY', async () => {
    const file = temp.file('race.db');
    // Created and migrated up front, so the race is about the registration alone.
    await (await openSqliteToolRegistry({ filename: file })).close();
    const jobs = Array.from({ length: 6 }, (_, i) => ({
      file,
      openFirst: true,
      action: 'register',
      spec: minimalSpec('contested', { version: '1.0.0', description: `from child ${i}` }),
    }));
    const results = await raceWorkers(temp.file('go'), jobs);
    const winners = results.filter((r) => r.ok);
    const losers = results.filter((r) => !r.ok);
    expect(winners).toHaveLength(1);
    expect(losers.map((r) => r.error?.code)).toEqual(Array(5).fill('VERSION_CONFLICT'));

    const registry = await openSqliteToolRegistry({ filename: file });
    expect(await registry.get('contested')).toEqual(winners[0]?.result);
    expect((await registry.status()).specHistory).toBe(1);
    await registry.close();
  });

  it('four processes register 40 distinct tools each at once: all 160 are there', async () => {
    const file = temp.file('many.db');
    await (await openSqliteToolRegistry({ filename: file })).close();
    const jobs = Array.from({ length: 4 }, (_, i) => ({
      file,
      openFirst: true,
      action: 'registerEach',
      // 160 fsync'd commits queue for one lock: a generous budget keeps a slow CI disk from failing the test.
      options: { busyTimeoutMs: 30_000 },
      prefix: `p${i}`,
      count: 40,
    }));
    const results = await raceWorkers(temp.file('go'), jobs);
    for (const result of results) expect(result.ok, JSON.stringify(result.error)).toBe(true);

    const registry = await openSqliteToolRegistry({ filename: file });
    const names = (await registry.listAll()).map((registration) => registration.spec.tool_name);
    expect(names).toHaveLength(160);
    for (let p = 0; p < 4; p++) for (let i = 0; i < 40; i++) expect(names).toContain(`p${p}_${i}`);
    expect((await registry.verify()).ok).toBe(true);
    await registry.close();
  });

  it('four processes open a brand-new file at once: all succeed, each migration applied once', async () => {
    const file = temp.file('fresh.db');
    const jobs = Array.from({ length: 4 }, () => ({ file, action: 'open' }));
    const results = await raceWorkers(temp.file('go'), jobs);
    for (const result of results) expect(result.ok, JSON.stringify(result.error)).toBe(true);
    for (const result of results) expect(result.result).toEqual(SHIPPED);

    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT name FROM schema_migrations ORDER BY name').pluck().all()).toEqual(SHIPPED);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });
});

describe('SQLite crash safety', () => {
  const COUNT = 20_000;
  // Kill moments: fractions of an uninterrupted import's duration (measured first), which
  // mostly land while the child parses and plans; and points inside the write transaction,
  // found by watching the -wal file grow past its size before the import (SQLite spills
  // the uncommitted pages of a large transaction there).
  const KILL_AT_FRACTION = [0, 0.3, 0.6, 0.9];
  const KILL_AT_WAL_GROWTH = [1, 256 * 1024, 1024 * 1024, 2 * 1024 * 1024, 3 * 1024 * 1024];

  // The -wal file may vanish between a check and a stat (the child finished and closed): 0 then.
  const walSize = (file: string): number => {
    try {
      return statSync(`${file}-wal`).size;
    } catch {
      return 0;
    }
  };

  function countRows(file: string): { tools: number; specs: number; integrity: unknown } {
    const db = new Database(file);
    try {
      return {
        integrity: db.pragma('integrity_check', { simple: true }),
        tools: db.prepare('SELECT count(*) FROM tool_registrations').pluck().get() as number,
        specs: db.prepare('SELECT count(*) FROM tool_specs').pluck().get() as number,
      };
    } finally {
      db.close();
    }
  }

  it(`a child importing ${COUNT} tools killed with SIGKILL leaves none or all of them, and integrity ok`, async () => {
    const baselineFile = temp.file('baseline.db');
    const baseline = spawnWorker({ file: baselineFile, action: 'import', count: COUNT });
    await baseline.next('importing');
    const started = performance.now();
    const finished = await baseline.next('done');
    const duration = performance.now() - started;
    expect(finished.ok, JSON.stringify(finished.error)).toBe(true);
    expect(countRows(baselineFile)).toEqual({ integrity: 'ok', tools: COUNT, specs: COUNT });

    const outcomes: string[] = [];
    const moments = [
      ...KILL_AT_FRACTION.map((fraction) => ({ kind: 'time', value: fraction * duration })),
      ...KILL_AT_WAL_GROWTH.map((bytes) => ({ kind: 'wal', value: bytes })),
    ];
    for (const [index, moment] of moments.entries()) {
      const file = temp.file(`crash-${index}.db`);
      const worker = spawnWorker({ file, action: 'import', count: COUNT });
      await worker.next('importing');
      const walBefore = walSize(file);
      if (moment.kind === 'time') {
        await new Promise((resolve) => setTimeout(resolve, moment.value));
      } else {
        let running = true;
        void worker.exited.then(() => (running = false));
        // A 1 ms poll, not a spin of setImmediate: the spin took a core from the child it watched.
        while (running && walSize(file) < walBefore + moment.value) await new Promise((resolve) => setTimeout(resolve, 1));
      }
      worker.child.kill('SIGKILL');
      const { signal } = await worker.exited;
      const walAtKill = walSize(file);

      const after = countRows(file);
      expect(after.integrity).toBe('ok');
      expect([0, COUNT]).toContain(after.tools);
      expect(after.specs).toBe(after.tools);
      outcomes.push(`${moment.kind}=${Math.round(moment.value)}:${signal ?? 'exited'}:tools=${after.tools}:wal=${walAtKill}`);
      // The store opens cleanly after the crash and agrees with the raw count.
      const registry = await openSqliteToolRegistry({ filename: file });
      expect((await registry.status()).tools).toBe(after.tools);
      expect((await registry.verify()).ok).toBe(true);
      await registry.close();
    }
    // At least one child really died before it finished.
    expect(outcomes.some((outcome) => outcome.includes('SIGKILL'))).toBe(true);
    console.info(`import of ${COUNT} took ${Math.round(duration)} ms; kills: ${outcomes.join(' ')}`);
  }, 180_000);
});
