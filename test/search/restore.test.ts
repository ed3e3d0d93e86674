// Search after a restore (issue 26): a backup of another file restored onto the live SQLite
// file hands the same revisions out again for other changes, so the index, which follows the
// log from its revision, must notice that the log was replaced (the watch's marks) and build
// anew, rather than keep tools the restored file does not hold; also when the restored log is
// at the very revision the index reflects (the revision before each search carries the mark).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';

const tool = (name: string, version: string) => ({ tool_name: name, version, description: `${name} weather`, input_schema: {}, output_schema: {} });

describe('search over a SQLite file restored in place', () => {
  let folder: string;
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'search-restore-'));
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  // Another file of 3 changes (the index is at 2: one event after it), or of 2 (the very revision the index reflects).
  it.each([
    [true, 3],
    [false, 3],
    [true, 2],
    [false, 2],
  ])('finds what the restored file holds, not what the index held (cache %s, the restored log at revision %i)', async (cache, changes) => {
    const file = join(folder, 'live.db');
    const other = join(folder, 'other.db');
    const registry = await openSqliteToolRegistry({ filename: file, cache });
    try {
      await registry.register(tool('a', '1.0.0'));
      await registry.register(tool('b', '1.0.0'));
      expect((await registry.search('weather')).results).toHaveLength(2); // the index, at revision 2
      const elsewhere = await openSqliteToolRegistry({ filename: other, cache: false });
      await elsewhere.register(tool('a', '9.0.0'));
      await elsewhere.register(tool('c', '1.0.0'));
      if (changes === 3) await elsewhere.register(tool('d', '1.0.0'));
      await elsewhere.close();
      const restorer = new Database(other);
      await restorer.backup(file);
      restorer.close();

      const listed = (await registry.listAll()).map((registration) => `${registration.spec.tool_name}@${registration.spec.version}`);
      expect(listed).toEqual(['a@9.0.0', 'c@1.0.0', 'd@1.0.0'].slice(0, changes));
      const found = (await registry.search('weather')).results.map(({ registration }) => `${registration.spec.tool_name}@${registration.spec.version}`);
      expect(found.sort()).toEqual(listed);
    } finally {
      await registry.close();
    }
  });
});

describe("search inside the caller's transaction on its own SQLite handle", () => {
  it('reads the transaction as get() does (it hung), and after a ROLLBACK finds only what was committed', async () => {
    const db = new Database(':memory:');
    const registry = await openSqliteToolRegistry({ database: db });
    const names = async (): Promise<string[]> => (await registry.search('weather')).results.map(({ registration }) => registration.spec.tool_name).sort();
    try {
      await registry.register(tool('a', '1.0.0'));
      expect(await names()).toEqual(['a']);
      db.exec('BEGIN');
      await registry.register(tool('b', '1.0.0'));
      expect(await names()).toEqual(['a', 'b']);
      db.exec('ROLLBACK');
      expect(await names()).toEqual(['a']);
      // The revision b had is handed out again, for c.
      await registry.register(tool('c', '1.0.0'));
      expect(await names()).toEqual(['a', 'c']);
    } finally {
      await registry.close();
      db.close();
    }
  });
});
