// importSnapshot validates the whole snapshot, then writes it entry by entry, building each
// spec text as it goes, inside its one transaction (issue 12). A failure or a crash while a
// late part is written leaves nothing of the import, and what was there before intact.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import { fullSpec } from '../support/registry-helpers.js';
import { dumpDatabase, spawnWorker, useTempFolder } from './helpers.js';

const temp = useTempFolder();

describe('an import of several chunks', () => {
  it('a write failing in the third chunk rolls the whole import back', async () => {
    const file = temp.file('failing.db');
    const db = new Database(file);
    const registry = await openSqliteToolRegistry({ database: db });
    try {
      await registry.register(fullSpec('kept', '1'));
      // SQLite itself refuses the 2,501st row: the first two chunks are written by then.
      db.exec(`CREATE TEMP TRIGGER refuse AFTER INSERT ON main.tool_registrations
               WHEN NEW.tool_name = 'bulk_2500' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`);
      const before = dumpDatabase(file);
      const tools = Array.from({ length: 3000 }, (_, i) => ({ spec: fullSpec(`bulk_${i}`, '1') }));
      const error = await registry.importSnapshot({ tools }, { mode: 'replace' }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect((error as { code?: unknown } | undefined)?.code).toBe('SQLITE_CONSTRAINT_TRIGGER');
      expect(dumpDatabase(file)).toEqual(before);
      expect((await registry.listAll()).map((one) => one.spec.tool_name)).toEqual(['kept']);
      // The registry is usable afterwards: the same import succeeds without the trigger.
      db.exec('DROP TRIGGER temp.refuse');
      expect(await registry.importSnapshot({ tools }, { mode: 'replace' })).toMatchObject({ added: 3000, removed: 1 });
    } finally {
      await registry.close();
      db.close();
    }
  });

  it('a child killed with SIGKILL while it writes the fourth chunk leaves none of the import', async () => {
    const BEFORE = 5;
    const COUNT = 5000;
    for (const [index, delay] of [0, 100].entries()) {
      const file = temp.file(`killed-${index}.db`);
      // A TEMP trigger in the child announces the 3,500th row and holds the transaction open.
      const worker = spawnWorker({ file, action: 'import', before: BEFORE, count: COUNT, announceAt: 'bulk_003500', pauseMs: 5000 });
      await worker.next('in-batch');
      await new Promise((resolve) => setTimeout(resolve, delay));
      worker.child.kill('SIGKILL');
      expect((await worker.exited).signal).toBe('SIGKILL');
      const db = new Database(file);
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(db.prepare("SELECT count(*) FROM tool_registrations WHERE tool_name LIKE 'bulk%'").pluck().get()).toBe(0);
        expect(db.prepare("SELECT count(*) FROM tool_specs WHERE tool_name LIKE 'bulk%'").pluck().get()).toBe(0);
        expect(db.prepare("SELECT count(*) FROM tool_registrations WHERE tool_name LIKE 'before%'").pluck().get()).toBe(BEFORE);
      } finally {
        db.close();
      }
      const registry = await openSqliteToolRegistry({ filename: file });
      expect((await registry.verify()).ok).toBe(true);
      expect((await registry.status()).tools).toBe(BEFORE);
      await registry.close();
    }
  }, 180_000);
});
