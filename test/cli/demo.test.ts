// `npm run demo` (scripts/demo.mjs) runs in a fresh folder, and again in the same folder.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, childEnv, useTempDir, withLibrary, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

function demo(cwd: string): { code: number | null; stdout: string; stderr: string } {
  // TOOL_REGISTRY_DB pointing elsewhere must not redirect the tour.
  const env = childEnv({ TOOL_REGISTRY_DB: join(cwd, 'elsewhere.db') });
  const result = spawnSync(process.execPath, [join(ROOT, 'scripts', 'demo.mjs')], { cwd, env, encoding: 'utf8' });
  if (result.error !== undefined) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('the demo', () => {
  it('runs twice in a row in the same folder, each time with the conflict refused', async () => {
    const cwd = tempDir();
    const first = demo(cwd);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^added get_weather 1\.0\.0$/m);
    expect(first.stderr).toMatch(/^error VERSION_CONFLICT: /m);
    expect(first.stdout).toMatch(/^imported \(merge\): 2 added/m);

    const second = demo(cwd);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^unchanged get_weather 1\.0\.0/m);
    expect(second.stderr).toMatch(/^error VERSION_CONFLICT: /m);
    expect(second.stdout).toMatch(/^imported \(merge\): 0 added, 0 updated, 2 unchanged/m);

    const original = await withLibrary(join(cwd, 'tool-registry.db'), (registry) => registry.exportSnapshot());
    const copy = await withLibrary(join(cwd, 'tool-registry-copy.db'), (registry) => registry.exportSnapshot());
    expect(copy).toEqual(original);
    expect(original.tools.map((tool) => [tool.spec.tool_name, tool.enabled])).toEqual([
      ['convert_currency', false],
      ['get_weather', true],
    ]);
  });
});
