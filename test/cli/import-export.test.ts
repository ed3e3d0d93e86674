// export and import: the snapshot JSON, dry runs that write nothing, all-or-nothing imports.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, openSqliteToolRegistry } from '../../src/index.js';
import { CLI, childEnv, errorCode, plain, runCli, sha256, spec, useTempDir, withLibrary, writeJson, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

/** A database `name` in `cwd` holding `tools` (registered), with `disabled` disabled. */
async function database(cwd: string, name: string, tools: unknown[], disabled: string[] = []): Promise<string> {
  const db = join(cwd, name);
  expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify(tools) })).code).toBe(0);
  for (const tool of disabled) expect((await runCli(['--db', db, 'disable', tool], { cwd })).code).toBe(0);
  return db;
}

describe('export', () => {
  it('prints the library snapshot as 2-space JSON on stdout', async () => {
    const cwd = tempDir();
    const db = await database(cwd, 'a.db', [spec('b', null, { tags: ['x', 'x'] }), spec('a')], ['b']);
    const result = await runCli(['--db', db, 'export'], { cwd });
    expect(result.code).toBe(0);
    const snapshot = await withLibrary(db, (registry) => registry.exportSnapshot());
    expect(result.stdout).toBe(`${JSON.stringify(snapshot, null, 2)}\n`);
    expect(snapshot.tools.map((tool) => [tool.spec.tool_name, tool.enabled])).toEqual([['a', true], ['b', false]]);
  });

  it('of an empty registry is {"tools": []}', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'empty.db');
    expect((await runCli(['--db', db, 'migrate'], { cwd })).code).toBe(0);
    const result = await runCli(['--db', db, 'export'], { cwd });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ tools: [] });
  });

  it('--out writes the same JSON to a file and leaves no temporary file', async () => {
    const cwd = tempDir();
    const db = await database(cwd, 'a.db', [spec('a'), spec('b')]);
    const out = join(cwd, 'snap.json');
    const result = await runCli(['--db', db, 'export', '--out', out], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^exported 2 tools to /);
    expect(readFileSync(out, 'utf8')).toBe((await runCli(['--db', db, 'export'], { cwd })).stdout);
    expect(readdirSync(cwd).filter((name) => !name.startsWith('a.db')).sort()).toEqual(['snap.json']);
  });

  it('--out naming a SQLite database (the one exported, or another) is IO_ERROR and leaves it intact', async () => {
    const cwd = tempDir();
    const db = await database(cwd, 'a.db', [spec('a')]);
    const other = await database(cwd, 'b.db', [spec('b')]);
    const before = { a: sha256(db), b: sha256(other) };
    for (const format of [[], ['--format', 'mcp']]) {
      for (const out of [db, other, 'a.db']) {
        const result = await runCli(['--db', db, 'export', ...format, '--out', out], { cwd });
        expect({ out, code: result.code, error: errorCode(result.stderr) }).toEqual({ out, code: 1, error: 'IO_ERROR' });
      }
    }
    expect({ a: sha256(db), b: sha256(other) }).toEqual(before);
    expect((await withLibrary(db, (registry) => registry.listAll())).map((tool) => tool.spec.tool_name)).toEqual(['a']);
  });

  // `export --out tools.db-wal` replaced the log of commits not yet in the database with JSON:
  // SQLite then ignores the log, and those commits are gone.
  it("--out naming a SQLite database's -wal, -shm or -journal file is IO_ERROR and leaves it intact", async () => {
    const cwd = tempDir();
    const db = join(cwd, 'a.db');
    const registry = await openSqliteToolRegistry({ filename: db });
    try {
      await registry.register(spec('a'));
      writeFileSync(`${db}-journal`, '');
      const before = [sha256(`${db}-wal`), sha256(`${db}-shm`)];
      for (const suffix of ['-wal', '-shm', '-journal']) {
        const result = await runCli(['--db', db, 'export', '--out', `${db}${suffix}`], { cwd });
        expect({ suffix, code: result.code, line: result.stderr.split('\n')[0] }).toEqual({ suffix, code: 1, line: expect.stringMatching(new RegExp(`^error IO_ERROR: refusing to write .*a\\.db${suffix}: it belongs to the SQLite database `)) });
      }
      expect([sha256(`${db}-wal`), sha256(`${db}-shm`)]).toEqual(before);
    } finally {
      await registry.close();
    }
    expect((await withLibrary(db, (reopened) => reopened.listAll())).map((tool) => tool.spec.tool_name)).toEqual(['a']);
  });

  it('works once the change log was pruned past revision 0 (a long-lived file), to stdout and to --out', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'old.db');
    const registry = await openSqliteToolRegistry({ filename: db });
    await registry.register(spec('a'));
    await registry.setEnabled('a', false);
    await registry.setEnabled('a', true);
    // Past revision 11,000 with more tools than the log's 10,000 entries, pruning keeps one entry per tool: a's first two go.
    await registry.registerMany(Array.from({ length: 11_000 }, (_, i) => spec(`t${i}`)));
    await expect(registry.changes({ since: 0, limit: 1 })).rejects.toMatchObject({ code: 'CHANGES_EXPIRED' });
    await registry.close();
    const printed = await runCli(['--db', db, 'export'], { cwd });
    expect({ code: printed.code, error: errorCode(printed.stderr) }).toEqual({ code: 0, error: undefined });
    expect((JSON.parse(printed.stdout) as { tools: unknown[] }).tools).toHaveLength(11_001);
    const written = await runCli(['--db', db, 'export', '--out', join(cwd, 'snap.json')], { cwd });
    expect({ code: written.code, error: errorCode(written.stderr) }).toEqual({ code: 0, error: undefined });
    expect(readFileSync(join(cwd, 'snap.json'), 'utf8')).toBe(printed.stdout);
    // The revision to follow the feed from after this resync: changes --limit 0 prints it however far the log was pruned.
    const revision = await runCli(['--db', db, 'changes', '--limit', '0', '--json'], { cwd });
    expect({ code: revision.code, error: errorCode(revision.stderr) }).toEqual({ code: 0, error: undefined });
    expect(JSON.parse(revision.stdout)).toEqual({ revision: 11_003, events: [] });
  });

  it('--out interrupted (SIGINT) while it writes leaves no temporary file, and the file is whole or absent', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'big.db');
    // Filled through the library: the command's import of a 31 MB file (written, read, parsed
    // and checked) is tested elsewhere and cost about a CPU-second more here.
    const tools = Array.from({ length: 60_000 }, (_, i) => ({ spec: spec(`tool_${i}`, '1', { description: 'x'.repeat(100) }) }));
    const registry = await openSqliteToolRegistry({ filename: db });
    await registry.importSnapshot({ tools });
    await registry.close();
    const out = join(cwd, 'out', 'snap.json');
    mkdirSync(join(cwd, 'out'));
    const child = spawn(process.execPath, [CLI, '--db', db, 'export', '--out', out], { cwd, env: childEnv(), stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    // Interrupt once the temporary file exists: the write is under way.
    const deadline = Date.now() + 60_000;
    while (!readdirSync(join(cwd, 'out')).some((name) => name.endsWith('.tmp')) && Date.now() < deadline) await sleep(1);
    child.kill('SIGINT');
    // The interrupt is not lost: the command ends by it, once the file is whole or gone.
    expect(await exited).toBe('SIGINT');
    expect(readdirSync(join(cwd, 'out')).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    if (existsSync(out)) expect(readFileSync(out, 'utf8')).toBe((await runCli(['--db', db, 'export'], { cwd })).stdout);
  });

  it('--out into a folder that does not exist is IO_ERROR', async () => {
    const cwd = tempDir();
    const db = await database(cwd, 'a.db', [spec('a')]);
    const result = await runCli(['--db', db, 'export', '--out', join(cwd, 'missing', 'snap.json')], { cwd });
    expect(result.code).toBe(1);
    expect(errorCode(result.stderr)).toBe('IO_ERROR');
    expect(existsSync(join(cwd, 'missing'))).toBe(false);
  });
});

describe('import', () => {
  it('round trip: export from one file, import into another, export again: identical', async () => {
    const cwd = tempDir();
    const source = await database(cwd, 'source.db', [spec('a'), spec('b', null), spec('c', '3', { tags: ['t'] })], ['b']);
    const out = join(cwd, 'snap.json');
    expect((await runCli(['--db', source, 'export', '--out', out], { cwd })).code).toBe(0);
    const target = join(cwd, 'target.db');
    const imported = await runCli(['--db', target, 'import', out], { cwd });
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/^imported \(merge\): 3 added, 0 updated, 0 unchanged, 0 removed$/m);
    expect((await runCli(['--db', target, 'export'], { cwd })).stdout).toBe(readFileSync(out, 'utf8'));
    // created_at and enabled come across verbatim.
    expect(await withLibrary(target, (registry) => registry.exportSnapshot())).toEqual(
      await withLibrary(source, (registry) => registry.exportSnapshot()),
    );
    // Importing the same snapshot again changes nothing.
    const again = await runCli(['--db', target, 'import', out, '--json'], { cwd });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ added: 0, updated: 0, unchanged: 3, removed: 0, conflicts: 0, dryRun: false, revision: expect.any(Number) });
  });

  it('from standard input', async () => {
    const cwd = tempDir();
    const source = await database(cwd, 'source.db', [spec('a'), spec('b')]);
    const snapshot = (await runCli(['--db', source, 'export'], { cwd })).stdout;
    const target = join(cwd, 'target.db');
    const result = await runCli(['--db', target, 'import', '-'], { cwd, input: snapshot });
    expect(result.code).toBe(0);
    expect(await withLibrary(target, async (registry) => (await registry.listAll()).length)).toBe(2);
  });

  it('--dry-run prints the plan, leaves the file byte-for-byte unchanged, and --json is the library report', async () => {
    const cwd = tempDir();
    const target = await database(cwd, 'target.db', [spec('keep'), spec('old', '1'), spec('gone')]);
    const snapshot = {
      tools: [
        { spec: spec('new'), enabled: true, created_at: '2025-01-31T12:00:00+00:00' },
        { spec: spec('old', '2'), enabled: false, created_at: null },
        ...(await withLibrary(target, async (registry) => [(await registry.get('keep'))!])),
      ],
    };
    const file = writeJson(join(cwd, 'snap.json'), snapshot);
    const before = sha256(target);
    for (const mode of ['merge', 'replace']) {
      const human = await runCli(['--db', target, 'import', file, '--dry-run', '--mode', mode], { cwd });
      expect(human.code).toBe(0);
      const rows = human.stdout.split('\n').slice(1).filter((line) => /^(add|update|unchanged|remove|conflict) /.test(line));
      const plan = rows.map((line) => line.split(/\s+/).slice(0, 2).join(' '));
      expect(plan).toEqual(
        mode === 'merge'
          ? ['unchanged keep', 'add new', 'update old']
          : ['remove gone', 'unchanged keep', 'add new', 'update old'],
      );
      expect(human.stdout).toMatch(/nothing was written/);
      const json = await runCli(['--db', target, 'import', file, '--dry-run', '--mode', mode, '--json'], { cwd });
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual(
        plain(await withLibrary(target, (registry) => registry.importSnapshot(snapshot, { mode: mode as 'merge', dryRun: true }))),
      );
    }
    expect(sha256(target)).toBe(before);
  });

  it('--dry-run against a database that does not exist plans against an empty registry and creates nothing', async () => {
    const cwd = tempDir();
    const file = writeJson(join(cwd, 'snap.json'), { tools: [{ spec: spec('a') }, { spec: spec('b') }] });
    const result = await runCli(['--db', join(cwd, 'new.db'), 'import', file, '--dry-run', '--json'], { cwd });
    expect(result.code).toBe(0);
    await using empty = new InMemoryToolRegistry();
    expect(JSON.parse(result.stdout)).toEqual(plain(await empty.importSnapshot(JSON.parse(readFileSync(file, 'utf8')), { dryRun: true })));
    expect(existsSync(join(cwd, 'new.db'))).toBe(false);
  });

  it('--out - is standard output (no file named "-"); --out with no name is a usage error', async () => {
    const cwd = tempDir();
    const db = await database(cwd, 'a.db', [spec('a')], []);
    for (const format of [[], ['--format', 'mcp']]) {
      const dash = await runCli(['--db', db, 'export', '--out', '-', ...format], { cwd });
      expect({ format, code: dash.code, stdout: dash.stdout }).toEqual({ format, code: 0, stdout: (await runCli(['--db', db, 'export', ...format], { cwd })).stdout });
    }
    expect(existsSync(join(cwd, '-'))).toBe(false);
    const empty = await runCli(['--db', db, 'export', '--out', ''], { cwd });
    expect([empty.code, errorCode(empty.stderr)]).toEqual([2, 'USAGE']);
  });

  it('--dry-run of an empty plan prints the summary alone, no table header without rows', async () => {
    const cwd = tempDir();
    const result = await runCli(['--db', join(cwd, 'new.db'), 'import', '-', '--dry-run'], { cwd, input: '{"tools": []}' });
    expect(result).toEqual({ code: 0, stdout: 'dry run (merge): 0 to add, 0 to update, 0 unchanged, 0 to remove, 0 conflicts; nothing was written\n', stderr: '' });
  });

  it('many conflicts: the error line names the first 10 and counts the rest, which the plan above lists', async () => {
    const cwd = tempDir();
    const names = Array.from({ length: 12 }, (_, index) => `t${String(index).padStart(2, '0')}`);
    const target = await database(cwd, 'target.db', names.map((name) => spec(name, '1')));
    const file = writeJson(join(cwd, 'snap.json'), { tools: names.map((name) => ({ spec: spec(name, '1', { description: 'changed' }) })) });
    const dry = await runCli(['--db', target, 'import', file, '--dry-run'], { cwd });
    expect([dry.code, errorCode(dry.stderr)]).toEqual([1, 'VERSION_CONFLICT']);
    expect(dry.stdout.match(/^conflict\s/gm)).toHaveLength(12);
    expect(dry.stderr).toContain('the plan has 12 conflicts');
    expect(dry.stderr).toContain('"t09" at tools[9] and 2 more (each in the plan above)');
    expect(dry.stderr).not.toContain('"t10"');
  });

  it('a conflict: --dry-run shows it and exits 1; the real import exits 1 and changes nothing', async () => {
    const cwd = tempDir();
    const target = await database(cwd, 'target.db', [spec('a', '1'), spec('b')]);
    const file = writeJson(join(cwd, 'snap.json'), {
      tools: [{ spec: spec('new') }, { spec: spec('a', '1', { description: 'changed' }) }],
    });
    const before = await withLibrary(target, (registry) => registry.exportSnapshot());
    const hash = sha256(target);
    const dry = await runCli(['--db', target, 'import', file, '--dry-run'], { cwd });
    expect(dry.code).toBe(1);
    expect(errorCode(dry.stderr)).toBe('VERSION_CONFLICT');
    expect(dry.stdout).toMatch(/^conflict\s+a\s+tools\[1\]/m);
    expect(sha256(target)).toBe(hash);
    const real = await runCli(['--db', target, 'import', file], { cwd });
    expect(real.code).toBe(1);
    expect(errorCode(real.stderr)).toBe('VERSION_CONFLICT');
    expect(real.stderr).toMatch(/tools\[1\]/);
    expect(await withLibrary(target, (registry) => registry.exportSnapshot())).toEqual(before);
    // replace is a restore: the same snapshot goes through.
    const replace = await runCli(['--db', target, 'import', file, '--mode', 'replace'], { cwd });
    expect(replace.code).toBe(0);
    expect(replace.stdout).toMatch(/1 added, 1 updated, 0 unchanged, 1 removed/);
    expect(await withLibrary(target, async (registry) => (await registry.listAll()).map((tool) => tool.spec.tool_name))).toEqual([
      'a',
      'new',
    ]);
  });

  it('a snapshot naming a tool twice is DUPLICATE_TOOL and changes nothing', async () => {
    const cwd = tempDir();
    const target = await database(cwd, 'target.db', [spec('a')]);
    const hash = sha256(target);
    const file = writeJson(join(cwd, 'snap.json'), { tools: [{ spec: spec('x') }, { spec: spec('x', '2') }] });
    const result = await runCli(['--db', target, 'import', file], { cwd });
    expect(result.code).toBe(1);
    expect(errorCode(result.stderr)).toBe('DUPLICATE_TOOL');
    expect(sha256(target)).toBe(hash);
  });
});
