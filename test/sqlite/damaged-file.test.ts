// A file damaged after it was written: verify() exists to find that, so it reports it.
import { describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import { damagePages } from '../support/damaged-file.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { useTempFolder } from './helpers.js';

const folder = useTempFolder();

describe('verify() on a damaged file', () => {
  it('reports an integrity problem (ok: false) instead of throwing SQLite\'s SQLITE_CORRUPT', async () => {
    const filename = folder.file('damaged.db');
    const writer = await openSqliteToolRegistry({ filename });
    await writer.registerMany(Array.from({ length: 2000 }, (_, i) => ({ ...minimalSpec(`tool_${i}`), description: 'x'.repeat(200) })));
    await writer.close();
    damagePages(filename);

    const registry = await openSqliteToolRegistry({ filename, readonly: true });
    try {
      const report = await registry.verify();
      expect(report.ok).toBe(false);
      expect(report.problems.map((problem) => problem.kind)).toContain('integrity');
    } finally {
      await registry.close();
    }
  });
});
