// Namespaces (tenants): each is its own registry. A source opens them on demand: in memory,
// one SQLite file each in a folder, or one PostgreSQL schema each (so every server of a fleet
// finds the namespaces another created). The folder and the schemas keep at most `maxOpen`
// open, closing the least recently used one that nothing holds.
import { existsSync } from 'node:fs';
import { mkdir, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { InMemoryToolRegistry, ReadOnlyError, StorageUnavailableError, ToolRegistryError, isConnectionFailure, openPostgresToolRegistry, openSqliteToolRegistry } from '../index.js';
import type { CallRetention, ToolRegistry } from '../index.js';
import { nodePostgres } from '../node-postgres.js';
import { LIMIT_RETRY_AFTER_SECONDS, defaultLimits, refuseNearFileLimit } from './limits.js';
import { HttpProblem } from './problems.js';
import { NAMESPACE_PATTERN } from './tokens.js';

/** PostgreSQL's longest identifier, in bytes (schema names are ASCII). */
const MAX_SCHEMA_LENGTH = 63;

/** The namespace of the unprefixed routes. */
export const DEFAULT_NAMESPACE = 'default';

/** Where the server finds each namespace's registry. */
export interface NamespaceSource {
  /** The registry of an existing namespace, or undefined (a name that passes the rule but was never created). */
  open(namespace: string): Promise<ToolRegistry | undefined>;
  /** Creates the namespace if needed; `created` is false when it existed. */
  create(namespace: string): Promise<{ registry: ToolRegistry; created: boolean }>;
  /** Every existing namespace, sorted. */
  list(): Promise<string[]>;
  /** Whether `create` can make new namespaces (false: a fixed set). */
  readonly extensible: boolean;
  /**
   * Marks a namespace in use (a request, an event stream, an MCP session) until the returned
   * function is called: a source that closes idle namespaces never closes one in use.
   */
  hold?(namespace: string): () => void;
  /** How many namespaces it keeps open at most (a source that closes idle ones); absent: no bound. */
  readonly maxOpen?: number;
  /** Closes every registry the source opened. */
  close(): Promise<void>;
}

/**
 * Opens each namespace once, even when requests ask for it concurrently, and keeps at most
 * `maxOpen` open: opening one more closes the least recently used one nothing holds (it is
 * opened again on its next request); when every open one is held, the new one is refused
 * (503 CAPACITY_EXCEEDED) rather than going past the bound.
 */
abstract class CachingSource implements NamespaceSource {
  /** In the order of last use: the first is the least recently used. */
  readonly #opened = new Map<string, Promise<ToolRegistry | undefined>>();
  readonly #ready = new Map<string, ToolRegistry>();
  readonly #holds = new Map<string, number>();
  readonly #maxOpen: number;
  readonly extensible: boolean = true;

  get maxOpen(): number {
    return this.#maxOpen;
  }

  constructor(maxOpen = defaultLimits().maxOpenNamespaces) {
    if (!Number.isSafeInteger(maxOpen) || maxOpen < 1) throw new TypeError(`maxOpen must be a whole number >= 1, got ${JSON.stringify(maxOpen)}`);
    this.#maxOpen = maxOpen;
  }

  protected abstract exists(namespace: string): Promise<boolean>;
  protected abstract openRegistry(namespace: string): Promise<ToolRegistry>;
  /**
   * Makes the namespace's storage, empty (its open migrates it), by one atomic step: true when
   * this call made it, false when it existed, so that of creations at once through several
   * servers only one says it created it (each one's `open` before can find it missing).
   */
  protected abstract make(namespace: string): Promise<boolean>;
  abstract list(): Promise<string[]>;

  open(namespace: string): Promise<ToolRegistry | undefined> {
    const known = this.#opened.get(namespace);
    if (known === undefined) return this.#load(namespace);
    this.#opened.delete(namespace);
    this.#opened.set(namespace, known);
    return known;
  }

  hold(namespace: string): () => void {
    this.#holds.set(namespace, (this.#holds.get(namespace) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#holds.get(namespace) ?? 1) - 1;
      if (left === 0) this.#holds.delete(namespace);
      else this.#holds.set(namespace, left);
    };
  }

  /** Takes the least recently used idle namespaces out (to be closed) until one more fits. @throws HttpProblem when none is idle */
  #makeRoom(namespace: string): ToolRegistry[] {
    const closing: ToolRegistry[] = [];
    while (this.#opened.size - (this.#opened.has(namespace) ? 1 : 0) >= this.#maxOpen) {
      const idle = [...this.#opened.keys()].find((ns) => this.#ready.has(ns) && !this.#holds.has(ns));
      if (idle === undefined) {
        // The limit, not a count: the count holds lookups under way too (a namespace that turns out
        // not to exist), and read "89 namespaces open" beside a limit of 64.
        throw new HttpProblem('CAPACITY_EXCEEDED', `the server's limit of open namespaces (--max-open-namespaces, ${this.#maxOpen}) is reached, each in use or opening; retry later`, {
          context: { limit: this.#maxOpen, resource: 'namespaces' },
          headers: { 'retry-after': String(LIMIT_RETRY_AFTER_SECONDS) },
        });
      }
      closing.push(this.#ready.get(idle) as ToolRegistry);
      this.#opened.delete(idle);
      this.#ready.delete(idle);
    }
    return closing;
  }

  /**
   * Opens the registry once (with `make`, makes it first); an absent or failed one is asked
   * again next time. Made only once there is room: a refusal (503) makes nothing.
   */
  #load(namespace: string, make?: () => Promise<unknown>): Promise<ToolRegistry | undefined> {
    const opening = (async () => {
      // A name that does not exist closes nothing.
      if (make === undefined && !(await this.exists(namespace))) return undefined;
      await Promise.allSettled(this.#makeRoom(namespace).map((registry) => registry.close()));
      // A namespace takes files (SQLite: three): refused while the process holds all but 16 of
      // its handles, which stay for new connections, /healthz and the namespaces already open.
      refuseNearFileLimit();
      await make?.();
      return this.openRegistry(namespace);
    })();
    this.#opened.set(namespace, opening);
    const forget = (): void => {
      if (this.#opened.get(namespace) === opening) this.#opened.delete(namespace);
    };
    opening.then((registry) => {
      if (registry === undefined) forget();
      else if (this.#opened.get(namespace) === opening) this.#ready.set(namespace, registry);
    }, forget);
    return opening;
  }

  async create(namespace: string): Promise<{ registry: ToolRegistry; created: boolean }> {
    const existing = await this.open(namespace);
    if (existing !== undefined) return { registry: existing, created: false };
    let created = false;
    // Another request may be creating it meanwhile.
    const again = this.#opened.get(namespace);
    const registry = (again !== undefined ? await again : undefined) ?? (await this.#load(namespace, async () => (created = await this.make(namespace))));
    return { registry: registry as ToolRegistry, created };
  }

  async close(): Promise<void> {
    const all = [...this.#opened.values()];
    this.#opened.clear();
    this.#ready.clear();
    await Promise.allSettled(all.map(async (p) => (await p)?.close()));
  }
}

/** Namespaces in memory (tests, demos): `default` exists from the start. */
export function memoryNamespaces(options: { clock?: () => Date } = {}): NamespaceSource {
  const registries = new Map<string, ToolRegistry>();
  const make = (): ToolRegistry => new InMemoryToolRegistry(options.clock === undefined ? {} : { clock: options.clock });
  registries.set(DEFAULT_NAMESPACE, make());
  return {
    extensible: true,
    open: async (ns) => registries.get(ns),
    create: async (ns) => {
      const known = registries.get(ns);
      if (known !== undefined) return { registry: known, created: false };
      const registry = make();
      registries.set(ns, registry);
      return { registry, created: true };
    },
    list: async () => [...registries.keys()].sort(),
    close: async () => {
      await Promise.allSettled([...registries.values()].map((r) => r.close()));
    },
  };
}

/** A fixed set of registries you opened yourself (they are closed with the server). `default` is required. */
export function fixedNamespaces(registries: Readonly<Record<string, ToolRegistry>>): NamespaceSource {
  const map = new Map(Object.entries(registries));
  if (!map.has(DEFAULT_NAMESPACE)) throw new TypeError(`fixedNamespaces: a registry named ${JSON.stringify(DEFAULT_NAMESPACE)} is required`);
  for (const name of map.keys()) {
    if (!NAMESPACE_PATTERN.test(name)) throw new TypeError(`fixedNamespaces: ${JSON.stringify(name)} is not a namespace name`);
  }
  return {
    extensible: false,
    open: async (ns) => map.get(ns),
    create: async (ns) => {
      const known = map.get(ns);
      if (known === undefined) throw new Error(`no namespace ${ns}`);
      return { registry: known, created: false };
    },
    list: async () => [...map.keys()].sort(),
    close: async () => {
      await Promise.allSettled([...map.values()].map((r) => r.close()));
    },
  };
}

class SqliteDirectory extends CachingSource {
  readonly #directory: string;
  readonly #options: { callRetention?: Partial<CallRetention> };
  constructor(directory: string, maxOpen: number | undefined, options: { callRetention?: Partial<CallRetention> } = {}) {
    super(maxOpen);
    this.#directory = directory;
    this.#options = options;
  }
  #file(ns: string): string {
    return join(this.#directory, `${ns}.db`);
  }
  protected async exists(ns: string): Promise<boolean> {
    return ns === DEFAULT_NAMESPACE || existsSync(this.#file(ns));
  }
  /**
   * A namespace's file that cannot be opened (a folder this process may not write, SQLite
   * needing its `-shm` there; a file that is a folder; a data dir that is a file) is the
   * storage's fault an operator must cure: STORAGE_UNAVAILABLE (503 with Retry-After), naming
   * the file. It was a bare error, a 500 with an error id.
   */
  protected async openRegistry(ns: string): Promise<ToolRegistry> {
    const file = this.#file(ns);
    try {
      await mkdir(this.#directory, { recursive: true });
      return await openSqliteToolRegistry({ ...this.#options, filename: file });
    } catch (error) {
      if (error instanceof ToolRegistryError || error instanceof HttpProblem) throw error;
      throw new StorageUnavailableError(`namespace ${ns}: cannot open ${file}: ${fileFailure(error)}`, { namespace: ns, file, operation: 'open' }, error);
    }
  }
  /**
   * An empty file, made exclusively (O_EXCL): SQLite reads it as an empty database. A folder
   * that refuses it is READ_ONLY (409), as a PostgreSQL role that may not create the schema;
   * any other failure STORAGE_UNAVAILABLE.
   */
  protected async make(ns: string): Promise<boolean> {
    if (ns === DEFAULT_NAMESPACE) return false;
    const file = this.#file(ns);
    const refused = (error: unknown): Error => {
      const code = (error as { code?: unknown }).code;
      if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return new ReadOnlyError('createNamespace', { cause: error, detail: `this process may not create ${file}` });
      return new StorageUnavailableError(`createNamespace: cannot create ${file}: ${fileFailure(error)}`, { namespace: ns, file, operation: 'createNamespace' }, error);
    };
    // A data dir that is a file is EEXIST here too: not "the namespace exists".
    await mkdir(this.#directory, { recursive: true }).catch((error: unknown) => {
      throw refused(error);
    });
    try {
      await (await open(file, 'wx')).close();
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === 'EEXIST') return false;
      throw refused(error);
    }
  }
  async list(): Promise<string[]> {
    let names: string[] = [];
    try {
      names = (await readdir(this.#directory)).filter((f) => f.endsWith('.db')).map((f) => f.slice(0, -3));
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
    }
    return [...new Set([DEFAULT_NAMESPACE, ...names.filter((n) => NAMESPACE_PATTERN.test(n))])].sort();
  }
}

/** What went wrong with a file, as the driver or the system said it (the store's wrapper names the file already). */
function fileFailure(error: unknown): string {
  const inner = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = (inner as { code?: unknown }).code;
  const message = inner instanceof Error ? inner.message : String(inner);
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}

/**
 * One SQLite file per namespace: `DIR/{ns}.db` (`default.db` for the unprefixed routes), at
 * most `maxOpen` open at once (default 64, fewer when the process may open few files; each holds three files: the database, its WAL and
 * its shared memory). `callRetention`: each registry's audit log bounds (the stores' option).
 */
export function sqliteNamespaces(directory: string, options: { maxOpen?: number; callRetention?: Partial<CallRetention> } = {}): NamespaceSource {
  return new SqliteDirectory(directory, options.maxOpen, options.callRetention === undefined ? {} : { callRetention: options.callRetention });
}

/** One SQLite file (or any single registry opener) as namespace `default` only. */
export function singleNamespace(open: () => Promise<ToolRegistry>): NamespaceSource {
  let opened: Promise<ToolRegistry> | undefined;
  const get = (): Promise<ToolRegistry> => (opened ??= open());
  return {
    extensible: false,
    open: async (ns) => (ns === DEFAULT_NAMESPACE ? get() : undefined),
    create: async (ns) => {
      if (ns !== DEFAULT_NAMESPACE) throw new Error(`no namespace ${ns}`);
      return { registry: await get(), created: false };
    },
    list: async () => [DEFAULT_NAMESPACE],
    close: async () => {
      if (opened !== undefined) await (await opened.catch(() => undefined))?.close();
    },
  };
}

class PostgresSchemas extends CachingSource {
  readonly #pool: pg.Pool;
  readonly #base: string;
  readonly #ownsPool: boolean;
  readonly #options: { callRetention?: Partial<CallRetention> };
  constructor(pool: pg.Pool, base: string, ownsPool: boolean, maxOpen: number | undefined, options: { callRetention?: Partial<CallRetention> } = {}) {
    super(maxOpen);
    this.#pool = pool;
    this.#base = base;
    this.#ownsPool = ownsPool;
    this.#options = options;
  }
  /** The schema of a namespace: the base schema for `default`, `{base}_ns_{ns}` otherwise. */
  schemaOf(ns: string): string {
    return ns === DEFAULT_NAMESPACE ? this.#base : `${this.#base}_ns_${ns}`;
  }
  protected async exists(ns: string): Promise<boolean> {
    if (ns === DEFAULT_NAMESPACE) return true;
    const { rows } = await this.#catalog<{ '?column?': number }>('namespaces', 'SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schemaOf(ns)]);
    return rows.length > 0;
  }
  protected openRegistry(ns: string): Promise<ToolRegistry> {
    return openPostgresToolRegistry({ ...this.#options, pool: this.#pool, schema: this.schemaOf(ns) });
  }
  override async create(ns: string): Promise<{ registry: ToolRegistry; created: boolean }> {
    // A long base schema (?schema=) leaves less than the rule's 40 characters of PostgreSQL's
    // 63 for the name: a 400 saying so, where the store's TypeError was a 500.
    const schema = this.schemaOf(ns);
    if (schema.length > MAX_SCHEMA_LENGTH) {
      const room = MAX_SCHEMA_LENGTH - `${this.#base}_ns_`.length;
      throw new HttpProblem(
        'BAD_REQUEST',
        `namespace ${JSON.stringify(ns)} is too long for this server: its PostgreSQL schema would be ${JSON.stringify(schema)}, ` +
          `${schema.length} characters, and PostgreSQL allows ${MAX_SCHEMA_LENGTH}; ` +
          (room > 0 ? `under the schema ${JSON.stringify(this.#base)} a namespace has at most ${room} characters` : `the schema ${JSON.stringify(this.#base)} leaves no room for namespaces`),
        { context: { namespace: ns } },
      );
    }
    return super.create(ns);
  }
  /** By one statement; the open migrates the empty schema under the migrations' lock, as for a schema a DBA made. */
  protected make(ns: string): Promise<boolean> {
    return this.#createSchema(this.schemaOf(ns));
  }
  /** True when this statement created the schema, false when another had (42P06, or 23505 when both ran at once). */
  async #createSchema(schema: string): Promise<boolean> {
    try {
      await this.#pool.query(`CREATE SCHEMA "${schema.replaceAll('"', '""')}"`);
      return true;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === '42P06' || code === '23505') return false;
      // A role without CREATE on the database (42501), a standby (25006): as the store's open says it.
      if (code === '42501' || code === '25006') throw new ReadOnlyError('createNamespace', { cause: error });
      if (isConnectionFailure(error)) throw new StorageUnavailableError(`createNamespace: the database cannot be reached: ${(error as Error).message}`, { operation: 'createNamespace' }, error);
      throw error;
    }
  }
  async list(): Promise<string[]> {
    const prefix = `${this.#base}_ns_`;
    const { rows } = await this.#catalog<{ nspname: string }>('namespaces', 'SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [prefix]);
    const names = rows.map((r) => r.nspname.slice(prefix.length)).filter((n) => NAMESPACE_PATTERN.test(n));
    return [...new Set([DEFAULT_NAMESPACE, ...names])].sort();
  }
  /**
   * A query of the catalog. These fixed statements on pg_namespace fail only when the server
   * or the connection does: STORAGE_UNAVAILABLE (a 503 with Retry-After), as the store's own
   * calls are, with the driver's error as cause.
   */
  async #catalog<R extends pg.QueryResultRow>(operation: string, text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.#pool.query<R>(text, values);
    } catch (error) {
      throw new StorageUnavailableError(`${operation}: the database cannot be reached: ${(error as Error).message ?? String(error)}`, { operation }, error);
    }
  }

  override async close(): Promise<void> {
    await super.close();
    if (this.#ownsPool) await this.#pool.end();
  }
}

/**
 * One PostgreSQL schema per namespace over one pool: `default` is `schema` (default
 * `tool_registry`), namespace `ns` is `{schema}_ns_{ns}`. Every server on the database sees
 * the namespaces any of them created. At most `maxOpen` (default 64) are open at once.
 * `callRetention`: each registry's audit log bounds (the stores' option).
 */
export function postgresNamespaces(options: { connectionString: string; schema?: string; maxConnections?: number; maxOpen?: number; callRetention?: Partial<CallRetention> }): NamespaceSource {
  const pool = new (nodePostgres().Pool)({ connectionString: options.connectionString, max: options.maxConnections ?? 10 });
  // An idle client's error (the server restarting) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return new PostgresSchemas(pool, options.schema ?? 'tool_registry', true, options.maxOpen, options.callRetention === undefined ? {} : { callRetention: options.callRetention });
}
