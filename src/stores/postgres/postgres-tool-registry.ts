// The PostgreSQL store: the registry contract over node-postgres and Kysely. The core decides
// (the rule, preconditions, import plans); this store reads what a decision needs under the
// locks of its scope, and applies the decision in the same transaction (engine.ts). Reads come
// from the read cache while it is coherent, else from the database.
import type pg from 'pg';
import { checkStoredRow } from '../../core/stored-row.js';
import type { StoreVerifyProblem, StoreVerifyReport } from '../../core/stored-row.js';
import type { ToolRegistration as ToolRegistrationType } from '../../core/contracts.js';
import { BaseToolRegistry, refuseUnknownOptions } from '../../core/base-tool-registry.js';
import { BatchQueue } from '../../core/batch-queue.js';
import type { ChangeLogPage, FollowRead, StoreChange, StoreReader, StoreScope, WriteDecision, WritePlan } from '../../core/base-tool-registry.js';
import { logMark, logReplaced } from '../../core/change-log-mark.js';
import type { SearchHead } from '../../core/search/registry-search.js';
import { RegistryClosedError, StorageUnavailableError } from '../../core/errors.js';
import type { ChangeEvent, HistoryEntry, RegistryOptions, ToolRegistry } from '../../core/registry.js';
import type { StoreMetrics } from '../../core/store-metrics.js';
import { changeAction } from '../../core/rules.js';
import type { ToolRecord } from '../../core/rules.js';
import { deprecationColumns, deprecationOfColumns as deprecationOf } from '../../core/stored-row.js';
import { makeRegistration, materializeSpec } from '../../core/validation.js';
import { DEFAULT_POLICY, policyOf } from '../../core/versions.js';
import type { RegistryPolicy } from '../../core/versions.js';
import { renamedBusy } from './busy.js';
import { isConnectionFailure } from './connections.js';
import { PostgresEngine } from './engine.js';
import type { PostgresEngineStatus } from './engine.js';
import type { PostgresReadCache } from './read-cache.js';
import { resolveCallRetention, upstreamFromRow, upstreamToRow } from '../../core/upstreams.js';
import type { CallPrune, CallRecord, CallRecordInput, ParsedCallsQuery, Upstream } from '../../core/upstreams.js';
import {
  deleteTools,
  deleteUpstream,
  insertCalls,
  readCalls,
  readUpstream,
  readUpstreams,
  writeUpstream,
  readChanges,
  readHead,
  readHistory,
  readRegistration,
  readPolicyAndDeprecations,
  readRegistrations,
  readTools,
  markRollbacks,
  writeDeprecation,
  writeEnabled,
  writePolicy,
  writeTools,
  writeToolsIf,
} from './tables.js';
import type { Db, Head, RegistrationRow, ToolRow, ToolWrite } from './tables.js';

export interface PostgresToolRegistryOptions extends RegistryOptions {
  /** A PostgreSQL URL (`postgres://user:pass@host:5432/db`). Exactly one of `connectionString` and `pool`. */
  readonly connectionString?: string;
  /** Your own node-postgres `Pool`; `close()` leaves it open. */
  readonly pool?: pg.Pool;
  /** The schema the registry's tables live in (created and migrated at open). Default `'tool_registry'`. */
  readonly schema?: string;
  /**
   * Serve reads from memory. Default `true`. Coherent across instances: every commit (any
   * instance's, or a hand edit in psql) wakes a LISTEN connection and the next read catches up
   * from the change log; while the listener is down or unconfirmed for 1 s, reads go to the
   * database. This instance's own writes are visible to its next read.
   */
  readonly cache?: boolean;
  /**
   * While the database cannot be reached (reads would fail with `STORAGE_UNAVAILABLE`), reads
   * may answer from the cache for this many ms after the listener last confirmed it current
   * (every commit before that moment was in it); after that, `STORAGE_UNAVAILABLE`. 0: never.
   * Writes always fail while the database is away. Default 5000.
   */
  readonly staleIfErrorMs?: number;
  /** How long a write may wait for locks (retrying deadlocks and serialization failures) before `STORAGE_BUSY`. Default 5000. */
  readonly busyTimeoutMs?: number;
  /** Cancels any statement of the registry's that runs longer (`STORAGE_BUSY`). Default: none. */
  readonly statementTimeoutMs?: number;
  /** Open without migrating or writing; every write fails with `READ_ONLY`. The schema must be migrated. */
  readonly readonly?: boolean;
  /**
   * Where the LISTEN connection goes, when the pool's server cannot LISTEN (PgBouncer in
   * transaction mode: give the database's direct URL here). Default: the pool's own settings.
   * A URL that cannot connect does not fail the open: until the listener connects (it keeps
   * retrying), every read is a query and `status().listening` is `false`.
   */
  readonly listenConnectionString?: string;
}

/** What `status()` reports. */
export type PostgresStatus = PostgresEngineStatus;

/** One problem `verify()` found (`reference`: a registration without its spec history row). */
export type PostgresVerifyProblem = StoreVerifyProblem<'reference'>;

/** What `verify()` reports: `ok` when every current row meets the contracts. */
export type PostgresVerifyReport = StoreVerifyReport<PostgresVerifyProblem>;

export interface PostgresToolRegistry extends ToolRegistry {
  /** Counts, applied migrations, the revision and the listener's state, for operators and the CLI. */
  status(): Promise<PostgresStatus>;
  /** Checks that every current row's spec parses, meets the contract and has the fingerprint of its canonical form. */
  verify(): Promise<PostgresVerifyReport>;
  /** Counters since the open: the read cache's hits, misses and reads answered while the database was away, committed write transactions. */
  storeMetrics(): StoreMetrics;
}

function toRecord(row: ToolRow): ToolRecord {
  return { tool_name: row.tool_name, version: row.version, fingerprint: row.fingerprint, enabled: row.enabled, created_at: row.created_at, deprecation: deprecationOf(row) };
}

/** A record with its spec text, as the row a store read would give. */
function rowOf(record: ToolRecord, specJson: string): RegistrationRow {
  const { tool_name, version, fingerprint, enabled, created_at } = record;
  return { tool_name, version, fingerprint, enabled, created_at, spec_json: specJson, ...deprecationColumns(record.deprecation) };
}

function toRegistration(row: RegistrationRow): ToolRegistrationType {
  return makeRegistration(materializeSpec(row.spec_json), row.enabled, row.created_at, deprecationOf(row));
}

type PutChange = Extract<StoreChange, { kind: 'put' }>;

/** The methods whose writes may go as one statement (`#writeFromCache`): those that put tools, or switch them, by name. */
const ONE_STATEMENT_METHODS: ReadonlySet<string> = new Set(['register', 'registerMany', 'setEnabled']);

/** The reads before a write that answer `undefined` when the write must go ahead (BaseToolRegistry's register, registerMany). */
const UNCHANGED_READS: ReadonlySet<string> = new Set(['register', 'registerMany']);

/**
 * A change as the one-statement write sends it: a put as it is; a switch of `enabled` as a put
 * of the tool's current row with the new flag (the write function keeps the spec row the tool
 * points at, and logs `enabled`/`disabled` for a flag alone); a delete cannot be sent (undefined).
 */
function asPut(change: StoreChange, rows: ReadonlyMap<string, RegistrationRow>): PutChange | undefined {
  // A rollback's log entry is marked after the write, in its transaction: the usual way.
  if (change.kind === 'put') return change.tool.rollback === true ? undefined : change;
  if (change.kind !== 'enable') return undefined;
  const row = rows.get(change.toolName);
  if (row === undefined) return undefined;
  const record: ToolRecord = { ...toRecord(row), enabled: change.enabled };
  // The spec row exists (the registration points at it), so firstRegisteredAt is not written.
  return { kind: 'put', tool: { record, json: row.spec_json, firstRegisteredAt: new Date().toISOString() } };
}

/** `error` with `outcome: 'not_written'` when it is a STORAGE_UNAVAILABLE that says no outcome (it came before the write was sent). */
function notWritten(error: unknown): unknown {
  if (!(error instanceof StorageUnavailableError) || error.context.outcome !== undefined) return error;
  return new StorageUnavailableError(error.message, { ...error.context, outcome: 'not_written' }, error.cause);
}

/** Puts written in one round trip at most: an import's texts are built and sent a chunk at a time. */
const PUT_CHUNK = 1000;

function toWrite(change: PutChange): ToolWrite {
  const { record, json, firstRegisteredAt } = change.tool;
  return { ...rowOf(record, json), first_registered_at: firstRegisteredAt };
}

/**
 * Records in `after` the rows that `puts` leave (the text of a spec a tool already shows is
 * kept) and returns how many log entries they wrote (one per tool whose readers see a change).
 */
function rowsAfterPuts(
  puts: readonly PutChange[],
  before: ReadonlyMap<string, ToolRow | RegistrationRow>,
  after: Map<string, RegistrationRow | undefined>,
  unknownText?: Set<string>,
): number {
  let entries = 0;
  for (const put of puts) {
    const record = put.tool.record;
    const previous = before.get(record.tool_name);
    const same = previous !== undefined && previous.fingerprint === record.fingerprint;
    // The same spec keeps its stored text; an import reads rows without it, so the text given
    // is only a guess there (in another key order, say), which the cache must not serve.
    if (same && !('spec_json' in previous)) unknownText?.add(record.tool_name);
    const text = same && 'spec_json' in previous ? previous.spec_json : put.tool.json;
    after.set(record.tool_name, rowOf(record, text));
    if (changeAction(previous === undefined ? undefined : toRecord(previous), record) !== undefined) entries++;
  }
  return entries;
}

/** A tool's registration after a write: as the write left it (`after`), else as the view saw it. */
function registrationAfter(view: StoreReader, after: ReadonlyMap<string, RegistrationRow | undefined>): (toolName: string) => ToolRegistrationType | undefined {
  return (toolName) => {
    if (!after.has(toolName)) return view.get(toolName);
    const row = after.get(toolName);
    return row === undefined ? undefined : toRegistration(row);
  };
}

/** A view of what a write or read loaded: rows by name (with spec text unless loaded for `all`). */
function viewOf(rows: ReadonlyMap<string, ToolRow | RegistrationRow>, revision: number, policy: RegistryPolicy): StoreReader {
  const built = new Map<string, ToolRegistrationType>();
  return {
    find: (toolName) => {
      const row = rows.get(toolName);
      return row === undefined ? undefined : toRecord(row);
    },
    get: (toolName) => {
      const row = rows.get(toolName);
      if (row === undefined) return undefined;
      if (!('spec_json' in row)) throw new Error(`internal: ${toolName}'s spec was not loaded`);
      let registration = built.get(toolName);
      if (registration === undefined) built.set(toolName, (registration = toRegistration(row)));
      return registration;
    },
    records: () => new Map([...rows].map(([name, row]) => [name, toRecord(row)])),
    revision: () => revision,
    policy: () => policy,
  };
}

/** A write decided on the read cache, queued for its batch's one statement (group commit). */
interface CachedWrite {
  readonly method: string;
  /** The rows the decision read, by name (undefined: no tool). */
  readonly before: ReadonlyMap<string, RegistrationRow | undefined>;
  readonly puts: readonly PutChange[];
  readonly policy: RegistryPolicy;
  /** Written: the call's own revision and the rows it left; undefined: a row differed, nothing written. */
  readonly resolve: (written: { revision: number; after: Map<string, RegistrationRow | undefined> } | undefined) => void;
  readonly reject: (error: unknown) => void;
  /** Settles once the call, after `resolve(undefined)`, has made its write the locked way. */
  readonly fellBack: Promise<void>;
}

/** The rows a decision read that exist. */
function knownRows(before: ReadonlyMap<string, RegistrationRow | undefined>): Map<string, RegistrationRow> {
  const known = new Map<string, RegistrationRow>();
  for (const [name, row] of before) if (row !== undefined) known.set(name, row);
  return known;
}

class PostgresToolRegistryImpl extends BaseToolRegistry implements PostgresToolRegistry {
  readonly #engine: PostgresEngine<ToolRegistrationType>;
  /**
   * Group commit of the writes decided on the cache: the calls queued in one turn of the
   * event loop go as one tool_registry_write_if statement (one round trip, one commit, one
   * update of the head row), as long as their names are distinct, few enough to lock one by
   * one, and they were decided under the same policies.
   */
  readonly #batches = new BatchQueue<CachedWrite>({
    joins: (batch, next) => {
      if (next.policy !== (batch[0] as CachedWrite).policy) return false;
      const names = batch.flatMap((call) => [...call.before.keys()]);
      if ([...next.before.keys()].some((name) => names.includes(name))) return false;
      return this.#engine.canWriteInOneStatement([...names, ...next.before.keys()]);
    },
    run: (batch) => this.#writeBatch(batch),
  });
  /**
   * The policies as this instance last read them: what a write decided on the read cache
   * assumes. The one-statement write compares them with the stored ones under its locks and
   * writes nothing when they differ (then the write reads them again, the usual way).
   */
  #knownPolicy: RegistryPolicy = DEFAULT_POLICY;

  constructor(engine: PostgresEngine<ToolRegistrationType>, options: RegistryOptions) {
    super(options);
    this.#engine = engine;
  }

  /**
   * For the steps of a call: a call made before close() takes its next steps (the write after
   * its read) while close() waits for it; only once the engine is closed are they refused.
   */
  #assertOpen(operation: string): void {
    if (this.#engine.closed) throw new RegistryClosedError(operation);
  }

  /** For a call of this store's own (status, verify, getPolicy): refused from close() on. */
  #assertCallable(operation: string): void {
    if (this.closed) throw new RegistryClosedError(operation);
  }

  /**
   * The cache, when it may answer now (caught up); undefined: read the database. A catch-up
   * may serve several calls at once; one that ran out of time is STORAGE_BUSY named after
   * `operation`, the call that waited for it.
   */
  async #cache(operation: string) {
    const cache = this.#engine.cache;
    if (cache === undefined) return undefined;
    try {
      return (await cache.ready()) ? cache : undefined;
    } catch (error) {
      throw renamedBusy(error, operation);
    }
  }

  /**
   * A read: from the cache when it may answer, else from the database; and when the database
   * cannot be reached (STORAGE_UNAVAILABLE), from the cache still if it was confirmed current
   * within `staleIfErrorMs` (docs/postgres.md, "Faults").
   */
  async #reading<R>(operation: string, fromCache: (cache: PostgresReadCache<ToolRegistrationType>) => R, fromDatabase: () => Promise<R>): Promise<R> {
    try {
      const cache = await this.#cache(operation);
      return cache !== undefined ? fromCache(cache) : await fromDatabase();
    } catch (error) {
      const cache = this.#engine.cache;
      // A refusal (42501) is the server's answer, not a server out of reach: a right revoked while
      // the listener was down must not be answered from memory for staleIfErrorMs.
      const refused = error instanceof StorageUnavailableError && error.context.driver_code === '42501';
      if (cache !== undefined && error instanceof StorageUnavailableError && !refused && !this.closed && cache.servesWhileUnavailable()) return fromCache(cache);
      throw error;
    }
  }

  protected async _find(toolName: string): Promise<ToolRecord | undefined> {
    const row = await this.#reading(
      'has',
      (cache) => cache.row(toolName),
      async () => (await this.#engine.read((trx) => readTools(trx, [toolName]), 'has')).get(toolName),
    );
    return row === undefined ? undefined : toRecord(row);
  }

  protected async _get(toolName: string): Promise<ToolRegistrationType | undefined> {
    return this.#reading(
      'get',
      (cache) => cache.get(toolName),
      async () => {
        const row = await this.#engine.read((trx) => readRegistration(trx, toolName), 'get');
        return row === undefined ? undefined : toRegistration(row);
      },
    );
  }

  protected async _list(includeDisabled: boolean): Promise<readonly ToolRegistrationType[]> {
    return this.#reading(
      'listAll',
      (cache) => cache.list(includeDisabled),
      async () => (await this.#engine.read((trx) => readRegistrations(trx, { includeDisabled }), 'listAll')).map(toRegistration),
    );
  }

  protected async _read<T>(scope: StoreScope, work: (reader: StoreReader) => T, operation: string): Promise<T> {
    this.#assertOpen(operation);
    // register's and registerMany's look for an input equal to the stored spec (answered with
    // no write) need no catch-up to find that it is not: a cache behind another instance's
    // commit that finds no equal spec sends the write, which checks every row it was decided on
    // under its locks. Only an equal spec (the answer is then the cache's) or an error waits
    // for the catch-up and is decided again on current rows.
    const cache = this.#engine.cache;
    if (UNCHANGED_READS.has(operation) && cache?.decidable === true) {
      try {
        const answer = work(this.#cachedView(cache, scope));
        if (answer === undefined) return answer;
      } catch {
        // Decided again below, on current rows.
      }
    }
    try {
      return await this.#reading(
        operation,
        (cache) => work(this.#cachedView(cache, scope)),
        async () => {
          const { rows, revision } = await this.#engine.read((trx) => this.#load(trx, scope, true), operation);
          return work(viewOf(rows, revision, this.#knownPolicy));
        },
      );
    } catch (error) {
      // The read before register's write: unavailable there, the write was never sent.
      throw UNCHANGED_READS.has(operation) ? notWritten(error) : error;
    }
  }

  /** The cache's rows of a scope, as a view. */
  #cachedView(cache: PostgresReadCache<ToolRegistrationType>, scope: StoreScope): StoreReader {
    const rows = new Map<string, RegistrationRow>();
    if ('names' in scope) {
      for (const name of scope.names) {
        const row = cache.row(name);
        if (row !== undefined) rows.set(name, row);
      }
    } else {
      for (const name of cache.names()) rows.set(name, cache.row(name) as RegistrationRow);
    }
    // Reads never decide under the policies (getPolicy reads them from the database itself).
    return viewOf(rows, cache.revision, this.#knownPolicy);
  }

  async #readPolicy(trx: Db): Promise<RegistryPolicy> {
    const { policy } = await readPolicyAndDeprecations(trx, []);
    this.#knownPolicy = policyOf(policy);
    return this.#knownPolicy;
  }

  override async getPolicy(): Promise<RegistryPolicy> {
    this.#assertCallable('getPolicy');
    return this.#engine.read((trx) => this.#readPolicy(trx), 'getPolicy');
  }

  // --- the gateway's rows (migration 0007): read and written through SQL, never cached ---

  protected _putUpstream(upstream: Upstream): Promise<Upstream> {
    this.#assertOpen('putUpstream');
    return this.#engine.writeRows('putUpstream', async (trx) => upstreamFromRow(await writeUpstream(trx, upstreamToRow(upstream))));
  }

  protected async _getUpstream(name: string): Promise<Upstream | undefined> {
    this.#assertOpen('getUpstream');
    const row = await this.#engine.read((trx) => readUpstream(trx, name), 'getUpstream');
    return row === undefined ? undefined : upstreamFromRow(row);
  }

  protected async _listUpstreams(): Promise<readonly Upstream[]> {
    this.#assertOpen('listUpstreams');
    return (await this.#engine.read(readUpstreams, 'listUpstreams')).map(upstreamFromRow);
  }

  protected _removeUpstream(name: string): Promise<boolean> {
    this.#assertOpen('removeUpstream');
    return this.#engine.writeRows('removeUpstream', (trx) => deleteUpstream(trx, name));
  }

  protected _recordCalls(calls: readonly CallRecordInput[], prune: CallPrune): Promise<void> {
    this.#assertOpen('recordCalls');
    return this.#engine.writeRows('recordCalls', (trx) => insertCalls(trx, calls, prune));
  }

  protected _listCalls(query: ParsedCallsQuery): Promise<readonly CallRecord[]> {
    this.#assertOpen('listCalls');
    return this.#engine.read((trx) => readCalls(trx, query), 'listCalls');
  }

  /** The rows of a scope (with spec text for named tools) and, if asked, the revision, in the caller's transaction. */
  async #load(trx: Db, scope: StoreScope, withRevision: boolean): Promise<{ rows: Map<string, ToolRow | RegistrationRow>; revision: number }> {
    const rows: Map<string, ToolRow | RegistrationRow> =
      'names' in scope
        ? new Map((await readRegistrations(trx, { includeDisabled: true, names: scope.names })).map((row) => [row.tool_name, row]))
        : await readTools(trx);
    return { rows, revision: withRevision ? (await readHead(trx)).revision : Number.NaN };
  }

  protected async _write<T>(method: string, plan: WritePlan<T>): Promise<T> {
    try {
      return await this.#write(method, plan);
    } catch (error) {
      // Unavailable before the write itself was attempted (the cache catching up first): not written.
      throw notWritten(error);
    }
  }

  async #write<T>(method: string, plan: WritePlan<T>): Promise<T> {
    this.#assertOpen(method);
    const fromCache = await this.#writeFromCache(method, plan);
    if (fromCache !== undefined && 'result' in fromCache) return fromCache.result;
    try {
      return await this.#writeLocked(method, plan);
    } finally {
      // A batch that wrote nothing waits for its calls' locked writes, in order.
      fromCache?.fellBack();
    }
  }

  async #writeLocked<T>(method: string, plan: WritePlan<T>): Promise<T> {
    const lock = 'names' in plan.scope ? { names: plan.scope.names } : ({ exclusive: true } as const);
    let written: { entries: number; head: Omit<Head, 'generation'> | undefined; after: Map<string, RegistrationRow | undefined>; onlyPuts: boolean; unknownText: boolean } | undefined;
    const result = await this.#engine.write(method, lock, async (trx, locked, storedPolicy) => {
      const policy = policyOf(storedPolicy);
      this.#knownPolicy = policy;
      // An import judged by the compatibility policy needs the stored specs; otherwise the records do.
      const rows: Map<string, ToolRow | RegistrationRow> =
        'names' in plan.scope
          ? new Map(locked.map((row) => [row.tool_name, row]))
          : policy.compatibility !== 'none' && method === 'importSnapshot'
            ? new Map((await readRegistrations(trx, { includeDisabled: true })).map((row) => [row.tool_name, row]))
            : await readTools(trx);
      const view = viewOf(rows, Number.NaN, policy);
      const decision = plan.decide(view);
      const after = new Map<string, RegistrationRow | undefined>();
      const applied = await this.#apply(trx, decision.changes, rows, after);
      written = { entries: applied.entries, head: applied.head, after, onlyPuts: applied.onlyPuts, unknownText: applied.unknownText };
      const revision = plan.needsRevision === true ? (applied.head?.revision ?? (await readHead(trx)).revision) : Number.NaN;
      return decision.result({
        found: applied.found,
        revision: () => revision,
        get: registrationAfter(view, after),
      });
    });
    const cache = this.#engine.cache;
    if (cache !== undefined && written !== undefined) {
      const { entries, head, after, onlyPuts, unknownText } = written;
      // Nothing written: nothing to tell. Puts alone report the head: the cache takes the rows.
      // (A deprecation an import changed leaves no row in `after`: the cache catches up on it.)
      if (entries === 0 && after.size === 0 && onlyPuts) return result;
      // A row whose stored text the write did not read: the cache reads it from the log's changes.
      if (head !== undefined && !unknownText) cache.ownWrite(entries, head, after);
      else cache.invalidate();
    }
    return result;
  }

  /**
   * A write decided on the read cache's rows and sent as one statement that writes only if
   * those rows are still current (migration 0005): one round trip instead of four. Only for
   * puts and switches of named tools (register, registerMany, setEnabled) with the cache
   * caught up; queued for its batch (group commit). `undefined` when it does not apply, and
   * `fellBack` (to call when done) when its batch wrote nothing: then the write runs under
   * its locks the usual way, so an error (a conflict, a failed precondition, an unknown tool)
   * is always decided on rows read under the locks, never on a cache that may be behind.
   */
  async #writeFromCache<T>(method: string, plan: WritePlan<T>): Promise<{ result: T } | { fellBack: () => void } | undefined> {
    // Only the writes that decide puts or switches: remove neither pays for a cache that has
    // to catch up first nor decides twice.
    if (!ONE_STATEMENT_METHODS.has(method) || !('names' in plan.scope) || this.#engine.readonly) return undefined;
    if (!this.#engine.canWriteInOneStatement(plan.scope.names)) return undefined;
    // No catch-up first: the statement compares every row it was decided on with the current
    // one under its locks, so a cache behind another instance's commit costs a fallback, not a
    // wrong write; waiting for the catch-up cost each instance of a fleet a read transaction
    // before its writes whenever another instance had written.
    const cache = this.#engine.cache?.decidable === true ? this.#engine.cache : await this.#cache(method);
    if (cache === undefined) return undefined;
    const before = new Map<string, RegistrationRow | undefined>();
    for (const name of plan.scope.names) before.set(name, cache.row(name));
    const known = knownRows(before);
    const policy = this.#knownPolicy;
    const view = viewOf(known, Number.NaN, policy);
    let decision: WriteDecision<T>;
    let puts: PutChange[];
    try {
      decision = plan.decide(view);
      const changes = [...decision.changes];
      if (changes.length === 0) return undefined;
      const asPuts = changes.map((change) => asPut(change, known));
      if (!asPuts.every((change): change is PutChange => change !== undefined)) return undefined;
      puts = asPuts;
    } catch {
      return undefined;
    }
    let fellBack = (): void => {};
    const done = new Promise<void>((resolve) => (fellBack = resolve));
    const written = await new Promise<{ revision: number; after: Map<string, RegistrationRow | undefined> } | undefined>((resolve, reject) =>
      this.#batches.push({ method, before, puts, policy, resolve, reject, fellBack: done }),
    );
    if (written === undefined) return { fellBack };
    const result = decision.result({
      found: puts.map(() => true),
      revision: () => written.revision,
      get: registrationAfter(view, written.after),
    });
    return { result };
  }

  /**
   * One batch of writes decided on the cache, as one statement: written whole when every row
   * they were decided on is still current, else not at all (then each call writes the usual
   * way). Each call gets its own revision: the function logs the puts in order, one entry per
   * tool whose readers see a change.
   */
  async #writeBatch(batch: CachedWrite[]): Promise<void> {
    const before = new Map<string, RegistrationRow | undefined>();
    for (const call of batch) for (const [name, row] of call.before) before.set(name, row);
    const puts = batch.flatMap((call) => call.puts);
    const first = batch[0] as CachedWrite;
    let head: Omit<Head, 'generation'> | undefined;
    try {
      head = await this.#engine.writeInOneStatement(first.method, (query, lockTimeoutMs) =>
        writeToolsIf(query, this.#engine.schema, lockTimeoutMs, before, puts.map(toWrite), first.policy),
      );
    } catch (error) {
      // A role without EXECUTE on the function: nothing was written; the locked way follows.
      if (!this.#engine.refusedOneStatement(error)) {
        for (const call of batch) call.reject(error);
        return;
      }
    }
    if (head === undefined) {
      // Each call is decided again under its locks, one after the other in arrival order
      // (a later batch could otherwise overtake them), before the next batch.
      for (const call of batch) {
        call.resolve(undefined);
        await call.fellBack;
      }
      return;
    }
    // Whatever throws from here on (the statement committed), every call settles: a call left
    // pending would hang its caller for good.
    try {
      const afters = batch.map((call) => {
        const after = new Map<string, RegistrationRow | undefined>();
        return { after, entries: rowsAfterPuts(call.puts, knownRows(call.before), after) };
      });
      const all = new Map<string, RegistrationRow | undefined>();
      let entries = 0;
      for (const one of afters) {
        for (const [name, row] of one.after) all.set(name, row);
        entries += one.entries;
      }
      // Committed: the cache learns of it before anything else can throw.
      this.#engine.cache?.ownWrite(entries, head, all);
      let revision = head.revision;
      for (let i = batch.length - 1; i >= 0; i--) {
        const one = afters[i] as { after: Map<string, RegistrationRow | undefined>; entries: number };
        (batch[i] as CachedWrite).resolve({ revision, after: one.after });
        revision -= one.entries;
      }
    } catch (error) {
      for (const call of batch) call.reject(error);
    }
  }

  /**
   * Applies changes in order (a run of puts in one round trip per `PUT_CHUNK`, a run of
   * deletes in one statement); returns `found` per change, the number of log entries
   * written when known (puts only), and the head after the last put. The changes are taken
   * from the iterator as they are written: an import's spec texts are built a chunk at a time.
   */
  async #apply(
    trx: Db,
    changes: Iterable<StoreChange>,
    before: ReadonlyMap<string, ToolRow | RegistrationRow>,
    after: Map<string, RegistrationRow | undefined>,
  ): Promise<{ found: boolean[]; entries: number; head: Omit<Head, 'generation'> | undefined; onlyPuts: boolean; unknownText: boolean }> {
    const found: boolean[] = [];
    const unknownText = new Set<string>();
    let head: Omit<Head, 'generation'> | undefined;
    let entries = 0;
    let onlyPuts = true;
    const iterator = changes[Symbol.iterator]();
    let next = iterator.next();
    while (next.done !== true) {
      const change: StoreChange = next.value;
      if (change.kind === 'deprecate') {
        onlyPuts = false;
        await writeDeprecation(trx, change.toolName, change.deprecation);
        found.push(true);
        const row: ToolRow | RegistrationRow | undefined = after.has(change.toolName) ? after.get(change.toolName) : before.get(change.toolName);
        if (row !== undefined && 'spec_json' in row) after.set(change.toolName, { ...(row as RegistrationRow), ...deprecationColumns(change.deprecation) });
        next = iterator.next();
        continue;
      }
      if (change.kind === 'policy') {
        onlyPuts = false;
        await writePolicy(trx, change.policy);
        this.#knownPolicy = change.policy;
        found.push(true);
        next = iterator.next();
        continue;
      }
      if (change.kind === 'enable') {
        onlyPuts = false;
        found.push(await writeEnabled(trx, change.toolName, change.enabled));
        const row = before.get(change.toolName);
        if (row !== undefined && 'spec_json' in row) after.set(change.toolName, { ...row, enabled: change.enabled });
        next = iterator.next();
        continue;
      }
      // A run of the same kind (puts: at most PUT_CHUNK), taken from the iterator.
      const run: StoreChange[] = [];
      while (next.done !== true && next.value.kind === change.kind && (change.kind !== 'put' || run.length < PUT_CHUNK)) {
        run.push(next.value);
        next = iterator.next();
      }
      if (change.kind === 'put') {
        const puts = run as PutChange[];
        head = await writeTools(trx, this.#engine.schema, puts.map(toWrite));
        entries += rowsAfterPuts(puts, before, after, unknownText);
        await markRollbacks(trx, puts.filter((put) => put.tool.rollback === true).map((put) => put.tool.record.tool_name));
        for (let i = 0; i < puts.length; i++) found.push(true);
      } else {
        onlyPuts = false;
        const names = (run as Extract<StoreChange, { kind: 'delete' }>[]).map((one) => one.toolName);
        const deleted = new Set(await deleteTools(trx, this.#engine.schema, names));
        for (const name of names) {
          found.push(deleted.has(name));
          after.set(name, undefined);
        }
      }
    }
    return { found, entries, head: onlyPuts ? head : undefined, onlyPuts, unknownText: unknownText.size > 0 };
  }

  protected async _history(toolName: string): Promise<readonly HistoryEntry[]> {
    const rows = await this.#engine.read((trx) => readHistory(trx, toolName), 'history');
    return rows.map((row) => Object.freeze({ spec: materializeSpec(row.spec_json), fingerprint: row.fingerprint, first_registered_at: row.first_registered_at }));
  }

  protected async _changes(since: number, limit: number, follow?: FollowRead): Promise<ChangeLogPage> {
    const page = await this.#engine.read((trx) => readChanges(trx, this.#engine.schema, since, limit), 'changes');
    const events = page.changes.map(
      ({ revision, tool_name, action, version, at, rollback }): ChangeEvent =>
        Object.freeze(rollback ? { revision, tool_name, action, version, at, rollback: true as const } : { revision, tool_name, action, version, at }),
    );
    const read = { revision: page.head.revision, oldestRevision: page.oldestRevision, events };
    if (follow === undefined) return read;
    // A watch's marks (core/change-log-mark.ts): the schema's generation and the token of the
    // entry at a revision (the head's token is its newest entry's; revision 0 has no entry).
    const { generation } = page.head;
    const last = page.changes.at(-1);
    const endToken = last !== undefined && page.changes.length === limit ? last.token : page.head.revision > 0 ? page.head.token : undefined;
    return { ...read, mark: logMark(generation, endToken), replaced: logReplaced(follow.mark, since, generation, page.sinceToken) };
  }

  protected _revision(): Promise<number> {
    return this.#engine.revision();
  }

  /**
   * Search (issue 26): the read cache's position while it may answer, so an idle search costs
   * no round trip, else the head read now; with the log's mark there (generation and the head's
   * token, as `_changes` marks it), so that a dump restored at the very revision the index
   * reflects is found at the next search that reads it, as on SQLite.
   */
  protected override async _searchRevision(): Promise<SearchHead> {
    const head = await this.#reading('search', (cache) => cache.head, () => this.#engine.head());
    if (head === undefined) return -1;
    return { revision: head.revision, mark: logMark(head.generation, head.revision > 0 ? head.token : undefined) };
  }

  protected _waitForChange(revision: number, signal: AbortSignal): Promise<void> {
    return this.#engine.waitForChange(revision, signal);
  }

  /**
   * A watch also waits out the server going away (a restart, a failover, a cut connection),
   * but not a role that may not read the log (42501): that lasts until a DBA grants the right,
   * and a watch waiting on it printed nothing at all (`tool-registry watch`).
   */
  protected override _isTransient(error: unknown): boolean {
    if (error instanceof StorageUnavailableError && error.context.driver_code === '42501') return false;
    return super._isTransient(error) || isConnectionFailure(error);
  }

  protected async _close(): Promise<void> {
    // Calls made before close() finish first, as in the other stores: a register that was
    // reading the cache when close() came was refused (REGISTRY_CLOSED), a write on the pool
    // was cut off with it (STORAGE_BUSY). A call's next step starts within a turn of the loop.
    this.#engine.closing();
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (!this.#engine.busy && this.#batches.idle) break;
      await this.#batches.flush();
      await this.#engine.idle();
    }
    await this.#engine.close();
  }

  async status(): Promise<PostgresStatus> {
    this.#assertCallable('status');
    return Object.freeze(await this.#engine.status());
  }

  storeMetrics(): StoreMetrics {
    const cache = this.#engine.cache?.stats;
    const writes = { writeBatches: this.#engine.writeBatches };
    return Object.freeze(cache === undefined ? writes : { cacheHits: cache.hits, cacheMisses: cache.uncachedReads, staleReads: cache.staleReads, ...writes });
  }

  async verify(): Promise<PostgresVerifyReport> {
    this.#assertCallable('verify');
    const rows = await this.#engine.read((trx) => readRegistrations(trx, { includeDisabled: true }), 'verify');
    const problems: PostgresVerifyProblem[] = [];
    for (const row of rows) problems.push(...checkStoredRow(row));
    return Object.freeze({ ok: problems.length === 0, checkedTools: rows.length, problems: Object.freeze(problems) });
  }
}

/** Every option `openPostgresToolRegistry` takes (any other is refused). */
const POSTGRES_OPTIONS = [
  'connectionString',
  'pool',
  'schema',
  'cache',
  'staleIfErrorMs',
  'busyTimeoutMs',
  'statementTimeoutMs',
  'readonly',
  'listenConnectionString',
  'clock',
  'callRetention',
] as const satisfies readonly (keyof PostgresToolRegistryOptions)[];

/**
 * Opens a registry on PostgreSQL: connects (your `pool`, or one made from `connectionString`),
 * creates and migrates `schema` unless `readonly` (N instances starting at once apply each
 * migration once), and starts the LISTEN connection for the read cache and `watch`.
 * @throws TypeError for bad options; SCHEMA_TOO_NEW when the schema was migrated by a newer
 *   release (left untouched); STORAGE_BUSY when the migration lock is not obtained in time
 */
export async function openPostgresToolRegistry(options: PostgresToolRegistryOptions): Promise<PostgresToolRegistry> {
  refuseUnknownOptions('openPostgresToolRegistry', options, POSTGRES_OPTIONS);
  const clock = (options as PostgresToolRegistryOptions | undefined)?.clock;
  if (clock !== undefined && typeof clock !== 'function') throw new TypeError(`openPostgresToolRegistry(): clock must be a function, got ${typeof clock}`);
  // Checked before connecting, as the clock is.
  const callRetention = resolveCallRetention((options as PostgresToolRegistryOptions | undefined)?.callRetention);
  const engine = await PostgresEngine.open<ToolRegistrationType>({ ...options, convert: toRegistration });
  return new PostgresToolRegistryImpl(engine, clock === undefined ? { callRetention } : { clock, callRetention });
}
