// `npm run example` must keep working: run the example twice against one file (it promises
// to be re-runnable) and check what it left behind through the library.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
  for (let i = 0; i < 2; i++) {
    const out = execFileSync('node', [join(root, 'examples/quick-start.mjs'), filename], { encoding: 'utf8' });
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
