// Helpers for the PostgreSQL tests: this file's own database on the run's server, pools
// that are ended after each test, and child processes running test/fixtures/pg-worker.mjs
// against dist/ (built by `npm test`'s pretest).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { shippedMigrations } from '../../src/stores/postgres/migrations.js';
import { createTestDatabase, uniqueName } from '../support/postgres.js';
import type { TestDatabase } from '../support/postgres.js';
import type { ProcessStore } from '../support/feed-processes.js';
import { killWorkersAfterEach, raceScripts, runPooled, spawnScript } from '../support/workers.js';
import type { Worker, WorkerMessage } from '../support/workers.js';

const WORKER = fileURLToPath(new URL('../fixtures/pg-worker.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

/** Names of the PostgreSQL migrations this release ships, in order. */
export const SHIPPED = shippedMigrations().map((migration) => migration.name);

export interface FileDatabase {
  /** The URL of this file's database (only inside hooks and tests). */
  url(): string;
  /** A pool on this file's database, ended after the current test. */
  pool(config?: Omit<pg.PoolConfig, 'connectionString'>): pg.Pool;
  /** A fresh schema name, unique in this file. */
  schema(): string;
}

/** Creates a database for this test file (dropped after it) and tracks the pools tests open. */
export function useFileDatabase(): FileDatabase {
  let database: TestDatabase | undefined;
  const pools: pg.Pool[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.end()));
  });
  afterAll(async () => {
    await database?.drop();
  });
  const url = (): string => {
    if (database === undefined) throw new Error('useFileDatabase(): only inside hooks and tests');
    return database.url;
  };
  return {
    url,
    pool(config = {}) {
      const pool = new pg.Pool({ connectionString: url(), ...config });
      // An idle connection the server ends must not crash the test process.
      pool.on('error', () => {});
      pools.push(pool);
      return pool;
    },
    schema: () => uniqueName('s'),
  };
}

/** A temporary folder for start files, removed by cleanup(). */
export function tempFolder(): { file: (name: string) => string; cleanup: () => void } {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-pg-test-'));
  return { file: (name) => join(folder, name), cleanup: () => rmSync(folder, { recursive: true, force: true }) };
}

/** Runs each job on its own PostgreSQL worker process (pooled: see raceScripts), releases them at once, returns each "done" message. */
export async function racePgWorkers(jobs: readonly Record<string, unknown>[], onSpawn?: (worker: Worker) => void): Promise<WorkerMessage[]> {
  if (!existsSync(DIST)) throw new Error(`build first: ${DIST} is missing (npm run build)`);
  const temp = tempFolder();
  try {
    return await raceScripts(WORKER, temp.file('go'), jobs, onSpawn);
  } finally {
    temp.cleanup();
  }
}

/** Starts one PostgreSQL worker on `job` (no start file: it runs as soon as it is ready). */
export function spawnPgWorker(job: Record<string, unknown>): Worker {
  if (!existsSync(DIST)) throw new Error(`build first: ${DIST} is missing (npm run build)`);
  return spawnScript(WORKER, job);
}

/** `url` with `application_name` set, so its connections can be told apart in pg_stat_activity. */
export function withAppName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}

/**
 * The PostgreSQL store for the process suites of test/support/feed-processes.ts: each store a
 * fresh schema of this file's database; workers still running after a test are killed.
 */
export function usePgProcessStore(db: FileDatabase): ProcessStore {
  const track = killWorkersAfterEach();
  // This process's registries share one pool per test (db.pool() ends it after the test): a
  // connection costs the server about 30 ms of CPU, and a registry on a pool of its own opened
  // two (docs/testing.md, twelfth round). The workers keep their own, as other processes do.
  let pool: pg.Pool | undefined;
  afterEach(() => {
    pool = undefined;
  });
  const testPool = (): pg.Pool => (pool ??= db.pool());
  return {
    name: 'PostgreSQL',
    async create() {
      const schema = db.schema();
      // Only migrates: no read cache, so no LISTEN connection.
      await (await openPostgresToolRegistry({ pool: testPool(), schema, cache: false })).close();
      return { url: db.url(), schema };
    },
    open: (at, options = {}) => openPostgresToolRegistry({ pool: testPool(), schema: at.schema as string, ...options }),
    spawn: (job) => track(runPooled(WORKER, job)),
    spawnProcess: (job) => track(spawnPgWorker(job)),
    race: (jobs) => racePgWorkers(jobs, track),
  };
}
