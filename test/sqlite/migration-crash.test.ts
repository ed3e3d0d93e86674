// kill -9 while a brand-new file is being migrated: the next open must finish the job.
// Each migration is its own transaction, so a kill leaves some prefix of them applied
// (or none, or an empty file); the store must open any such file, apply the rest, and
// leave a database that is whole and writable.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { spawnScript } from '../support/workers.js';
import { SHIPPED, useTempFolder } from './helpers.js';

const temp = useTempFolder();
const LOOP = fileURLToPath(new URL('../fixtures/migrate-loop.mjs', import.meta.url));
const KILLS = 8;

/** Migrations recorded in a file, read without the store (-1: no migrations table yet). */
function appliedCount(file: string): number {
  const db = new Database(file);
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").get();
    return table === undefined ? -1 : (db.prepare('SELECT count(*) FROM schema_migrations').pluck().get() as number);
  } finally {
    db.close();
  }
}

describe('SIGKILL during the first migration of a new file', () => {
  it('leaves a file that the next open migrates to the end: whole, WAL, writable', async () => {
    const dir = dirname(temp.file('probe'));
    const found: number[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      const prefix = join(dir, `kill${kill}`);
      const worker = spawnScript(LOOP, { prefix });
      // Let it migrate two files whole and time the second, then kill it at a point of the
      // third that moves through that time from kill to kill. A fixed delay after start-up
      // once landed before the first file existed on a loaded machine.
      await worker.next('file', (message) => message.index === 1);
      const second = performance.now();
      await worker.next('file', (message) => message.index === 2);
      const perFile = performance.now() - second;
      await new Promise((resolve) => setTimeout(resolve, (perFile * (kill + 0.5)) / KILLS));
      worker.child.kill('SIGKILL');
      expect((await worker.exited).signal).toBe('SIGKILL');

      const files = readdirSync(dir).filter((name) => name.startsWith(`kill${kill}-`) && name.endsWith('.db'));
      expect(files.length).toBeGreaterThan(0);
      const last = join(dir, `kill${kill}-${files.length - 1}.db`);
      expect(existsSync(last)).toBe(true);
      found.push(appliedCount(last));

      for (const name of files) {
        const file = join(dir, name);
        const registry = await openSqliteToolRegistry({ filename: file });
        expect((await registry.status()).appliedMigrations).toEqual(SHIPPED);
        await registry.register(minimalSpec('after_crash'));
        expect((await registry.changes()).events.map((event) => [event.action, event.tool_name])).toEqual([['added', 'after_crash']]);
        await registry.close();
        const db = new Database(file, { readonly: true });
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
        expect(db.prepare('SELECT name FROM schema_migrations ORDER BY name').pluck().all()).toEqual(SHIPPED);
        db.close();
      }
    }
    // The kills must have landed inside a migration run at least once (fewer than all
    // recorded in the newest file), or this test proved nothing about it.
    expect(found.some((count) => count < SHIPPED.length), `migrations recorded at each kill: ${found.join(', ')}`).toBe(true);
  }, 180_000);
});
