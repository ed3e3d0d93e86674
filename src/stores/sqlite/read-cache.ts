// The SQLite store's read cache: current registrations served from memory, and never stale.
// Before every read one statement asks SQLite whether anything was committed since the last
// look: `data_version` changes when another connection (or process) commits, and this
// connection's `total_changes()` when it wrote (its own commits leave data_version alone).
// On a change, the cache reads the names that migration 0002's triggers logged after the
// revision it holds and reloads only those, so the work is proportional to the change.
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { compareCodePoints } from '../../core/canonical.js';
import type { ToolRegistration } from '../../core/contracts.js';
import type { StoreReader } from '../../core/base-tool-registry.js';
import type { ToolRecord } from '../../core/rules.js';
import { prepare, queries } from './statement.js';
import type { Statement } from './statement.js';
import { toRecord, toRegistration } from './statements.js';
import type { ToolRow } from './statements.js';

/** Where the cache loads tools from: the store's own prepared statements. */
export interface CacheSource {
  /** The current row of one tool, or undefined. */
  row(toolName: string): ToolRow | undefined;
  /** Every current row, ordered by tool_name (SQLite's BINARY order, which is code-point order). */
  rows(): Iterable<ToolRow>;
}

interface Entry {
  readonly record: ToolRecord;
  /** The row until the registration is first asked for. */
  row: ToolRow | undefined;
  registration: ToolRegistration | undefined;
}

/** Names known to be absent that are remembered while the cache does not hold every tool. */
const MAX_ABSENT = 10_000;
/** Up to this many changes (or a quarter of the cached tools) are applied one by one; more, and the cache starts over. */
const MIN_CHANGES_APPLIED = 1000;

/** One change-log entry with its tool's current row (all null when the tool is gone). */
type ChangeRow = { readonly revision: number; readonly changed: string } & {
  readonly [K in keyof ToolRow]: ToolRow[K] | null;
};

function entryOf(row: ToolRow): Entry {
  return { record: toRecord(row), row, registration: undefined };
}

function registrationOf(entry: Entry): ToolRegistration {
  if (entry.registration === undefined) {
    entry.registration = toRegistration(entry.row as ToolRow);
    entry.row = undefined;
  }
  return entry.registration;
}

/** Index of `name` in a list sorted by name, or where it would go (as `-index - 1`). */
function search<T>(list: readonly T[], name: string, nameOf: (item: T) => string): number {
  let low = 0;
  let high = list.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const order = compareCodePoints(nameOf(list[middle] as T), name);
    if (order === 0) return middle;
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return -low - 1;
}

const itself = (name: string): string => name;
const toolNameOf = (registration: ToolRegistration): string => registration.spec.tool_name;

/** Puts `item` at `name`'s place in a list sorted by name (replacing), or takes it out (`undefined`). */
function place<T>(list: T[], index: number, item: T | undefined): void {
  if (index >= 0) {
    if (item === undefined) list.splice(index, 1);
    else list[index] = item;
  } else if (item !== undefined) {
    list.splice(-index - 1, 0, item);
  }
}

/**
 * Tools are loaded on first use, one by one; the first list (or import plan) loads them all
 * and from then on the cache holds every tool, kept sorted for `listAll`.
 * Not used inside a transaction (the caller's, or the store's own write): then the store
 * reads through SQL, which sees the transaction's uncommitted rows and rolls back with it.
 */
export class SqliteReadCache {
  readonly #db: BetterSqlite3.Database;
  readonly #source: CacheSource;
  readonly #probe: Statement<Record<never, never>, { data_version: number; total_changes: number }>;
  readonly #head: Statement<Record<never, never>, { head: number | null }>;
  readonly #changes: Statement<{ revision: number }, ChangeRow>;
  #dataVersion = -1;
  #totalChanges = -1;
  /** The change-log revision the cache reflects; -1 before the first look. */
  #revision = -1;
  #entries = new Map<string, Entry>();
  readonly #absent = new Set<string>();
  /** Sorted names of every tool, once the cache holds every tool. */
  #names: string[] | undefined;
  #all: ToolRegistration[] | undefined;
  #enabled: ToolRegistration[] | undefined;

  constructor(db: BetterSqlite3.Database, source: CacheSource) {
    this.#db = db;
    this.#source = source;
    // One step answers "did anyone commit?": data_version moves on another connection's
    // commit, total_changes() on this connection's own writes.
    this.#probe = prepare(db, () =>
      queries.selectNoFrom([
        sql<number>`(SELECT data_version FROM pragma_data_version)`.as('data_version'),
        sql<number>`total_changes()`.as('total_changes'),
      ]),
    );
    this.#head = prepare(db, () => queries.selectFrom('tool_changes').select((e) => e.fn.max('revision').as('head')));
    // The log after `revision`, each entry with its tool's current row (null columns once
    // removed): one statement, so one snapshot.
    this.#changes = prepare(db, (p: { revision: number }) =>
      queries
        .selectFrom('tool_changes as c')
        .leftJoin('tool_registrations as r', 'r.tool_name', 'c.tool_name')
        .leftJoin('tool_specs as s', (join) => join.onRef('s.tool_name', '=', 'r.tool_name').onRef('s.fingerprint', '=', 'r.fingerprint'))
        .select(['c.revision', 'c.tool_name as changed', 'r.tool_name', 's.version', 'r.fingerprint', 'r.enabled', 'r.created_at', 's.spec_json'])
        .where('c.revision', '>', p.revision)
        .orderBy('c.revision'),
    ) as Statement<{ revision: number }, ChangeRow>;
  }

  /**
   * Brings the cache up to date with every commit so far. Returns false when the cache must
   * not be used now (the connection is inside a transaction); read through SQL then.
   */
  sync(): boolean {
    if (this.#db.inTransaction) return false;
    const { data_version: dataVersion, total_changes: totalChanges } = this.#probe.get() as { data_version: number; total_changes: number };
    if (dataVersion === this.#dataVersion && totalChanges === this.#totalChanges) return true;
    this.#catchUp();
    // Recorded only once caught up: a failed catch-up is retried by the next read.
    this.#dataVersion = dataVersion;
    this.#totalChanges = totalChanges;
    return true;
  }

  /**
   * Applies the changes logged since the cache's revision. The log must continue right after
   * that revision (else entries were pruned, or the database was replaced): if it does not,
   * or when more changed than is worth applying one by one, the cache starts over.
   */
  #catchUp(): void {
    const from = this.#revision;
    const limit = Math.max(MIN_CHANGES_APPLIED, this.#entries.size >>> 2);
    const rows = from < 0 ? [] : this.#changesAfter(from, limit + 1);
    if (rows.length === 0 && from >= 0) {
      // A commit that logged nothing (another table), unless the log went backwards.
      if ((this.#head.get()?.head ?? 0) === from) return;
    } else if (rows.length > 0 && rows.length <= limit && (rows[0] as ChangeRow).revision === from + 1) {
      const latest = new Map<string, ChangeRow>();
      for (const row of rows) latest.set(row.changed, row);
      for (const [name, row] of latest) {
        this.#changedTool(name, row.tool_name === null || row.spec_json === null ? undefined : (row as ToolRow));
      }
      this.#revision = (rows[rows.length - 1] as ChangeRow).revision;
      return;
    }
    // Nothing loaded after this point can be older than the head read here.
    this.clear();
    this.#revision = this.#head.get()?.head ?? 0;
  }

  /** At most `max` log entries after `revision` (a LIMIT parameter made the statement slower). */
  #changesAfter(revision: number, max: number): ChangeRow[] {
    const rows: ChangeRow[] = [];
    for (const row of this.#changes.iterate({ revision })) {
      rows.push(row);
      // Enough to know the cache starts over: too many, or the log does not reach back.
      if (rows.length >= max || rows[0]?.revision !== revision + 1) break;
    }
    return rows;
  }

  #changedTool(name: string, row: ToolRow | undefined): void {
    const cached = this.#entries.has(name) || this.#absent.delete(name);
    if (this.#names === undefined) {
      // Not holding every tool: refresh it if known, else leave it to the next read of it.
      if (row !== undefined && cached) this.#entries.set(name, entryOf(row));
      else if (row === undefined) this.#entries.delete(name);
      return;
    }
    // Holding every tool: patch the sorted names, and the lists already built, in place.
    const entry = row === undefined ? undefined : entryOf(row);
    if (entry === undefined) this.#entries.delete(name);
    else this.#entries.set(name, entry);
    place(this.#names, search(this.#names, name, itself), entry === undefined ? undefined : name);
    const listed = entry === undefined || (this.#all === undefined && this.#enabled === undefined) ? undefined : registrationOf(entry);
    if (this.#all !== undefined) place(this.#all, search(this.#all, name, toolNameOf), listed);
    if (this.#enabled !== undefined) {
      place(this.#enabled, search(this.#enabled, name, toolNameOf), listed?.enabled === true ? listed : undefined);
    }
  }

  #entry(name: string): Entry | undefined {
    const entry = this.#entries.get(name);
    if (entry !== undefined || this.#names !== undefined || this.#absent.has(name)) return entry;
    const row = this.#source.row(name);
    if (row === undefined) {
      if (this.#absent.size >= MAX_ABSENT) this.#absent.clear();
      this.#absent.add(name);
      return undefined;
    }
    const loaded = entryOf(row);
    this.#entries.set(name, loaded);
    return loaded;
  }

  #loadAll(): string[] {
    if (this.#names !== undefined) return this.#names;
    const entries = new Map<string, Entry>();
    const names: string[] = [];
    for (const row of this.#source.rows()) {
      // Keep what is already materialized when the row is the same.
      const known = this.#entries.get(row.tool_name);
      const same =
        known !== undefined &&
        known.record.fingerprint === row.fingerprint &&
        known.record.enabled === (row.enabled === 1) &&
        known.record.created_at === row.created_at;
      entries.set(row.tool_name, same ? known : entryOf(row));
      names.push(row.tool_name);
    }
    this.#entries = entries;
    this.#absent.clear();
    this.#names = names;
    return names;
  }

  /** The current record of a tool (call `sync()` first). */
  find(name: string): ToolRecord | undefined {
    return this.#entry(name)?.record;
  }

  /** The current registration of a tool (call `sync()` first). */
  get(name: string): ToolRegistration | undefined {
    const entry = this.#entry(name);
    return entry === undefined ? undefined : registrationOf(entry);
  }

  /** Current registrations by name (call `sync()` first); the array is the cache's own: copy it. */
  list(includeDisabled: boolean): readonly ToolRegistration[] {
    const names = this.#loadAll();
    this.#all ??= names.map((name) => registrationOf(this.#entries.get(name) as Entry));
    if (includeDisabled) return this.#all;
    this.#enabled ??= this.#all.filter((registration) => registration.enabled);
    return this.#enabled;
  }

  /** Every current record by name (call `sync()` first). */
  records(): Map<string, ToolRecord> {
    const names = this.#loadAll();
    return new Map(names.map((name) => [name, (this.#entries.get(name) as Entry).record]));
  }

  /** A reader over the cache (call `sync()` first). */
  reader(): StoreReader {
    return {
      find: (name) => this.find(name),
      get: (name) => this.get(name),
      records: () => this.records(),
    };
  }

  /** Forgets every tool; they are loaded again on demand. */
  clear(): void {
    this.#entries = new Map();
    this.#absent.clear();
    this.#names = undefined;
    this.#all = undefined;
    this.#enabled = undefined;
  }
}
