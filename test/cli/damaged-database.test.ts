// What an operator meets at 3 a.m.: a database file damaged after it was opened, a file the
// process may not write, a --db URL that is not one, a full disk under `export > file`. Each
// is a clear error with a code, never `error INTERNAL` or Node's own stack trace.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { outputFailureLine } from '../../src/cli/output-errors.js';
import { damagePages } from '../support/damaged-file.js';
import { CLI, childEnv, errorCode, listeningUrl, runCli, sha256, spec, useTempDir, withLibrary, writeJson, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

/** A database of `count` tools with long descriptions, so it spans many pages. */
async function bigDatabase(cwd: string, count = 2000): Promise<string> {
  const tools = Array.from({ length: count }, (_, i) => ({
    spec: spec(`tool_${i}`, '1', { description: 'x'.repeat(200) }),
    enabled: true,
    created_at: null,
  }));
  writeJson(join(cwd, 'big.json'), { tools });
  const db = join(cwd, 'big.db');
  expect((await runCli(['--db', db, 'import', 'big.json'], { cwd })).code).toBe(0);
  return db;
}

describe('a --db that is no regular file', () => {
  // Reads said so; writes let SQLite open it: "disk I/O error (SQLITE_IOERR_READ)" or "unable to
  // open database file", and a FIFO got a `-journal` file beside it (`/dev/null` too).
  it('a folder or a FIFO: reads and writes are IO_ERROR saying so, and nothing is created beside it', async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, 'folder'));
    execFileSync('mkfifo', [join(cwd, 'fifo')]);
    for (const db of ['folder', 'fifo']) {
      for (const args of [['list'], ['migrate'], ['register', '-'], ['serve', '--port', '0']]) {
        const result = await runCli(['--db', db, ...args], { cwd, input: JSON.stringify(spec('a')) });
        expect({ db, args, code: result.code, stderr: result.stderr }).toEqual({ db, args, code: 1, stderr: `error IO_ERROR: cannot open database ${db}: it is not a regular file\n` });
      }
    }
    expect(readdirSync(cwd).sort()).toEqual(['fifo', 'folder']);
  });
});

describe('a database damaged after it was created', () => {
  it('list, get, status, export, register and import are IO_ERROR, exit 1, one line, no stack', async () => {
    const cwd = tempDir();
    const db = await bigDatabase(cwd);
    damagePages(db);
    writeJson(join(cwd, 'one.json'), spec('one'));
    for (const args of [['list'], ['list', '--json'], ['status'], ['status', '--json'], ['export'], ['register', 'one.json'], ['import', 'big.json']]) {
      const result = await runCli(['--db', db, ...args], { cwd });
      expect({ args, code: result.code, error: errorCode(result.stderr) }).toEqual({ args, code: 1, error: 'IO_ERROR' });
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('verify reports the damage as a problem: VERIFY_FAILED (exit 1), and --json says ok: false', async () => {
    const cwd = tempDir();
    const db = await bigDatabase(cwd);
    damagePages(db);
    const text = await runCli(['--db', db, 'verify'], { cwd });
    expect(text.code).toBe(1);
    expect(errorCode(text.stderr)).toBe('VERIFY_FAILED');
    const json = await runCli(['--db', db, 'verify', '--json'], { cwd });
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { ok: boolean; problems: { kind: string }[] };
    expect(report.ok).toBe(false);
    expect(report.problems.map((problem) => problem.kind)).toContain('integrity');
  });
});

/**
 * Runs the command as a process that may read but not write `db`. Root may write any file,
 * so as root the command runs as `nobody` (the folder and the file are opened up for it).
 */
function runWithoutWriteAccess(args: readonly string[], cwd: string, db: string, input: string, folderMode = 0o777) {
  const asRoot = process.getuid?.() === 0;
  chmodSync(cwd, folderMode);
  chmodSync(db, 0o444);
  const result = spawnSync(process.execPath, [CLI, '--db', db, ...args], {
    cwd,
    input,
    env: childEnv(),
    encoding: 'utf8',
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  if (result.error !== undefined) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('a database file this process may not write', () => {
  it('reads work; register, enable, disable, remove and import are READ_ONLY (exit 1, no stack) and change nothing', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tools.db');
    expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify(spec('weather')) })).code).toBe(0);
    const snapshot = JSON.stringify({ tools: [{ spec: spec('other'), enabled: true, created_at: null }] });
    const before = sha256(db);
    expect(runWithoutWriteAccess(['list', '--json'], cwd, db, '').code).toBe(0);
    const writes = [
      [['register', '-'], JSON.stringify(spec('other'))],
      [['disable', 'weather'], ''],
      [['remove', 'weather'], ''],
      [['import', '-'], snapshot],
      [['import', '-', '--mode', 'replace'], snapshot],
    ] as const;
    for (const [args, input] of writes) {
      const result = runWithoutWriteAccess(args, cwd, db, input);
      expect({ args, code: result.code, error: errorCode(result.stderr) }).toEqual({ args, code: 1, error: 'READ_ONLY' });
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
    chmodSync(db, 0o644);
    expect(sha256(db)).toBe(before);
  });

  it('in a folder it may not write either (a service file, read by an operator): writes are READ_ONLY, reads say why they cannot', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tools.db');
    expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify(spec('weather')) })).code).toBe(0);
    const before = sha256(db);
    try {
      // No -wal/-shm beside the file (its last writer closed it): SQLite must create -shm to read it.
      const write = runWithoutWriteAccess(['register', '-'], cwd, db, JSON.stringify(spec('other')), 0o555);
      expect({ code: write.code, error: errorCode(write.stderr), lines: write.stderr.trim().split('\n').length }).toEqual({ code: 1, error: 'READ_ONLY', lines: 1 });
      const read = runWithoutWriteAccess(['list', '--json'], cwd, db, '', 0o555);
      expect({ code: read.code, error: errorCode(read.stderr) }).toEqual({ code: 1, error: 'IO_ERROR' });
      expect(read.stderr).toContain('folder cannot be written');
    } finally {
      chmodSync(cwd, 0o755);
      chmodSync(db, 0o644);
    }
    expect(sha256(db)).toBe(before);
  });
});

describe('serve --data-dir on a folder this process may not write', () => {
  /** The folder's owner runs serve (as root: `nobody`, the folder given to it), so the test can take the folder's write right away. */
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? { uid: 65534, gid: 65534 } : {};
  const serveIn = (folder: string) => spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', folder], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'], ...owner });

  it('at start: READ_ONLY naming default.db and the -shm SQLite needs beside it (exit 1, no stack; it was INTERNAL with a stack); a file for the folder is a usage error', async () => {
    const cwd = tempDir();
    const folder = join(cwd, 'data');
    mkdirSync(folder);
    expect((await runCli(['--db', join(folder, 'default.db'), 'migrate'], { cwd })).code).toBe(0);
    // Nobody but root (or, as another user, nobody at all) may write the folder.
    chmodSync(cwd, 0o755);
    chmodSync(folder, asRoot ? 0o755 : 0o555);
    chmodSync(join(folder, 'default.db'), 0o644);
    const child = serveIn(folder);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const [code] = (await once(child, 'exit')) as [number | null];
    chmodSync(folder, 0o755);
    expect({ code, error: errorCode(stderr) }).toEqual({ code: 1, error: 'READ_ONLY' });
    expect(stderr).toContain(`cannot write database ${join(folder, 'default.db')}: its folder cannot be written by this process, and SQLite must create ${join(folder, 'default.db')}-shm there`);
    expect(stderr).not.toMatch(/^\s+at /m);
    const file = join(cwd, 'not-a-folder');
    writeFileSync(file, '');
    const usage = await runCli(['serve', '--port', '0', '--data-dir', file], { cwd });
    expect({ code: usage.code, stderr: usage.stderr }).toEqual({ code: 2, stderr: `error USAGE: --data-dir ${file} is not a folder\n` });
  });

  it('running: a new namespace is 409 READ_ONLY and a file it may not open 503 STORAGE_UNAVAILABLE naming it (both were 500s); default is served meanwhile', async () => {
    const cwd = tempDir();
    const folder = join(cwd, 'data');
    mkdirSync(folder);
    chmodSync(cwd, 0o755);
    // A namespace file of another owner that this process may not open (as root: made by root, mode 600; else mode 000).
    expect((await runCli(['--db', join(folder, 'locked.db'), 'migrate'], { cwd })).code).toBe(0);
    chmodSync(join(folder, 'locked.db'), asRoot ? 0o600 : 0o000);
    if (asRoot) chownSync(folder, 65534, 65534);
    const child = serveIn(folder);
    try {
      const url = await listeningUrl(child);
      // The folder loses its write right while the server runs (a remount read-only, a chmod by a deploy script).
      chmodSync(folder, 0o555);
      const created = await fetch(`${url}/v1/namespaces/team_new`, { method: 'PUT' });
      const createdBody = (await created.json()) as { code: string; detail: string };
      expect([created.status, createdBody.code]).toEqual([409, 'READ_ONLY']);
      expect(createdBody.detail).toContain(`this process may not create ${join(folder, 'team_new.db')}`);
      const locked = await fetch(`${url}/v1/namespaces/locked/tools`);
      const lockedBody = (await locked.json()) as { code: string; detail: string; context: Record<string, unknown> };
      expect([locked.status, locked.headers.get('retry-after'), lockedBody.code]).toEqual([503, '1', 'STORAGE_UNAVAILABLE']);
      expect(lockedBody.context).toMatchObject({ namespace: 'locked', file: join(folder, 'locked.db') });
      expect((await fetch(`${url}/v1/tools`)).status).toBe(200);
      expect(existsSync(join(folder, 'team_new.db'))).toBe(false);
    } finally {
      chmodSync(folder, 0o755);
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});

describe('a --db URL that is not one', () => {
  it('a malformed postgres:// URL or a bad ?schema= is a usage error (exit 2), also from TOOL_REGISTRY_DB', async () => {
    const cwd = tempDir();
    // A schema given twice is ambiguous: which registry was meant must not be guessed.
    for (const url of ['postgres://bad url', 'postgres://u:p@127.0.0.1:1/db?schema=a-b', 'postgresql://[::1', 'postgres://u:p@127.0.0.1:1/db?schema=a&schema=b']) {
      const viaFlag = await runCli(['--db', url, 'list'], { cwd });
      expect({ url, code: viaFlag.code, error: errorCode(viaFlag.stderr) }).toEqual({ url, code: 2, error: 'USAGE' });
      const viaEnv = await runCli(['register', '-'], { cwd, input: JSON.stringify(spec('x')), env: { TOOL_REGISTRY_DB: url } });
      expect({ url, code: viaEnv.code, error: errorCode(viaEnv.stderr) }).toEqual({ url, code: 2, error: 'USAGE' });
    }
  });
});

describe('standard output that cannot be written', () => {
  // `1<file` opens it read-only (EBADF). A register prints after its commit: its exit 1 said
  // "cannot write standard output" alone, which reads as "nothing registered".
  it.skipIf(!existsSync('/dev/full'))('export > a full disk (/dev/full) or register 1<file is IO_ERROR, exit 1, one line naming the reason; the register stays committed', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tools.db');
    expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify(spec('weather')) })).code).toBe(0);
    writeJson(join(cwd, 'news.json'), spec('news'));
    const cases = [
      { args: ['export'], to: '/dev/full', reason: 'no space left on device (ENOSPC)' },
      { args: ['register', 'news.json'], to: join(cwd, 'news.json'), reason: 'bad file descriptor (EBADF); register ran: what it changed stays committed, only its output is lost' },
      { args: ['export', '--format', 'mcp'], to: '/dev/full', reason: 'no space left on device (ENOSPC)' },
    ];
    for (const { args, to, reason } of cases) {
      const out = openSync(to, to === '/dev/full' ? 'w' : 'r');
      try {
        const result = spawnSync(process.execPath, [CLI, '--db', db, ...args], { cwd, env: childEnv(), encoding: 'utf8', stdio: ['ignore', out, 'pipe'] });
        expect({ args, code: result.status, stderr: result.stderr }).toEqual({ args, code: 1, stderr: `error IO_ERROR: cannot write standard output: ${reason}\n` });
      } finally {
        closeSync(out);
      }
    }
    expect(await withLibrary(db, async (registry) => registry.has('news'))).toBe(true);
  });

  // Nobody holds the secret of a token whose lines were lost, and the token takes the name.
  it("token create's line says its secret was never shown (the line the bin prints, composed in-process)", async () => {
    const cwd = tempDir();
    const file = join(cwd, 'tokens.json');
    expect((await runCli(['token', 'create', '--name', 'deploy', '--scopes', 'read', '--tokens', file], { cwd })).code).toBe(0);
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(outputFailureLine('standard output', full)).toBe(
      `error IO_ERROR: cannot write standard output: no space left on device (ENOSPC); token create ran: what it changed stays committed, only its output is lost: the token deploy exists but its secret was never shown: revoke it (token revoke deploy --tokens ${file}) and create another`,
    );
  });

  // A dry run changed nothing: its lost output must not say that something stays committed.
  it("import --dry-run's line says only that its output was lost (the line the bin prints, composed in-process)", async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tools.db');
    expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify([spec('weather')]) })).code).toBe(0);
    expect((await runCli(['--db', db, 'export', '--out', join(cwd, 'snapshot.json')], { cwd })).code).toBe(0);
    expect((await runCli(['--db', db, 'import', '--dry-run', join(cwd, 'snapshot.json')], { cwd })).code).toBe(0);
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(outputFailureLine('standard output', full)).toBe('error IO_ERROR: cannot write standard output: no space left on device (ENOSPC)');
  });

  // Its `skipped TOOL` lines lost on a full disk, export said 0: that every tool was exported.
  it.skipIf(!existsSync('/dev/full'))('a standard error that cannot be written (2>/dev/full) turns the exit 0 of a command that wrote there into 1', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tools.db');
    expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify([spec('weather'), spec('dotted.name')]) })).code).toBe(0);
    const full = openSync('/dev/full', 'w');
    try {
      const result = spawnSync(process.execPath, [CLI, '--db', db, 'export', '--format', 'openai', '--skip-incompatible'], { cwd, env: childEnv(), stdio: ['ignore', 'ignore', full] });
      expect(result.status).toBe(1);
    } finally {
      closeSync(full);
    }
  });
});

describe('a row edited by hand so that it breaks the contract', () => {
  it('list, get and history still print it (exit 0); verify names it (VERIFY_FAILED)', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tools.db');
    const tools = [spec('broken', '1', { tags: ['a'] }), spec('fine')];
    expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify(tools) })).code).toBe(0);
    // What an operator might write with the sqlite3 shell: a spec without most of its fields.
    const handle = new Database(db);
    handle.prepare(`UPDATE tool_specs SET spec_json = '{"tool_name":"broken","tags":"a"}' WHERE tool_name = 'broken'`).run();
    handle.close();
    for (const args of [['list'], ['list', '--all'], ['get', 'broken'], ['get', 'fine'], ['history', 'broken'], ['list', '--json']]) {
      const result = await runCli(['--db', db, ...args], { cwd });
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
    }
    const verify = await runCli(['--db', db, 'verify'], { cwd });
    expect({ code: verify.code, error: errorCode(verify.stderr) }).toEqual({ code: 1, error: 'VERIFY_FAILED' });
  });
});
