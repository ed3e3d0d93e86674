// The stores the conformance suite runs against, in one typed record. A new store is one
// entry here: `open` returns a fresh, empty, isolated registry; `restart` closes a registry
// and reopens the same storage (or, for a store that cannot outlive its instance, returns
// it unchanged). STORES=memory,sqlite-file narrows the run.
import { accessSync, constants, statSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { InMemoryToolRegistry, openPostgresToolRegistry, openSqliteToolRegistry } from '../../src/index.js';
import type { CallRetention, PostgresToolRegistryOptions, SqliteToolRegistryOptions, ToolRegistry } from '../../src/index.js';
import { createTestDatabase, uniqueName } from '../support/postgres.js';
import type { TestDatabase } from '../support/postgres.js';

export interface HarnessOptions {
  readonly clock?: () => Date;
  readonly callRetention?: Partial<CallRetention>;
}

export interface StoreHarness {
  /** A fresh, empty registry that shares nothing with any other `open()`. */
  open(options?: HarnessOptions): Promise<ToolRegistry>;
  /** Closes `registry` and reopens the same storage with the same options; a store without durable storage returns `registry` unchanged. */
  restart(registry: ToolRegistry): Promise<ToolRegistry>;
  /**
   * Another registry over the same storage, open at the same time (its own connection and
   * cache), for the concurrency cases; a store whose storage cannot be shared returns
   * `registry` itself, and its calls interleave at their awaits.
   */
  peer(registry: ToolRegistry): Promise<ToolRegistry>;
  /** Removes whatever `open()` left on disk; called once after the store's suite. */
  cleanup?(): Promise<void>;
  /**
   * Called after each test of the suite: closes every registry the test opened, and may keep
   * their storage for a later `open()` once it is exactly as a fresh one would be.
   */
  recycle?(): Promise<void>;
}

/**
 * Where the file stores' folders go: /dev/shm (memory) where there is one to write in, else
 * the system's temporary folder. The suite tests what a store does, not the disk under it
 * (test/sqlite tests syncs, kills and full disks on the real one); on this machine's disk the
 * two SQLite file stores' conformance and model runs took 31.9 CPU-s and 98 s, on /dev/shm
 * 26.5 CPU-s and 68 s (docs/testing.md, eleventh round).
 */
function scratchRoot(): string {
  try {
    if (!statSync('/dev/shm').isDirectory()) return tmpdir();
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

/**
 * A harness for a store kept in a file: each `open()` gets a new file in one temporary
 * folder (under scratchRoot()), `restart()` closes and reopens that file with the same options, `cleanup()`
 * deletes the folder. `openAt` opens (creating if needed) the store at `filename`;
 * `newFile`, if given, makes the file before `openAt` opens it (the harness's folder and the
 * name it will have), such as a copy of an empty, migrated one.
 */
export function fileBackedHarness(
  openAt: (filename: string, options: HarnessOptions) => Promise<ToolRegistry>,
  newFile?: (folder: string, filename: string) => Promise<void>,
): StoreHarness {
  let folder: string | undefined;
  let files = 0;
  const opened = new WeakMap<ToolRegistry, { filename: string; options: HarnessOptions }>();
  const openFile = async (filename: string, options: HarnessOptions): Promise<ToolRegistry> => {
    const registry = await openAt(filename, options);
    opened.set(registry, { filename, options });
    return registry;
  };
  return {
    async open(options = {}) {
      folder ??= await mkdtemp(join(scratchRoot(), 'tool-registry-conformance-'));
      files += 1;
      const filename = join(folder, `store-${files}.db`);
      await newFile?.(folder, filename);
      return openFile(filename, options);
    },
    async restart(registry) {
      const where = opened.get(registry);
      if (where === undefined) throw new Error('restart(): this registry was not opened by this harness');
      await registry.close();
      return openFile(where.filename, where.options);
    },
    async peer(registry) {
      const where = opened.get(registry);
      if (where === undefined) throw new Error('peer(): this registry was not opened by this harness');
      return openFile(where.filename, where.options);
    },
    async cleanup() {
      if (folder !== undefined) await rm(folder, { recursive: true, force: true });
      folder = undefined;
    },
  };
}

/**
 * The tables of a store's schema and how `recycle` empties each, in an order the foreign keys
 * allow; the one-row head goes back to revision 0 with new tokens, as a fresh schema starts.
 * A table missing here makes `recycle` throw (a new migration's table must be added); null
 * keeps a table as it is (the applied migrations).
 */
const RESET_STATEMENTS: Record<string, string | null> = {
  tool_deprecations: 'DELETE FROM %s.tool_deprecations',
  tool_registrations: 'DELETE FROM %s.tool_registrations',
  tool_specs: 'DELETE FROM %s.tool_specs',
  tool_changes: 'DELETE FROM %s.tool_changes',
  tool_registry_policy: 'DELETE FROM %s.tool_registry_policy',
  tool_upstreams: 'DELETE FROM %s.tool_upstreams',
  // Ids start at 1 again, as in a fresh schema. Not TRUNCATE: it makes new files for the table
  // and its indexes and sends every backend an invalidation, for a table most cases leave empty.
  tool_calls: "DELETE FROM %s.tool_calls; SELECT setval(pg_get_serial_sequence('%s.tool_calls', 'id'), 1, false)",
  tool_registry_head: 'UPDATE %s.tool_registry_head SET revision = 0, token = gen_random_uuid()::text, generation = gen_random_uuid()::text',
  schema_migrations: null,
};

/**
 * A harness for the PostgreSQL store on the run's server: one database for the test file
 * (created at the first `open()`, dropped by `cleanup()`), a new schema per `open()` unless
 * `recycle()` emptied one that an earlier case used.
 * `open()` and `restart()` hand the store the file's one pool (the `pool` option: `close()`
 * leaves it open), so a registry does not pay for a connection of its own: a connection costs
 * the server a process (~25-35 ms of CPU on this 2-core machine), and a registry on its own pool
 * opens at least two. The registries on that pool share one LISTEN connection, which a
 * registry of the harness's own holds open for the file (the store closes it with the last
 * registry on it, so each case would open one); each registry has its own cache. `peer()`
 * opens the same schema again as another instance with its own pool, listener and cache
 * (`connectionString`), so the concurrency cases also run the store's own pool.
 */
export function postgresHarness(extra: Partial<PostgresToolRegistryOptions> = {}): StoreHarness {
  let database: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  let keeper: ToolRegistry | undefined;
  const opened = new WeakMap<ToolRegistry, { schema: string; options: HarnessOptions }>();
  // A fresh schema's migrations cost about 75 ms of server CPU, most of a conformance case:
  // after each case its schemas are emptied to the state migrations leave, and reused.
  const openedInTest = new Map<string, ToolRegistry[]>();
  const reusable: string[] = [];
  const openSchema = async (schema: string, options: HarnessOptions, ownPool: boolean): Promise<ToolRegistry> => {
    database ??= await createTestDatabase();
    if (pool === undefined) {
      pool = new pg.Pool({ connectionString: database.url, max: 20 });
      // An idle connection the server ends (a test that terminates backends) must not crash the run.
      pool.on('error', () => {});
      // A registry on a schema of its own, open for the file: it holds the pool's shared LISTEN connection.
      keeper = await openPostgresToolRegistry({ pool, schema: uniqueName('keeper') });
    }
    const connection = ownPool ? { connectionString: database.url } : { pool };
    const registry = await openPostgresToolRegistry({ ...connection, schema, ...extra, ...options });
    opened.set(registry, { schema, options });
    openedInTest.set(schema, [...(openedInTest.get(schema) ?? []), registry]);
    return registry;
  };
  const where = (registry: ToolRegistry, method: string) => {
    const found = opened.get(registry);
    if (found === undefined) throw new Error(`${method}(): this registry was not opened by this harness`);
    return found;
  };
  return {
    open: (options = {}) => openSchema(reusable.pop() ?? uniqueName('conformance'), options, false),
    async restart(registry) {
      const { schema, options } = where(registry, 'restart');
      await registry.close();
      return openSchema(schema, options, false);
    },
    async peer(registry) {
      const { schema, options } = where(registry, 'peer');
      return openSchema(schema, options, true);
    },
    async recycle() {
      const schemas = [...openedInTest];
      openedInTest.clear();
      for (const [schema, registries] of schemas) {
        for (const registry of registries) await registry.close();
        const client = await pool!.connect();
        try {
          const tables = await client.query<{ name: string }>('SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY 1', [schema]);
          const unknown = tables.rows.map((row) => row.name).filter((name) => !(name in RESET_STATEMENTS));
          if (unknown.length > 0) throw new Error(`recycle(): no reset for table(s) ${unknown.join(', ')} of ${schema}: add them to RESET_STATEMENTS`);
          const quoted = `"${schema}"`;
          // One message (the simple protocol runs the statements in order and stops at the
          // first error): one round trip instead of eleven, for every schema of every case.
          const resets = Object.values(RESET_STATEMENTS).flatMap((statement) => (statement === null ? [] : [statement.replaceAll('%s', quoted)]));
          await client.query(["BEGIN; SET LOCAL lock_timeout = '5s'", ...resets, 'COMMIT'].join('; '));
          reusable.push(schema);
        } catch (error) {
          await client.query('ROLLBACK').catch(() => {});
          throw error;
        } finally {
          client.release();
        }
      }
    },
    async cleanup() {
      // The harness is one object per store for the whole worker (files share modules): what
      // another file opened on the database dropped below (the model test, which does not
      // recycle) must not be recycled by the next file on a new one.
      openedInTest.clear();
      reusable.length = 0;
      // Before the database goes: its listener would keep reconnecting.
      await keeper?.close();
      keeper = undefined;
      await pool?.end();
      pool = undefined;
      await database?.drop();
      database = undefined;
    },
  };
}

/**
 * The SQLite store in files (fileBackedHarness), each new one a copy of a migrated template
 * (sqliteTemplateCopy); `extra` goes to every open.
 */
export function sqliteFileHarness(extra: Partial<SqliteToolRegistryOptions> = {}): StoreHarness {
  return fileBackedHarness((filename, options) => openSqliteToolRegistry({ filename, ...extra, ...options }), sqliteTemplateCopy());
}

/**
 * Makes `filename` a fresh SQLite registry as a copy of one the store created and migrated
 * once in `folder` (the first call makes it): a new file's migrations cost ~15-20 ms of CPU and
 * ~50-100 ms of wall time (the syncs) per `open()`, a copy about half the CPU and a third of
 * the wall time. The copy gets its own change-log generation, the one value a fresh file draws
 * at random (migration 0003), so no two files share one. The store still migrates a new file here once per harness and
 * file, and test/sqlite/migrations.test.ts tests the migrations themselves.
 */
function sqliteTemplateCopy(): (folder: string, filename: string) => Promise<void> {
  const templates = new Map<string, Promise<string>>();
  const template = (folder: string): Promise<string> => {
    let made = templates.get(folder);
    if (made === undefined) {
      const file = join(folder, 'template.db');
      made = openSqliteToolRegistry({ filename: file }).then(async (registry) => {
        await registry.close();
        return file;
      });
      templates.set(folder, made);
    }
    return made;
  };
  return async (folder, filename) => {
    // Closed by the store, the template is one file (the -wal checkpointed and removed).
    await copyFile(await template(folder), filename);
    const db = new Database(filename);
    try {
      // A test file: no sync needed for this one write.
      db.pragma('synchronous = OFF');
      db.prepare('UPDATE tool_changes_generation SET generation = lower(hex(randomblob(16)))').run();
    } finally {
      db.close();
    }
  };
}

export const storeHarnesses = {
  memory: {
    open: async (options = {}) => new InMemoryToolRegistry(options),
    // Memory cannot survive a restart; the same instance keeps the data.
    restart: async (registry) => registry,
    peer: async (registry) => registry,
  },
  'sqlite-memory': {
    open: async (options = {}) => openSqliteToolRegistry({ filename: ':memory:', ...options }),
    // A ':memory:' database ends with its connection; the same instance keeps the data.
    restart: async (registry) => registry,
    peer: async (registry) => registry,
  },
  'sqlite-file': sqliteFileHarness(),
  // The same file store with its read cache off (on by default): both must pass everything.
  'sqlite-file-nocache': sqliteFileHarness({ cache: false }),
  postgres: postgresHarness(),
  // The PostgreSQL store with its read cache off (on by default): both must pass everything.
  'postgres-nocache': postgresHarness({ cache: false }),
} satisfies Record<string, StoreHarness>;

export type StoreName = keyof typeof storeHarnesses;

/** The stores to run: all of them, or those named in `STORES` (comma-separated); an unknown name is an error. */
export function selectedStores(filter: string | undefined = process.env.STORES): [StoreName, StoreHarness][] {
  const all = Object.entries(storeHarnesses) as [StoreName, StoreHarness][];
  if (filter === undefined || filter.trim() === '') return all;
  const wanted = filter.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknown = wanted.filter((name) => !(name in storeHarnesses));
  if (unknown.length > 0) {
    throw new Error(`STORES names unknown store(s) ${unknown.join(', ')}; known: ${Object.keys(storeHarnesses).join(', ')}`);
  }
  return all.filter(([name]) => wanted.includes(name));
}
