// Every query the PostgreSQL store runs, over a Kysely handle already scoped to the
// registry's schema (`withSchema`). The store decides nothing here: the core's rule decides,
// these functions read what a decision needs, lock, and write.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { DeprecationColumns } from '../../core/stored-row.js';
import { quoteIdentifier } from './identifiers.js';
import { safeInteger } from './integers.js';
import type { PostgresSchema, ToolChangesTable } from './schema.js';
import type { CallPrune, CallRecord, CallRecordInput, ParsedCallsQuery, UpstreamRow } from '../../core/upstreams.js';

/** A Kysely handle (or a transaction) on the registry's schema (`withSchema`; raw SQL names the schema itself). */
export type Db = Kysely<PostgresSchema>;

/**
 * Sends one statement with its parameters on the call's connection; resolves to its rows.
 * `name`: a name for the statement's text (one text per name), so the connection may keep it
 * prepared (parsed and planned once).
 */
export type StatementRunner = (text: string, values: readonly unknown[], name?: string) => Promise<Record<string, unknown>[]>;

/** What the rule needs to know about a current tool (no spec text). */
export interface ToolRow extends DeprecationColumns {
  readonly tool_name: string;
  readonly version: string | null;
  readonly fingerprint: string;
  readonly enabled: boolean;
  readonly created_at: string | null;
}

/** A current tool with its spec text. */
export interface RegistrationRow extends ToolRow {
  readonly spec_json: string;
}

/** A tool to write: its spec (kept in the history) and its registration. */
export interface ToolWrite extends RegistrationRow {
  /** Recorded when the spec is new to the name's history. */
  readonly first_registered_at: string;
}

// --- locks and limits (transaction-scoped) --------------------------------------------

/** Bounds each statement in this transaction (0: no bound). */
export async function setStatementTimeout(trx: Db, ms: number): Promise<void> {
  await sql`SELECT set_config('statement_timeout', ${`${Math.max(0, Math.ceil(ms))}ms`}, true)`.execute(trx);
}

/**
 * Starts a read-only REPEATABLE READ transaction (one snapshot) whose lock waits are bounded
 * by `lockTimeoutMs` (at least 1 ms) and, when given, each statement by `statementTimeoutMs`:
 * one round trip, as a simple-protocol query of several statements (no parameters: the limits
 * are whole numbers written here). A read waits for a lock only behind an ACCESS EXCLUSIVE one
 * (ALTER TABLE, TRUNCATE, VACUUM FULL, LOCK TABLE).
 */
export async function beginBoundedRead(db: Db, lockTimeoutMs: number, statementTimeoutMs: number | undefined): Promise<void> {
  // extra_float_digits: a role's or database's lower setting (0 was the default before
  // PostgreSQL 12) rounded the audit log's duration_ms as the server printed it (35.5 read as 40 at -15).
  const limits = [`SET LOCAL lock_timeout = '${Math.max(1, Math.ceil(lockTimeoutMs))}ms'`, 'SET LOCAL extra_float_digits = 3'];
  if (statementTimeoutMs !== undefined) limits.push(`SET LOCAL statement_timeout = '${Math.max(0, Math.ceil(statementTimeoutMs))}ms'`);
  await sql.raw(['START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY', ...limits].join('; ')).execute(db);
}

// --- reads ----------------------------------------------------------------------------

const toolColumns = [
  'r.tool_name',
  's.version',
  'r.fingerprint',
  'r.enabled',
  'r.created_at',
  'd.message as dep_message',
  'd.replacement as dep_replacement',
  'd.sunset as dep_sunset',
] as const;

function current(db: Db) {
  return db
    .selectFrom('tool_registrations as r')
    .innerJoin('tool_specs as s', (join) => join.onRef('s.tool_name', '=', 'r.tool_name').onRef('s.fingerprint', '=', 'r.fingerprint'))
    .leftJoin('tool_deprecations as d', 'd.tool_name', 'r.tool_name');
}

/** The stored policies (name, value), and the deprecations of `names` (every tool's when `names` is undefined), in one statement. */
export async function readPolicyAndDeprecations(
  db: Db,
  names: readonly string[] | undefined,
): Promise<{ policy: [string, string][]; deprecations: Map<string, Pick<ToolRow, 'dep_message' | 'dep_replacement' | 'dep_sunset'>> }> {
  let deprecations = db.selectFrom('tool_deprecations').select([sql.lit('d').as('kind'), 'tool_name as a', 'message as b', 'replacement as c', 'sunset as e']);
  if (names !== undefined) deprecations = deprecations.where('tool_name', '=', sql<string>`ANY(${[...names]}::text[])`);
  const rows = await db
    .selectFrom('tool_registry_policy')
    .select([sql.lit('p').as('kind'), 'name as a', 'value as b', sql<string | null>`NULL::text`.as('c'), sql<string | null>`NULL::text`.as('e')])
    .unionAll(deprecations)
    .execute();
  const policy: [string, string][] = [];
  const found = new Map<string, Pick<ToolRow, 'dep_message' | 'dep_replacement' | 'dep_sunset'>>();
  for (const row of rows) {
    if (row.kind === 'p') policy.push([row.a, row.b]);
    else found.set(row.a, { dep_message: row.b, dep_replacement: row.c, dep_sunset: row.e });
  }
  return { policy, deprecations: found };
}

/** Sets (upserts) or lifts (null) a tool's deprecation; migration 0006's triggers log it. */
export async function writeDeprecation(
  trx: Db,
  toolName: string,
  deprecation: { readonly message: string; readonly replacement: string | null; readonly sunset: string | null } | null,
): Promise<void> {
  if (deprecation === null) {
    await trx.deleteFrom('tool_deprecations').where('tool_name', '=', toolName).execute();
    return;
  }
  const { message, replacement, sunset } = deprecation;
  await trx
    .insertInto('tool_deprecations')
    .values({ tool_name: toolName, message, replacement, sunset })
    .onConflict((conflict) =>
      conflict.column('tool_name').doUpdateSet((eb) => ({ message: eb.ref('excluded.message'), replacement: eb.ref('excluded.replacement'), sunset: eb.ref('excluded.sunset') })),
    )
    .execute();
}

/** Stores the registry's policies (under the writers' lock held exclusively). */
export async function writePolicy(trx: Db, policy: { readonly versionOrder: string; readonly compatibility: string }): Promise<void> {
  await trx
    .insertInto('tool_registry_policy')
    .values([
      { name: 'versionOrder', value: policy.versionOrder },
      { name: 'compatibility', value: policy.compatibility },
    ])
    .onConflict((conflict) => conflict.column('name').doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
    .execute();
}

/** Marks this transaction's `updated` log entries of these tools as rollbacks. */
export async function markRollbacks(trx: Db, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await trx
    .updateTable('tool_changes')
    .set({ rollback: true })
    .where('xid', '=', sql<string>`pg_current_xact_id()`)
    .where('action', '=', 'updated')
    .where('tool_name', '=', sql<string>`ANY(${[...names]}::text[])`)
    .execute();
}

/** The current rows of these names (all current tools when `names` is undefined), by name. */
export async function readTools(db: Db, names?: readonly string[]): Promise<Map<string, ToolRow>> {
  let query = current(db).select(toolColumns);
  if (names !== undefined) {
    if (names.length === 0) return new Map();
    query = query.where('r.tool_name', '=', sql<string>`ANY(${[...names]}::text[])`);
  }
  const rows = await query.execute();
  return new Map(rows.map((row) => [row.tool_name, row]));
}

/** One current tool with its spec text. */
export async function readRegistration(db: Db, toolName: string): Promise<RegistrationRow | undefined> {
  return current(db).select([...toolColumns, 's.spec_json']).where('r.tool_name', '=', toolName).executeTakeFirst();
}

/** Current tools with their spec text, by name in code-point order (the columns collate "C"). */
export async function readRegistrations(db: Db, options: { includeDisabled: boolean; names?: readonly string[] }): Promise<RegistrationRow[]> {
  let query = current(db).select([...toolColumns, 's.spec_json']).orderBy('r.tool_name');
  if (!options.includeDisabled) query = query.where('r.enabled', '=', true);
  if (options.names !== undefined) {
    if (options.names.length === 0) return [];
    query = query.where('r.tool_name', '=', sql<string>`ANY(${[...options.names]}::text[])`);
  }
  return query.execute();
}

export interface Head {
  readonly revision: number;
  readonly token: string;
  readonly generation: string;
}

/** The head row: revision, token, generation (inside a write: including the write's own changes). */
export async function readHead(db: Db): Promise<Head> {
  const row = await db.selectFrom('tool_registry_head').select(['revision', 'token', 'generation']).executeTakeFirstOrThrow();
  return { revision: safeInteger(row.revision, 'tool_registry_head.revision'), token: row.token, generation: row.generation };
}

export interface ChangeRow {
  readonly revision: number;
  readonly tool_name: string;
  readonly action: ToolChangesTable['action'];
  readonly version: string | null;
  readonly at: string;
  readonly token: string;
  readonly rollback: boolean;
}

export interface ChangesRead {
  readonly head: Head;
  /** The token of the entry at `since` (undefined when `since` is 0 or the log no longer holds it). */
  readonly sinceToken: string | undefined;
  /** The oldest revision the log holds; `head.revision + 1` when it holds none. */
  readonly oldestRevision: number;
  /** Up to `limit` changes after `since`, oldest first. */
  readonly changes: readonly ChangeRow[];
}

/** The head, the oldest retained revision and a page of changes after `since`, in one statement (one snapshot). */
export async function readChanges(db: Db, schema: string, since: number, limit: number): Promise<ChangesRead> {
  const table = (name: keyof PostgresSchema) => sql.table(`${schema}.${name}`);
  const { rows } = await sql<{
    revision: string;
    token: string;
    generation: string;
    oldest: string | null;
    since_token: string | null;
    c_revision: string | null;
    tool_name: string | null;
    action: ToolChangesTable['action'] | null;
    version: string | null;
    at: string | null;
    c_token: string | null;
    rollback: boolean | null;
  }>`SELECT h.revision, h.token, h.generation, (SELECT min(revision) FROM ${table('tool_changes')}) AS oldest,
         (SELECT token FROM ${table('tool_changes')} WHERE revision = ${since}) AS since_token,
         c.revision AS c_revision, c.tool_name, c.action, c.version, c.at, c.token AS c_token, c.rollback
       FROM ${table('tool_registry_head')} AS h
       LEFT JOIN LATERAL (
         SELECT revision, tool_name, action, version, at, token, rollback FROM ${table('tool_changes')}
         WHERE revision > ${since} ORDER BY revision LIMIT ${limit}
       ) AS c ON true
       ORDER BY c.revision`.execute(db);
  const first = rows[0];
  if (first === undefined) throw new Error('tool_registry_head has no row: the schema was not migrated');
  const head = { revision: safeInteger(first.revision, 'head revision'), token: first.token, generation: first.generation };
  const changes: ChangeRow[] = [];
  for (const row of rows) {
    if (row.c_revision === null || row.tool_name === null || row.action === null || row.at === null || row.c_token === null) continue;
    changes.push({ revision: safeInteger(row.c_revision, 'tool_changes.revision'), tool_name: row.tool_name, action: row.action, version: row.version, at: row.at, token: row.c_token, rollback: row.rollback === true });
  }
  const oldestRevision = first.oldest === null ? head.revision + 1 : safeInteger(first.oldest, 'oldest revision');
  return { head, sinceToken: first.since_token ?? undefined, oldestRevision, changes };
}

/**
 * Every spec stored under the name, oldest first: by first_registered_at (ISO text in UTC,
 * compared byte by byte), ties in the order stored, as every store orders it. Not by storage
 * order alone: instances whose clocks differ store in another order than their times say.
 */
export async function readHistory(db: Db, toolName: string): Promise<{ fingerprint: string; spec_json: string; first_registered_at: string }[]> {
  return db
    .selectFrom('tool_specs')
    .select(['fingerprint', 'spec_json', 'first_registered_at'])
    .where('tool_name', '=', toolName)
    .orderBy(sql`first_registered_at COLLATE "C"`)
    .orderBy('stored_order')
    .execute();
}

// --- writes ---------------------------------------------------------------------------

/** The write functions' `specs` argument: [[tool_name, fingerprint, version, spec_json, first_registered_at], ...]. */
function specRowsOf(tools: readonly ToolWrite[]): string {
  return JSON.stringify(tools.map((t) => [t.tool_name, t.fingerprint, t.version, t.spec_json, t.first_registered_at]));
}

/** The write functions' `registrations` argument: [[tool_name, fingerprint, enabled, created_at], ...]. */
function registrationRowsOf(tools: readonly ToolWrite[]): string {
  return JSON.stringify(tools.map((t) => [t.tool_name, t.fingerprint, t.enabled, t.created_at]));
}

/**
 * Writes tools in one round trip whatever their number (migration 0001's tool_registry_write:
 * the rows travel as two JSON parameters, so no 65,535-parameter limit and no per-value
 * escaping in JavaScript). Returns the head after the write.
 */
export async function writeTools(trx: Db, schema: string, tools: readonly ToolWrite[]): Promise<Omit<Head, 'generation'>> {
  // Raw SQL is not rewritten by withSchema: name the schema.
  const { rows } = await sql<{ revision: string; token: string }>`SELECT revision, token FROM ${sql.id(schema, 'tool_registry_write')}(${specRowsOf(tools)}::json, ${registrationRowsOf(tools)}::json)`.execute(trx);
  const head = rows[0];
  if (head === undefined) throw new Error('tool_registry_write returned no head');
  return { revision: safeInteger(head.revision, 'head revision'), token: head.token };
}

const writeIfStatements = new Map<string, { readonly name: string; readonly text: string }>();

/**
 * The text of a schema's one-statement write and a name for it: `tool_registry_write_if_`
 * and a hash of the schema (schemas may share a pool, and a name holds one text per connection).
 */
function writeIfStatement(schema: string): { readonly name: string; readonly text: string } {
  let statement = writeIfStatements.get(schema);
  if (statement === undefined) {
    statement = {
      name: `tool_registry_write_if_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`,
      text: `SELECT written, revision, token FROM ${quoteIdentifier(schema)}.tool_registry_write_if($1::integer, $2::json, $3::json, $4::json, $5::json)`,
    };
    writeIfStatements.set(schema, statement);
  }
  return statement;
}

/**
 * The one-round-trip write (migrations 0005 and 0008's tool_registry_write_if): takes the
 * locks of `expected`'s names (lock waits bounded by `lockTimeoutMs`) and writes `tools` only
 * if each name's current row is still the one given (`undefined`: no registration). Sent
 * outside a transaction, it commits when it returns. `undefined` when a row differed and
 * nothing was written. Sent by `query` as plain text (the engine's hot path, without Kysely),
 * named, so that a connection may keep it prepared.
 */
export async function writeToolsIf(
  query: StatementRunner,
  schema: string,
  lockTimeoutMs: number,
  expected: ReadonlyMap<string, RegistrationRow | undefined>,
  tools: readonly ToolWrite[],
  policy: { readonly versionOrder: string; readonly compatibility: string },
): Promise<Omit<Head, 'generation'> | undefined> {
  const expectedRows = JSON.stringify(
    Array.from(expected, ([name, row]) =>
      row === undefined
        ? [name, null]
        : [name, row.fingerprint, row.enabled, row.created_at, row.spec_json, row.dep_message, row.dep_replacement, row.dep_sunset],
    ),
  );
  const policyJson = JSON.stringify({ versionOrder: policy.versionOrder, compatibility: policy.compatibility });
  const statement = writeIfStatement(schema);
  const rows = await query(statement.text, [Math.max(1, Math.ceil(lockTimeoutMs)), expectedRows, specRowsOf(tools), registrationRowsOf(tools), policyJson], statement.name);
  const outcome = rows[0] as { written: boolean; revision: string | null; token: string | null } | undefined;
  if (outcome === undefined) throw new Error('tool_registry_write_if returned nothing');
  if (!outcome.written || outcome.revision === null || outcome.token === null) return undefined;
  return { revision: safeInteger(outcome.revision, 'head revision'), token: outcome.token };
}

/**
 * Takes a write's locks (lock waits bounded by `lockTimeoutMs`) and returns the current rows
 * of `names`, read after the locks are held, in one round trip (tool_registry_lock).
 * `exclusive`: the writers' lock alone, exclusively (an import); `names` is then usually empty.
 */
export async function lockAndRead(
  trx: Db,
  schema: string,
  lockTimeoutMs: number,
  exclusive: boolean,
  names: readonly string[],
): Promise<Omit<RegistrationRow, 'dep_message' | 'dep_replacement' | 'dep_sunset'>[]> {
  const { rows } = await sql<Omit<RegistrationRow, 'dep_message' | 'dep_replacement' | 'dep_sunset'>>`SELECT * FROM ${sql.id(schema, 'tool_registry_lock')}(${Math.max(1, Math.ceil(lockTimeoutMs))}::integer, ${exclusive}, ${[...names]}::text[])`.execute(trx);
  return rows;
}

/** Sets `enabled`; `false` when the tool is not there. */
export async function writeEnabled(trx: Db, toolName: string, enabled: boolean): Promise<boolean> {
  const result = await trx.updateTable('tool_registrations').set({ enabled }).where('tool_name', '=', toolName).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Deletes these registrations (their history stays) and logs each one that was there as
 * `removed`, in the order of `names` (migration 0004's tool_registry_delete); returns the
 * names that were there.
 */
export async function deleteTools(trx: Db, schema: string, names: readonly string[]): Promise<string[]> {
  if (names.length === 0) return [];
  // Raw SQL is not rewritten by withSchema: name the schema.
  const { rows } = await sql<{ removed_name: string }>`SELECT removed_name FROM ${sql.id(schema, 'tool_registry_delete')}(${[...names]}::text[])`.execute(trx);
  return rows.map((row) => row.removed_name);
}

// --- the gateway's rows (migration 0007): beside the tools, outside the change log ------

/** One upstream's row, or undefined. */
export async function readUpstream(db: Db, name: string): Promise<UpstreamRow | undefined> {
  return db.selectFrom('tool_upstreams').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Every upstream's row, by name (collated "C": code-point order). */
export async function readUpstreams(db: Db): Promise<UpstreamRow[]> {
  return db.selectFrom('tool_upstreams').selectAll().orderBy('name').execute();
}

/** Inserts the row, or replaces the stored one keeping its created_at; returns the row stored. */
export async function writeUpstream(trx: Db, row: UpstreamRow): Promise<UpstreamRow> {
  return trx
    .insertInto('tool_upstreams')
    .values(row)
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
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** `true` when the row was there. */
export async function deleteUpstream(trx: Db, name: string): Promise<boolean> {
  const result = await trx.deleteFrom('tool_upstreams').where('name', '=', name).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Appends the audit rows in the given order (one statement of ten array parameters, however
 * many rows), then prunes: every id more than `maxRows` below the newest, and every row that
 * started before `oldestAt` (both index ranges, usually empty).
 */
export async function insertCalls(trx: Db, calls: readonly CallRecordInput[], prune: CallPrune): Promise<void> {
  const column = <K extends keyof CallRecordInput>(key: K): CallRecordInput[K][] => calls.map((call) => call[key]);
  await trx
    .insertInto('tool_calls')
    .columns(['at', 'token', 'persona', 'namespace', 'tool', 'version', 'fingerprint', 'upstream', 'duration_ms', 'outcome'])
    .expression(
      sql`SELECT at, token, persona, namespace, tool, version, fingerprint, upstream, duration_ms, outcome FROM unnest(${column('at')}::text[], ${column('token')}::text[], ${column('persona')}::text[], ${column('namespace')}::text[], ${column('tool')}::text[], ${column('version')}::text[], ${column('fingerprint')}::text[], ${column('upstream')}::text[], ${column('duration_ms')}::float8[], ${column('outcome')}::text[]) WITH ORDINALITY AS c(at, token, persona, namespace, tool, version, fingerprint, upstream, duration_ms, outcome, n) ORDER BY n`,
    )
    .execute();
  await trx
    .deleteFrom('tool_calls')
    .where((eb) =>
      eb.or([
        eb('id', '<=', eb.selectFrom('tool_calls').select(sql<string>`max(id) - ${prune.maxRows}`.as('bound'))),
        eb('at', '<', prune.oldestAt),
      ]),
    )
    .execute();
}

/** Audit rows, newest (highest id) first, filtered. */
export async function readCalls(db: Db, query: ParsedCallsQuery): Promise<CallRecord[]> {
  let select = db.selectFrom('tool_calls').selectAll();
  if (query.tool !== undefined) select = select.where('tool', '=', query.tool);
  if (query.token !== undefined) select = select.where('token', '=', query.token);
  if (query.since !== undefined) select = select.where('at', '>=', query.since);
  if (query.before !== undefined) select = select.where('id', '<', String(query.before));
  const rows = await select.orderBy('id', 'desc').limit(query.limit).execute();
  return rows.map((row) => Object.freeze({ ...row, id: safeInteger(row.id, 'tool_calls.id') }));
}
