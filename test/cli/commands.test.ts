// Every command and flag against a real file, JSON output compared with the library's.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { errorCode, plain, runCli, sha256, spec, useTempDir, withLibrary, writeJson, useChildProcessTimeout } from './helpers.js';
import { shippedMigrations } from '../../src/stores/sqlite/migrations.js';

useChildProcessTimeout();

/** What status() reports as the schema version: the newest shipped migration. */
const LATEST_MIGRATION = shippedMigrations().at(-1)!.name;

const tempDir = useTempDir();

/** A folder with tool-registry.db holding weather (1.0.0, tags demo/http), calc (unversioned, disabled) and search. */
async function seeded(): Promise<{ cwd: string; db: string }> {
  const cwd = tempDir();
  const file = writeJson(join(cwd, 'tools.json'), [
    spec('weather', '1.0.0', { tags: ['demo', 'http'] }),
    spec('calc', null, { tags: ['demo'] }),
    spec('search', '2', { tags: ['http'] }),
  ]);
  expect((await runCli(['register', file], { cwd })).code).toBe(0);
  expect((await runCli(['disable', 'calc'], { cwd })).code).toBe(0);
  return { cwd, db: join(cwd, 'tool-registry.db') };
}

describe('register', () => {
  it('registers one spec from a file and says it was added, then unchanged, then replaced', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tool-registry.db');
    const file = writeJson(join(cwd, 'one.json'), spec('weather', '1.0.0'));
    const first = await runCli(['register', file], { cwd });
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^added weather 1\.0\.0/);
    const stored = await withLibrary(db, (registry) => registry.get('weather'));
    expect(stored?.spec).toEqual(plain({ ...spec('weather', '1.0.0') }));

    const again = await runCli(['register', file], { cwd });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^unchanged weather/);
    expect(await withLibrary(db, (registry) => registry.get('weather'))).toEqual(stored);

    writeJson(file, spec('weather', '1.1.0'));
    const replaced = await runCli(['register', file], { cwd });
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toMatch(/^replaced weather 1\.0\.0 -> 1\.1\.0/);
    expect((await withLibrary(db, (registry) => registry.get('weather')))?.spec.version).toBe('1.1.0');
  });

  it('registers an array from standard input', async () => {
    const cwd = tempDir();
    const result = await runCli(['register', '-'], { cwd, input: JSON.stringify([spec('a'), spec('b', null)]) });
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(2);
    const names = await withLibrary(join(cwd, 'tool-registry.db'), async (registry) =>
      (await registry.listAll()).map((tool) => tool.spec.tool_name),
    );
    expect(names).toEqual(['a', 'b']);
  });

  it('refuses a same-version different spec with VERSION_CONFLICT and changes nothing', async () => {
    const { cwd, db } = await seeded();
    const before = await withLibrary(db, (registry) => registry.exportSnapshot());
    const result = await runCli(['register', '-'], { cwd, input: JSON.stringify(spec('weather', '1.0.0', { description: 'changed' })) });
    expect(result.code).toBe(1);
    expect(errorCode(result.stderr)).toBe('VERSION_CONFLICT');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(await withLibrary(db, (registry) => registry.exportSnapshot())).toEqual(before);
  });
});

describe('register with control characters in the version', () => {
  it('says added / replaced with them escaped, as the tables do (no raw terminal escapes)', async () => {
    const cwd = tempDir();
    const red = '1\u001b[31mRED\u001b[0m';
    for (const version of [red, `${red}2`]) {
      const result = await runCli(['register', '-'], { cwd, input: JSON.stringify(spec('painted', version)) });
      expect(result.code).toBe(0);
      expect(result.stdout).not.toContain('\u001b');
      expect(result.stdout).toContain('\\u001b[31m');
    }
  });
});

describe('list', () => {
  it('prints an aligned table of the enabled tools', async () => {
    const { cwd } = await seeded();
    const result = await runCli(['list'], { cwd });
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+ENABLED\s+DEPRECATED\s+CREATED_AT\s+TAGS$/);
    expect(lines.slice(1).map((line) => line.split(/\s+/)[0])).toEqual(['search', 'weather']);
    // Aligned: every column starts at the same offset in every row.
    const versionColumn = (lines[0] as string).indexOf('VERSION');
    for (const line of lines.slice(1)) expect(line.slice(versionColumn - 2, versionColumn)).toBe('  ');
    expect(lines.find((line) => line.startsWith('weather'))).toMatch(/weather\s+1\.0\.0\s+yes\s+-\s+\d{4}-\S+Z\s+demo, http$/);
  });

  it('--all includes disabled tools', async () => {
    const { cwd } = await seeded();
    const lines = (await runCli(['list', '--all'], { cwd })).stdout.trimEnd().split('\n').slice(1);
    expect(lines.map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
      ['calc', '-', 'no'],
      ['search', '2', 'yes'],
      ['weather', '1.0.0', 'yes'],
    ]);
  });

  it('--json prints exactly listAll(), with and without --all', async () => {
    const { cwd, db } = await seeded();
    const enabled = await runCli(['list', '--json'], { cwd });
    const all = await runCli(['list', '--all', '--json'], { cwd });
    expect(enabled.code).toBe(0);
    expect(JSON.parse(enabled.stdout)).toEqual(plain(await withLibrary(db, (registry) => registry.listAll())));
    expect(JSON.parse(all.stdout)).toEqual(
      plain(await withLibrary(db, (registry) => registry.listAll({ includeDisabled: true }))),
    );
    expect(all.stdout).toBe(`${JSON.stringify(await withLibrary(db, (registry) => registry.listAll({ includeDisabled: true })), null, 2)}\n`);
  });

  it('--tag filters by tag; repeated, every tag must match', async () => {
    const { cwd } = await seeded();
    const names = async (args: string[]): Promise<string[]> =>
      (JSON.parse((await runCli(['list', ...args, '--json'], { cwd })).stdout) as { spec: { tool_name: string } }[]).map(
        (tool) => tool.spec.tool_name,
      );
    expect(await names(['--tag', 'demo'])).toEqual(['weather']);
    expect(await names(['--all', '--tag', 'demo'])).toEqual(['calc', 'weather']);
    expect(await names(['--tag', 'demo', '--tag', 'http'])).toEqual(['weather']);
    expect(await names(['--tag', 'nope'])).toEqual([]);
    const none = await runCli(['list', '--tag', 'nope'], { cwd });
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/^no enabled tools tagged "nope"/);
  });
  it('keeps one row per tool when a tag holds control characters (shown escaped)', async () => {
    const cwd = tempDir();
    expect((await runCli(['register', '-'], { cwd, input: JSON.stringify(spec('odd', '1', { tags: ['two\nlines', 'tab\there'] })) })).code).toBe(0);
    const lines = (await runCli(['list'], { cwd })).stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/two\\nlines, tab\\there$/);
  });
});

describe('get', () => {
  it('prints the registration with its schemas, and --json prints exactly get()', async () => {
    const { cwd, db } = await seeded();
    const human = await runCli(['get', 'weather'], { cwd });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^name:\s+weather$/m);
    expect(human.stdout).toMatch(/^version:\s+1\.0\.0$/m);
    // Keys in the order they were registered (issue 11), not sorted.
    expect(human.stdout).toMatch(/^input_schema:\n {2}\{\n {4}"type"/m);
    const json = await runCli(['get', 'calc', '--json'], { cwd });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(plain(await withLibrary(db, (registry) => registry.get('calc'))));
  });

  it('exits 1 with TOOL_NOT_FOUND for an unknown name (names are case-sensitive)', async () => {
    const { cwd } = await seeded();
    for (const name of ['nope', 'Weather']) {
      const result = await runCli(['get', name, '--json'], { cwd });
      expect(result.code).toBe(1);
      expect(errorCode(result.stderr)).toBe('TOOL_NOT_FOUND');
      expect(result.stdout).toBe('');
    }
  });
});

describe('enable, disable, remove', () => {
  it('disable and enable change the flag, and say when it was already so', async () => {
    const { cwd, db } = await seeded();
    expect((await runCli(['disable', 'weather'], { cwd })).stdout).toMatch(/^disabled weather/);
    expect((await withLibrary(db, (registry) => registry.get('weather')))?.enabled).toBe(false);
    expect((await runCli(['disable', 'weather'], { cwd })).stdout).toMatch(/already disabled/);
    const enabled = await runCli(['enable', 'weather'], { cwd });
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toMatch(/^enabled weather/);
    expect((await withLibrary(db, (registry) => registry.get('weather')))?.enabled).toBe(true);
    expect((await runCli(['enable', 'weather'], { cwd })).stdout).toMatch(/already enabled/);
  });

  it('enable and disable of an unknown name exit 1 with TOOL_NOT_FOUND', async () => {
    const { cwd } = await seeded();
    for (const command of ['enable', 'disable']) {
      const result = await runCli([command, 'nope'], { cwd });
      expect(result.code).toBe(1);
      expect(errorCode(result.stderr)).toBe('TOOL_NOT_FOUND');
    }
  });

  it('remove exits 0 whether or not the tool was there, and says which', async () => {
    const { cwd, db } = await seeded();
    const removed = await runCli(['remove', 'search'], { cwd });
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(/^removed search/);
    expect(await withLibrary(db, (registry) => registry.has('search'))).toBe(false);
    const again = await runCli(['remove', 'search'], { cwd });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^nothing removed/);
  });

  // A mistyped --db (`--db prod.dbb disable foo`) said TOOL_NOT_FOUND and left a new empty database behind.
  it('on a database file that does not exist: the same answer as on an empty one, and no file is created', async () => {
    const cwd = tempDir();
    expect((await runCli(['--db', 'empty.db', 'migrate'], { cwd })).code).toBe(0);
    // `check` (read-only) said DATABASE_NOT_FOUND where `register` would create the file and add.
    writeJson(join(cwd, 'a.json'), spec('a'));
    for (const args of [['enable', 'x'], ['disable', 'x'], ['remove', 'x'], ['remove', 'x', '--expect-version', '1'], ['deprecate', 'x', '--message', 'm'], ['undeprecate', 'x'], ['upstream', 'remove', 'x'], ['upstream', 'sync'], ['upstream', 'approve', 'x', '--all'], ['upstream', 'reject', 'x', 't'], ['check', 'a.json']]) {
      const onEmpty = await runCli(['--db', 'empty.db', ...args], { cwd });
      const onMissing = await runCli(['--db', 'typo.db', ...args], { cwd });
      expect({ args, code: onMissing.code, stdout: onMissing.stdout, stderr: onMissing.stderr, created: existsSync(join(cwd, 'typo.db')) }).toEqual({ args, code: onEmpty.code, stdout: onEmpty.stdout, stderr: onEmpty.stderr, created: false });
    }
  });
});

describe('status, verify, migrate', () => {
  it('status --json is the library status(); the human form names the same facts', async () => {
    const { cwd, db } = await seeded();
    const json = await runCli(['--db', db, 'status', '--json'], { cwd });
    expect(json.code).toBe(0);
    const status = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(status).toEqual(plain(await withLibrary(db, (registry) => registry.status())));
    expect(status).toMatchObject({ tools: 3, enabled: 2, disabled: 1, journalMode: 'wal', schemaVersion: LATEST_MIGRATION });
    const human = await runCli(['status'], { cwd });
    expect(human.stdout).toMatch(new RegExp(`^schema version:\\s+${LATEST_MIGRATION}$`, 'm'));
    expect(human.stdout).toMatch(/^tools:\s+3 \(2 enabled, 1 disabled\)$/m);
    expect(human.stdout).toMatch(/^journal mode:\s+wal$/m);
  });

  it('verify exits 0 on a sound file, --json prints the library report', async () => {
    const { cwd, db } = await seeded();
    const result = await runCli(['verify'], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('ok: the integrity check passed and 3 tools meet the contracts\n');
    expect((await runCli(['remove', 'calc'], { cwd })).code).toBe(0);
    expect((await runCli(['remove', 'search'], { cwd })).code).toBe(0);
    expect((await runCli(['verify'], { cwd })).stdout).toBe('ok: the integrity check passed and 1 tool meets the contracts\n');
    const json = await runCli(['verify', '--json'], { cwd });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(plain(await withLibrary(db, (registry) => registry.verify())));
  });

  it('verify exits 1 with VERIFY_FAILED and lists the problems of a damaged file', async () => {
    const { cwd, db } = await seeded();
    const raw = new Database(db);
    raw.prepare("UPDATE tool_registrations SET created_at = 'last tuesday' WHERE tool_name = 'search'").run();
    raw.close();
    const result = await runCli(['verify'], { cwd });
    expect(result.code).toBe(1);
    expect(errorCode(result.stderr)).toBe('VERIFY_FAILED');
    const details = result.stderr.trimEnd().split('\n').slice(1);
    expect(details.length).toBeGreaterThan(0);
    expect(details.some((line) => /^ {2}contract search: /.test(line))).toBe(true);
    const json = await runCli(['verify', '--json'], { cwd });
    expect(json.code).toBe(1);
    expect(errorCode(json.stderr)).toBe('VERIFY_FAILED');
    const report = JSON.parse(json.stdout) as { ok: boolean };
    expect(report.ok).toBe(false);
    expect(report).toEqual(plain(await withLibrary(db, (registry) => registry.verify())));
  });

  it('migrate creates a new file and reports the applied migrations; again it applies none', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'fresh.db');
    const first = await runCli(['--db', db, 'migrate'], { cwd });
    expect(first.code).toBe(0);
    expect(existsSync(db)).toBe(true);
    expect(first.stdout).toMatch(/^created /m);
    expect(first.stdout).toMatch(/^applied 0001_init$/m);
    const status = await withLibrary(db, (registry) => registry.status());
    expect(status.appliedMigrations).toContain('0001_init');
    const second = await runCli(['--db', db, 'migrate'], { cwd });
    expect(second.code).toBe(0);
    expect(second.stdout).not.toMatch(/^(created|applied) /m);
    expect(second.stdout).toMatch(/0 new/);
  });
});

describe('registry errors from the store', () => {
  it('a database migrated by a newer release is SCHEMA_TOO_NEW for reads, writes and migrate, and stays untouched', async () => {
    const { cwd, db } = await seeded();
    const raw = new Database(db);
    raw.prepare("INSERT INTO schema_migrations (name, applied_at) VALUES ('9999_from_the_future', '2030-01-01T00:00:00Z')").run();
    raw.close();
    const before = sha256(db);
    for (const args of [['list'], ['status', '--json'], ['migrate'], ['remove', 'weather'], ['register', '-']]) {
      const result = await runCli(args, { cwd, input: JSON.stringify(spec('x')) });
      expect(result.code, args.join(' ')).toBe(1);
      expect(errorCode(result.stderr)).toBe('SCHEMA_TOO_NEW');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(sha256(db)).toBe(before);
  });

  it('a write while another connection holds the write lock is STORAGE_BUSY, exit 1, no stack', async () => {
    const { cwd, db } = await seeded();
    const holder = new Database(db);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const result = await runCli(['disable', 'weather'], { cwd });
      expect(result.code).toBe(1);
      expect(errorCode(result.stderr)).toBe('STORAGE_BUSY');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect((await withLibrary(db, (registry) => registry.get('weather')))?.enabled).toBe(true);
  });
});
