// The SQLite store's read cache is never stale: another process's commit, this connection's
// own writes, plain SQL on the caller's handle and the sqlite3 shell are all seen by the very
// next read, and a change reloads only what changed. Real files, real child processes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintOf, openSqliteToolRegistry } from '../../src/index.js';
import type { SqliteToolRegistry, ToolRegistration, ToolSpecInput } from '../../src/index.js';
import { SQLITE3 as SHELL, skipWithoutSqlite3 } from '../support/sqlite3-shell.js';

const WRITER = fileURLToPath(new URL('../fixtures/cache-writer.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

function spec(name: string, version: string | null = '1.0.0', description = `the ${name} tool`): ToolSpecInput {
  return {
    tool_name: name,
    version,
    description,
    input_schema: { type: 'object', properties: { q: { type: 'string' } } },
    output_schema: { type: 'object' },
    tags: ['test'],
  };
}

/** Runs test/fixtures/cache-writer.mjs in another process; returns once it has committed and exited. */
function inAnotherProcess(file: string, operations: unknown[]): unknown[] {
  if (!existsSync(DIST)) throw new Error(`build first: ${DIST} is missing (npx tsc -p tsconfig.json)`);
  const out = execFileSync(process.execPath, [WRITER, file, JSON.stringify(operations)], { encoding: 'utf8' });
  return JSON.parse(out) as unknown[];
}

function names(registrations: readonly ToolRegistration[]): string[] {
  return registrations.map((registration) => registration.spec.tool_name);
}

let folder: string;
let file: string;
const open: SqliteToolRegistry[] = [];
const handles: Database.Database[] = [];

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'tool-registry-cache-'));
  file = join(folder, 'registry.db');
});

afterEach(async () => {
  for (const registry of open.splice(0)) await registry.close();
  for (const db of handles.splice(0)) db.close();
  rmSync(folder, { recursive: true, force: true });
});

async function openAt(options: { cache?: boolean; database?: Database.Database } = {}): Promise<SqliteToolRegistry> {
  const { database, ...rest } = options;
  const registry = await openSqliteToolRegistry(database === undefined ? { filename: file, ...rest } : { database, ...rest });
  open.push(registry);
  return registry;
}

function connection(): Database.Database {
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  handles.push(db);
  return db;
}

/** Reads everything once, so a cache holds every tool before the change under test. */
async function prime(registry: SqliteToolRegistry, toolNames: readonly string[]): Promise<void> {
  for (const name of toolNames) await registry.get(name);
  await registry.listAll();
  await registry.listAll({ includeDisabled: true });
}

describe.each([
  ['cache on', true],
  ['cache off', false],
])('SQLite store, %s', (_label, cache) => {
  it("sees another process's commit at the very next get, has and listAll", async () => {
    const registry = await openAt({ cache });
    for (const name of ['a', 'b', 'c', 'd']) await registry.register(spec(name));
    await prime(registry, ['a', 'b', 'c', 'd', 'e']);

    inAnotherProcess(file, [
      ['setEnabled', 'a', false],
      ['register', spec('b', '2.0.0')],
      ['remove', 'c'],
      ['register', spec('e')],
    ]);
    expect((await registry.get('a'))?.enabled).toBe(false);
    expect((await registry.get('b'))?.spec.version).toBe('2.0.0');
    expect(await registry.get('c')).toBeUndefined();
    expect(await registry.has('c')).toBe(false);
    expect((await registry.get('e'))?.spec.tool_name).toBe('e');
    expect(names(await registry.listAll())).toEqual(['b', 'd', 'e']);
    expect(names(await registry.listAll({ includeDisabled: true }))).toEqual(['a', 'b', 'd', 'e']);

    // This time the first read after the commit is listAll.
    inAnotherProcess(file, [
      ['setEnabled', 'a', true],
      ['remove', 'd'],
    ]);
    expect(names(await registry.listAll())).toEqual(['a', 'b', 'e']);
    expect(await registry.has('d')).toBe(false);

    // And an import that replaces everything.
    inAnotherProcess(file, [
      ['importSnapshot', { tools: [{ spec: spec('x'), enabled: false, created_at: '2025-01-01T00:00:00Z' }] }, 'replace'],
    ]);
    expect(await registry.get('a')).toBeUndefined();
    expect(await registry.exportSnapshot()).toEqual({
      tools: [{ spec: spec('x'), enabled: false, created_at: '2025-01-01T00:00:00Z' }],
    });
  });

  it("sees this connection's own writes at once", async () => {
    const registry = await openAt({ cache });
    await prime(registry, ['a']);
    expect(await registry.get('a')).toBeUndefined();
    await registry.register(spec('a'));
    expect((await registry.get('a'))?.spec.version).toBe('1.0.0');
    expect(names(await registry.listAll())).toEqual(['a']);
    await registry.register(spec('a', '2.0.0'));
    expect((await registry.get('a'))?.spec.version).toBe('2.0.0');
    await registry.setEnabled('a', false);
    expect((await registry.get('a'))?.enabled).toBe(false);
    expect(await registry.listAll()).toEqual([]);
    // A failed write changes nothing, in the database or in what reads return.
    await expect(registry.register(spec('a', '2.0.0', 'another description'))).rejects.toMatchObject({ code: 'VERSION_CONFLICT' });
    expect((await registry.get('a'))?.spec.description).toBe('the a tool');
    await registry.importSnapshot({ tools: [{ spec: spec('b'), enabled: true, created_at: null }] });
    expect(names(await registry.listAll({ includeDisabled: true }))).toEqual(['a', 'b']);
    expect(await registry.remove('a')).toBe(true);
    expect(await registry.has('a')).toBe(false);
    expect(names(await registry.listAll({ includeDisabled: true }))).toEqual(['b']);
  });

  it('sees plain SQL written on the same database handle, and forgets it when rolled back', async () => {
    const db = connection();
    const registry = await openAt({ cache, database: db });
    for (const name of ['a', 'b']) await registry.register(spec(name));
    await prime(registry, ['a', 'b', 'z']);

    db.prepare('UPDATE tool_registrations SET enabled = 0 WHERE tool_name = ?').run('a');
    expect((await registry.get('a'))?.enabled).toBe(false);
    expect(names(await registry.listAll())).toEqual(['b']);

    db.prepare('DELETE FROM tool_registrations WHERE tool_name = ?').run('b');
    expect(await registry.get('b')).toBeUndefined();

    const canonical = canonicalJson({ ...spec('z'), tags: ['test'] });
    db.prepare('INSERT INTO tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES (?, ?, ?, ?, ?)').run(
      'z', fingerprintOf(canonical), '1.0.0', canonical, '2025-01-01T00:00:00Z',
    );
    db.prepare('INSERT INTO tool_registrations (tool_name, fingerprint, enabled, created_at) VALUES (?, ?, 1, ?)').run(
      'z', fingerprintOf(canonical), '2025-01-01T00:00:00Z',
    );
    expect((await registry.get('z'))?.spec.description).toBe('the z tool');
    expect(names(await registry.listAll({ includeDisabled: true }))).toEqual(['a', 'z']);

    // Inside the caller's transaction reads see its uncommitted rows (as SQL does) ...
    db.exec('BEGIN');
    db.prepare('UPDATE tool_registrations SET enabled = 1 WHERE tool_name = ?').run('a');
    expect((await registry.get('a'))?.enabled).toBe(true);
    expect(names(await registry.listAll())).toEqual(['a', 'z']);
    db.exec('ROLLBACK');
    // ... and after a rollback, not any more.
    expect((await registry.get('a'))?.enabled).toBe(false);
    expect(names(await registry.listAll())).toEqual(['z']);
  });

  it("sees the sqlite3 shell's writes (the change log's triggers run there too)", async (context) => {
    skipWithoutSqlite3(context);
    const registry = await openAt({ cache });
    for (const name of ['a', 'b']) await registry.register(spec(name));
    await prime(registry, ['a', 'b']);
    execFileSync(SHELL, [file, "UPDATE tool_registrations SET enabled = 0 WHERE tool_name = 'a'; DELETE FROM tool_registrations WHERE tool_name = 'b';"]);
    expect((await registry.get('a'))?.enabled).toBe(false);
    expect(await registry.get('b')).toBeUndefined();
    expect(await registry.listAll()).toEqual([]);
  });
});

describe('the read cache', () => {
  it('reloads only the tools that changed: every other registration is the same object as before', async () => {
    const registry = await openAt();
    const all = Array.from({ length: 50 }, (_, i) => `tool_${String(i).padStart(2, '0')}`);
    await registry.importSnapshot({ tools: all.map((name) => ({ spec: spec(name), enabled: true, created_at: null })) });
    const before = await registry.listAll({ includeDisabled: true });
    const single = await registry.get('tool_20');
    expect(await registry.get('tool_20')).toBe(single);

    inAnotherProcess(file, [['setEnabled', 'tool_10', false]]);
    const after = await registry.listAll({ includeDisabled: true });
    expect(names(after)).toEqual(all);
    after.forEach((registration, i) => {
      if (i === 10) {
        expect(registration).not.toBe(before[i]);
        expect(registration.enabled).toBe(false);
      } else {
        expect(registration).toBe(before[i]);
      }
    });
    expect(await registry.get('tool_20')).toBe(single);
  });

  it('answers exactly like an uncached registry through a random mix of writes from both connections', async () => {
    const registry = await openAt();
    const reference = await openAt({ cache: false });
    const other = connection();
    const pool = Array.from({ length: 24 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    const canonicalOf = (name: string) => canonicalJson(spec(name));
    const insertSpec = other.prepare(
      'INSERT INTO tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
    const insert = other.prepare('INSERT OR IGNORE INTO tool_registrations (tool_name, fingerprint, enabled, created_at) VALUES (?, ?, 1, NULL)');
    const flip = other.prepare('UPDATE tool_registrations SET enabled = 1 - enabled WHERE tool_name = ?');
    const drop = other.prepare('DELETE FROM tool_registrations WHERE tool_name = ?');
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let step = 0; step < 300; step++) {
      const name = pool[random(pool.length)] as string;
      switch (random(6)) {
        case 0:
          other.transaction(() => {
            insertSpec.run(name, fingerprintOf(canonicalOf(name)), '1.0.0', canonicalOf(name), '2025-01-01T00:00:00Z');
            insert.run(name, fingerprintOf(canonicalOf(name)));
          })();
          break;
        case 1:
          flip.run(name);
          break;
        case 2:
          drop.run(name);
          break;
        case 3:
          await registry.register(spec(name, `v${step}`));
          break;
        case 4:
          if (await reference.has(name)) await registry.setEnabled(name, random(2) === 0);
          break;
        default:
          await registry.remove(name);
      }
      // Lists only after a while, so both the one-by-one and the every-tool modes are exercised.
      if (step >= 100 || random(3) === 0) {
        expect(await registry.listAll({ includeDisabled: true })).toEqual(await reference.listAll({ includeDisabled: true }));
        expect(await registry.listAll()).toEqual(await reference.listAll());
      }
      for (let i = 0; i < 3; i++) {
        const probe = pool[random(pool.length)] as string;
        expect(await registry.get(probe)).toEqual(await reference.get(probe));
      }
    }
  });

  it('a reader further behind than the change log reaches reloads everything and is right', async () => {
    const registry = await openAt();
    for (const name of ['a', 'b', 'c']) await registry.register(spec(name));
    await prime(registry, ['a', 'b', 'c']);
    const other = connection();
    const flip = other.prepare('UPDATE tool_registrations SET enabled = 1 - enabled WHERE tool_name = ?');
    // The change to a is pruned from the log by the 12,001 changes after it.
    flip.run('a');
    other.transaction(() => {
      for (let i = 0; i < 12_001; i++) flip.run('b');
    })();
    other.prepare('DELETE FROM tool_registrations WHERE tool_name = ?').run('c');
    expect((await registry.get('a'))?.enabled).toBe(false);
    expect((await registry.get('b'))?.enabled).toBe(false);
    expect(await registry.get('c')).toBeUndefined();
    expect(names(await registry.listAll({ includeDisabled: true }))).toEqual(['a', 'b']);
    expect(await registry.listAll()).toEqual([]);
    // The log stays bounded: about the last 10,000 changes.
    const kept = other.prepare('SELECT count(*) FROM tool_changes').pluck().get() as number;
    expect(kept).toBeGreaterThanOrEqual(10_000);
    expect(kept).toBeLessThanOrEqual(11_000);
  });

  it('the change log refuses to lose or rewrite recent entries', async () => {
    const registry = await openAt();
    await registry.register(spec('a'));
    const db = connection();
    const error = (run: () => unknown): unknown => {
      try {
        run();
      } catch (caught) {
        return caught;
      }
      return undefined;
    };
    expect(error(() => db.exec('DELETE FROM tool_changes'))).toMatchObject({ code: 'SQLITE_CONSTRAINT_TRIGGER' });
    expect(error(() => db.exec("UPDATE tool_changes SET tool_name = 'x'"))).toMatchObject({ code: 'SQLITE_CONSTRAINT_TRIGGER' });
    expect(db.prepare('SELECT tool_name FROM tool_changes').pluck().all()).toEqual(['a']);
  });

  it('cache must be a boolean', async () => {
    await expect(openSqliteToolRegistry({ filename: file, cache: 'yes' as unknown as boolean })).rejects.toThrow(TypeError);
  });
});
