// The SQLite store's read cache: current registrations served from memory, and never stale.
// Before every read one statement asks SQLite whether anything was committed since the last
// look: `data_version` changes when another connection (or process) commits, and this
// connection's `total_changes()` when it wrote (its own commits leave data_version alone).
// On a change, the cache checks that the change log is still the one it followed (the token
// of the entry it stopped at, and the database's generation: migration 0003), reads the
// distinct names logged since with each one's current row, read once, all in one read
// transaction; so the work is proportional to what changed, not to the number of changes.
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { compareCodePoints } from '../../core/canonical.js';
import type { ToolRegistration } from '../../core/contracts.js';
import type { StoreReader } from '../../core/base-tool-registry.js';
import type { ToolRecord } from '../../core/rules.js';
import { prepare, queries } from './statement.js';
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

/** The point of the change log the cache reflects. */
interface Position {
  readonly generation: string | null;
  readonly revision: number;
  /** The token of the entry at `revision` (null for revision 0: no entry). */
  readonly token: string | null;
}

/** Names known to be absent that are remembered while the cache does not hold every tool. */
const MAX_ABSENT = 10_000;
/** Up to this many changed names are spliced into the sorted lists one by one; more are merged in one pass. */
const MAX_SPLICED = 64;

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
function place<T>(list: T[], name: string, nameOf: (item: T) => string, item: T | undefined): void {
  const index = search(list, name, nameOf);
  if (index >= 0) {
    if (item === undefined) list.splice(index, 1);
    else list[index] = item;
  } else if (item !== undefined) {
    list.splice(-index - 1, 0, item);
  }
}

/** The sorted `names` with every changed name put in (when present now) or taken out, in one pass. */
function mergeNames(names: readonly string[], changed: ReadonlyMap<string, Entry | undefined>): string[] {
  const sortedChanges = [...changed.keys()].sort(compareCodePoints);
  // Sized once: growing an array of 100k names by push would copy it several times.
  const merged = new Array<string>(names.length + sortedChanges.length);
  let length = 0;
  let i = 0;
  for (const name of sortedChanges) {
    while (i < names.length && compareCodePoints(names[i] as string, name) < 0) merged[length++] = names[i++] as string;
    if (i < names.length && names[i] === name) i++;
    if (changed.get(name) !== undefined) merged[length++] = name;
  }
  while (i < names.length) merged[length++] = names[i++] as string;
  merged.length = length;
  return merged;
}

function prepareLog(db: BetterSqlite3.Database) {
  return {
    // One step answers "did anyone commit?": data_version moves on another connection's
    // commit, total_changes() on this connection's own writes.
    probe: prepare(db, () =>
      queries.selectNoFrom([
        sql<number>`(SELECT data_version FROM pragma_data_version)`.as('data_version'),
        sql<number>`total_changes()`.as('total_changes'),
      ]),
    ),
    // Where the log is, and whether the entry at `from` is still there: one statement.
    state: prepare(db, (p: { from: number }) =>
      queries
        .selectFrom((eb) => eb.selectFrom('tool_changes').select((e) => e.fn.max('revision').as('revision')).as('h'))
        .select((eb) => [
          'h.revision',
          eb.selectFrom('tool_changes_generation').select('generation').limit(1).as('generation'),
          eb.selectFrom('tool_changes as t').select('t.token').whereRef('t.revision', '=', 'h.revision').as('token'),
          eb.selectFrom('tool_changes as t').select('t.token').where('t.revision', '=', p.from).as('from_token'),
          eb.selectFrom('tool_changes as t').select((e) => e.fn.min('t.revision').as('oldest')).as('oldest'),
        ]),
    ),
    // The distinct names changed after `revision`, each with its current row (null columns
    // once removed): each row is read once, however often its tool changed.
    changedRows: prepare(db, (p: { revision: number }) =>
      queries
        .selectFrom((eb) =>
          eb.selectFrom('tool_changes').select('tool_name').distinct().where('revision', '>', p.revision).as('c'),
        )
        .leftJoin('tool_registrations as r', 'r.tool_name', 'c.tool_name')
        .leftJoin('tool_specs as s', (join) => join.onRef('s.tool_name', '=', 'r.tool_name').onRef('s.fingerprint', '=', 'r.fingerprint'))
        .select(['c.tool_name as changed', 'r.tool_name', 's.version', 'r.fingerprint', 'r.enabled', 'r.created_at', 's.spec_json']),
    ),
    begin: db.prepare('BEGIN'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
  };
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
  readonly #log: ReturnType<typeof prepareLog>;
  #dataVersion = -1;
  #totalChanges = -1;
  /** Where in the change log the cache is; undefined before the first look. */
  #position: Position | undefined;
  #entries = new Map<string, Entry>();
  readonly #absent = new Set<string>();
  /** Sorted names of every tool, once the cache holds every tool. */
  #names: string[] | undefined;
  #all: ToolRegistration[] | undefined;
  #enabled: ToolRegistration[] | undefined;

  constructor(db: BetterSqlite3.Database, source: CacheSource) {
    this.#db = db;
    this.#source = source;
    this.#log = prepareLog(db);
  }

  /**
   * Brings the cache up to date with every commit so far. Returns false when the cache must
   * not be used now (the connection is inside a transaction); read through SQL then.
   */
  sync(): boolean {
    if (this.#db.inTransaction) return false;
    const probe = this.#log.probe.get() as { data_version: number; total_changes: number };
    if (probe.data_version === this.#dataVersion && probe.total_changes === this.#totalChanges) return true;
    // One read transaction: the log and the rows fetched for it are one snapshot (another
    // process may commit between two statements, even after this connection's own write).
    const log = this.#log;
    log.begin.run();
    try {
      this.#catchUp();
      log.commit.run();
    } catch (error) {
      if (this.#db.inTransaction) log.rollback.run();
      throw error;
    }
    // Recorded only once caught up: a failed catch-up is retried by the next read.
    this.#dataVersion = probe.data_version;
    this.#totalChanges = probe.total_changes;
    return true;
  }

  /** Whether the log still holds, unchanged, every entry after `position` (`state` read at it). */
  static #follows(position: Position, head: Position, state: { from_token: string | null; oldest: number | null }): boolean {
    if (position.generation !== head.generation || head.revision < position.revision) return false;
    // Nothing was logged at revision 0: then the log must still begin at its first entry.
    if (position.revision === 0) return state.oldest === null || state.oldest === 1;
    return state.from_token === position.token;
  }

  /**
   * Applies the changes logged since the cache's position, or starts over when the log is
   * not the one the cache followed (restored, replaced, or pruned past its position).
   */
  #catchUp(): void {
    const position = this.#position;
    const state = this.#log.state.get({ from: position?.revision ?? 0 });
    const head: Position = { generation: state?.generation ?? null, revision: state?.revision ?? 0, token: state?.token ?? null };
    this.#position = head;
    if (position === undefined || state === undefined || !SqliteReadCache.#follows(position, head, state)) {
      this.clear();
      return;
    }
    if (head.revision === position.revision) return;
    // Each changed name once, each current row once: not one row per logged change.
    const changed = new Map<string, Entry | undefined>();
    for (const row of this.#log.changedRows.iterate({ revision: position.revision })) {
      const name = row.changed;
      if (this.#names === undefined && !this.#entries.has(name)) {
        // Not holding every tool, and not this one: the next read of it loads it.
        this.#absent.delete(name);
        continue;
      }
      changed.set(name, row.tool_name === null || row.spec_json === null ? undefined : entryOf(row as ToolRow));
    }
    for (const [name, entry] of changed) {
      if (entry === undefined) this.#entries.delete(name);
      else this.#entries.set(name, entry);
    }
    if (this.#names !== undefined) this.#patchLists(changed);
  }

  /** Brings the sorted names and the lists built from them up to date. */
  #patchLists(changed: ReadonlyMap<string, Entry | undefined>): void {
    const names = this.#names as string[];
    if (changed.size > MAX_SPLICED) {
      // One merge, and the lists are rebuilt on demand from entries (unchanged ones keep their objects).
      this.#names = mergeNames(names, changed);
      this.#all = undefined;
      this.#enabled = undefined;
      return;
    }
    // A few changes: patched in place, in the names and in the lists already built.
    for (const [name, entry] of changed) {
      place(names, name, itself, entry === undefined ? undefined : name);
      const listed = entry === undefined || (this.#all === undefined && this.#enabled === undefined) ? undefined : registrationOf(entry);
      if (this.#all !== undefined) place(this.#all, name, toolNameOf, listed);
      if (this.#enabled !== undefined) place(this.#enabled, name, toolNameOf, listed?.enabled === true ? listed : undefined);
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
  reader(): Omit<StoreReader, 'revision'> {
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
