// The change feed and history of the SQLite store with the sqlite3 shell and files migrated
// from before migration 0004 (issue 11). The same behaviour on every store is in
// test/conformance/changes-suite.ts; with real processes (watchers, writers, conditional races)
// in test/support/feed-processes.ts, run by feed-processes.test.ts and conditional-processes.test.ts.
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintOf, openSqliteToolRegistry } from '../../src/index.js';
import type { ChangeEvent } from '../../src/index.js';
import { migrate, shippedMigrations } from '../../src/stores/sqlite/migrations.js';
import { expectCode, minimalSpec } from '../support/registry-helpers.js';
import { HAS_SQLITE3, NEEDS_SQLITE3, SQLITE3 as SHELL } from '../support/sqlite3-shell.js';
import { useTempFolder } from './helpers.js';

const temp = useTempFolder();

function shell(file: string, sql: string): void {
  const result = spawnSync(SHELL, [file, sql], { encoding: 'utf8' });
  if (result.error !== undefined) throw result.error;
  expect(result.status, result.stderr).toBe(0);
}

describe('SQLite change feed and hand edits', () => {
  it.skipIf(!HAS_SQLITE3)(`changes made with the sqlite3 shell are in the feed, with action and version${NEEDS_SQLITE3}`, async () => {
    const file = temp.file('shell.db');
    const registry = await openSqliteToolRegistry({ filename: file });
    await registry.register(minimalSpec('hand', { version: '1' }));
    await registry.close();
    shell(file, "UPDATE tool_registrations SET enabled = 0 WHERE tool_name = 'hand';");
    shell(file, "DELETE FROM tool_registrations WHERE tool_name = 'hand';");
    const reopened = await openSqliteToolRegistry({ filename: file });
    const { events } = await reopened.changes();
    expect(events.map((event) => [event.revision, event.action, event.version])).toEqual([
      [1, 'added', '1'],
      [2, 'disabled', '1'],
      [3, 'removed', '1'],
    ]);
    expect(events[1]?.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await reopened.close();
  });

  it('a spec text changed by hand is an update, and verify() checks the fingerprint against its canonical form', async () => {
    const file = temp.file('text.db');
    const registry = await openSqliteToolRegistry({ filename: file });
    await registry.register(minimalSpec('t', { input_schema: { b: 1, a: 2 } }));
    expect((await registry.verify()).ok).toBe(true);
    const db = new Database(file);
    // The same spec in another key order: still its fingerprint.
    const reordered = JSON.stringify({ input_schema: { a: 2, b: 1 }, tool_name: 't', version: null, description: null, output_schema: { type: 'object' }, tags: [] });
    db.prepare("UPDATE tool_specs SET spec_json = ? WHERE tool_name = 't'").run(reordered);
    expect((await registry.verify()).ok).toBe(true);
    expect(Object.keys((await registry.get('t'))?.spec ?? {})).toEqual(['input_schema', 'tool_name', 'version', 'description', 'output_schema', 'tags']);
    // A different spec under the old fingerprint: verify() reports it.
    db.prepare("UPDATE tool_specs SET spec_json = json_set(spec_json, '$.description', 'changed') WHERE tool_name = 't'").run();
    db.close();
    const report = await registry.verify();
    expect(report.problems.map((problem) => problem.kind)).toEqual(['fingerprint']);
    expect((await registry.changes({ since: 1 })).events.map((event) => event.action)).toEqual(['updated', 'updated']);
    await registry.close();
  });
});

describe('a file written before migration 0004', () => {
  async function legacyFile(): Promise<{ file: string; canonical: string }> {
    const file = temp.file('legacy.db');
    const db = new Database(file);
    const before = shippedMigrations().filter((migration) => migration.name < '0004');
    await migrate({ db, migrations: before, busyTimeoutMs: 1000, filename: file });
    // What the store wrote then: canonical JSON.
    const canonical = canonicalJson({ tool_name: 'old', version: '1', description: null, input_schema: { type: 'object', b: 1, a: 2 }, output_schema: {}, tags: [] });
    db.prepare('INSERT INTO tool_specs VALUES (?, ?, ?, ?, ?)').run('old', fingerprintOf(canonical), '1', canonical, '2024-01-01T00:00:00.000Z');
    db.prepare('INSERT INTO tool_registrations VALUES (?, ?, 1, ?)').run('old', fingerprintOf(canonical), '2024-01-01T00:00:00.000Z');
    db.close();
    return { file, canonical };
  }

  it('comes back as stored, keeps its identity, and an identical re-register in another order writes nothing', async () => {
    const { file, canonical } = await legacyFile();
    const registry = await openSqliteToolRegistry({ filename: file });
    expect(JSON.stringify((await registry.get('old'))?.spec)).toBe(canonical);
    const revision = (await registry.status()).revision;
    await registry.register({ tool_name: 'old', version: '1', input_schema: { a: 2, type: 'object', b: 1 }, output_schema: {} });
    expect((await registry.status()).revision).toBe(revision);
    expect(JSON.stringify((await registry.exportSnapshot()).tools[0]?.spec)).toBe(canonical);
    expect((await registry.verify()).ok).toBe(true);
    await registry.close();
  });

  it('its log entries are not events: since 0 is CHANGES_EXPIRED, the current revision is a valid cursor', async () => {
    const { file } = await legacyFile();
    const registry = await openSqliteToolRegistry({ filename: file });
    const { revision } = await registry.status();
    expect(revision).toBeGreaterThan(0);
    const error = await expectCode(registry.changes({ since: 0 }), 'CHANGES_EXPIRED');
    expect(error.context.oldest_revision).toBe(revision + 1);
    expect(await registry.changes({ since: revision })).toEqual({ revision, events: [] });
    await registry.setEnabled('old', false);
    expect((await registry.changes({ since: revision })).events.map((event) => [event.revision, event.action])).toEqual([[revision + 1, 'disabled']]);
    await registry.close();
  });
});

describe('a file migrated from 0003 with many log entries that are not events (migration 0005)', () => {
  const LEGACY = 5000;

  /**
   * A 0003 file whose log holds LEGACY entries (one per tool), migrated to 0004, then edited
   * by hand: a disable, an entry with no action inserted between events, a remove and an add.
   */
  async function fileAt0004(name: string): Promise<string> {
    const file = temp.file(name);
    const db = new Database(file);
    const upTo = (last: string) => shippedMigrations().filter((migration) => migration.name < last);
    await migrate({ db, migrations: upTo('0004'), busyTimeoutMs: 1000, filename: file });
    // Spec rows as 0003 stored them (the fingerprints are not the specs': nothing here verifies).
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO tool_specs
       SELECT 'legacy_' || i, printf('%064x', i), '1',
              json_object('description', NULL, 'input_schema', json_object(), 'output_schema', json_object(),
                          'tags', json_array(), 'tool_name', 'legacy_' || i, 'version', '1'),
              '2024-01-01T00:00:00.000Z'
       FROM n`,
    ).run(LEGACY);
    db.exec('INSERT INTO tool_registrations SELECT tool_name, fingerprint, 1, NULL FROM tool_specs');
    await migrate({ db, migrations: upTo('0005'), busyTimeoutMs: 1000, filename: file });
    db.exec(`
      UPDATE tool_registrations SET enabled = 0 WHERE tool_name = 'legacy_1';
      INSERT INTO tool_changes (tool_name) VALUES ('legacy_2');
      DELETE FROM tool_registrations WHERE tool_name = 'legacy_3';
      INSERT INTO tool_registrations SELECT 'legacy_3', fingerprint, 1, NULL FROM tool_specs WHERE tool_name = 'legacy_3';
    `);
    db.close();
    return file;
  }

  type Outcome = { revision: number; events: ChangeEvent[] } | { code: 'CHANGES_EXPIRED'; oldest_revision: number };

  /** What changes() answered on a 0004 file: its two queries then, and the cursor rule. */
  function before0005(file: string, cases: readonly (readonly [number, number])[]): Outcome[] {
    const db = new Database(file, { readonly: true });
    try {
      const { revision, oldest } = db
        .prepare(
          `SELECT (SELECT max(revision) FROM tool_changes) AS revision,
                  (SELECT min(revision) FROM tool_changes WHERE action IS NOT NULL) AS oldest`,
        )
        .get() as { revision: number; oldest: number | null };
      const events = db.prepare(
        `SELECT revision, tool_name, action, version, at FROM tool_changes
         WHERE revision > ? AND action IS NOT NULL ORDER BY revision LIMIT ?`,
      );
      const oldestRevision = oldest ?? revision + 1;
      return cases.map(([since, limit]): Outcome =>
        // limit 0 asks for the revision alone and is never CHANGES_EXPIRED (docs/changes.md).
        since + 1 < oldestRevision && limit > 0
          ? { code: 'CHANGES_EXPIRED', oldest_revision: oldestRevision }
          : { revision, events: limit === 0 ? [] : (events.all(since, limit) as ChangeEvent[]) },
      );
    } finally {
      db.close();
    }
  }

  async function outcome(registry: Awaited<ReturnType<typeof openSqliteToolRegistry>>, since: number, limit: number): Promise<Outcome> {
    try {
      const page = await registry.changes({ since, limit });
      return { revision: page.revision, events: page.events.map((event) => ({ ...event })) };
    } catch (error) {
      const { code, context } = error as { code: string; context: { oldest_revision: number } };
      expect(code).toBe('CHANGES_EXPIRED');
      return { code: 'CHANGES_EXPIRED', oldest_revision: context.oldest_revision };
    }
  }

  it('gives the same changes() pages and oldest revision as before, and records where the feed starts', async () => {
    const file = await fileAt0004('same-pages.db');
    const sinces = [0, 1, LEGACY - 1, LEGACY, LEGACY + 1, LEGACY + 2, LEGACY + 3, LEGACY + 4, LEGACY + 5, LEGACY + 9];
    const cases = sinces.flatMap((since) => [0, 1, 2, 1000].map((limit) => [since, limit] as const));
    const expected = before0005(file, cases);
    // The file is what the test means it to be: three events after the legacy entries, one entry with no action among them.
    const all = expected[cases.findIndex(([since, limit]) => since === LEGACY && limit === 1000)];
    expect(all).toMatchObject({ revision: LEGACY + 4 });
    expect(all && 'events' in all ? all.events.map((event) => [event.revision, event.action]) : all).toEqual([
      [LEGACY + 1, 'disabled'],
      [LEGACY + 3, 'removed'],
      [LEGACY + 4, 'added'],
    ]);
    expect(expected[cases.findIndex(([since, limit]) => since === 0 && limit === 1)]).toEqual({ code: 'CHANGES_EXPIRED', oldest_revision: LEGACY + 1 });
    expect(expected[cases.findIndex(([since, limit]) => since === 0 && limit === 0)]).toEqual({ revision: LEGACY + 4, events: [] });

    const registry = await openSqliteToolRegistry({ filename: file });
    const actual: Outcome[] = [];
    for (const [since, limit] of cases) actual.push(await outcome(registry, since, limit));
    expect(actual).toEqual(expected);
    await registry.close();

    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT after_revision FROM tool_changes_feed_start').pluck().all()).toEqual([LEGACY]);
    expect(check.prepare("SELECT name FROM sqlite_master WHERE name = 'tool_changes_events'").get()).toBeUndefined();
    check.close();
  });

  it('reads the log from where the feed starts: changes() never visits the entries before it', async () => {
    const file = await fileAt0004('no-scan.db');
    await (await openSqliteToolRegistry({ filename: file })).close();
    const db = new Database(file);
    let visited = 0;
    db.function('visited', { deterministic: false }, () => ++visited);
    // The store's statements name tool_changes unqualified, so on this handle a temp view
    // stands in for the table and counts every row a query reads from it.
    db.exec('CREATE TEMP VIEW tool_changes AS SELECT * FROM main.tool_changes WHERE visited()');
    // The store prepares its rollback mark (an UPDATE of its newest entry) at open: let the view take it.
    db.exec('CREATE TEMP TRIGGER tool_changes_mark INSTEAD OF UPDATE ON tool_changes BEGIN UPDATE main.tool_changes SET rollback = NEW.rollback WHERE revision = OLD.revision; END');
    const registry = await openSqliteToolRegistry({ database: db });
    try {
      // The count sees a scan when there is one.
      db.prepare('SELECT count(*) FROM tool_changes WHERE action IS NOT NULL').get();
      expect(visited).toBe(LEGACY + 4);

      visited = 0;
      const { events } = await registry.changes({ since: LEGACY });
      expect(events.map((event) => event.revision)).toEqual([LEGACY + 1, LEGACY + 3, LEGACY + 4]);
      // The head, the oldest event, and the page's four entries: not the LEGACY entries before them.
      expect(visited).toBe(6);

      visited = 0;
      await expectCode(registry.changes({ since: 0 }), 'CHANGES_EXPIRED');
      expect(visited).toBeLessThanOrEqual(6);
    } finally {
      await registry.close();
      db.close();
    }
  });
});

describe('a watch over a restored file and over the caller\'s own transaction (issue 28, items 1 and 3)', () => {
  it('a backup restored onto the live file under a running watch ends it with CHANGES_EXPIRED (replaced), never a silent gap', async () => {
    const file = temp.file('restored.db');
    const copy = temp.file('restored-copy.db');
    const registry = await openSqliteToolRegistry({ filename: file });
    try {
      await registry.registerMany([minimalSpec('a'), minimalSpec('b'), minimalSpec('c')]);
      const live = new Database(file);
      await live.backup(copy); // at revision 3
      live.close();
      await registry.register(minimalSpec('x'));
      await registry.register(minimalSpec('y'));
      const iterator = registry.watch()[Symbol.asyncIterator](); // from revision 5
      // Handled from now on: the watch may end before the last register below has returned.
      const failed = expectCode(iterator.next(), 'CHANGES_EXPIRED');
      // Its first read (at revision 5, marked) is done before the restore: a few turns.
      for (let turn = 0; turn < 3; turn++) await new Promise(setImmediate);
      const restorer = new Database(copy);
      await restorer.backup(file); // the log is back at revision 3...
      restorer.close();
      // ...and hands 4, 5 and 6 out again: following by number alone delivered only f.
      for (const name of ['d', 'e', 'f']) await registry.register(minimalSpec(name));
      const error = await failed;
      expect(error.context).toMatchObject({ since: 5, replaced: true });
      // Resync as the error says: the revision, then the feed from there.
      const { revision } = await registry.changes({ limit: 0 });
      const resumed = registry.watch({ since: revision })[Symbol.asyncIterator]();
      await registry.register(minimalSpec('g'));
      expect((await resumed.next()).value).toMatchObject({ revision: 7, tool_name: 'g', action: 'added' });
      await resumed.return?.();
    } finally {
      await registry.close();
    }
  });

  it("a watch over the caller's own transaction on its handle delivers only committed events: a rolled-back register never, the next ones once", async () => {
    const db = new Database(':memory:');
    const registry = await openSqliteToolRegistry({ database: db });
    try {
      const running = registry.watch({ since: 0 })[Symbol.asyncIterator]();
      const runningFirst = running.next();
      await new Promise(setImmediate);
      db.exec('BEGIN IMMEDIATE');
      await registry.register(minimalSpec('ghost'));
      // Started inside the transaction: from the revision of the call, and from 0.
      const fromCall = registry.watch()[Symbol.asyncIterator]();
      const fromZero = registry.watch({ since: 0 })[Symbol.asyncIterator]();
      const firsts = [runningFirst, fromCall.next(), fromZero.next()];
      // Every watch gets its chance to look while the transaction is open: the poller looks
      // at once when a watch begins to wait, and within 50 ms of a change.
      for (let turn = 0; turn < 3; turn++) await new Promise(setImmediate);
      await sleep(120);
      db.exec('ROLLBACK');
      await registry.register(minimalSpec('real'));
      await registry.register(minimalSpec('after'));
      for (const [index, iterator] of [running, fromCall, fromZero].entries()) {
        const first = await (firsts[index] as Promise<IteratorResult<ChangeEvent>>);
        const second = await iterator.next();
        expect([first.value, second.value].map((event: ChangeEvent) => [event.revision, event.tool_name])).toEqual([
          [1, 'real'],
          [2, 'after'],
        ]);
        await iterator.return?.();
      }
      expect((await registry.changes()).events.map((event) => event.tool_name)).toEqual(['real', 'after']);
    } finally {
      await registry.close();
      db.close();
    }
  });
});

describe('the revision alone (changes({ limit: 0 }), asked before every MCP tools/call)', () => {
  it("is kept only while nothing was committed: never behind another connection's commit, this one's, a hand edit, a restore or the caller's transaction", async () => {
    const file = temp.file('revision.db');
    const copy = temp.file('revision-copy.db');
    const registry = await openSqliteToolRegistry({ filename: file });
    const other = await openSqliteToolRegistry({ filename: file });
    const hand = new Database(file);
    const revision = async () => (await registry.changes({ limit: 0 })).revision;
    try {
      await registry.register(minimalSpec('a'));
      expect([await revision(), await revision()]).toEqual([1, 1]);
      await other.register(minimalSpec('b'));
      expect(await revision()).toBe(2);
      await registry.setEnabled('a', false);
      expect(await revision()).toBe(3);
      await hand.backup(copy); // at revision 3
      hand.exec("UPDATE tool_registrations SET enabled = 1 WHERE tool_name = 'a'");
      expect(await revision()).toBe(4);
      const restorer = new Database(copy);
      await restorer.backup(file);
      restorer.close();
      expect(await revision()).toBe(3);
    } finally {
      await registry.close();
      await other.close();
      hand.close();
    }
    // On the caller's handle: inside its transaction the revision is read there; after its ROLLBACK, read again.
    const db = new Database(':memory:');
    const mine = await openSqliteToolRegistry({ database: db });
    try {
      await mine.register(minimalSpec('a'));
      expect((await mine.changes({ limit: 0 })).revision).toBe(1);
      db.exec('BEGIN IMMEDIATE');
      await mine.register(minimalSpec('ghost'));
      expect((await mine.changes({ limit: 0 })).revision).toBe(2);
      db.exec('ROLLBACK');
      expect((await mine.changes({ limit: 0 })).revision).toBe(1);
    } finally {
      await mine.close();
      db.close();
    }
  });
});
