// `export --out` and files that are not plain files (issue 28, defect 5): a symbolic link is
// written through and stays a link; a FIFO, a socket, a device node and a directory are
// refused (IO_ERROR) and left as they were, never replaced and never waited on. Every file
// the command writes goes through src/cli/out-file.ts; the CLI test runs the real command.
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { outTarget, writeFileAtomically } from '../../src/cli/out-file.js';
import { errorCode, runCli, runCliAsync, spec, useTempDir, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

function mkfifo(path: string): void {
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
}

/** A character device node like /dev/null, made in a temporary folder (root only). */
function mknodNull(path: string): boolean {
  return process.getuid?.() === 0 && spawnSync('mknod', [path, 'c', '1', '3']).status === 0;
}

async function withSocket<T>(path: string, work: () => Promise<T> | T): Promise<T> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  try {
    return await work();
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const refusal = (kind: string) => expect.objectContaining({ code: 'IO_ERROR', message: expect.stringContaining(`it is ${kind}`) });

describe('writeFileAtomically (every file the command writes)', () => {
  it('writes through a symbolic link (and a chain of them): the links stay links, the target gets the text and keeps its mode', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'target.json'), 'old');
    chmodSync(join(cwd, 'target.json'), 0o640);
    mkdirSync(join(cwd, 'sub'));
    symlinkSync('../target.json', join(cwd, 'sub', 'one'));
    symlinkSync('sub/one', join(cwd, 'two'));
    await writeFileAtomically(join(cwd, 'two'), (write) => write('new'));
    expect(lstatSync(join(cwd, 'two')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(cwd, 'sub', 'one'))).toBe('../target.json');
    expect(readFileSync(join(cwd, 'target.json'), 'utf8')).toBe('new');
    expect(statSync(join(cwd, 'target.json')).mode & 0o777).toBe(0o640);
    expect(readdirSync(cwd).sort()).toEqual(['sub', 'target.json', 'two']);
  });

  it('a dangling link creates its target; a loop of links is refused', async () => {
    const cwd = tempDir();
    symlinkSync('made.json', join(cwd, 'dangling'));
    await writeFileAtomically(join(cwd, 'dangling'), (write) => write('x'));
    expect(lstatSync(join(cwd, 'dangling')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(cwd, 'made.json'), 'utf8')).toBe('x');
    symlinkSync('b', join(cwd, 'a'));
    symlinkSync('a', join(cwd, 'b'));
    expect(() => outTarget(join(cwd, 'a'))).toThrow(expect.objectContaining({ code: 'IO_ERROR', message: expect.stringContaining('too many levels of symbolic links') }));
  });

  it('refuses a FIFO, a socket, a directory and a device node, directly or through a link, and leaves them as they were', async () => {
    const cwd = tempDir();
    mkfifo(join(cwd, 'fifo'));
    mkdirSync(join(cwd, 'dir'));
    symlinkSync('fifo', join(cwd, 'to-fifo'));
    const cases: [string, string][] = [
      ['fifo', 'a FIFO (named pipe)'],
      ['to-fifo', 'a FIFO (named pipe)'],
      ['dir', 'a directory'],
    ];
    if (mknodNull(join(cwd, 'null'))) cases.push(['null', 'a character device']);
    await withSocket(join(cwd, 'socket'), async () => {
      for (const [name, kind] of [...cases, ['socket', 'a socket'] as [string, string]]) {
        let produced = false;
        await expect(writeFileAtomically(join(cwd, name), () => (produced = true))).rejects.toEqual(refusal(kind));
        expect(produced).toBe(false);
      }
      expect(lstatSync(join(cwd, 'socket')).isSocket()).toBe(true);
    });
    expect(lstatSync(join(cwd, 'fifo')).isFIFO()).toBe(true);
    expect(lstatSync(join(cwd, 'to-fifo')).isSymbolicLink()).toBe(true);
    if (cases.length === 4) expect(lstatSync(join(cwd, 'null')).isCharacterDevice()).toBe(true);
    expect(readdirSync(cwd).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});

describe('tool-registry export --out', () => {
  it('writes through a link; refuses a FIFO (at once, never waiting for a reader), a link to one and a device node; each in every format', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'a.db');
    expect((await runCli(['--db', db, 'register', '-'], { cwd, input: JSON.stringify([spec('a')]) })).code).toBe(0);
    writeFileSync(join(cwd, 'target.json'), 'old');
    symlinkSync('target.json', join(cwd, 'link'));
    mkfifo(join(cwd, 'fifo'));
    symlinkSync('fifo', join(cwd, 'to-fifo'));
    const device = mknodNull(join(cwd, 'null'));
    const refused = ['fifo', 'to-fifo', ...(device ? ['null'] : [])];
    // All at once: a command that waited on the FIFO would hold the test until its timeout.
    const [linked, mcp, ...refusals] = await Promise.all([
      runCliAsync(['--db', db, 'export', '--out', 'link'], { cwd }),
      runCliAsync(['--db', db, 'export', '--format', 'mcp', '--out', 'to-fifo'], { cwd }),
      ...refused.map((name) => runCliAsync(['--db', db, 'export', '--out', name], { cwd })),
    ]);
    expect(linked.code).toBe(0);
    expect(lstatSync(join(cwd, 'link')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(join(cwd, 'target.json'), 'utf8')).tools.map((tool: { spec: { tool_name: string } }) => tool.spec.tool_name)).toEqual(['a']);
    for (const result of [mcp, ...refusals]) {
      expect(result.code).toBe(1);
      expect(errorCode(result.stderr)).toBe('IO_ERROR');
      expect(result.stderr).toMatch(/refusing to write .*it is a (FIFO|character device)/);
      expect(result.stdout).toBe('');
    }
    expect(lstatSync(join(cwd, 'fifo')).isFIFO()).toBe(true);
    expect(lstatSync(join(cwd, 'to-fifo')).isSymbolicLink()).toBe(true);
    if (device) expect(lstatSync(join(cwd, 'null')).isCharacterDevice()).toBe(true);
  });
});
