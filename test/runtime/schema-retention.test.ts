import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

describe('a dropped Tool', () => {
  // ajv's instance kept every schema it compiled, and its validator, for the process's life:
  // about 4 KB a defineTool, and a server makes one for every elicitation answer it checks.
  it('leaves nothing of its schema once dropped (ajv keeps no compiled schema for the process)', () => {
    if (!existsSync(DIST)) throw new Error(`build first: ${DIST} is missing (npm run build)`);
    const child = fileURLToPath(new URL('../fixtures/defined-tool-heap.mjs', import.meta.url));
    const out = execFileSync(process.execPath, ['--expose-gc', child, '2000'], { encoding: 'utf8' });
    const result = JSON.parse(out) as { collected: boolean; grewKiB: number };
    expect(result.collected).toBe(true);
    // About 8,000 KiB when ajv kept them; under 1,000 since (code and V8's feedback, not per tool).
    expect(result.grewKiB).toBeLessThan(4000);
  }, 60_000);
});
