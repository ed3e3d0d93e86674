// Progress of long imports and exports: on stderr when it is a terminal, silent otherwise.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROGRESS_MIN_TOOLS } from '../../src/cli/progress.js';
import { CLI, childEnv, runCli, useTempDir, writeJson, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

function snapshotOf(count: number): { tools: unknown[] } {
  return {
    tools: Array.from({ length: count }, (_, index) => ({
      spec: {
        tool_name: `tool_${String(index).padStart(5, '0')}`,
        version: '1',
        description: null,
        input_schema: {},
        output_schema: {},
        tags: [],
      },
      enabled: index % 3 !== 0,
      created_at: '2025-01-31T12:00:00.123456+00:00',
    })),
  };
}

/** Runs the command under a pseudo-terminal (util-linux `script`): stdout and stderr are both the terminal. */
function runInTerminal(args: readonly string[], cwd: string): { code: number | null; output: string } {
  const quoted = [process.execPath, CLI, ...args].map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
  const result = spawnSync('script', ['-qec', quoted, '/dev/null'], { cwd, env: childEnv(), encoding: 'utf8' });
  if (result.error !== undefined) throw result.error;
  return { code: result.status, output: result.stdout };
}

const count = PROGRESS_MIN_TOOLS + 500;
/** What the progress line writes before each redraw: carriage return, erase line. */
const CLEAR = '\r\u001b[2K';

describe(`progress (${count} tools)`, () => {
  it('stays silent when stderr is not a terminal: import and export write nothing to stderr', async () => {
    const cwd = tempDir();
    const file = writeJson(join(cwd, 'big.json'), snapshotOf(count));
    const imported = await runCli(['import', file], { cwd });
    expect(imported.code).toBe(0);
    expect(imported.stderr).toBe('');
    const dry = await runCli(['import', file, '--dry-run', '--json'], { cwd });
    expect(dry.code).toBe(0);
    expect(dry.stderr).toBe('');
    const exported = await runCli(['export', '--out', join(cwd, 'out.json')], { cwd });
    expect(exported.code).toBe(0);
    expect(exported.stderr).toBe('');
    const toStdout = await runCli(['export'], { cwd });
    expect(toStdout.stderr).toBe('');
    expect(JSON.parse(toStdout.stdout)).toEqual(JSON.parse(readFileSync(file, 'utf8')));
  });

  it('shows on a terminal, and the line is cleared before the result', () => {
    const cwd = tempDir();
    const file = writeJson(join(cwd, 'big.json'), snapshotOf(count));
    const imported = runInTerminal(['import', file], cwd);
    expect(imported.code).toBe(0);
    expect(imported.output).toContain(`importing ${count} tools`);
    expect(imported.output).toContain(`${CLEAR}imported (merge)`);
    const exported = runInTerminal(['export', '--out', join(cwd, 'out.json')], cwd);
    expect(exported.code).toBe(0);
    expect(exported.output).toContain(`${CLEAR}reading the tools`);
    expect(exported.output).toContain(`${CLEAR}exported ${count} tools`);
    expect(JSON.parse(readFileSync(join(cwd, 'out.json'), 'utf8'))).toEqual(JSON.parse(readFileSync(file, 'utf8')));
    // JSON printed on the same terminal gets no progress mixed into it.
    const toTerminal = runInTerminal(['export'], cwd);
    expect(toTerminal.code).toBe(0);
    expect(toTerminal.output).not.toContain(CLEAR);
    expect(JSON.parse(toTerminal.output)).toEqual(JSON.parse(readFileSync(file, 'utf8')));
  });

  it('export into a pipe that closes early ends quietly with exit 0', async () => {
    const cwd = tempDir();
    const file = writeJson(join(cwd, 'big.json'), snapshotOf(count));
    expect((await runCli(['import', file], { cwd })).code).toBe(0);
    const quoted = [process.execPath, CLI, 'export'].map((arg) => `'${arg}'`).join(' ');
    // pipefail: the exit code is the command's, not head's.
    const result = spawnSync('bash', ['-o', 'pipefail', '-c', `${quoted} | head -c 10 >/dev/null`], {
      cwd,
      env: childEnv(),
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
  });

  it('a small import on a terminal shows none', () => {
    const cwd = tempDir();
    const file = writeJson(join(cwd, 'small.json'), snapshotOf(10));
    const imported = runInTerminal(['import', file], cwd);
    expect(imported.code).toBe(0);
    expect(imported.output).not.toContain(CLEAR);
    expect(imported.output).toMatch(/^imported \(merge\): 10 added/);
  });
});
