// A reader that stops reading the bin's standard output (`| head -1`, `| head -0`): a read-only
// command that succeeded exits 0, but one that failed keeps its failure's status, a command that
// runs until stopped ends, and `token create`, whose output is the only copy of a secret, fails
// loudly. Only a real process with a real pipe shows what the bin does (each spawn proves one
// thing only a closed pipe can; they run at once).
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { listTokens } from '../../src/server/index.js';
import { until } from '../support/waiting.js';
import { CLI, childEnv, errorCode, runCli, spec, useChildProcessTimeout, useTempDir } from './helpers.js';

useChildProcessTimeout();
const tempDir = useTempDir();

/** Runs the bin with its standard output a pipe closed before it starts; its exit code and stderr. */
async function withClosedStdout(args: readonly string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  // Closed before the bin has started, so its first write to stdout meets EPIPE.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr };
}

/** A database with three tools, one of whose rows breaks the contract (verify: VERIFY_FAILED). */
async function damagedRow(cwd: string): Promise<string> {
  const db = join(cwd, 'tools.db');
  expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify([spec('weather'), spec('search'), spec('calc')]) })).code).toBe(0);
  const raw = new Database(db);
  raw.prepare("UPDATE tool_registrations SET created_at = 'last tuesday' WHERE tool_name = 'search'").run();
  raw.close();
  return db;
}

describe('a standard output closed early', () => {
  // `verify --json | head -1` on a damaged database exited 0: the closed pipe's EPIPE ended the
  // process with 0 before (or after) the command failed, so the failure read as "verified".
  it("keeps a failed command's status (verify: 1), exits 0 for a read that succeeded, and ends a watch", async () => {
    const cwd = tempDir();
    const db = await damagedRow(cwd);
    const [verify, list, watch] = await Promise.all([
      withClosedStdout(['--db', db, 'verify', '--json'], cwd),
      withClosedStdout(['--db', db, 'list'], cwd),
      // `watch --since 0` prints the registration at once, then would wait for changes for good.
      withClosedStdout(['--db', db, 'watch', '--since', '0'], cwd),
    ]);
    expect({ code: verify.code, error: errorCode(verify.stderr) }).toEqual({ code: 1, error: 'VERIFY_FAILED' });
    expect(list).toEqual({ code: 0, stderr: '' });
    expect(watch).toEqual({ code: 0, stderr: '' });
  });
});

describe('token create whose secret cannot be written', () => {
  // `token create | head -0` exited 0 and the token existed with a secret nobody ever saw.
  it('exits 1 naming the token, saying its secret was not shown and how to revoke it: the pipe closed before it writes and while it writes', async () => {
    const cwd = tempDir();
    const file = join(cwd, 'tokens.json');
    const before = withClosedStdout(['token', 'create', '--name', 'early', '--scopes', 'read', '--tokens', file], cwd);

    // While: standard output is a FIFO the test has filled, so the command's write waits there
    // until the test closes the only reader, once the token is committed (its write follows the
    // commit at once; either way the write cannot deliver the secret).
    const fifo = join(cwd, 'stdout.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const filler = Buffer.alloc(4096, 'x');
    for (;;) {
      try {
        writeSync(writer, filler);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
        throw error;
      }
    }
    const child = spawn(process.execPath, [CLI, 'token', 'create', '--name', 'late', '--scopes', 'read', '--tokens', file], { cwd, env: childEnv(), stdio: ['ignore', writer, 'pipe'] });
    closeSync(writer);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = once(child, 'close') as Promise<[number | null]>;
    await until(async () => (await listTokens(file).catch(() => [])).some((token) => token.name === 'late'), 'the token late committed');
    closeSync(reader);
    const [code] = await exited;
    const while_ = { code, stderr };

    for (const [name, result] of [['early', await before], ['late', while_]] as const) {
      expect({ name, code: result.code, error: errorCode(result.stderr) }).toEqual({ name, code: 1, error: 'IO_ERROR' });
      expect(result.stderr).toContain('cannot write standard output: broken pipe (EPIPE)');
      expect(result.stderr).toContain(`the token ${name} exists but its secret was never shown: revoke it (token revoke ${name} --tokens ${file}) and create another`);
    }
    // Both exist: the line says so, and `token revoke` (as it says) removes them.
    expect((await listTokens(file)).map((token) => token.name).sort()).toEqual(['early', 'late']);
  });
});
