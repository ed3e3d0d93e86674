// Helpers for the SQLite tests: temporary folders, child processes running
// test/fixtures/sqlite-worker.mjs against dist/ (built by `npm test`'s pretest), and raw
// dumps of a database file for before/after comparisons.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach } from 'vitest';
import { shippedMigrations } from '../../src/stores/sqlite/migrations.js';

const WORKER = fileURLToPath(new URL('../fixtures/sqlite-worker.mjs', import.meta.url));
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

export interface WorkerMessage {
  readonly event: 'ready' | 'importing' | 'registering' | 'in-batch' | 'done';
  readonly ok?: boolean;
  readonly result?: unknown;
  readonly error?: { name?: string; code?: string; message: string; causeCode?: string };
}

export interface Worker {
  readonly child: ChildProcess;
  /** Resolves with the first message of this event (rejects if the child exits first). */
  next(event: WorkerMessage['event']): Promise<WorkerMessage>;
  /** Resolves when the process has exited, with its exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly stderr: () => string;
}

/** Runs the worker on `job`; `nodeFlags` go to node itself (such as a heap limit). */
export function spawnWorker(job: Record<string, unknown>, nodeFlags: readonly string[] = []): Worker {
  if (!existsSync(DIST)) throw new Error(`build first: ${DIST} is missing (npx tsc -p tsconfig.json)`);
  const child = spawn(process.execPath, [...nodeFlags, WORKER, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const messages: WorkerMessage[] = [];
  const waiters: { event: string; resolve: (m: WorkerMessage) => void; reject: (e: Error) => void }[] = [];
  let stderr = '';
  let buffer = '';
  let ended = false;
  const flush = () => {
    for (const waiter of [...waiters]) {
      const found = messages.find((m) => m.event === waiter.event);
      if (found !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(found);
      } else if (ended) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.reject(new Error(`worker exited before "${waiter.event}"; stderr: ${stderr}`));
      }
    }
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      messages.push(JSON.parse(buffer.slice(0, newline)) as WorkerMessage);
      buffer = buffer.slice(newline + 1);
    }
    flush();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      ended = true;
      flush();
      resolve({ code, signal });
    });
  });
  return {
    child,
    exited,
    stderr: () => stderr,
    next: (event) =>
      new Promise((resolve, reject) => {
        waiters.push({ event, resolve, reject });
        flush();
      }),
  };
}

/**
 * Starts `jobs` as child processes, waits until every one is ready, then releases them at
 * once through a start file, and returns each one's "done" message in job order.
 */
export async function raceWorkers(goFile: string, jobs: readonly Record<string, unknown>[]): Promise<WorkerMessage[]> {
  const workers = jobs.map((job) => spawnWorker({ ...job, go: goFile }));
  await Promise.all(workers.map((worker) => worker.next('ready')));
  writeFileSync(goFile, 'go');
  const done = await Promise.all(workers.map((worker) => worker.next('done')));
  await Promise.all(workers.map((worker) => worker.exited));
  return done;
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
