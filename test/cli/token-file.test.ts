// The token file under concurrent token commands (issue 40): `token create` and `token revoke`
// of separate processes at once never lose one another's update (a lock file serializes
// them, each write is a temporary file renamed over the old one), and a lock left by a
// process that died is broken.
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { StoredToken } from '../../src/server/index.js';
import { hashToken, listTokens } from '../../src/server/index.js';
import { updateTokens } from '../../src/server/tokens.js';
import { until } from '../support/waiting.js';
import { CLI, childEnv, runCli, startCli, useChildProcessTimeout, useTempDir } from './helpers.js';

useChildProcessTimeout();
const tempDir = useTempDir();

/** Whether process `pid` has `path` open (Linux: its /proc/PID/fd links). */
function holdsOpen(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

describe('token create / revoke across processes', () => {
  it('6 creates released at the same instant and 2 revokes beside them: every create is kept, every revoke holds', async () => {
    const folder = tempDir();
    const file = join(folder, 'tokens.json');
    for (const name of ['old0', 'old1', 'stays']) {
      expect((await runCli(['token', 'create', '--name', name, '--scopes', 'read', '--tokens', file], { cwd: folder })).code).toBe(0);
    }
    // Each create reads its --policy from a FIFO the test holds open for writing: every create
    // waits there, past its start-up, until the test writes all policies at once, so the six
    // reach the token file together (without a lock, all but one of their updates were lost).
    const fifos = [0, 1, 2, 3, 4, 5].map((i) => join(folder, `policy${i}.fifo`));
    const writers = fifos.map((fifo) => {
      execFileSync('mkfifo', [fifo]);
      return openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    });
    const creates = fifos.map((fifo, i) => startCli(['token', 'create', '--name', `new${i}`, '--scopes', 'read', '--policy', fifo, '--tokens', file], { cwd: folder }));
    const revokes = [0, 1].map((i) => startCli(['token', 'revoke', `old${i}`, '--tokens', file], { cwd: folder }));
    await until(() => creates.every((c, i) => holdsOpen(c.child.pid as number, fifos[i] as string)), 'every create reading its policy', { timeoutMs: 90_000 });
    const policy = JSON.stringify({ persona: 'p', allowed_tools: ['x'] });
    for (const fd of writers) writeSync(fd, policy);
    for (const fd of writers) closeSync(fd);
    const runs = [...creates, ...revokes];
    const codes = await Promise.all(runs.map((run) => run.exited));
    expect(runs.map((run, i) => [codes[i], run.stderr()])).toEqual(runs.map(() => [0, '']));
    const stored = await listTokens(file);
    expect(stored.map((t) => t.name).sort()).toEqual(['new0', 'new1', 'new2', 'new3', 'new4', 'new5', 'stays']);
    // Each printed secret is the one stored under its name.
    for (const [i, create] of creates.entries()) {
      const secret = create.stdout().trim().split('\n').at(-1) as string;
      expect(stored.find((t) => t.name === `new${i}`)?.sha256).toBe(hashToken(secret));
    }
    expect(readdirSync(folder).filter((f) => !f.endsWith('.fifo')).sort()).toEqual(['tokens.json']);
  });

  it('a lock left by a process that is gone is broken; the command goes ahead', async () => {
    const folder = tempDir();
    const file = join(folder, 'tokens.json');
    // No process has pid 2^22 + 1 (above Linux's pid_max); the host is this one.
    writeFileSync(`${file}.lock`, `${2 ** 22 + 1}@${hostname()}`);
    const created = await runCli(['token', 'create', '--name', 'after', '--scopes', 'read', '--tokens', file], { cwd: folder });
    expect([created.code, created.stderr]).toEqual([0, '']);
    expect(existsSync(`${file}.lock`)).toBe(false);
    expect((await listTokens(file)).map((t) => t.name)).toEqual(['after']);
  });

  it('a command killed (SIGKILL) the instant its lock appears leaves a lock the next command breaks at once', async () => {
    const folder = tempDir();
    const file = join(folder, 'tokens.json');
    // Loaded before the command: the fs call that makes FILE.lock appear kills the process as it returns.
    const hook = join(folder, 'die-at-lock.mjs');
    writeFileSync(
      hook,
      `import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
for (const [name, at] of [['open', 0], ['link', 1]]) {
  const real = fs.promises[name];
  fs.promises[name] = async (...args) => {
    const result = await real(...args);
    if (String(args[at]).endsWith('.lock')) process.kill(process.pid, 'SIGKILL');
    return result;
  };
}
syncBuiltinESMExports();
`,
    );
    const killed = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, CLI, 'token', 'create', '--name', 'killed', '--scopes', 'read', '--tokens', file], { cwd: folder, env: childEnv() });
    expect([killed.signal, existsSync(`${file}.lock`)]).toEqual(['SIGKILL', true]);
    // It was created empty and then written: killed in between, every command waited 10 s on it and failed.
    const after = await runCli(['token', 'create', '--name', 'after', '--scopes', 'read', '--tokens', file], { cwd: folder });
    expect([after.code, after.stderr]).toEqual([0, '']);
    expect((await listTokens(file)).map((t) => t.name)).toEqual(['after']);
  });

  // A command killed between writing its temporary file and renaming it left the file (the
  // hashes, names and scopes of every token) beside the token file for good; one killed while
  // taking the lock left its lock's temporary file.
  it('commands killed (SIGKILL) with their temporary files written leave none the next command (list, create) does not remove', async () => {
    const folder = tempDir();
    const file = join(folder, 'tokens.json');
    expect((await runCli(['token', 'create', '--name', 'first', '--scopes', 'read', '--tokens', file], { cwd: folder })).code).toBe(0);
    // Loaded before the command: the write of a temporary file whose name matches WHERE kills the process as it returns.
    const killedAt = (where: string): void => {
      const hook = join(folder, 'die-at-write.mjs');
      writeFileSync(
        hook,
        `import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const real = fs.promises.writeFile;
fs.promises.writeFile = async (...args) => {
  const result = await real(...args);
  if (${where}.test(String(args[0]).split('/').at(-1))) process.kill(process.pid, 'SIGKILL');
  return result;
};
syncBuiltinESMExports();
`,
      );
      const killed = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, CLI, 'token', 'revoke', 'first', '--tokens', file], { cwd: folder, env: childEnv() });
      expect(killed.signal).toBe('SIGKILL');
      rmSync(hook);
    };
    const left = (pattern: RegExp): string[] => readdirSync(folder).filter((name) => pattern.test(name));
    const lockTemporary = /^tokens\.json\.lock\.\d+\.[0-9a-f]+\.tmp$/;
    const writeTemporary = /^tokens\.json\.\d+-[0-9a-f]+\.[0-9a-f]+\.tmp$/;
    killedAt(String(lockTemporary));
    expect(left(lockTemporary)).toHaveLength(1);
    killedAt(String(writeTemporary));
    expect(left(writeTemporary)).toHaveLength(1);
    // `token list` takes no lock: it removes the temporary files of writers of this host that are gone.
    expect((await runCli(['token', 'list', '--tokens', file], { cwd: folder })).stderr).toBe('');
    expect(left(/\.tmp$/)).toEqual([]);
    const after = await runCli(['token', 'create', '--name', 'after', '--scopes', 'read', '--tokens', file], { cwd: folder });
    expect([after.code, after.stderr]).toEqual([0, '']);
    expect(readdirSync(folder)).toEqual(['tokens.json']);
    expect((await listTokens(file)).map((t) => t.name)).toEqual(['first', 'after']);
  });

  // The write renamed its temporary file over the link: the link became a file of its own, and
  // a revoke through the target's path (or a server reading it) left the token working.
  it('a token file reached through a symbolic link is edited in place: the link stays, its target changes', async () => {
    const folder = tempDir();
    const real = join(folder, 'real.json');
    const link = join(folder, 'link.json');
    expect((await runCli(['token', 'create', '--name', 'first', '--scopes', 'read', '--tokens', real], { cwd: folder })).code).toBe(0);
    symlinkSync('real.json', link);
    expect((await runCli(['token', 'create', '--name', 'second', '--scopes', 'read', '--tokens', link], { cwd: folder })).code).toBe(0);
    expect((await runCli(['token', 'revoke', 'first', '--tokens', link], { cwd: folder })).code).toBe(0);
    expect([lstatSync(link).isSymbolicLink(), (await listTokens(real)).map((t) => t.name)]).toEqual([true, ['second']]);
    expect(readdirSync(folder).sort()).toEqual(['link.json', 'real.json']);
  });

  // The persona was printed raw by create and list (and U+202E by list --json): an ESC sequence reached the terminal.
  it('create and list print a persona with terminal controls escaped; --json parses back to it', async () => {
    const folder = tempDir();
    const file = join(folder, 'tokens.json');
    const persona = 'a\u001b[31mRED\u202eevil';
    const policy = join(folder, 'policy.json');
    writeFileSync(policy, JSON.stringify({ persona, allowed_tools: ['x'] }));
    const created = await runCli(['token', 'create', '--name', 'p', '--scopes', 'read', '--policy', policy, '--tokens', file], { cwd: folder });
    const listed = await runCli(['token', 'list', '--tokens', file], { cwd: folder });
    const json = await runCli(['token', 'list', '--json', '--tokens', file], { cwd: folder });
    for (const out of [created.stdout, listed.stdout, json.stdout]) expect([out.includes('\u001b'), out.includes('\u202e')]).toEqual([false, false]);
    expect(listed.stdout).toContain('a\\u001b[31mRED\\u202eevil');
    expect((JSON.parse(json.stdout) as StoredToken[])[0]?.policy?.persona).toBe(persona);
  });

  it('--policy FILE is read as every input, refused and never altered: a byte not UTF-8, 1e400, a key given twice; no JSON (or no UTF-8) is a usage error', async () => {
    const folder = tempDir();
    const file = join(folder, 'tokens.json');
    const cases: [string, Buffer, number, RegExp][] = [
      ['latin1', Buffer.concat([Buffer.from('{"persona":"caf'), Buffer.from([0xe9]), Buffer.from('","allowed_tools":["x"]}')]), 2, /^error USAGE: the policy file .*latin1\.json is not UTF-8 text \(JSON must be\): byte 0xE9 at offset 15, in persona/],
      ['huge', Buffer.from('{"persona":"p","allowed_tools":["x"],"max_calls":1e400}'), 1, /^error VALIDATION_FAILED: the policy file .*huge\.json: max_calls: /],
      ['twice', Buffer.from('{"persona":"p","allowed_tools":["x"],"allowed_tools":["y"]}'), 1, /^error VALIDATION_FAILED: the policy file .*twice\.json: allowed_tools: /],
      ['garbage', Buffer.from('{"persona":'), 2, /^error USAGE: the policy file .*garbage\.json is not JSON/],
      // The audit log (PostgreSQL text, SQLite) recorded this persona as "p\uFFFDx".
      ['nul', Buffer.from('{"persona":"p\\u0000x","allowed_tools":["x"]}'), 1, /^error VALIDATION_FAILED: invalid policy: persona: must not contain U\+0000 .*\(got "p\\u0000x"\)/],
    ];
    for (const [name, bytes, code, message] of cases) {
      const policy = join(folder, `${name}.json`);
      writeFileSync(policy, bytes);
      const created = await runCli(['token', 'create', '--name', name, '--scopes', 'read', '--policy', policy, '--tokens', file], { cwd: folder });
      expect([name, created.code, created.stderr]).toEqual([name, code, expect.stringMatching(message)]);
    }
    // Nothing was stored (JSON.parse had stored "caf\uFFFD" and ["y"]).
    expect(existsSync(file)).toBe(false);
  });

  it('a lock written by hand (a newline after pid@host) whose process is gone is broken too', async () => {
    const folder = tempDir();
    const file = join(folder, 'tokens.json');
    writeFileSync(`${file}.lock`, `${2 ** 22 + 1}@${hostname()}\n`);
    expect(await updateTokens(file, () => ({ tokens: [], result: 'written' }))).toBe('written');
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('a hand edit saved while a command edits the file is kept: the command edits it again on top', async () => {
    const folder = tempDir();
    const file = join(folder, 'tokens.json');
    expect((await runCli(['token', 'create', '--name', 'first', '--scopes', 'read', '--tokens', file], { cwd: folder })).code).toBe(0);
    const [first] = await listTokens(file);
    let edits = 0;
    await updateTokens(file, (tokens) => {
      // The hand edit lands between the command's read and its write (once).
      if (edits++ === 0) writeFileSync(file, JSON.stringify({ version: 1, tokens: [{ ...first, name: 'by_hand' }] }));
      return { tokens: [...tokens, { ...(first as StoredToken), name: 'by_command', sha256: 'a'.repeat(64) }], result: undefined };
    });
    expect((await listTokens(file)).map((t) => t.name)).toEqual(['by_hand', 'by_command']);
  });

  it('create, revoke and list on a file that is not a token file: IO_ERROR, exit 1, no stack', async () => {
    const folder = tempDir();
    const file = join(folder, 'tokens.json');
    writeFileSync(file, '{"version":1,"tokens":[');
    for (const args of [['token', 'revoke', 'x'], ['token', 'list'], ['token', 'create', '--name', 'x', '--scopes', 'read']]) {
      const run = await runCli([...args, '--tokens', file], { cwd: folder });
      expect([run.code, run.stderr]).toEqual([1, expect.stringMatching(/^error IO_ERROR: token file .*: not JSON [^\n]*\n$/)]);
    }
    // A folder: it was "EISDIR: illegal operation on a directory, read", naming no file.
    const folderFile = join(folder, 'tokens.d');
    mkdirSync(folderFile);
    for (const args of [['token', 'revoke', 'x'], ['token', 'list'], ['token', 'create', '--name', 'x', '--scopes', 'read']]) {
      const run = await runCli([...args, '--tokens', folderFile], { cwd: folder });
      expect([run.code, run.stderr]).toEqual([1, `error IO_ERROR: token file ${folderFile}: it is a directory\n`]);
    }
  });
});
