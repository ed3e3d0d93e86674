// The stores the conformance suite runs against, in one typed record. A new store is one
// entry here: `open` returns a fresh, empty, isolated registry; `restart` closes a registry
// and reopens the same storage (or, for a store that cannot outlive its instance, returns
// it unchanged). STORES=memory,sqlite-file narrows the run.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryToolRegistry, openSqliteToolRegistry } from '../../src/index.js';
import type { ToolRegistry } from '../../src/index.js';

export interface HarnessOptions {
  readonly clock?: () => Date;
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
}

/**
 * A harness for a store kept in a file: each `open()` gets a new file in one temporary
 * folder, `restart()` closes and reopens that file with the same options, `cleanup()`
 * deletes the folder. `openAt` opens (creating if needed) the store at `filename`.
 */
export function fileBackedHarness(
  openAt: (filename: string, options: HarnessOptions) => Promise<ToolRegistry>,
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
      folder ??= await mkdtemp(join(tmpdir(), 'tool-registry-conformance-'));
      files += 1;
      return openFile(join(folder, `store-${files}.db`), options);
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
  'sqlite-file': fileBackedHarness((filename, options) => openSqliteToolRegistry({ filename, ...options })),
  // The same file store with its read cache off (on by default): both must pass everything.
  'sqlite-file-nocache': fileBackedHarness((filename, options) => openSqliteToolRegistry({ filename, cache: false, ...options })),
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
