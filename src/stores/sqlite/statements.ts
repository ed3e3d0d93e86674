// The store's SQL, built and typed with Kysely once, then run through better-sqlite3
// statements prepared once: execution stays synchronous (one atomic step per write) and
// no call pays for query building or prepare().
import type BetterSqlite3 from 'better-sqlite3';
import type { Compilable, InferResult, Kysely } from 'kysely';
import type { ToolRecord } from '../../core/rules.js';
import type { SqliteSchema } from './schema.js';

/** A prepared statement whose rows are typed from the Kysely query that built it. */
export interface Prepared<Row> {
  get(params: readonly unknown[]): Row | undefined;
  all(params: readonly unknown[]): Row[];
  iterate(params: readonly unknown[]): IterableIterator<Row>;
  run(params: readonly unknown[]): { readonly changes: number };
}

/**
 * Prepares a Kysely-built query. `arity` is the number of `?` parameters the caller will
 * bind, in the order the query builder saw the placeholder values; it is checked here so a
 * changed query cannot silently bind the wrong values.
 */
function prepare<Q extends Compilable<unknown>>(
  db: BetterSqlite3.Database,
  query: Q,
  arity: number,
): Prepared<InferResult<Q>[number]> {
  const compiled = query.compile();
  if (compiled.parameters.length !== arity) {
    throw new Error(`internal: query binds ${compiled.parameters.length} values, expected ${arity}: ${compiled.sql}`);
  }
  const statement = db.prepare<[readonly unknown[]], InferResult<Q>[number]>(compiled.sql);
  // A caller's handle may default to BigInt integers; `enabled` is always a small number here.
  if (statement.reader) statement.safeIntegers(false);
  return statement;
}

// Placeholder values for query building; the real values are bound at execution.
const TEXT = '';
const INT = 0;

/** Every statement the store runs, prepared once per connection. */
export function prepareStatements(db: BetterSqlite3.Database, kysely: Kysely<SqliteSchema>) {
  const current = () =>
    kysely
      .selectFrom('tool_registrations as r')
      .innerJoin('tool_specs as s', (join) =>
        join.onRef('s.tool_name', '=', 'r.tool_name').onRef('s.fingerprint', '=', 'r.fingerprint'),
      );
  const recordColumns = ['r.tool_name', 's.version', 'r.fingerprint', 'r.enabled', 'r.created_at'] as const;
  const registrationColumns = ['s.spec_json', 'r.enabled', 'r.created_at'] as const;
  return {
    /** (tool_name) -> the record, without the spec. */
    findRecord: prepare(db, current().select(recordColumns).where('r.tool_name', '=', TEXT), 1),
    /** (tool_name) -> the registration's columns. */
    getRow: prepare(db, current().select(registrationColumns).where('r.tool_name', '=', TEXT), 1),
    /** (tool_name) -> the record and the spec. */
    findRow: prepare(db, current().select([...recordColumns, 's.spec_json']).where('r.tool_name', '=', TEXT), 1),
    /** () -> every current registration by name. */
    listAll: prepare(db, current().select(registrationColumns).orderBy('r.tool_name'), 0),
    /** (1) -> enabled registrations by name. */
    listEnabled: prepare(db, current().select(registrationColumns).where('r.enabled', '=', INT).orderBy('r.tool_name'), 1),
    /** () -> every current record, without specs. */
    records: prepare(db, current().select(recordColumns), 0),
    /** (tool_name, fingerprint, version, spec_json, first_registered_at): keeps an existing history row. */
    insertSpec: prepare(
      db,
      kysely
        .insertInto('tool_specs')
        .values({ tool_name: TEXT, fingerprint: TEXT, version: TEXT, spec_json: TEXT, first_registered_at: TEXT })
        .onConflict((conflict) => conflict.columns(['tool_name', 'fingerprint']).doNothing()),
      5,
    ),
    /** (tool_name, fingerprint, enabled, created_at): insert or replace the current registration. */
    upsertRegistration: prepare(
      db,
      kysely
        .insertInto('tool_registrations')
        .values({ tool_name: TEXT, fingerprint: TEXT, enabled: INT, created_at: TEXT })
        .onConflict((conflict) =>
          conflict.column('tool_name').doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            enabled: eb.ref('excluded.enabled'),
            created_at: eb.ref('excluded.created_at'),
          })),
        ),
      4,
    ),
    /** (enabled, tool_name) */
    setEnabled: prepare(
      db,
      kysely.updateTable('tool_registrations').set({ enabled: INT }).where('tool_name', '=', TEXT),
      2,
    ),
    /** (tool_name) */
    deleteRegistration: prepare(db, kysely.deleteFrom('tool_registrations').where('tool_name', '=', TEXT), 1),
    /** (1) -> counts for status(). */
    counts: prepare(
      db,
      kysely.selectNoFrom((eb) => [
        eb.selectFrom('tool_registrations').select((e) => e.fn.countAll<number>().as('n')).as('tools'),
        eb
          .selectFrom('tool_registrations')
          .select((e) => e.fn.countAll<number>().as('n'))
          .where('enabled', '=', 1)
          .as('enabled'),
        eb.selectFrom('tool_specs').select((e) => e.fn.countAll<number>().as('n')).as('specHistory'),
      ]),
      1,
    ),
    /** () -> every current row for verify(). */
    verifyRows: prepare(db, current().select([...recordColumns, 's.spec_json', 's.tool_name as spec_tool_name']).orderBy('r.tool_name'), 0),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;

/** A current-tool row as the core's `ToolRecord` (the store and its cache share it). */
export function toRecord(row: {
  tool_name: string;
  version: string | null;
  fingerprint: string;
  enabled: number;
  created_at: string | null;
}): ToolRecord {
  return {
    tool_name: row.tool_name,
    version: row.version,
    fingerprint: row.fingerprint,
    enabled: row.enabled === 1,
    created_at: row.created_at,
  };
}
