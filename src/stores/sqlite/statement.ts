// One way to run SQL in the SQLite store: queries are built and typed with Kysely (compiled
// only, never executed by it), then prepared once with better-sqlite3 and run synchronously.
// Parameters are named: the builder gets a typed object of placeholders, and each call binds
// an object of the same type, so a swapped or missing argument does not compile.
import type BetterSqlite3 from 'better-sqlite3';
import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { Compilable, InferResult } from 'kysely';
import type { SqliteSchema } from './schema.js';

/** A value SQLite binds. */
export type SqlValue = string | number | bigint | null;

/** Named parameters of a statement. */
export type SqlParams = { readonly [name: string]: SqlValue };

type NoParams = Record<never, never>;
/** A statement without parameters is called with none. */
type Args<P> = keyof P extends never ? [] : [params: P];

/** A prepared statement whose parameters and rows are typed. */
export interface Statement<P, Row> {
  get(...params: Args<P>): Row | undefined;
  all(...params: Args<P>): Row[];
  iterate(...params: Args<P>): IterableIterator<Row>;
  run(...params: Args<P>): { readonly changes: number };
}

/** The query builder: Kysely over the store's schema, configured once, for compiling only. */
export const queries = new Kysely<SqliteSchema>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

// A placeholder is a string no real value can equal (it carries a NUL and a private prefix).
const PLACEHOLDER = '\u0000tool-registry-parameter:';

/** A query compiled once (per process): prepared on each connection that runs it. */
export interface CompiledStatement<P, Row> {
  readonly sql: string;
  /** Prepares the query on `db`. */
  prepare(db: BetterSqlite3.Database): Statement<P, Row>;
}

/**
 * Compiles the query `build` returns, the first time it is prepared (or its `sql` read).
 * `build` receives placeholders for the statement's named parameters (typed by the annotation
 * of its argument) and uses them where values go; the order in which Kysely compiled them is
 * derived here, once, so each call binds its object's values by name. Values written literally
 * in the query are bound as constants. Compiling costs far more than SQLite's prepare, so the
 * store compiles each query once per process and prepares it once per connection; and only
 * the queries it runs: a `list` compiles 7 of the 37 it compiled at its open (4 % of its instructions).
 */
export function compileStatement<Q extends Compilable<unknown>, P extends SqlParams = NoParams>(
  build: (params: P) => Q,
): CompiledStatement<P, InferResult<Q>[number]> {
  const compiled = once(() => compileNow(build));
  return {
    get sql() {
      return compiled().sql;
    },
    prepare: (db) => compiled().prepare(db),
  };
}

function compileNow<Q extends Compilable<unknown>, P extends SqlParams>(build: (params: P) => Q): CompiledStatement<P, InferResult<Q>[number]> {
  const used = new Set<string>();
  const placeholders = new Proxy({} as P, {
    get: (_target, name) => {
      if (typeof name !== 'string') throw new Error('internal: statement parameters are named by strings');
      used.add(name);
      return PLACEHOLDER + name;
    },
  });
  const compiled = build(placeholders).compile();
  // Each compiled parameter is a named one (its name) or a constant of the query (its value).
  type Slot = { readonly name: string; readonly value?: undefined } | { readonly name?: undefined; readonly value: unknown };
  const slots: Slot[] = compiled.parameters.map((value) =>
    typeof value === 'string' && value.startsWith(PLACEHOLDER) ? { name: value.slice(PLACEHOLDER.length) } : { value },
  );
  for (const name of used) {
    if (!slots.some((slot) => slot.name === name)) {
      throw new Error(`internal: parameter ${name} is not bound by ${compiled.sql}`);
    }
  }
  const bind = (params: P | undefined): unknown[] =>
    slots.map((slot) => (slot.name === undefined ? slot.value : (params as Record<string, unknown>)[slot.name]));
  type Row = InferResult<Q>[number];
  return {
    sql: compiled.sql,
    prepare: (db) => {
      const statement = db.prepare(compiled.sql);
      // A caller's handle may default to BigInt integers; the store's integers are small.
      if (statement.reader) statement.safeIntegers(false);
      return {
        get: (...args) => statement.get(bind(args[0])) as Row | undefined,
        all: (...args) => statement.all(bind(args[0])) as Row[],
        iterate: (...args) => statement.iterate(bind(args[0])) as IterableIterator<Row>,
        run: (...args) => statement.run(bind(args[0])),
      };
    },
  };
}

/**
 * Every compiled query of `compiled` on `db`, under the same keys, each prepared the first
 * time it is used (then kept): a registry runs few of its ~40 statements, and preparing all
 * of them at open was about a third of an open's CPU (open, get, listAll and close of a
 * migrated file: 5.3 → 3.7 ms; docs/testing.md, tenth round).
 */
export function prepareAll<T extends { readonly [key: string]: CompiledStatement<never, unknown> }>(
  db: BetterSqlite3.Database,
  compiled: T,
): { readonly [K in keyof T]: ReturnType<T[K]['prepare']> } {
  const prepared: Record<string, unknown> = {};
  for (const [key, statement] of Object.entries(compiled)) {
    Object.defineProperty(prepared, key, {
      enumerable: true,
      configurable: true,
      get: () => {
        const value = statement.prepare(db);
        Object.defineProperty(prepared, key, { value, enumerable: true });
        return value;
      },
    });
  }
  return prepared as { readonly [K in keyof T]: ReturnType<T[K]['prepare']> };
}

/** `make()` the first time it is asked for, the same value after: compiles a module's queries on first use, not at import. */
export function once<T>(make: () => T): () => T {
  let value: T | undefined;
  let made = false;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value as T;
  };
}
