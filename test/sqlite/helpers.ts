// Helpers for the SQLite tests: temporary folders, child processes running
// test/fixtures/sqlite-worker.mjs against dist/ (built by `npm test`'s pretest), and raw
// dumps of a database file for before/after comparisons.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach } from 'vitest';
import { shippedMigrations } from '../../src/stores/sqlite/migrations.js';
import { openSqliteToolRegistry } from '../../src/index.js';
import type { ProcessStore } from '../support/feed-processes.js';
import { killWorkersAfterEach, raceScripts, runPooled, spawnScript } from '../support/workers.js';
import type { Worker, WorkerMessage } from '../support/workers.js';

export type { Worker, WorkerMessage };

const WORKER = fileURLToPath(new URL('../fixtures/sqlite-worker.mjs', import.meta.url));
const CACHE_WRITER = fileURLToPath(new URL('../fixtures/cache-writer.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

/** Names of the migrations this release ships, in order (tests compare against these, not literals). */
export const SHIPPED = shippedMigrations().map((migration) => migration.name);
/** The newest shipped migration: what `status().schemaVersion` reports. */
export const LATEST = SHIPPED.at(-1);

/** A fresh temporary folder per test (vitest hooks); `file(name)` is a path inside it. */
export function useTempFolder(): { file: (name: string) => string } {
  let current: ReturnType<typeof tempFolder> | undefined;
  beforeEach(() => {
    current = tempFolder();
  });
  afterEach(() => {
    current?.cleanup();
    current = undefined;
  });
  return {
    file: (name) => {
      if (current === undefined) throw new Error('useTempFolder(): only inside a test');
      return current.file(name);
    },
  };
}

/** A temporary folder, removed by the returned cleanup. */
export function tempFolder(): { folder: string; file: (name: string) => string; cleanup: () => void } {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-sqlite-'));
  return { folder, file: (name) => join(folder, name), cleanup: () => rmSync(folder, { recursive: true, force: true }) };
}

/** Runs the SQLite worker on `job`; `nodeFlags` go to node itself (such as a heap limit). */
export function spawnWorker(job: Record<string, unknown>, nodeFlags: readonly string[] = []): Worker {
  if (!existsSync(DIST)) throw new Error(`build first: ${DIST} is missing (npm run build)`);
  return spawnScript(WORKER, job, nodeFlags);
}

/**
 * Applies `operations` to `file` in another process (test/fixtures/cache-writer.mjs, cache off)
 * and resolves with their results once it has committed and closed the file. The process is
 * pooled (runPooled): a live one of an earlier call, so each call costs a commit, not a node
 * start (about half a second of CPU each, twelve calls in the read-cache tests).
 */
export async function inAnotherProcess(file: string, operations: unknown[]): Promise<unknown[]> {
  if (!existsSync(DIST)) throw new Error(`build first: ${DIST} is missing (npm run build)`);
  const done = await runPooled(CACHE_WRITER, { file, operations }).next('done');
  if (done.ok !== true) throw new Error(`the other process failed: ${JSON.stringify(done.error)}`);
  return done.result as unknown[];
}

/**
 * Runs `jobs` on SQLite worker processes, one each (pooled: see raceScripts), waits until every one is ready, then releases them at
 * once through a start file, and returns each one's "done" message in job order.
 */
export function raceWorkers(goFile: string, jobs: readonly Record<string, unknown>[], onSpawn?: (worker: Worker) => void): Promise<WorkerMessage[]> {
  if (!existsSync(DIST)) throw new Error(`build first: ${DIST} is missing (npm run build)`);
  return raceScripts(WORKER, goFile, jobs, onSpawn);
}

/**
 * The SQLite store for the process suites of test/support/feed-processes.ts: each store a
 * fresh file in this test's temporary folder; workers still running after a test are killed.
 */
export function useSqliteProcessStore(): ProcessStore {
  const temp = useTempFolder();
  const track = killWorkersAfterEach();
  let files = 0;
  return {
    name: 'SQLite',
    async create() {
      const file = temp.file(`store-${++files}.db`);
      await (await openSqliteToolRegistry({ filename: file })).close();
      return { file, openFirst: true };
    },
    open: (at, options = {}) => openSqliteToolRegistry({ filename: at.file as string, ...options }),
    spawn: (job) => track(runPooled(WORKER, job)),
    spawnProcess: (job) => track(spawnWorker(job)),
    race: (jobs) => raceWorkers(temp.file(`go-${++files}`), jobs, track),
  };
}

/** The schema (sqlite_master) and every row of every table, for before/after comparisons. */
export function dumpDatabase(file: string): { schema: unknown[]; rows: Record<string, unknown[]> } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const schema = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all();
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .pluck()
      .all() as string[];
    const rows: Record<string, unknown[]> = {};
    for (const table of tables) {
      const columns = db.pragma(`table_info("${table}")`) as { cid: number }[];
      const order = columns.map((column) => column.cid + 1).join(', ');
      rows[table] = db.prepare(`SELECT * FROM "${table}" ORDER BY ${order}`).all();
    }
    return { schema, rows };
  } finally {
    db.close();
  }
}

/**
 * Makes the COMMIT of any transaction that registers a tool named `poison*` fail
 * (SQLITE_CONSTRAINT_FOREIGNKEY: a deferred foreign key is checked at COMMIT), whoever else
 * is in it. The file must already hold the registry's schema.
 */
export function poisonCommits(file: string): void {
  const db = new Database(file);
  try {
    db.exec(`
      CREATE TABLE poison_parent (name TEXT PRIMARY KEY);
      CREATE TABLE poison_child (name TEXT REFERENCES poison_parent (name) DEFERRABLE INITIALLY DEFERRED);
      CREATE TRIGGER poison AFTER INSERT ON tool_registrations WHEN NEW.tool_name LIKE 'poison%'
      BEGIN INSERT INTO poison_child VALUES (NEW.tool_name); END;`);
  } finally {
    db.close();
  }
}
