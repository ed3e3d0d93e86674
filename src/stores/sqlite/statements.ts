// The store's SQL: every statement prepared once per connection through the one typed helper,
// and the one conversion from a current-tool row to what the core works with.
import type BetterSqlite3 from 'better-sqlite3';
import type { ToolRegistration } from '../../core/contracts.js';
import type { ToolRecord } from '../../core/rules.js';
import { deprecationOfColumns as deprecationOf } from '../../core/stored-row.js';
import type { DeprecationColumns } from '../../core/stored-row.js';
import { makeRegistration, materializeSpec } from '../../core/validation.js';
import { expressionBuilder, sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { SqliteSchema, ToolCallsTable, ToolUpstreamsTable } from './schema.js';
import { compileStatement, once, prepareAll, queries } from './statement.js';
import type { CompiledStatement } from './statement.js';

type ToolName = { tool_name: string };

/**
 * The revision the change feed starts after (migration 0005): no event is at or below it.
 * min() and coalesce(): a row added or lost by hand can only make the feed read more, never skip an event.
 */
const feedStart = expressionBuilder<SqliteSchema>().fn.coalesce(
  queries.selectFrom('tool_changes_feed_start').select((e) => e.fn.min('after_revision').as('r')),
  sql.lit(0),
);

/** Where this connection's view of the database stands: a change in either means a commit. */
export interface CommitMarks {
  /** Moves when another connection (or process) commits. */
  readonly dataVersion: number;
  /** Moves when this connection writes (its own commits leave data_version alone). */
  readonly totalChanges: number;
}

/**
 * "Did anyone commit since?", asked of one connection: two plain statements, which cost
 * less than one through the pragma's table function (about 1.5 µs per read after a write).
 */
export function prepareCommitMarks(db: BetterSqlite3.Database): () => CommitMarks {
  const dataVersion = db.prepare('PRAGMA data_version').pluck().safeIntegers(false);
  const totalChanges = db.prepare('SELECT total_changes()').pluck().safeIntegers(false);
  return () => ({ totalChanges: totalChanges.get() as number, dataVersion: dataVersion.get() as number });
}

/** Every statement the store runs: compiled once per process (on first use), prepared once per connection. */
const compiledStatements = once(() => {
  const current = () =>
    queries
      .selectFrom('tool_registrations as r')
      .innerJoin('tool_specs as s', (join) =>
        join.onRef('s.tool_name', '=', 'r.tool_name').onRef('s.fingerprint', '=', 'r.fingerprint'),
      )
      .leftJoin('tool_deprecations as d', 'd.tool_name', 'r.tool_name');
  const recordColumns = [
    'r.tool_name',
    's.version',
    'r.fingerprint',
    'r.enabled',
    'r.created_at',
    'd.message as dep_message',
    'd.replacement as dep_replacement',
    'd.sunset as dep_sunset',
  ] as const;
  const rowColumns = [...recordColumns, 's.spec_json'] as const;
  return {
    /** Whether a tool of this name is registered (one key lookup, no row read). */
    registered: compileStatement((p: ToolName) => queries.selectFrom('tool_registrations').select(sql<number>`1`.as('found')).where('tool_name', '=', p.tool_name)),
    /** One current tool, or undefined. */
    findRow: compileStatement((p: ToolName) => current().select(rowColumns).where('r.tool_name', '=', p.tool_name)),
    /** One current tool's record, without its spec text (a write's check needs no spec). */
    findRecord: compileStatement((p: ToolName) => current().select(recordColumns).where('r.tool_name', '=', p.tool_name)),
    /** What `get` returns of one current tool, and no more (each column read is a string made). */
    findRegistration: compileStatement((p: ToolName) =>
      current()
        .select(['s.spec_json', 'r.enabled', 'r.created_at', 'd.message as dep_message', 'd.replacement as dep_replacement', 'd.sunset as dep_sunset'])
        .where('r.tool_name', '=', p.tool_name),
    ),
    /** Every current tool by name (SQLite's BINARY order, which is code-point order). */
    rows: compileStatement(() => current().select(rowColumns).orderBy('r.tool_name')),
    /** Enabled tools by name. */
    enabledRows: compileStatement(() => current().select(rowColumns).where('r.enabled', '=', 1).orderBy('r.tool_name')),
    /** Every current record, without specs. */
    records: compileStatement(() => current().select(recordColumns)),
    /** Adds a spec to the history; an existing history row is kept. */
    insertSpec: compileStatement(
      (p: { tool_name: string; fingerprint: string; version: string | null; spec_json: string; first_registered_at: string }) =>
        queries
          .insertInto('tool_specs')
          .values({
            tool_name: p.tool_name,
            fingerprint: p.fingerprint,
            version: p.version,
            spec_json: p.spec_json,
            first_registered_at: p.first_registered_at,
          })
          .onConflict((conflict) => conflict.columns(['tool_name', 'fingerprint']).doNothing()),
    ),
    /** Gives a history row the text of a re-registration (a row no current registration points at). */
    updateSpecText: compileStatement((p: { tool_name: string; fingerprint: string; spec_json: string }) =>
      queries
        .updateTable('tool_specs')
        .set({ spec_json: p.spec_json })
        .where('tool_name', '=', p.tool_name)
        .where('fingerprint', '=', p.fingerprint)
        .where('spec_json', 'is not', p.spec_json),
    ),
    /** Every spec ever stored under a name, oldest first. */
    history: compileStatement((p: ToolName) =>
      queries
        .selectFrom('tool_specs')
        .select(['fingerprint', 'spec_json', 'first_registered_at'])
        .where('tool_name', '=', p.tool_name)
        .orderBy('first_registered_at')
        .orderBy(sql`rowid`),
    ),
    /**
     * Change-feed events after a revision, oldest first. The log is read by revision from
     * where the feed starts (migration 0005), so entries logged before 0004 are never visited.
     */
    events: compileStatement((p: { since: number; limit: number }) =>
      queries
        .selectFrom('tool_changes')
        .select(['revision', 'tool_name', 'action', 'version', 'at', 'rollback'])
        .where((eb) => eb('revision', '>', eb.fn<number>('max', [eb.val(p.since), feedStart])))
        .where('action', 'is not', null)
        .orderBy('revision')
        .limit(p.limit),
    ),
    /** The current revision and the oldest retained event's (read from where the feed starts). */
    revisions: compileStatement(() =>
      queries.selectNoFrom((eb) => [
        eb.selectFrom('tool_changes').select((e) => e.fn.max('revision').as('r')).as('revision'),
        eb
          .selectFrom('tool_changes')
          .select((e) => e.fn.min('revision').as('r'))
          .where('revision', '>', feedStart)
          .where('action', 'is not', null)
          .as('oldest'),
      ]),
    ),
    /** The log's generation (migration 0003) and the token of its entry at a revision: a watch's mark (core/change-log-mark.ts). */
    markAt: compileStatement((p: { revision: number }) =>
      queries.selectNoFrom((eb) => [
        eb.selectFrom('tool_changes_generation').select('generation').limit(1).as('generation'),
        eb.selectFrom('tool_changes').select('token').where('revision', '=', p.revision).as('token'),
      ]),
    ),
    /** The current revision. */
    head: compileStatement(() => queries.selectFrom('tool_changes').select((e) => e.fn.max('revision').as('revision'))),
    /** Inserts or replaces the current registration. */
    upsertRegistration: compileStatement(
      (p: { tool_name: string; fingerprint: string; enabled: 0 | 1; created_at: string | null }) =>
        queries
          .insertInto('tool_registrations')
          .values({ tool_name: p.tool_name, fingerprint: p.fingerprint, enabled: p.enabled, created_at: p.created_at })
          .onConflict((conflict) =>
            conflict.column('tool_name').doUpdateSet((eb) => ({
              fingerprint: eb.ref('excluded.fingerprint'),
              enabled: eb.ref('excluded.enabled'),
              created_at: eb.ref('excluded.created_at'),
            })),
          ),
    ),
    setEnabled: compileStatement((p: { tool_name: string; enabled: 0 | 1 }) =>
      queries.updateTable('tool_registrations').set({ enabled: p.enabled }).where('tool_name', '=', p.tool_name),
    ),
    /** Sets a tool's deprecation (its change is logged by migration 0006's triggers). */
    upsertDeprecation: compileStatement((p: { tool_name: string; message: string; replacement: string | null; sunset: string | null }) =>
      queries
        .insertInto('tool_deprecations')
        .values({ tool_name: p.tool_name, message: p.message, replacement: p.replacement, sunset: p.sunset })
        .onConflict((conflict) =>
          conflict.column('tool_name').doUpdateSet((eb) => ({
            message: eb.ref('excluded.message'),
            replacement: eb.ref('excluded.replacement'),
            sunset: eb.ref('excluded.sunset'),
          })),
        ),
    ),
    deleteDeprecation: compileStatement((p: ToolName) => queries.deleteFrom('tool_deprecations').where('tool_name', '=', p.tool_name)),
    /** The stored policies (migration 0006): one row per policy set. */
    policy: compileStatement(() => queries.selectFrom('tool_registry_policy').select(['name', 'value'])),
    setPolicy: compileStatement((p: { name: string; value: string }) =>
      queries
        .insertInto('tool_registry_policy')
        .values({ name: p.name, value: p.value })
        .onConflict((conflict) => conflict.column('name').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') }))),
    ),
    /** Marks the newest log entry, this tool's `updated` just logged by a put, a rollback. */
    markRollback: compileStatement((p: ToolName) =>
      queries
        .updateTable('tool_changes')
        .set({ rollback: 1 })
        .where('tool_name', '=', p.tool_name)
        .where('action', '=', 'updated')
        .where('revision', '=', (eb) => eb.selectFrom('tool_changes').select((e) => e.fn.max('revision').as('r'))),
    ),
    deleteRegistration: compileStatement((p: ToolName) => queries.deleteFrom('tool_registrations').where('tool_name', '=', p.tool_name)),
    /** The gateway's upstreams (migration 0007): one, every one by name, upsert keeping created_at, delete. */
    upstream: compileStatement((p: { name: string }) => queries.selectFrom('tool_upstreams').selectAll().where('name', '=', p.name)),
    upstreams: compileStatement(() => queries.selectFrom('tool_upstreams').selectAll().orderBy('name')),
    putUpstream: compileStatement(
      (p: ToolUpstreamsTable) =>
        queries
          .insertInto('tool_upstreams')
          // Named one by one: the parameters are a proxy, which a spread would not read.
          .values({
            name: p.name,
            transport: p.transport,
            prefix: p.prefix,
            approve: p.approve,
            permissions: p.permissions,
            rejected: p.rejected,
            created_at: p.created_at,
            updated_at: p.updated_at,
          })
          .onConflict((conflict) =>
            conflict.column('name').doUpdateSet((eb) => ({
              transport: eb.ref('excluded.transport'),
              prefix: eb.ref('excluded.prefix'),
              approve: eb.ref('excluded.approve'),
              permissions: eb.ref('excluded.permissions'),
              rejected: eb.ref('excluded.rejected'),
              updated_at: eb.ref('excluded.updated_at'),
            })),
          )
          .returningAll(),
    ),
    deleteUpstream: compileStatement((p: { name: string }) => queries.deleteFrom('tool_upstreams').where('name', '=', p.name)),
    /** One audit row (migration 0007). */
    insertCall: compileStatement(
      (p: Omit<ToolCallsTable, 'id'>) =>
        queries.insertInto('tool_calls').values({
          at: p.at,
          token: p.token,
          persona: p.persona,
          namespace: p.namespace,
          tool: p.tool,
          version: p.version,
          fingerprint: p.fingerprint,
          upstream: p.upstream,
          duration_ms: p.duration_ms,
          outcome: p.outcome,
        }),
    ),
    /** Keeps the newest `max_rows` ids: a range of the primary key, only the rows now past the bound. */
    pruneCallsByCount: compileStatement((p: { max_rows: number }) =>
      queries.deleteFrom('tool_calls').where('id', '<=', (eb) => eb.selectFrom('tool_calls').select(sql<number>`max(id) - ${p.max_rows}`.as('bound'))),
    ),
    /** Drops rows that started before `oldest_at` (a range of tool_calls_at; usually empty). */
    pruneCallsByAge: compileStatement((p: { oldest_at: string }) => queries.deleteFrom('tool_calls').where('at', '<', p.oldest_at)),
    /** Counts for status(). */
    counts: compileStatement(() =>
      queries.selectNoFrom((eb) => [
        eb.selectFrom('tool_registrations').select((e) => e.fn.countAll<number>().as('n')).as('tools'),
        eb
          .selectFrom('tool_registrations')
          .select((e) => e.fn.countAll<number>().as('n'))
          .where('enabled', '=', 1)
          .as('enabled'),
        eb.selectFrom('tool_specs').select((e) => e.fn.countAll<number>().as('n')).as('specHistory'),
      ]),
    ),
  };
});

/** The filters a `listCalls` query uses; each combination is one statement (so SQLite can pick the index that fits). */
export interface CallFilters {
  readonly tool: boolean;
  readonly token: boolean;
  readonly since: boolean;
  readonly before: boolean;
}

type CallParams = { tool: string; token: string; since: string; before: number; limit: number };

const compiledCallQueries = new Map<string, CompiledStatement<CallParams, ToolCallsRow>>();

/** The `listCalls` statement for these filters, newest (highest id) first: compiled once per process. */
export function callsStatement(filters: CallFilters): CompiledStatement<CallParams, ToolCallsRow> {
  const key = `${+filters.tool}${+filters.token}${+filters.since}${+filters.before}`;
  let compiled = compiledCallQueries.get(key);
  if (compiled === undefined) {
    compiled = compileStatement((p: CallParams) => {
      let query = queries.selectFrom('tool_calls').selectAll();
      if (filters.tool) query = query.where('tool', '=', p.tool);
      if (filters.token) query = query.where('token', '=', p.token);
      if (filters.since) query = query.where('at', '>=', p.since);
      if (filters.before) query = query.where('id', '<', p.before);
      return query.orderBy('id', 'desc').limit(p.limit);
    });
    compiledCallQueries.set(key, compiled);
  }
  return compiled;
}

export type ToolCallsRow = Selectable<ToolCallsTable>;

/** Every statement the store runs, prepared on this connection. */
export function prepareStatements(db: BetterSqlite3.Database) {
  return prepareAll(db, compiledStatements());
}

export type Statements = ReturnType<typeof prepareStatements>;

/** The columns of a current tool, as `findRow` and `rows` return them. */
export interface ToolRow extends DeprecationColumns {
  readonly tool_name: string;
  readonly version: string | null;
  readonly fingerprint: string;
  readonly enabled: number;
  readonly created_at: string | null;
  readonly spec_json: string;
}

/** A current-tool row as the core's `ToolRecord` (the spec is not needed for it). */
export function toRecord(row: Omit<ToolRow, 'spec_json'>): ToolRecord {
  return {
    tool_name: row.tool_name,
    version: row.version,
    fingerprint: row.fingerprint,
    enabled: row.enabled === 1,
    created_at: row.created_at,
    deprecation: deprecationOf(row),
  };
}

/** A current-tool row as the frozen registration handed to callers. */
export function toRegistration(row: Pick<ToolRow, 'spec_json' | 'enabled' | 'created_at' | 'dep_message' | 'dep_replacement' | 'dep_sunset'>): ToolRegistration {
  return makeRegistration(materializeSpec(row.spec_json), row.enabled === 1, row.created_at, deprecationOf(row));
}
