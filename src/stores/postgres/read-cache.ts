// The PostgreSQL store's read cache: current registrations in memory, coherent across
// instances. The change log is the truth, LISTEN/NOTIFY only the wake-up: a notification
// (or the store's own commit, or a (re)connect of the listener) marks the cache behind, and
// the next read first catches up from the log in one REPEATABLE READ transaction, reading
// each changed name's current row once. Memory answers only while the listener is up and
// has proven itself alive within `stalenessMs` (its heartbeat); otherwise reads go to the
// database, so a lost listener never makes the cache serve data older than that bound.
// While the database cannot be reached, memory may still answer for `staleIfErrorMs` after
// the listener last confirmed it (servesWhileUnavailable), and not a moment longer.
// The heartbeat also asks whether the role may still read the tables memory answers from
// (rights): a REVOKE sends no notification, so without it a revoked role read on from memory
// for as long as the listener stayed up.
import { compareCodePoints } from '../../core/canonical.js';
import { readChanges, readHead, readRegistrations } from './tables.js';
import type { Db, Head, RegistrationRow } from './tables.js';

/** What the cache needs to know about the listener. */
export interface ListenerState {
  readonly listening: boolean;
  /** `performance.now()` before which every commit has been notified. */
  readonly confirmedAt: number;
  /** `confirmedAt` as it was when the listener was last up (kept after it is lost). */
  readonly lastConfirmedAt: number;
}

export interface ReadCacheOptions<T> {
  /** Runs a read in one REPEATABLE READ snapshot (the engine's bounded read). */
  readonly read: <R>(work: (trx: Db) => Promise<R>) => Promise<R>;
  readonly schema: string;
  readonly listener: ListenerState;
  /** Serve from memory only if the listener confirmed itself within this many ms. */
  readonly stalenessMs: number;
  /** While the database cannot be reached: answer from memory for this long after the listener last confirmed it. */
  readonly staleIfErrorMs: number;
  /** Builds the value handed out (once per row, on first use). */
  readonly convert: (row: RegistrationRow) => T;
}

interface Entry<T> {
  readonly row: RegistrationRow;
  value: T | undefined;
}

/** The tables memory answers from (and catches up from): a role must be able to read all of them. */
export const CACHED_TABLES: readonly string[] = ['tool_registrations', 'tool_specs', 'tool_deprecations', 'tool_registry_head', 'tool_changes'];

/** More changed names than this in one catch-up: reload everything instead. */
const MAX_CHANGES = 10_000;

export class PostgresReadCache<T> {
  readonly #options: ReadCacheOptions<T>;
  readonly #entries = new Map<string, Entry<T>>();
  /** Names in code-point order; rebuilt after a change. */
  #sorted: string[] | undefined;
  /** The log position the entries reflect (undefined: never loaded). */
  #head: Head | undefined;
  /** The token of the log entry at `#head.revision` (undefined at revision 0). */
  #headEntryToken: string | undefined;
  /** Bumped by every reason to look at the log again. */
  #wakeups = 0;
  /** The value of #wakeups when the last completed catch-up began. */
  #caughtUpTo = -1;
  /** The value of #wakeups after the last wake-up that was not a notification (an invalidation). */
  #invalidatedAt = -1;
  /**
   * The value of #wakeups after the last wake-up that memory must catch up with before it may
   * answer while the database is away: a notification, a (re)connect of the listener, an own
   * write it could not take. Not the listener's loss or a failed write: what those may hide
   * committed after the listener's last confirmation, inside the bound.
   */
  #requiredAt = -1;
  /** The highest head revision a notification announced. */
  #notifiedUpTo = -1;
  #running: Promise<void> | undefined;
  /** The heartbeat found a right to read gone: memory is dropped and answers nothing until it is back. */
  #refused = false;
  /** Bumped when memory is dropped: a catch-up begun before leaves its result unused. */
  #epoch = 0;
  /** Counters, for tests and status. */
  readonly stats = { reloads: 0, catchUps: 0, uncachedReads: 0, hits: 0, staleReads: 0 };

  constructor(options: ReadCacheOptions<T>) {
    this.#options = options;
  }

  /** A notification arrived with the new head revision as payload. */
  notified(payload: string): void {
    const revision = Number(payload);
    if (!Number.isSafeInteger(revision)) return this.invalidate();
    // A listener hears commits in order, so revisions only grow: one at or below a revision
    // already notified is a commit on a log restored to an older state (a dump sends no
    // notification of its own), which the catch-up finds replaced. Ignored, the cache kept the
    // state before the restore until the log passed its revision again. (Below the cache's
    // revision alone is no sign: the notifications of its own writes often come after it took them.)
    const restored = revision <= this.#notifiedUpTo;
    // Every notification counts (its own writes' too): at most the cache's revision, they do not
    // make an own write look behind (ownWrite).
    this.#notifiedUpTo = Math.max(this.#notifiedUpTo, revision);
    if (this.#head === undefined || revision > this.#head.revision || restored) {
      this.#wakeups++;
      this.#requiredAt = this.#wakeups;
    }
  }

  /**
   * Something may have changed (own commit, listener (re)connected or lost): look at the log
   * before the next answer. `required: false` for the listener's loss and a failed write: they
   * do not keep memory from answering while the database is away (servesWhileUnavailable).
   */
  invalidate(required = true): void {
    this.#wakeups++;
    this.#invalidatedAt = this.#wakeups;
    if (required) this.#requiredAt = this.#wakeups;
  }

  /**
   * The heartbeat's word on whether the role may still read what memory holds (USAGE on the
   * schema, SELECT on CACHED_TABLES). Gone: memory is dropped, so reads go to the database and
   * meet its refusal (42501, naming the right). Back: the next read reloads.
   */
  rights(readable: boolean): void {
    if (readable === !this.#refused) return;
    this.#refused = !readable;
    if (!readable) {
      this.#epoch++;
      this.#entries.clear();
      this.#sorted = undefined;
      this.#head = undefined;
      this.#headEntryToken = undefined;
    }
    this.invalidate();
  }

  /**
   * Whether memory may answer a read the database could not (STORAGE_UNAVAILABLE): it was
   * loaded, it caught up with every notification and reconnect it saw, and the listener last
   * confirmed, at most `staleIfErrorMs` ago, that every commit before then had been notified.
   * What it answers is then the state of at most that long ago. Counts the read when it may.
   */
  servesWhileUnavailable(): boolean {
    const lastConfirmed = this.#options.listener.lastConfirmedAt;
    const may = !this.#refused && this.#head !== undefined && this.#caughtUpTo >= this.#requiredAt && performance.now() - lastConfirmed <= this.#options.staleIfErrorMs;
    if (may) this.stats.staleReads++;
    return may;
  }

  /**
   * This instance's own committed write: `entries` log entries that took the head to `head`,
   * leaving `rows` (undefined: removed). When nothing else was logged in between (the head
   * moved by exactly `entries` from the cache's), the cache takes the rows as they are and
   * skips a catch-up; otherwise it looks at the log before its next answer. The write's own
   * notification often arrives before its COMMIT's reply: wake-ups that are notifications of
   * revisions up to `head.revision` are then covered by the write itself (nothing else was
   * logged between the cache's head and it), so they cost no catch-up.
   */
  ownWrite(entries: number, head: { readonly revision: number; readonly token: string }, rows: ReadonlyMap<string, RegistrationRow | undefined>): void {
    const current = this.#head;
    const behind = this.#caughtUpTo < this.#wakeups && (this.#invalidatedAt > this.#caughtUpTo || this.#notifiedUpTo > head.revision);
    if (current === undefined || this.#running !== undefined || head.revision !== current.revision + entries || behind) {
      // Behind: the next answer catches up first. The rows written are still the best guess
      // for the next write decided on memory (`decidable`), which checks them under its locks.
      if (current !== undefined) this.#take(rows);
      this.invalidate();
      return;
    }
    this.#caughtUpTo = this.#wakeups;
    this.#take(rows);
    this.#head = { ...current, revision: head.revision, token: head.token };
    this.#headEntryToken = head.token;
  }

  #take(rows: ReadonlyMap<string, RegistrationRow | undefined>): void {
    for (const [name, row] of rows) {
      if (row === undefined) {
        if (this.#entries.delete(name)) this.#sorted = undefined;
      } else {
        if (!this.#entries.has(name)) this.#sorted = undefined;
        this.#entries.set(name, { row, value: undefined });
      }
    }
  }

  /** The revision the cache reflects (-1 before the first load). */
  get revision(): number {
    return this.#head?.revision ?? -1;
  }

  /** The position the cache reflects (undefined before the first load): its revision, token and generation. */
  get head(): Head | undefined {
    return this.#head;
  }

  /**
   * Whether a write that checks its rows under its locks (the one-statement write) may be
   * decided on memory as it is now, without catching up first: loaded, and the listener up and
   * confirmed. Memory may be behind (another instance's commit not yet read): such a write
   * then finds a row that differs and writes nothing, and is made again the locked way.
   */
  get decidable(): boolean {
    const { listening, confirmedAt } = this.#options.listener;
    return !this.#refused && this.#head !== undefined && listening && performance.now() - confirmedAt <= this.#options.stalenessMs;
  }

  /**
   * Resolves `true` once memory may answer (caught up with every wake-up seen before the
   * call), or `false` when the caller must read the database (listener down or unconfirmed).
   */
  async ready(): Promise<boolean> {
    const { listening, confirmedAt } = this.#options.listener;
    if (this.#refused || !listening || performance.now() - confirmedAt > this.#options.stalenessMs) {
      this.invalidate(false);
      this.stats.uncachedReads++;
      return false;
    }
    const wanted = this.#wakeups;
    while (this.#caughtUpTo < wanted) {
      if (this.#running === undefined) {
        const started = this.#wakeups;
        this.#running = this.#catchUp()
          .then(() => {
            this.#caughtUpTo = Math.max(this.#caughtUpTo, started);
          })
          .finally(() => {
            this.#running = undefined;
          });
      }
      await this.#running;
    }
    // Dropped while waiting (rights gone, maybe back): the catch-up's result was not used.
    if (this.#refused || this.#head === undefined) {
      this.stats.uncachedReads++;
      return false;
    }
    this.stats.hits++;
    return true;
  }

  /** The current value of a tool, or undefined (only after ready() said true). */
  get(toolName: string): T | undefined {
    const entry = this.#entries.get(toolName);
    return entry === undefined ? undefined : this.#value(entry);
  }

  /** The current row of a tool (no conversion). */
  row(toolName: string): RegistrationRow | undefined {
    return this.#entries.get(toolName)?.row;
  }

  /** Every cached name (any order). */
  names(): IterableIterator<string> {
    return this.#entries.keys();
  }

  /** Current values in code-point order of their names. */
  list(includeDisabled: boolean): T[] {
    this.#sorted ??= [...this.#entries.keys()].sort(compareCodePoints);
    const out: T[] = [];
    for (const name of this.#sorted) {
      const entry = this.#entries.get(name) as Entry<T>;
      if (includeDisabled || entry.row.enabled) out.push(this.#value(entry));
    }
    return out;
  }

  #value(entry: Entry<T>): T {
    entry.value ??= this.#options.convert(entry.row);
    return entry.value;
  }

  async #catchUp(): Promise<void> {
    const head = this.#head;
    if (head === undefined) return this.#reload();
    const epoch = this.#epoch;
    await this.#options.read(async (trx) => {
      const page = await readChanges(trx, this.#options.schema, head.revision, MAX_CHANGES + 1);
      if (epoch !== this.#epoch) return;
      const followed =
        page.head.generation === head.generation &&
        page.head.revision >= head.revision &&
        // The entry the cache stopped at is still the one it saw (a restored dump may reuse the number).
        (head.revision === 0 ? true : page.sinceToken === this.#headEntryToken) &&
        (page.head.revision > head.revision || page.head.token === head.token) &&
        page.changes.length <= MAX_CHANGES;
      if (!followed) return this.#reload(trx);
      this.stats.catchUps++;
      if (page.changes.length === 0) return;
      const names = [...new Set(page.changes.map((change) => change.tool_name))];
      const rows = await readRegistrations(trx, { includeDisabled: true, names });
      if (epoch !== this.#epoch) return;
      const found = new Map(rows.map((row) => [row.tool_name, row]));
      let membership = false;
      for (const name of names) {
        const row = found.get(name);
        if (row === undefined) membership = this.#entries.delete(name) || membership;
        else {
          membership ||= !this.#entries.has(name);
          this.#entries.set(name, { row, value: undefined });
        }
      }
      if (membership) this.#sorted = undefined;
      this.#head = page.head;
      this.#headEntryToken = page.changes.at(-1)?.token ?? this.#headEntryToken;
    });
  }

  /** Loads every tool and the head in one snapshot (inside `trx`, or a new read). */
  async #reload(trx?: Db): Promise<void> {
    if (trx === undefined) {
      return this.#options.read((inner) => this.#reload(inner));
    }
    this.stats.reloads++;
    const epoch = this.#epoch;
    const head = await readHead(trx);
    const { sinceToken } = await readChanges(trx, this.#options.schema, head.revision, 0);
    const rows = await readRegistrations(trx, { includeDisabled: true });
    if (epoch !== this.#epoch) return;
    this.#entries.clear();
    for (const row of rows) this.#entries.set(row.tool_name, { row, value: undefined });
    this.#sorted = rows.map((row) => row.tool_name);
    this.#head = head;
    this.#headEntryToken = sinceToken;
  }
}
