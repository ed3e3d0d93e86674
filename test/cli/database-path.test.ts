// Which file: --db, else TOOL_REGISTRY_DB, else ./tool-registry.db in the working folder.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, spec, useTempDir, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

async function names(cwd: string, args: string[], env: Record<string, string> = {}): Promise<string[]> {
  const result = await runCli([...args, 'list', '--json'], { cwd, env });
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { spec: { tool_name: string } }[]).map((tool) => tool.spec.tool_name);
}

describe('the database path', () => {
  it('defaults to ./tool-registry.db in the working folder', async () => {
    const cwd = tempDir();
    expect((await runCli(['register', '-'], { cwd, input: JSON.stringify(spec('in_default')) })).code).toBe(0);
    expect(existsSync(join(cwd, 'tool-registry.db'))).toBe(true);
    expect(await names(cwd, [])).toEqual(['in_default']);
  });

  it('TOOL_REGISTRY_DB replaces the default, and --db wins over both (before or after the command)', async () => {
    const cwd = tempDir();
    const fromEnv = join(cwd, 'env.db');
    const fromFlag = join(cwd, 'flag.db');
    const env = { TOOL_REGISTRY_DB: fromEnv };
    expect((await runCli(['register', '-'], { cwd, env, input: JSON.stringify(spec('in_env')) })).code).toBe(0);
    expect((await runCli(['--db', fromFlag, 'register', '-'], { cwd, env, input: JSON.stringify(spec('in_flag')) })).code).toBe(0);
    expect(existsSync(fromEnv)).toBe(true);
    expect(existsSync(fromFlag)).toBe(true);
    expect(existsSync(join(cwd, 'tool-registry.db'))).toBe(false);
    expect(await names(cwd, [], env)).toEqual(['in_env']);
    expect(await names(cwd, ['--db', fromFlag], env)).toEqual(['in_flag']);
    const after = await runCli(['list', '--json', '--db', fromFlag], { cwd, env });
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toHaveLength(1);
    expect(after.stdout).toMatch(/in_flag/);
  });

  it('an empty TOOL_REGISTRY_DB counts as unset', async () => {
    const cwd = tempDir();
    expect((await runCli(['register', '-'], { cwd, env: { TOOL_REGISTRY_DB: '' }, input: JSON.stringify(spec('a')) })).code).toBe(0);
    expect(existsSync(join(cwd, 'tool-registry.db'))).toBe(true);
  });

  it('an empty --db names no database: a usage error (exit 2), before or after the command, and no file', async () => {
    const cwd = tempDir();
    for (const args of [['--db', '', 'migrate'], ['migrate', '--db', ''], ['--db', '', 'list'], ['policy', 'set', '--db', '', '--version-order', 'semver']]) {
      const result = await runCli(args, { cwd });
      expect({ args, code: result.code, line: result.stderr.split('\n')[0] }).toEqual({ args, code: 2, line: expect.stringMatching(/^error USAGE: .*empty value/) as unknown });
    }
    expect(existsSync(join(cwd, 'tool-registry.db'))).toBe(false);
  });
});
