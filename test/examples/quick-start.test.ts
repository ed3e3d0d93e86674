// `npm run example` must keep working: run the example twice against one file (it promises
// to be re-runnable) and check what it left behind through the library.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('examples/quick-start.mjs runs twice on one file and leaves two tools, one disabled', async () => {
  dir = mkdtempSync(join(tmpdir(), 'tool-registry-example-'));
  const filename = join(dir, 'example.db');
  // The second run is a copy in a user's project, where the package is installed under its
  // name (the package ships the example; it imported '../dist/index.js', which only the
  // package's own folder has).
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'tool-registry'), 'dir');
  copyFileSync(join(root, 'examples/quick-start.mjs'), join(dir, 'quick-start.mjs'));
  for (const script of [join(root, 'examples/quick-start.mjs'), join(dir, 'quick-start.mjs')]) {
    const out = execFileSync('node', [script, filename], { encoding: 'utf8' });
    expect(out).toContain('refused: VERSION_CONFLICT calculator 2.1.0');
  }
  const registry = await openSqliteToolRegistry({ filename, readonly: true });
  const all = await registry.listAll({ includeDisabled: true });
  expect(all.map((r) => [r.spec.tool_name, r.enabled])).toEqual([
    ['calculator', false],
    ['web_search', true],
  ]);
  await registry.close();
});
