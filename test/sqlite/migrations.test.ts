// The migration runner and the provider.
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import { appliedMigrations, MIGRATIONS_FOLDER, migrate, shippedMigrations } from '../../src/stores/sqlite/migrations.js';
import type { Migration } from '../../src/core/migration-files.js';
import { expectCode, minimalSpec } from '../support/registry-helpers.js';
import { dumpDatabase, useTempFolder } from './helpers.js';

const temp = useTempFolder();

describe('the migration provider', () => {
  it('resolves migrations/sqlite at the package root from its own URL, in name order', () => {
    expect(fileURLToPath(MIGRATIONS_FOLDER)).toBe(fileURLToPath(new URL('../../migrations/sqlite/', import.meta.url)));
    const names = shippedMigrations().map((migration) => migration.name);
    expect(names[0]).toBe('0001_init');
    expect(names).toEqual([...names].sort());
  });

  it('is found the same way from dist/ (the installed layout)', async () => {
    const dist = new URL('../../dist/stores/sqlite/migrations.js', import.meta.url);
    expect(existsSync(dist), 'build first (npm run build)').toBe(true);
    const module = (await import(dist.href)) as { MIGRATIONS_FOLDER: URL };
    expect(fileURLToPath(module.MIGRATIONS_FOLDER)).toBe(fileURLToPath(MIGRATIONS_FOLDER));
  });

  it('uses only what the 3.40 shell can read: no two-argument json_valid, no generated columns', () => {
    for (const migration of shippedMigrations()) {
      expect(migration.sql).not.toMatch(/json_valid\s*\([^()]*,/i);
      expect(migration.sql).not.toMatch(/GENERATED\s+ALWAYS|\bAS\s*\(.*\)\s*(STORED|VIRTUAL)/i);
      expect(migration.sql).not.toMatch(/\bjsonb/i);
    }
  });
});

describe('the migration runner', () => {
  const good: Migration = { name: '0001_a', sql: 'CREATE TABLE a (x INTEGER) STRICT; CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL) STRICT;' };
  const second: Migration = { name: '0002_b', sql: 'CREATE TABLE b (x INTEGER); INSERT INTO b VALUES (1);' };
  const failing: Migration = { name: '0003_bad', sql: 'CREATE TABLE c (x INTEGER); INSERT INTO nowhere VALUES (1);' };

  it('applies pending files in order, each recorded once, and a second run applies nothing', async () => {
    const db = new Database(temp.file('m.db'));
    const options = { db, busyTimeoutMs: 1000, filename: 'm.db' };
    expect(await migrate({ ...options, migrations: [good] })).toEqual(['0001_a']);
    expect(await migrate({ ...options, migrations: [good, second] })).toEqual(['0002_b']);
    expect(await migrate({ ...options, migrations: [good, second] })).toEqual([]);
    expect(appliedMigrations(db)).toEqual(['0001_a', '0002_b']);
    db.close();
  });

  it('a failing file is rolled back entirely and not recorded; earlier files stay', async () => {
    const file = temp.file('fail.db');
    const db = new Database(file);
    const options = { db, busyTimeoutMs: 1000, filename: 'fail.db' };
    const error = await migrate({ ...options, migrations: [good, second, failing] }).catch((e: unknown) => e);
    expect(error).toMatchObject({ migration: '0003_bad', cause: { code: 'SQLITE_ERROR' } });
    expect(appliedMigrations(db)).toEqual(['0001_a', '0002_b']);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'c'").get()).toBeUndefined();
    expect(db.inTransaction).toBe(false);
    db.close();
  });

  it('refuses a database recording an unknown newer migration with SCHEMA_TOO_NEW, schema and rows unchanged', async () => {
    const file = temp.file('newer.db');
    const writer = await openSqliteToolRegistry({ filename: file });
    await writer.register(minimalSpec('kept'));
    await writer.close();
    const raw = new Database(file);
    raw.pragma('journal_mode = DELETE');
    raw.exec(`
      INSERT INTO schema_migrations VALUES ('9999_from_the_future', '2030-01-01T00:00:00.000Z');
      CREATE TABLE future_table (x INTEGER);
    `);
    raw.close();
    const before = dumpDatabase(file);

    const error = await expectCode(openSqliteToolRegistry({ filename: file }), 'SCHEMA_TOO_NEW');
    expect(error.context).toMatchObject({ unknown_migrations: ['9999_from_the_future'] });
    await expectCode(openSqliteToolRegistry({ filename: file, readonly: true }), 'SCHEMA_TOO_NEW');
    const owned = new Database(file);
    await expectCode(openSqliteToolRegistry({ database: owned }), 'SCHEMA_TOO_NEW');
    expect(owned.open).toBe(true);
    owned.close();

    expect(dumpDatabase(file)).toEqual(before);
    // Not even the journal mode was switched to WAL.
    const check = new Database(file, { readonly: true });
    expect(check.pragma('journal_mode', { simple: true })).toBe('delete');
    check.close();
  });
});

describe('two opens at once over one new handle (issue 13, item 8)', () => {
  it('both succeed, and each migration is applied once: a migration never awaits inside its transaction', async () => {
    const db = new Database(temp.file('shared-handle.db'));
    try {
      const [one, two] = await Promise.all([openSqliteToolRegistry({ database: db }), openSqliteToolRegistry({ database: db })]);
      await one.register(minimalSpec('seen_by_both'));
      expect(await two.has('seen_by_both')).toBe(true);
      expect(appliedMigrations(db)).toEqual(shippedMigrations().map((migration) => migration.name));
      await one.close();
      await two.close();
    } finally {
      db.close();
    }
  });
});

describe('0003_change_log_generation over a file written by 0002', () => {
  it('keeps the log entries (with tokens), adds a generation, and the store reads and logs as before', async () => {
    const file = temp.file('from-0002.db');
    const db = new Database(file);
    await migrate({ db, migrations: shippedMigrations().slice(0, 2), busyTimeoutMs: 1000, filename: file });
    const fingerprint = 'a'.repeat(64);
    db.prepare('INSERT INTO tool_specs VALUES (?, ?, NULL, ?, ?)').run('old', fingerprint, JSON.stringify(minimalSpec('old')), 'then');
    db.prepare('INSERT INTO tool_registrations VALUES (?, ?, 1, NULL)').run('old', fingerprint);
    const before = db.prepare('SELECT revision, tool_name FROM tool_changes ORDER BY revision').all();
    expect(before).toEqual([{ revision: 1, tool_name: 'old' }]);
    db.close();

    const registry = await openSqliteToolRegistry({ filename: file });
    expect(await registry.has('old')).toBe(true);
    await registry.register(minimalSpec('new'));
    expect(await registry.has('new')).toBe(true);
    await registry.close();
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT revision, tool_name FROM tool_changes ORDER BY revision').all()).toEqual([
      { revision: 1, tool_name: 'old' },
      { revision: 2, tool_name: 'new' },
    ]);
    expect(check.prepare('SELECT count(DISTINCT token) FROM tool_changes').pluck().get()).toBe(2);
    expect(check.prepare('SELECT length(generation) FROM tool_changes_generation').pluck().all()).toEqual([32]);
    check.close();
  });
});

describe('0005_change_feed_start', () => {
  async function migratedUpTo(file: string, last: string): Promise<Database.Database> {
    const db = new Database(file);
    await migrate({ db, migrations: shippedMigrations().filter((migration) => migration.name < last), busyTimeoutMs: 1000, filename: file });
    return db;
  }

  it('over a 0004 file records the revision before its first event, or its newest entry when it has none, and drops the feed index', async () => {
    const cases: { name: string; sql: string; start: number }[] = [
      { name: 'empty', sql: '', start: 0 },
      // Entries logged by 0003's triggers only (no action), none by 0004's.
      { name: 'legacy-only', sql: "INSERT INTO tool_changes (tool_name) VALUES ('a'), ('b'), ('c');", start: 3 },
      // Events from 0004's triggers after two legacy entries, and a hand-written entry with no action after the first event.
      {
        name: 'mixed',
        sql: `INSERT INTO tool_changes (tool_name) VALUES ('a'), ('b');
              INSERT INTO tool_changes (tool_name, action) VALUES ('a', 'added');
              INSERT INTO tool_changes (tool_name) VALUES ('c');
              INSERT INTO tool_changes (tool_name, action) VALUES ('c', 'added');`,
        start: 2,
      },
    ];
    for (const { name, sql, start } of cases) {
      const file = temp.file(`feed-start-${name}.db`);
      const db = await migratedUpTo(file, '0005');
      db.exec(sql);
      await migrate({ db, migrations: shippedMigrations(), busyTimeoutMs: 1000, filename: file });
      expect(db.prepare('SELECT after_revision FROM tool_changes_feed_start').pluck().all(), name).toEqual([start]);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tool_changes'").all(), name).toEqual([]);
      db.close();
    }
  });

  it('refuses to change or delete where the feed starts (SQLITE_CONSTRAINT_TRIGGER)', async () => {
    const db = await migratedUpTo(temp.file('feed-start-frozen.db'), '9999');
    expect(() => db.exec('UPDATE tool_changes_feed_start SET after_revision = 10')).toThrow(
      expect.objectContaining({ code: 'SQLITE_CONSTRAINT_TRIGGER' }),
    );
    expect(() => db.exec('DELETE FROM tool_changes_feed_start')).toThrow(expect.objectContaining({ code: 'SQLITE_CONSTRAINT_TRIGGER' }));
    expect(db.prepare('SELECT after_revision FROM tool_changes_feed_start').pluck().all()).toEqual([0]);
    db.close();
  });
});
