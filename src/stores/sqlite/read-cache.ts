// The SQLite store's read cache: current registrations served from memory, and never stale.
// Before every read two tiny statements ask SQLite whether anything was committed since the
// last look: `data_version` changes when another connection (or process) commits, and this
// connection's `total_changes()` when it wrote (its own commits leave data_version alone).
// On a change, the cache checks that the change log is still the one it followed (the token
// of the entry it stopped at, and the database's generation: migration 0003), reads the
// distinct names logged since with each one's current row, read once, all in one read
// transaction; so the work is proportional to what changed, not to the number of changes.
// The store's own batch transactions need no catch-up: when one begins at the cache's
// position, its changes are applied directly once it has committed (`OwnWrite`).
import type BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import type { ExpressionBuilder } from 'kysely';
import type { SqliteSchema } from './schema.js';
import { compareCodePoints } from '../../core/canonical.js';
import type { ToolRegistration } from '../../core/contracts.js';
import type { StoredTool, StoreReader } from '../../core/base-tool-registry.js';
import type { Deprecation } from '../../core/contracts.js';
import type { ToolRecord } from '../../core/rules.js';
import { sameDeprecation } from '../../core/rules.js';
import { makeRegistration, materializeSpec } from '../../core/validation.js';
import { compileStatement, once, prepareAll, queries } from './statement.js';
import { prepareCommitMarks, toRecord } from './statements.js';
import type { ToolRow } from './statements.js';

/** Where the cache loads tools from: the store's own prepared statements. */
export interface CacheSource {
  /** The current row of one tool, or undefined. */
  row(toolName: string): ToolRow | undefined;
  /** Every current row, ordered by tool_name (SQLite's BINARY order, which is code-point order). */
  rows(): Iterable<ToolRow>;
}

/**
 * A cached tool: its record, and its spec's stored text until the registration is first
 * asked for (not the row it was read from: the record holds the rest, so a catch-up keeps
 * no second object per changed row).
 */
export interface Entry {
  readonly record: ToolRecord;
  json: string | undefined;
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
  return { record: toRecord(row), json: row.spec_json, registration: undefined };
}

function registrationOf(entry: Entry): ToolRegistration {
  if (entry.registration === undefined) {
    const { record } = entry;
    entry.registration = makeRegistration(materializeSpec(entry.json as string), record.enabled, record.created_at, record.deprecation);
    entry.json = undefined;
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

/** The newest change-log entry's revision and token, as two columns of a select. */
function logHead(eb: ExpressionBuilder<SqliteSchema, never>) {
  const newest = () => eb.selectFrom('tool_changes').orderBy('revision', 'desc').limit(1);
  return [newest().select('revision').as('revision'), newest().select('token').as('token')] as const;
}

/** The cache's queries of the change log, compiled once per process (on first use). */
const compiledLog = once(() => ({
  // Where the log is, and whether the entry at `from` is still there: one statement.
  state: compileStatement((p: { from: number }) =>
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
  // once removed): each row is read once, however often its tool changed. The name is read
  // once, from the log (one string a row: the catch-up's heap is counted against the rows).
  changedRows: compileStatement((p: { revision: number }) =>
    queries
      .selectFrom((eb) =>
        eb.selectFrom('tool_changes').select('tool_name').distinct().where('revision', '>', p.revision).as('c'),
      )
      .leftJoin('tool_registrations as r', 'r.tool_name', 'c.tool_name')
      .leftJoin('tool_specs as s', (join) => join.onRef('s.tool_name', '=', 'r.tool_name').onRef('s.fingerprint', '=', 'r.fingerprint'))
      .leftJoin('tool_deprecations as d', 'd.tool_name', 'r.tool_name')
      .select([
        'c.tool_name',
        's.version',
        'r.fingerprint',
        'r.enabled',
        'r.created_at',
        's.spec_json',
        'd.message as dep_message',
        'd.replacement as dep_replacement',
        'd.sunset as dep_sunset',
      ]),
  ),
  // Inside the store's own write transaction, first and last: the log's head (and, first,
  // the generation; last, total_changes() with the write's own changes).
  writeStart: compileStatement(() =>
    queries.selectNoFrom((eb) => [eb.selectFrom('tool_changes_generation').select('generation').limit(1).as('generation'), ...logHead(eb)]),
  ),
  writeEnd: compileStatement(() => queries.selectNoFrom((eb) => [sql<number>`total_changes()`.as('total_changes'), ...logHead(eb)])),
}));

function prepareLog(db: BetterSqlite3.Database) {
  return {
    ...prepareAll(db, compiledLog()),
    commitMarks: prepareCommitMarks(db),
    begin: db.prepare('BEGIN'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
  };
}

/** How to undo one change of an `OwnWrite`: the name and what it held for the name before. */
interface Undo {
  readonly name: string;
  readonly had: boolean;
  readonly before: Entry | undefined;
}

/**
 * This connection's own write transaction, followed while it runs, for a cache that held
 * exactly the state it began from (the log's head at BEGIN IMMEDIATE was the cache's
 * position, so nobody else can have written in between, and nobody can until COMMIT).
 * Reads see the write's own changes over the cache; each call of a batch marks where it
 * began, so a call undone (group-commit.ts) is forgotten with its changes. Nothing reaches the cache
 * before COMMIT succeeded.
 */
export class OwnWrite {
  readonly #cache: SqliteReadCache;
  /** The data_version the cache has seen once this write is applied. */
  readonly dataVersion: number;
  readonly generation: string | null;
  /** Each changed name's state after the write so far (undefined: removed). */
  readonly changed = new Map<string, Entry | undefined>();
  /** How to undo each change, newest last: the name and what `changed` held before. */
  readonly #undo: Undo[] = [];
  /** Set by `SqliteReadCache.finishWrite()`, right before COMMIT. */
  end: { readonly position: Position; readonly totalChanges: number } | undefined;

  constructor(cache: SqliteReadCache, dataVersion: number, generation: string | null) {
    this.#cache = cache;
    this.dataVersion = dataVersion;
    this.generation = generation;
  }

  /** The cache's entry of a tool, loaded when needed (inside a followed write: its starting state). */
  entry(name: string): Entry | undefined {
    return this.changed.has(name) ? this.changed.get(name) : this.#cache.entry(name);
  }

  find(name: string): ToolRecord | undefined {
    return this.entry(name)?.record;
  }

  get(name: string): ToolRegistration | undefined {
    const entry = this.entry(name);
    return entry === undefined ? undefined : registrationOf(entry);
  }

  #set(name: string, entry: Entry | undefined): void {
    this.#undo.push({ name, had: this.changed.has(name), before: this.changed.get(name) });
    this.changed.set(name, entry);
  }

  /**
   * The tool as just written. `row` reads it back inside the transaction when the stored text
   * is not `tool.json` (the tool already showed this spec, and its text was kept).
   */
  put(tool: StoredTool, textKept: boolean, row: () => ToolRow | undefined): void {
    const name = tool.record.tool_name;
    if (textKept) {
      const written = row();
      this.#set(name, written === undefined ? undefined : entryOf(written));
      return;
    }
    const record = { ...tool.record };
    const registration = tool.registration;
    this.#set(name, { record, json: registration === undefined ? tool.json : undefined, registration });
  }

  setEnabled(name: string, enabled: boolean, row: () => ToolRow | undefined): void {
    const entry = this.entry(name);
    if (entry === undefined) {
      const written = row();
      this.#set(name, written === undefined ? undefined : entryOf(written));
      return;
    }
    const record = { ...entry.record, enabled };
    this.#set(
      name,
      entry.registration === undefined
        ? { record, json: entry.json, registration: undefined }
        : { record, json: undefined, registration: makeRegistration(entry.registration.spec, enabled, entry.registration.created_at, entry.registration.deprecation) },
    );
  }

  setDeprecation(name: string, deprecation: Deprecation | null, row: () => ToolRow | undefined): void {
    const entry = this.entry(name);
    if (entry === undefined) {
      const written = row();
      this.#set(name, written === undefined ? undefined : entryOf(written));
      return;
    }
    const record = { ...entry.record, deprecation };
    this.#set(
      name,
      entry.registration === undefined
        ? { record, json: entry.json, registration: undefined }
        : { record, json: undefined, registration: makeRegistration(entry.registration.spec, entry.record.enabled, entry.registration.created_at, deprecation) },
    );
  }

  delete(name: string): void {
    this.#set(name, undefined);
  }

  /** Where a call begins. */
  mark(): number {
    return this.#undo.length;
  }

  /** Forgets the changes made since `mark` (the call was undone). */
  undo(mark: number): void {
    while (this.#undo.length > mark) {
      const { name, had, before } = this.#undo.pop() as Undo;
      if (had) this.changed.set(name, before);
      else this.changed.delete(name);
    }
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
  readonly #log: ReturnType<typeof prepareLog>;
  #dataVersion = -1;
  #totalChanges = -1;
  /** Where in the change log the cache is; undefined before the first look. */
  #position: Position | undefined;
  #entries = new Map<string, Entry>();
  readonly #absent = new Set<string>();
  /** Sorted names of every tool, once the cache holds every tool. */
  #names: string[] | undefined;
  /**
   * Changes not yet put into `#names` and the lists (undefined: removed), merged by the next
   * read of a list: patching the sorted lists costs time that grows with the number of
   * tools, which a write must not pay (64 concurrent registers took 3 ms with 100 tools
   * cached, 28 ms with 100,000).
   */
  #unlisted = new Map<string, Entry | undefined>();
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
    const { dataVersion, totalChanges } = this.#log.commitMarks();
    if (dataVersion === this.#dataVersion && totalChanges === this.#totalChanges) return true;
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
    this.#dataVersion = dataVersion;
    this.#totalChanges = totalChanges;
    return true;
  }

  /**
   * Called first thing inside the store's own write transaction (BEGIN IMMEDIATE): when the
   * log's head is exactly the cache's position, every change until COMMIT is this write's,
   * and it is followed (an `OwnWrite`); else undefined, and the next read catches up.
   */
  beginWrite(): OwnWrite | undefined {
    const position = this.#position;
    if (position === undefined || this.#dataVersion === -1) return undefined;
    const start = this.#log.writeStart.get();
    if (
      start === undefined ||
      (start.generation ?? null) !== position.generation ||
      (start.revision ?? 0) !== position.revision ||
      (start.token ?? null) !== position.token
    ) {
      return undefined;
    }
    // data_version stays what the cache last saw: a commit by another connection since (one
    // that logged nothing, as the head shows) only costs the next read a look at the log.
    return new OwnWrite(this, this.#dataVersion, position.generation);
  }

  /** Right before COMMIT: the head the write leads to, and this connection's change count. */
  finishWrite(write: OwnWrite): void {
    const end = this.#log.writeEnd.get();
    write.end = {
      position: { generation: write.generation, revision: end?.revision ?? 0, token: end?.token ?? null },
      totalChanges: end?.total_changes ?? -1,
    };
  }

  /**
   * After COMMIT succeeded: the write's changes, applied as a catch-up would have, and the
   * cache's position moved to the head the write left (read inside its transaction).
   */
  applyWrite(write: OwnWrite): void {
    const end = write.end;
    if (end === undefined) return;
    try {
      // As after a catch-up, only tools the cache holds (keeping every tool a register wrote
      // grew the cache with tools nobody read here: 64 concurrent registers took 60-100 us
      // longer a batch).
      write.changed.forEach((entry, name) => {
        if (this.#keeps(name)) this.#put(name, entry);
      });
      this.#position = end.position;
      this.#dataVersion = write.dataVersion;
      this.#totalChanges = end.totalChanges;
    } catch {
      // Never left half-applied (and never failing a write that committed): start over at the next read.
      this.clear();
      this.#position = undefined;
      this.#dataVersion = -1;
    }
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
    if (position === undefined || state === undefined || !SqliteReadCache.#follows(position, head, state)) {
      this.clear();
      this.#position = head;
      return;
    }
    if (head.revision === position.revision) return;
    // Each changed name once, each current row once: not one row per logged change. Each row
    // is put in as it is read, and dropped (its entry keeps the strings): no array or map of
    // the changed rows is built (issue 13, item 4: the catch-up's heap against the rows').
    try {
      for (const row of this.#log.changedRows.iterate({ revision: position.revision })) {
        const name = row.tool_name;
        if (this.#keeps(name)) this.#put(name, row.fingerprint === null || row.spec_json === null ? undefined : entryOf(row as ToolRow));
      }
    } catch (error) {
      // Never left half-applied: a catch-up that failed half-way forgets every tool (they
      // are loaded again on demand) and starts again from the old position.
      this.clear();
      throw error;
    }
    this.#position = head;
  }

  /**
   * Whether a changed tool's new state is kept: when the cache holds it (or every tool).
   * Else it is forgotten, absent or not, and the next read of it loads it.
   */
  #keeps(name: string): boolean {
    if (this.holds(name)) return true;
    this.#absent.delete(name);
    return false;
  }

  /** Puts a changed tool's new state (undefined: removed) into the entries and, later, the sorted lists. */
  #put(name: string, entry: Entry | undefined): void {
    if (entry === undefined) this.#entries.delete(name);
    else this.#entries.set(name, entry);
    if (this.#names !== undefined) this.#unlisted.set(name, entry);
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

  /** The cache's entry of a tool, loaded when needed (inside a followed write: its starting state). */
  entry(name: string): Entry | undefined {
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
    if (this.#names !== undefined) {
      if (this.#unlisted.size > 0) {
        const changed = this.#unlisted;
        this.#unlisted = new Map();
        this.#patchLists(changed);
      }
      return this.#names as string[];
    }
    const entries = new Map<string, Entry>();
    const names: string[] = [];
    for (const row of this.#source.rows()) {
      // Keep what is already materialized when the row is the same.
      const known = this.#entries.get(row.tool_name);
      const same =
        known !== undefined &&
        known.record.fingerprint === row.fingerprint &&
        known.record.enabled === (row.enabled === 1) &&
        known.record.created_at === row.created_at &&
        sameDeprecation(known.record.deprecation, toRecord(row).deprecation);
      entries.set(row.tool_name, same ? known : entryOf(row));
      names.push(row.tool_name);
    }
    this.#entries = entries;
    this.#absent.clear();
    this.#names = names;
    return names;
  }

  /** Whether the cache holds this tool's entry (or every tool), as of its last look. */
  holds(name: string): boolean {
    return this.#names !== undefined || this.#entries.has(name);
  }

  /** The current record of a tool (call `sync()` first). */
  find(name: string): ToolRecord | undefined {
    return this.entry(name)?.record;
  }

  /** The current registration of a tool (call `sync()` first). */
  get(name: string): ToolRegistration | undefined {
    const entry = this.entry(name);
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
  reader(): Omit<StoreReader, 'revision' | 'policy'> {
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
    this.#unlisted = new Map();
    this.#all = undefined;
    this.#enabled = undefined;
  }
}
