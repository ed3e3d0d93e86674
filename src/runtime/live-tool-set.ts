// loadToolSet kept current: follows the registry's change feed and derives the set again
// after every commit that touches one of its tools.
import { ChangesExpiredError, RegistryClosedError } from '../core/errors.js';
import type { ToolRegistration } from '../core/contracts.js';
import { sameDeprecation } from '../core/rules.js';
import type { ToolRegistry } from '../core/registry.js';
import { checkLoadArguments, deriveToolSet, nextSunset, readRegistrations } from './bridge.js';
import type { LoadToolSetOptions, ToolSource } from './bridge.js';
import type { Tool } from './define-tool.js';
import type { ToolPolicy } from './policy.js';
import type { ToolSet } from './tool-set.js';

/** Options of `liveToolSet`. */
export interface LiveToolSetOptions extends LoadToolSetOptions {
  /**
   * Hears a failure to follow the registry (a read that failed for another reason than a
   * passing outage, which the feed waits out by itself). The set stays as it was and is
   * derived afresh after a pause (1 s, doubling up to 30 s). Default: a process warning.
   */
  readonly onError?: (error: unknown) => void;
}

/** What a `liveToolSet` listener hears: the new set, the one it replaces, and the revision derived at. */
export interface LiveToolSetChange {
  readonly current: ToolSet;
  readonly previous: ToolSet;
  /** The registry revision the new set reflects (at least). */
  readonly revision: number;
}

/** A `ToolSet` that follows the registry. See `liveToolSet`. */
export interface LiveToolSet extends AsyncDisposable {
  /** The current set: frozen, never changed; a change gives a new one. */
  current(): ToolSet;
  /**
   * `current()` caught up with the registry now: reads the registry's revision (one small
   * read, no rows) and, when a commit landed that the set does not reflect yet or a sunset
   * has passed, derives the set first (listeners hear the change as usual). What a server
   * asks at call time, so that a tool disabled, removed or sunset a moment ago, by any
   * process, does not run while the change feed is still on its way. `tool`: the name the
   * call asks for (a gateway also reads that tool's upstream row, so a call that starts after
   * the upstream's removal committed is refused; `liveToolSet` ignores it).
   * @throws the store's errors when the registry cannot be read
   */
  latest(tool?: string): Promise<ToolSet>;
  /** The registry revision `current()` reflects (at least). */
  readonly revision: number;
  /** Whether `close()` was called. */
  readonly closed: boolean;
  /**
   * Calls `listener` after each change of the set (tools in or out, or what `excluded`
   * says), in order; returns a function that unsubscribes. A listener that throws does not
   * stop the others.
   */
  subscribe(listener: (change: LiveToolSetChange) => void): () => void;
  /** Stops following the registry (idempotent). `current()` keeps the last set; the registry stays open. */
  close(): Promise<void>;
}

/** Up to this many commits of other tools since the set's revision are read rather than deriving the set again (`latest()`). */
const OTHERS_CHECKED = 100;
const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;
/** setTimeout's longest delay; a sunset further away is waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Whether two sets hold the same tools, deprecated alike, and exclude the same ones for the same reasons. */
function sameSet(a: ToolSet, b: ToolSet): boolean {
  const tools = a.tools();
  const others = b.tools();
  if (tools.length !== others.length || a.excluded.length !== b.excluded.length) return false;
  if (tools.some((tool, index) => tool !== others[index] || !sameDeprecation(a.deprecation(tool.name), b.deprecation(tool.name)))) return false;
  return a.excluded.every((entry, index) => entry.tool_name === b.excluded[index]?.tool_name && entry.reason === b.excluded[index]?.reason);
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${(error as { code?: unknown }).code ?? error.name}: ${error.message}` : String(error);
}

function warn(error: unknown): void {
  process.emitWarning(`liveToolSet: cannot follow the registry (${describeError(error)}); retrying`, 'ToolRegistryWarning');
}

class Live implements LiveToolSet {
  readonly #registry: ToolRegistry;
  readonly #tools: readonly Tool[];
  readonly #names: ReadonlySet<string>;
  readonly #policy: ToolPolicy | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #listeners = new Set<(change: LiveToolSetChange) => void>();
  readonly #controller = new AbortController();
  #set: ToolSet;
  #revision: number;
  /** A derivation is running; `#dirty` asks for one more when it ends. */
  #deriving: Promise<void> | undefined;
  #dirty = false;
  /** The newest revision seen in the feed; a derivation started after it reflects it. */
  #seen: number;
  #retryMs = FIRST_RETRY_MS;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #following: Promise<void> | undefined;
  readonly #clock: () => Date;
  /** Derives again at the next sunset: a deprecated tool leaves the set then, with no commit to wake us. */
  #sunsetTimer: ReturnType<typeof setTimeout> | undefined;
  /** When that sunset is (ms), or Infinity. */
  #sunsetAt = Number.POSITIVE_INFINITY;

  constructor(
    registry: ToolRegistry,
    tools: readonly Tool[],
    policy: ToolPolicy | undefined,
    onError: (error: unknown) => void,
    clock: () => Date,
    set: ToolSet,
    revision: number,
  ) {
    this.#registry = registry;
    this.#clock = clock;
    this.#tools = tools;
    this.#names = new Set(tools.map((tool) => tool.name));
    this.#policy = policy;
    this.#onError = onError;
    this.#set = set;
    this.#revision = revision;
    this.#seen = revision;
  }

  current(): ToolSet {
    return this.#set;
  }

  async latest(): Promise<ToolSet> {
    if (this.closed) return this.#set;
    const { revision } = await this.#registry.changes({ limit: 0 });
    // No sunset ahead: no clock to read (a Date per call).
    const sunsetPassed = this.#sunsetAt !== Number.POSITIVE_INFINITY && this.#clock().getTime() >= this.#sunsetAt;
    if (revision <= this.#revision && !sunsetPassed) return this.#set;
    if (!sunsetPassed && (await this.#othersOnly(revision))) return this.#set;
    this.#seen = Math.max(this.#seen, revision);
    // Joins the derivation running (it derives once more) or starts one; it ends reflecting `revision`.
    this.#schedule();
    await this.#deriving;
    if (this.#revision < revision && !this.closed) throw new Error(`liveToolSet: cannot derive the set at revision ${revision} (the registry could not be read)`);
    return this.#set;
  }

  /**
   * Whether the few commits since the set's revision, up to `revision`, touched none of its
   * tools (a busy registry's other tools): then the set reflects `revision` as it is.
   */
  async #othersOnly(revision: number): Promise<boolean> {
    const since = this.#revision;
    if (revision - since > OTHERS_CHECKED) return false;
    try {
      const page = await this.#registry.changes({ since, limit: OTHERS_CHECKED });
      // A full page may stop short of the newest commits: only a page with room to spare is complete.
      if (page.events.length >= OTHERS_CHECKED || page.revision < revision || page.events.some((event) => this.#names.has(event.tool_name))) return false;
      this.#revision = Math.max(this.#revision, page.revision);
      return true;
    } catch {
      return false; // an expired cursor, a restore: derive instead
    }
  }

  get revision(): number {
    return this.#revision;
  }

  get closed(): boolean {
    return this.#controller.signal.aborted;
  }

  subscribe(listener: (change: LiveToolSetChange) => void): () => void {
    if (typeof listener !== 'function') throw new TypeError('LiveToolSet.subscribe(): listener must be a function');
    // Wrapped, so that the same function subscribed twice is heard twice and unsubscribes once.
    const entry = (change: LiveToolSetChange): void => listener(change);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.#controller.abort();
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    if (this.#sunsetTimer !== undefined) clearTimeout(this.#sunsetTimer);
    this.#listeners.clear();
    await this.#following;
    await this.#deriving;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Follows the feed from `since` until closed; a failure is reported and retried from a fresh read. */
  follow(since: number): void {
    this.#following = this.#watch(since);
  }

  async #watch(since: number): Promise<void> {
    try {
      for await (const event of this.#registry.watch({ since, signal: this.#controller.signal })) {
        this.#seen = Math.max(this.#seen, event.revision);
        if (this.#names.has(event.tool_name)) this.#schedule();
      }
      // The feed ended: closed by us, or the registry was closed (nothing more will change).
    } catch (error) {
      // Closed by us, or the registry was closed: nothing more will change.
      if (this.closed || error instanceof RegistryClosedError) return;
      if (!(error instanceof ChangesExpiredError)) this.#report(error);
      this.#restartLater(error instanceof ChangesExpiredError ? 0 : this.#retryMs);
    }
  }

  #report(error: unknown): void {
    try {
      this.#onError(error);
    } catch {
      // A throwing error handler must not stop the set from following.
    }
  }

  /** Derives afresh from the revision current now, then follows the feed from there. */
  #restartLater(delayMs: number): void {
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      void this.#restart();
    }, delayMs);
    this.#retryTimer.unref?.();
  }

  async #restart(): Promise<void> {
    if (this.closed) return;
    try {
      const { revision } = await this.#registry.changes({ limit: 0 });
      this.#seen = Math.max(this.#seen, revision);
      await this.#deriveNow();
      this.#retryMs = FIRST_RETRY_MS;
      this.follow(revision);
    } catch (error) {
      if (this.closed || error instanceof RegistryClosedError) return;
      this.#report(error);
      this.#retryMs = Math.min(this.#retryMs * 2, LAST_RETRY_MS);
      this.#restartLater(this.#retryMs);
    }
  }

  /** Coalesces the events of a commit (and of commits landing meanwhile) into one derivation. */
  #schedule(): void {
    if (this.#deriving !== undefined) {
      this.#dirty = true;
      return;
    }
    this.#deriving = (async () => {
      try {
        do {
          this.#dirty = false;
          await this.#deriveNow();
        } while (this.#dirty && !this.closed);
      } catch (error) {
        if (!this.closed && !(error instanceof RegistryClosedError)) {
          this.#report(error);
          this.#restartLater(this.#retryMs);
        }
      } finally {
        this.#deriving = undefined;
      }
    })();
  }

  /** Arms the timer for the next sunset of the tools in `stored` (none: no timer). */
  armSunset(stored: ReadonlyMap<string, ToolRegistration>, now: number): void {
    if (this.#sunsetTimer !== undefined) clearTimeout(this.#sunsetTimer);
    this.#sunsetTimer = undefined;
    const at = nextSunset(this.#tools, stored, now);
    this.#sunsetAt = at ?? Number.POSITIVE_INFINITY;
    if (at === undefined || this.closed) return;
    this.#sunsetTimer = setTimeout(() => {
      this.#sunsetTimer = undefined;
      this.#schedule();
    }, Math.min(at - now, LONGEST_TIMER_MS));
    this.#sunsetTimer.unref?.();
  }

  async #deriveNow(): Promise<void> {
    const revision = this.#seen;
    const stored = await readRegistrations(this.#registry);
    const now = this.#clock().getTime();
    const next = deriveToolSet(this.#tools, stored, this.#policy, 'exclude', now);
    if (this.closed) return;
    this.armSunset(stored, now);
    this.#revision = Math.max(this.#revision, revision);
    if (sameSet(next, this.#set)) return;
    const previous = this.#set;
    this.#set = next;
    const change: LiveToolSetChange = Object.freeze({ current: next, previous, revision: this.#revision });
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch (error) {
        // The default warning would blame the registry and promise a retry: say whose error it is.
        if (this.#onError === warn) process.emitWarning(`liveToolSet: a subscribe() listener threw (${describeError(error)}); the set is current`, 'ToolRegistryWarning');
        else this.#report(error);
      }
    }
  }
}

/**
 * `loadToolSet` kept current: the tools the registry says may run (registered, enabled, the
 * stored spec identical to the code's, allowed by `policy`), derived again after every
 * commit that touches one of them (disabled, enabled, removed, a new version), by this or
 * another process, or by hand in `sqlite3`. `current()` is always a frozen ToolSet; a
 * listener (`subscribe`) hears each change. A stored spec that no longer matches the code
 * leaves that tool out (`excluded` reason `spec_mismatch`) instead of failing the set.
 * `close()` stops it; closing the registry ends it too.
 *
 * @example
 * const live = await liveToolSet(registry, [search, fetchPage], { policy });
 * live.subscribe(({ current }) => console.log('now', current.list()));
 * await live.current().invoke('search', { q: 'x' });
 * @throws VALIDATION_FAILED for an invalid policy; DUPLICATE_TOOL; TypeError for misuse; the store's errors on the first read
 */
export async function liveToolSet(registry: ToolRegistry, tools: ToolSource, options: LiveToolSetOptions = {}): Promise<LiveToolSet> {
  const { list, policy, clock } = checkLoadArguments('liveToolSet', registry, tools, options);
  const onError = options.onError ?? warn;
  if (typeof onError !== 'function') throw new TypeError('liveToolSet(): onError must be a function');
  // The revision first, then the rows: a commit in between is delivered again by the feed
  // (deriving again is harmless), never missed.
  const { revision } = await registry.changes({ limit: 0 });
  const stored = await readRegistrations(registry);
  const now = clock().getTime();
  const set = deriveToolSet(list, stored, policy, 'exclude', now);
  const live = new Live(registry, list, policy, onError, clock, set, revision);
  live.armSunset(stored, now);
  live.follow(revision);
  return live;
}
