// The shared core every store extends: it validates and normalises arguments, checks that
// the registry is open, applies the registration rule and the import plan, and hands the
// store clean values through a few hooks (the abstract-level pattern). Stores only store,
// fetch, and make each write atomic.
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Deprecation, DeprecationInput, ToolRegistration, ToolRegistrySnapshot, ToolSpecInput } from './contracts.js';
import { ChangesExpiredError, ReadOnlyError, RegistryClosedError, StorageBusyError, StorageUnavailableError, ToolNotFoundError, ValidationError } from './errors.js';
import { previewValue } from './issues.js';
import type {
  ChangeEvent,
  ChangesOptions,
  ChangesPage,
  HistoryEntry,
  ImportMode,
  ImportOptions,
  ImportReport,
  ListOptions,
  ListPageOptions,
  ListPageResult,
  RegistrationAction,
  RegistrationOptions,
  RegistrationOutcome,
  RegistryOptions,
  SearchOptions,
  SearchPage,
  ToolRegistry,
  WatchOptions,
  WriteOptions,
} from './registry.js';
import { PatternBudget } from './pattern-match.js';
import { checkCursor, checkExpectedVersion, decideRegistration, importMode, importPlan, sameDeprecation } from './rules.js';
import type { ImportPlan, ToolRecord } from './rules.js';
import { filterOf, listPageOf, parseListPage, parseSearch, RegistrySearchIndex, tagsOf } from './search/registry-search.js';
import type { SearchHead } from './search/registry-search.js';
import { fingerprintOf, makeRegistration, parseDeprecation, parseSnapshot, parseSpec, parseSpecs, isStoredSpec, snapshotEntryJson, snapshotRegistration } from './validation.js';
import { checkPolicies, parsePolicyInput } from './versions.js';
import type { RegistryPolicy, RegistryPolicyInput } from './versions.js';
import type { PreparedImportEntry, PreparedSpec } from './validation.js';
import { parseCallRecords, parseCallsQuery, parseUpstreamInput, resolveCallRetention } from './upstreams.js';
import type { CallPrune, CallRecord, CallRecordInput, CallRetention, CallsQuery, ParsedCallsQuery, Upstream, UpstreamInput } from './upstreams.js';


/** A tool as the core hands it to a store to write. */
export interface StoredTool {
  readonly record: ToolRecord;
  /**
   * The spec's JSON text as registered (the caller's key order). The store keeps one text per
   * (name, fingerprint) in its history: a spec the tool does not already point at is stored
   * with this text (inserted, or the history row's text replaced); when the tool already
   * points at this fingerprint the stored text is kept.
   */
  readonly json: string;
  /** When the spec is first stored under the name, if it is new to the name's history. */
  readonly firstRegisteredAt: string;
  /** The frozen registration, when the core already built it (register); else the store builds it on demand. */
  readonly registration?: ToolRegistration;
  /** A rollback to a lower SemVer (`allowDowngrade`): the store marks the `updated` event `rollback`. */
  readonly rollback?: boolean;
}

/** A page of the change log as a store reads it, in one consistent view. */
export interface ChangeLogPage {
  /** The current revision (0 before the first change). */
  readonly revision: number;
  /** The oldest revision whose event the log still holds; `revision + 1` when it holds none. */
  readonly oldestRevision: number;
  /** Events after the cursor, oldest first, at most the limit; frozen. */
  readonly events: readonly ChangeEvent[];
  /**
   * Read for a watch (`follow` given) by a store whose log can be replaced under a reader (a
   * restored backup or dump; change-log-mark.ts): the mark of the position the page ends at
   * (its last event when it holds `limit` events, else `revision`), and whether the log no
   * longer holds the position `follow.mark` named at the cursor. A memory store leaves both out.
   */
  readonly mark?: string;
  readonly replaced?: boolean;
}

/** How a watch reads the change log (`_changes`' third argument; `changes()` gives none). */
export interface FollowRead {
  /** The mark of the watch's cursor, from the page it came from; undefined before the first page. */
  readonly mark: string | undefined;
  /** Aborts when the watch ends: a store that must wait before it can read stops waiting. */
  readonly signal: AbortSignal;
  /**
   * Read at once, as `changes()` reads (the search index checks the marks, issue 26): no wait
   * for the caller's transaction on its own handle, which a search inside it must not hang on.
   */
  readonly now?: boolean;
}

/** The signal of a read that is never cancelled (the search index's marked reads). */
const NEVER_ABORTED = new AbortController().signal;

/** Reads inside one consistent view of the store. */
export interface StoreReader {
  find(toolName: string): ToolRecord | undefined;
  get(toolName: string): ToolRegistration | undefined;
  /** Every current tool by name (used to plan imports). */
  records(): ReadonlyMap<string, ToolRecord>;
  /** The store-wide revision in this view (inside a write: including the write's own changes). */
  revision(): number;
  /** The registry's policies in this view (inside a write: read in the write's atomic step). */
  policy(): RegistryPolicy;
}

/** Writes inside one atomic step; a throw inside the step undoes all of it (a synchronous store's writer). */
export interface StoreWriter extends StoreReader {
  /** Inserts the tool or replaces its current spec, `enabled` and `created_at`; logs the change. */
  put(tool: StoredTool): void;
  setEnabled(toolName: string, enabled: boolean): void;
  /** Sets or lifts (null) the deprecation of a current tool; logs the change. */
  setDeprecation(toolName: string, deprecation: Deprecation | null): void;
  /** Stores the registry's policies. */
  setPolicy(policy: RegistryPolicy): void;
  /** `true` when the tool was there. */
  delete(toolName: string): boolean;
}

/**
 * What a read or a write needs to see: the current tools of these names (a store with
 * locks locks exactly these), or every current tool (an import: the whole registry).
 */
export type StoreScope = { readonly names: readonly string[] } | { readonly all: true };

/**
 * One change the core decided. A store applies a write's changes in order, atomically,
 * together with the reads the decision was made from.
 */
export type StoreChange =
  | { readonly kind: 'put'; readonly tool: StoredTool }
  | { readonly kind: 'enable'; readonly toolName: string; readonly enabled: boolean }
  /** A current tool's deprecation set or lifted (null); a put leaves the deprecation as it was (`record.deprecation`). */
  | { readonly kind: 'deprecate'; readonly toolName: string; readonly deprecation: Deprecation | null }
  /** The registry's policies (a plan with this change has the scope `{ all: true }`). */
  | { readonly kind: 'policy'; readonly policy: RegistryPolicy }
  | { readonly kind: 'delete'; readonly toolName: string };

/** What a store reports back after applying a write's changes, inside the same atomic step. */
export interface AppliedWrite {
  /** Per change: whether it found its tool (a delete of an absent tool: false; puts and enables: true). */
  readonly found: readonly boolean[];
  /** The current registration of a name in scope, the write's changes included. */
  get(toolName: string): ToolRegistration | undefined;
  /** The revision including the write's own changes (only asked when the plan says `needsRevision`). */
  revision(): number;
}

/**
 * A write as the core hands it to a store: the store reads `scope` (locking it), calls
 * `decide` (pure: the registration rule, preconditions, the import plan; a throw aborts the
 * write and nothing is written), applies the changes atomically and calls `result`.
 */
export interface WritePlan<T> {
  readonly scope: StoreScope;
  /** The result needs the revision after the write (one more read for some stores). */
  readonly needsRevision?: boolean;
  decide(view: StoreReader): WriteDecision<T>;
}

export interface WriteDecision<T> {
  /**
   * The changes, in order. An import yields them lazily, building each spec text as it is
   * asked for: a store consumes them as it writes (holding at most a chunk), so a large
   * import never holds every text at once.
   */
  readonly changes: Iterable<StoreChange>;
  result(applied: AppliedWrite): T;
}

/**
 * Runs a plan on a synchronous store's writer: read, decide, apply, result, all inside the
 * store's one atomic step (SQLite's BEGIN IMMEDIATE, the memory store's undo log), without
 * awaiting anything.
 */
export function runPlanSync<T>(writer: StoreWriter, plan: WritePlan<T>): T {
  const decision = plan.decide(writer);
  const found: boolean[] = [];
  for (const change of decision.changes) {
    if (change.kind === 'put') {
      writer.put(change.tool);
      found.push(true);
    } else if (change.kind === 'delete') {
      found.push(writer.delete(change.toolName));
    } else if (change.kind === 'deprecate') {
      writer.setDeprecation(change.toolName, change.deprecation);
      found.push(true);
    } else if (change.kind === 'policy') {
      writer.setPolicy(change.policy);
      found.push(true);
    } else {
      // The decision saw the tool (setEnabled throws TOOL_NOT_FOUND first), in this same transaction.
      writer.setEnabled(change.toolName, change.enabled);
      found.push(true);
    }
  }
  return decision.result({ found, get: (toolName) => writer.get(toolName), revision: () => writer.revision() });
}

function assertToolName(method: string, toolName: unknown): asserts toolName is string {
  if (typeof toolName !== 'string') {
    throw new TypeError(`${method}(): tool_name must be a string, got ${typeof toolName}`);
  }
}

function assertName(method: string, name: unknown): asserts name is string {
  if (typeof name !== 'string') throw new TypeError(`${method}(): name must be a string, got ${previewValue(name)}`);
}

const DAY_MS = 86_400_000;

function importOptions(options: unknown): { mode: ImportMode; dryRun: boolean } {
  if (options === undefined) return { mode: 'merge', dryRun: false };
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`importSnapshot(): options must be an object, got ${typeof options}`);
  }
  const given = options as ImportOptions;
  refuseCondition('importSnapshot', given);
  refuseUnknownOptions('importSnapshot', given, ['mode', 'dryRun']);
  const mode = importMode('importSnapshot', given.mode);
  const { dryRun = false } = given;
  if (typeof dryRun !== 'boolean') throw new TypeError(`importSnapshot(): dryRun must be a boolean, got ${typeof dryRun}`);
  return { mode, dryRun };
}

/** The `expectedVersion` of a conditional write's options (undefined: no condition); `known`: every option the method takes. */
function expectedVersionOf(method: string, options: unknown, known: readonly string[] = ['expectedVersion']): string | null | undefined {
  refuseUnknownOptions(method, options, known);
  const { expectedVersion } = optionsObject(method, options) as WriteOptions;
  if (expectedVersion !== undefined && expectedVersion !== null && typeof expectedVersion !== 'string') {
    throw new TypeError(`${method}(): expectedVersion must be a string or null, got ${typeof expectedVersion}`);
  }
  return expectedVersion;
}

/**
 * A method that takes no condition refuses `expectedVersion` rather than ignoring it: a write
 * carried out unconditionally is the one the caller's condition asked us not to make.
 */
function refuseCondition(method: string, options: unknown): void {
  if (typeof options === 'object' && options !== null && (options as WriteOptions).expectedVersion !== undefined) {
    throw new TypeError(`${method}() takes no expectedVersion (conditional writes are register, setEnabled and remove, one tool each)`);
  }
}

/**
 * A write (or an open) refuses an option it does not know rather than ignoring it: a misspelt
 * `expectedVersion` made the write unconditional, a misspelt `dryRun` made the import real, a
 * misspelt `readOnly` opened a store that writes. An option given as `undefined` is as good as
 * left out.
 */
export function refuseUnknownOptions(method: string, options: unknown, known: readonly string[]): void {
  if (typeof options !== 'object' || options === null) return;
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && !known.includes(key)) {
      throw new TypeError(`${method}(): unknown option ${JSON.stringify(key)} (the options are ${known.join(', ')})`);
    }
  }
}

/** A non-negative safe integer option, or its default. */
function countOption(method: string, name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${method}(): ${name} must be an integer >= 0, got ${typeof value === 'number' ? String(value) : typeof value}`);
  }
  return value;
}

function optionsObject(method: string, options: unknown): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${method}(): options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  return options as Record<string, unknown>;
}

/**
 * `pending`, where the error it rejects with becomes the call's own when a store could not
 * tell which call it was: STORAGE_BUSY and STORAGE_UNAVAILABLE get `context.operation` the method that waited and
 * `context.tool_name` the tool it named (a group-commit batch that never got its lock rejects
 * every call in it with one error; a store may name the read it was doing), READ_ONLY gets
 * the tool. Any other error passes unchanged. One place for every store.
 */
function errorOfCall<T>(pending: Promise<T>, method: string, toolName: string | undefined): Promise<T> {
  return pending.catch((error: unknown) => {
    if ((error instanceof StorageBusyError || error instanceof StorageUnavailableError) && (error.context.operation !== method || error.context.tool_name !== toolName)) {
      // The store's message starts with the operation it names; the call's name replaces it.
      const message = `${method}(${toolName === undefined ? '' : JSON.stringify(toolName)}): ${error.message.replace(/^[^:]*: /, '')}`;
      const { tool_name: _batchNeighbour, ...context } = error.context;
      const named = toolName === undefined ? { ...context, operation: method } : { ...context, operation: method, tool_name: toolName };
      throw error instanceof StorageBusyError ? new StorageBusyError(message, named, error.cause) : new StorageUnavailableError(message, named, error.cause);
    }
    if (error instanceof ReadOnlyError && error.context.tool_name === undefined) {
      const detail = error.context.detail;
      throw new ReadOnlyError(method, { cause: error.cause, toolName, ...(typeof detail === 'string' ? { detail } : {}) });
    }
    throw error;
  });
}

/** Events per page while `watch` catches up. */
const WATCH_PAGE = 1000;
/** A watch whose read of the log failed for a while reads again after this, doubling... */
const WATCH_RETRY_FIRST_MS = 100;
/** ...up to this (the PostgreSQL listener's reconnect backoff has the same bounds). */
const WATCH_RETRY_MAX_MS = 5000;

type RegisterManyOptions = Pick<RegistrationOptions, 'allowDowngrade' | 'allowIncompatible'>;

/** One registration decided in a write's atomic step: the change (none for an identical spec) and the result. */
interface Decided {
  readonly change: StoreChange | undefined;
  readonly action: RegistrationAction;
  /** With `updated`: the version of the record the step read (the one replaced). */
  readonly replacedVersion?: string | null;
  readonly result: (applied: AppliedWrite) => ToolRegistration;
}

/** What a registration did, as `RegistrationOutcome` says it. */
function outcomeOf(registration: ToolRegistration, action: RegistrationAction, replacedVersion?: string | null): RegistrationOutcome {
  return action === 'updated' ? { registration, action, replacedVersion: replacedVersion ?? null } : { registration, action };
}

/** register's answer: the registration alone (no outcome object on the hot path). */
function registrationOf(registration: ToolRegistration): ToolRegistration {
  return registration;
}

/** BaseToolRegistry's #register, for registerWithAction (set in the class's static block). */
let registerOf: (registry: BaseToolRegistry, spec: ToolSpecInput, options: RegistrationOptions | undefined) => Promise<RegistrationOutcome>;
/**
 * The controller close() aborts, which every watch listens to (and leaves when it ends): with
 * no bound on listeners, as eleven change-feed streams on one registry printed Node's
 * MaxListenersExceededWarning, "possible memory leak", for what is none.
 */
function closingController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** BaseToolRegistry's #registerMany, for registerManyWithActions (set in the class's static block). */
let registerManyOf: (registry: BaseToolRegistry, specs: readonly ToolSpecInput[], options: RegisterManyOptions | undefined) => Promise<RegistrationOutcome[]>;

export abstract class BaseToolRegistry implements ToolRegistry {
  #closed = false;
  readonly #clock: () => Date;
  readonly #callRetention: CallRetention;

  protected constructor(options: RegistryOptions = {}) {
    const clock = options.clock ?? (() => new Date());
    if (typeof clock !== 'function') throw new TypeError(`clock must be a function, got ${typeof clock}`);
    this.#clock = clock;
    this.#callRetention = resolveCallRetention(options.callRetention);
  }

  // --- hooks each store implements -------------------------------------------------

  // The read hooks answer synchronously when they can; a store that must wait (a lock) returns a promise.
  /** The current record of a tool, or undefined. */
  protected abstract _find(toolName: string): ToolRecord | undefined | Promise<ToolRecord | undefined>;
  /** The current registration of a tool, or undefined. */
  protected abstract _get(toolName: string): ToolRegistration | undefined | Promise<ToolRegistration | undefined>;
  /** Current registrations sorted by name (code-point order); the core copies the array. */
  protected abstract _list(includeDisabled: boolean): readonly ToolRegistration[] | Promise<readonly ToolRegistration[]>;
  /**
   * Runs `work` (synchronous, pure) against one consistent view that holds at least `scope`;
   * nothing is written. Answers synchronously when it can, so a write that follows the read
   * (register) is queued in the turn it was called, in call order with the writes around it.
   */
  protected abstract _read<T>(scope: StoreScope, work: (reader: StoreReader) => T, operation: string): T | Promise<T>;
  /**
   * Whether writes called earlier have not committed yet (queued for a shared transaction).
   * register's identical-spec answer is a read; it is given only when no earlier write is
   * pending, so that it never answers from a state an earlier call is about to change.
   */
  protected _writesPending(): boolean {
    return false;
  }
  /**
   * Applies a plan as one atomic write: reads its scope (a store with locks locks it, across
   * connections and processes), lets the plan decide, applies the changes. Synchronous stores
   * call `runPlanSync` inside their transaction.
   */
  protected abstract _write<T>(method: string, plan: WritePlan<T>): Promise<T>;
  /** Releases the store's resources; called once. */
  protected abstract _close(): Promise<void>;
  /**
   * Stores the upstream: inserts it, or replaces the row of its name keeping the stored
   * `created_at` (the given one is the write's time, as `updated_at`). Returns the row stored.
   */
  protected abstract _putUpstream(upstream: Upstream): Promise<Upstream>;
  protected abstract _getUpstream(name: string): Upstream | undefined | Promise<Upstream | undefined>;
  /** Every upstream sorted by name (code-point order); the core copies the array. */
  protected abstract _listUpstreams(): readonly Upstream[] | Promise<readonly Upstream[]>;
  /** `true` when the row was there. */
  protected abstract _removeUpstream(name: string): Promise<boolean>;
  /** Appends the rows (ids growing, in the given order) and prunes by `prune`, in one atomic write; `calls` is never empty. */
  protected abstract _recordCalls(calls: readonly CallRecordInput[], prune: CallPrune): Promise<void>;
  /** Rows newest (highest id) first, filtered; frozen. */
  protected abstract _listCalls(query: ParsedCallsQuery): readonly CallRecord[] | Promise<readonly CallRecord[]>;
  /** Every distinct spec stored under the name, oldest first (frozen entries). */
  protected abstract _history(toolName: string): Promise<readonly HistoryEntry[]>;
  /**
   * Up to `limit` events after `since`, with the revision and the oldest retained one, in one
   * view. For a watch (`follow`): committed events only (never a transaction still open on
   * the store's connection), and the page's marks (`ChangeLogPage.mark`).
   */
  protected abstract _changes(since: number, limit: number, follow?: FollowRead): Promise<ChangeLogPage>;
  /** The current revision, read now (a store that must ask its server returns a promise). */
  protected abstract _revision(): number | Promise<number>;
  /**
   * Resolves once the revision may have passed `revision` (a commit, here or in another
   * process), or when `signal` aborts. Must cost next to nothing while it waits.
   */
  protected abstract _waitForChange(revision: number, signal: AbortSignal): Promise<void>;
  /**
   * Whether a watch whose read of the change log failed with `error` waits and reads again
   * instead of ending: the storage is unavailable for a while (a lock held past the busy
   * timeout; for a server, the connection or the server going away), the read itself is fine.
   * The watch keeps its cursor, so no event is lost or repeated. Every store: `STORAGE_BUSY`
   * and `STORAGE_UNAVAILABLE`.
   */
  protected _isTransient(error: unknown): boolean {
    return error instanceof StorageBusyError || error instanceof StorageUnavailableError;
  }

  /** Aborted by close(): ends every watch. */
  readonly #closing = closingController();

  // --- the contract ------------------------------------------------------------------

  /** Whether `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** `toolName`: what the call named, when it names one tool (a string), for `context.tool_name`. */
  #assertOpen(method: string, toolName?: unknown): void {
    if (this.#closed) throw new RegistryClosedError(method, typeof toolName === 'string' ? toolName : undefined);
  }

  /**
   * The clock's time as stored in `created_at`: `YYYY-MM-DDTHH:mm:ss.sssZ`.
   * @throws TypeError when the clock returns something other than a Date; VALIDATION_FAILED
   *   (path `created_at`) for an invalid Date or a year outside 0000-9999, which has no
   *   such form and would not import back
   */
  protected now(toolName?: string): string {
    return clockTime(this.#clock(), toolName);
  }

  /**
   * The time of one call's write, read from the clock once, when a decision first needs it: a
   * store that decides again (PostgreSQL after its one-statement attempt, SQLite after a busy
   * retry) stores the same `created_at`, so an injected clock gives every store the same times.
   */
  #callTime(): (toolName: string) => string {
    let time: string | undefined;
    return (toolName) => (time ??= this.now(toolName));
  }

  register(spec: ToolSpecInput, options?: RegistrationOptions): Promise<ToolRegistration> {
    return this.#register(spec, options, registrationOf);
  }

  /**
   * register, answering with `answer(registration, action, replacedVersion)`: what it did to
   * the tool is decided in the write's atomic step (`registerWithAction` asks for it).
   */
  async #register<T>(
    spec: ToolSpecInput,
    options: RegistrationOptions | undefined,
    answer: (registration: ToolRegistration, action: RegistrationAction, replacedVersion?: string | null) => T,
  ): Promise<T> {
    const toolName = (spec as { tool_name?: unknown } | null)?.tool_name;
    this.#assertOpen('register', toolName);
    const expected = expectedVersionOf('register', options, ['expectedVersion', 'allowDowngrade', 'allowIncompatible']);
    const allowDowngrade = allowDowngradeOf('register', options);
    const allowIncompatible = allowIncompatibleOf('register', options);
    // Rule 2 needs no lock and no validation: input equal (as JSON, defaults applied) to the
    // stored spec is that valid spec, answered from a read; nothing is written.
    if (typeof toolName === 'string' && !this._writesPending()) {
      const read = this._read(
        { names: [toolName] },
        (reader) => {
          const existing = reader.get(toolName);
          if (existing === undefined || !isStoredSpec(spec, existing.spec)) return undefined;
          checkExpectedVersion(toolName, existing.spec, expected);
          return existing;
        },
        'register',
      );
      // Awaited only when the store must wait: awaiting a plain value yields a turn, and the
      // write below would be queued behind calls made after this one.
      const unchanged = read instanceof Promise ? await errorOfCall(read, 'register', toolName) : read;
      if (unchanged !== undefined) return answer(unchanged, 'unchanged');
    }
    const prepared = parseSpec(spec);
    const now = this.#callTime();
    const written = this._write('register', {
      scope: { names: [prepared.tool_name] },
      decide: (view) => {
        const current = view.find(prepared.tool_name);
        checkExpectedVersion(prepared.tool_name, current, expected);
        const one = this.#decideRegistration(view, current, prepared, now, { allowDowngrade, allowIncompatible });
        return { changes: one.change === undefined ? [] : [one.change], result: (applied) => answer(one.result(applied), one.action, one.replacedVersion) };
      },
    });
    return errorOfCall(written, 'register', prepared.tool_name);
  }

  async registerMany(specs: readonly ToolSpecInput[], options?: Pick<RegistrationOptions, 'allowDowngrade' | 'allowIncompatible'>): Promise<ToolRegistration[]> {
    return (await this.#registerMany(specs, options)).map((one) => one.registration);
  }

  /** registerMany, with what it did to each tool: decided in the write's atomic step (`registerManyWithActions`). */
  async #registerMany(specs: readonly ToolSpecInput[], options: unknown): Promise<RegistrationOutcome[]> {
    this.#assertOpen('registerMany');
    if (!Array.isArray(specs)) throw new TypeError(`registerMany(): specs must be an array, got ${typeof specs}`);
    const allowDowngrade = allowDowngradeOf('registerMany', options);
    const allowIncompatible = allowIncompatibleOf('registerMany', options);
    refuseCondition('registerMany', options);
    refuseUnknownOptions('registerMany', options, ['allowDowngrade', 'allowIncompatible']);
    const prepared = parseSpecs(specs);
    // As in register: a batch of identical specs is answered from a read and nothing is written.
    const names = prepared.map((one) => one.tool_name);
    if (!this._writesPending()) {
      const read = this._read(
        { names },
        (reader) =>
          prepared.every((one) => reader.find(one.tool_name)?.fingerprint === one.fingerprint)
            ? prepared.map((one): RegistrationOutcome => ({ registration: getOrFail(reader, one.tool_name), action: 'unchanged' }))
            : undefined,
        'registerMany',
      );
      const unchanged = read instanceof Promise ? await read : read;
      if (unchanged !== undefined) return unchanged;
    }
    // A batch that never got the lock fails with the first call's STORAGE_BUSY: named as this call.
    const now = this.#callTime();
    const written = this._write('registerMany', {
      scope: { names },
      decide: (view) => {
        // Names are distinct (parseSpecs), so each decision stands alone; one conflict throws for all.
        // One budget for the batch's pattern tests: N specs must not hold the process N times as long.
        const budget = new PatternBudget();
        const decisions = prepared.map((one, index) => this.#decideRegistration(view, view.find(one.tool_name), one, now, { allowDowngrade, allowIncompatible, budget }, `[${index}]`));
        return {
          changes: decisions.flatMap((one) => (one.change === undefined ? [] : [one.change])),
          // The action comes from this decision, made on the rows the write holds (a store that
          // retries a write decides again, and the last decision is the one returned).
          result: (applied) => decisions.map((one) => outcomeOf(one.result(applied), one.action, one.replacedVersion)),
        };
      },
    });
    return errorOfCall(written, 'registerMany', undefined);
  }

  /**
   * One registration by the rule, given the tool's `current` record (read once by the caller,
   * a key lookup in SQL for some stores): the change to make (none for an identical spec) and
   * the result.
   */
  #decideRegistration(
    view: StoreReader,
    current: ToolRecord | undefined,
    prepared: PreparedSpec,
    /** The time of the write, asked by the tool that needs it (named by a bad clock's error). */
    now: (toolName: string) => string,
    overrides: { readonly allowDowngrade: boolean; readonly allowIncompatible: boolean; readonly budget?: PatternBudget },
    path?: string,
  ): Decided {
    const decision = decideRegistration(current, prepared, path);
    if (decision.action === 'keep') return { change: undefined, action: 'unchanged', result: (applied) => getOrFail(applied, prepared.tool_name) };
    // The policies, read in this write's atomic step; the stored spec is loaded only when one needs it.
    const policy = view.policy();
    const { rollback } = checkPolicies(policy, current === undefined ? undefined : { get spec() { return getOrFail(view, prepared.tool_name).spec; } }, prepared.spec, {
      ...overrides,
      ...(path === undefined ? {} : { path }),
    });
    const enabled = decision.action === 'replace' ? decision.enabled : true;
    // A new version keeps the tool's deprecation, as it keeps `enabled`.
    const deprecation = current?.deprecation ?? null;
    const createdAt = now(prepared.tool_name);
    const registration = makeRegistration(prepared.spec, enabled, createdAt, deprecation);
    const tool: StoredTool = {
      record: {
        tool_name: prepared.tool_name,
        version: prepared.version,
        fingerprint: prepared.fingerprint,
        enabled,
        created_at: createdAt,
        deprecation,
      },
      json: prepared.json,
      firstRegisteredAt: createdAt,
      registration,
      ...(rollback ? { rollback } : {}),
    };
    if (decision.action === 'create') return { change: { kind: 'put', tool }, action: 'added', result: () => registration };
    // The replaced version comes from the record this atomic step read, so no other writer's.
    return { change: { kind: 'put', tool }, action: 'updated', replacedVersion: (current as ToolRecord).version, result: () => registration };
  }

  async get(toolName: string): Promise<ToolRegistration | undefined> {
    this.#assertOpen('get', toolName);
    assertToolName('get', toolName);
    const found = this._get(toolName);
    return found instanceof Promise ? errorOfCall(found, 'get', toolName) : found;
  }

  async has(toolName: string): Promise<boolean> {
    this.#assertOpen('has', toolName);
    assertToolName('has', toolName);
    const found = this._find(toolName);
    return (found instanceof Promise ? await errorOfCall(found, 'has', toolName) : found) !== undefined;
  }

  async listAll(options: ListOptions = {}): Promise<ToolRegistration[]> {
    this.#assertOpen('listAll');
    if (typeof options !== 'object' || options === null) {
      throw new TypeError(`listAll(): options must be an object, got ${typeof options}`);
    }
    const { includeDisabled = false } = options;
    if (typeof includeDisabled !== 'boolean') {
      throw new TypeError(`listAll(): includeDisabled must be a boolean, got ${typeof includeDisabled}`);
    }
    const tags = tagsOf('listAll', options.tags);
    const listed = await this._list(includeDisabled);
    return tags.length === 0 ? listed.slice() : listed.filter(filterOf(true, tags));
  }

  // --- discovery (issue 26): search and keyset pages, the same in every store ---------

  /** The search index, built at the first search and kept current from the change log. */
  readonly #search = new RegistrySearchIndex();

  /**
   * The revision the search index compares with before each search: a store whose reads come
   * from a cache with its own position (PostgreSQL) returns that position, so that a search
   * costs no round trip while nothing changed. A store may add the log's mark there (SQLite),
   * so that a log restored at the very revision the index reflects is found too. Default:
   * `_revision()`.
   */
  protected _searchRevision(): SearchHead | Promise<SearchHead> {
    return this._revision();
  }

  /** Searches under way: close() lets them finish on the index before it clears it. */
  readonly #searches = new Set<Promise<SearchPage>>();

  async search(query: string, options?: SearchOptions): Promise<SearchPage> {
    this.#assertOpen('search');
    const parsed = parseSearch(query, options);
    const searching = this.#searchNow(parsed);
    this.#searches.add(searching);
    try {
      return await searching;
    } finally {
      this.#searches.delete(searching);
    }
  }

  async #searchNow(parsed: ReturnType<typeof parseSearch>): Promise<SearchPage> {
    await errorOfCall(
      this.#search.refresh({
        revision: () => this._searchRevision(),
        changes: (since, limit, mark) => this._changes(since, limit, { mark, signal: NEVER_ABORTED, now: true }),
        read: (scope, work, operation) => this._read(scope, work, operation),
        transient: (error) => this._isTransient(error),
      }),
      'search',
      undefined,
    );
    const page = await this.#search.search(parsed);
    return Object.freeze({ results: Object.freeze(page.results.slice()) as SearchPage['results'], next_cursor: page.next_cursor });
  }

  async listPage(options?: ListPageOptions): Promise<ListPageResult> {
    this.#assertOpen('listPage');
    const parsed = parseListPage(options);
    const listed = await errorOfCall(Promise.resolve(this._list(parsed.includeDisabled)), 'listPage', undefined);
    return listPageOf(listed, parsed);
  }

  async setEnabled(toolName: string, enabled: boolean, options?: WriteOptions): Promise<ToolRegistration> {
    this.#assertOpen('setEnabled', toolName);
    assertToolName('setEnabled', toolName);
    if (typeof enabled !== 'boolean') throw new TypeError(`setEnabled(): enabled must be a boolean, got ${typeof enabled}`);
    const expected = expectedVersionOf('setEnabled', options);
    return this.#changeTool('setEnabled', toolName, expected, (current) => (current.enabled === enabled ? [] : [{ kind: 'enable', toolName, enabled }]));
  }

  async remove(toolName: string, options?: WriteOptions): Promise<boolean> {
    this.#assertOpen('remove', toolName);
    assertToolName('remove', toolName);
    const expected = expectedVersionOf('remove', options);
    const written = this._write('remove', {
      scope: { names: [toolName] },
      decide: (view) => {
        if (expected !== undefined) checkExpectedVersion(toolName, view.find(toolName), expected);
        return { changes: [{ kind: 'delete', toolName }], result: (applied) => applied.found[0] === true };
      },
    });
    return errorOfCall(written, 'remove', toolName);
  }

  async deprecate(toolName: string, deprecation: DeprecationInput, options?: WriteOptions): Promise<ToolRegistration> {
    this.#assertOpen('deprecate', toolName);
    assertToolName('deprecate', toolName);
    const expected = expectedVersionOf('deprecate', options);
    const parsed = parseDeprecation(toolName, deprecation);
    return this.#writeDeprecation('deprecate', toolName, parsed, expected);
  }

  async undeprecate(toolName: string, options?: WriteOptions): Promise<ToolRegistration> {
    this.#assertOpen('undeprecate', toolName);
    assertToolName('undeprecate', toolName);
    const expected = expectedVersionOf('undeprecate', options);
    return this.#writeDeprecation('undeprecate', toolName, null, expected);
  }

  #writeDeprecation(method: string, toolName: string, deprecation: Deprecation | null, expected: string | null | undefined): Promise<ToolRegistration> {
    return this.#changeTool(method, toolName, expected, (current) =>
      sameDeprecation(current.deprecation, deprecation) ? [] : [{ kind: 'deprecate', toolName, deprecation }],
    );
  }

  /**
   * A write of one registered tool's state (setEnabled, deprecate, undeprecate): the
   * precondition, TOOL_NOT_FOUND, then the changes `change` asks for given the current record
   * (none: nothing is written), and the registration after.
   */
  #changeTool(method: string, toolName: string, expected: string | null | undefined, change: (current: ToolRecord) => StoreChange[]): Promise<ToolRegistration> {
    const written = this._write(method, {
      scope: { names: [toolName] },
      decide: (view) => {
        const current = view.find(toolName);
        checkExpectedVersion(toolName, current, expected);
        if (current === undefined) throw new ToolNotFoundError(toolName);
        return { changes: change(current), result: (applied) => getOrFail(applied, toolName) };
      },
    });
    return errorOfCall(written, method, toolName);
  }

  async setPolicy(policy: RegistryPolicyInput): Promise<RegistryPolicy> {
    this.#assertOpen('setPolicy');
    const given = parsePolicyInput(policy);
    // The whole registry's scope: a store with locks serializes it with every write, so no
    // write decides under the old policies after this one committed.
    return errorOfCall(
      this._write('setPolicy', {
        scope: { all: true },
        decide: (view) => {
          const current = view.policy();
          const next: RegistryPolicy = Object.freeze({ ...current, ...given });
          const unchanged = next.versionOrder === current.versionOrder && next.compatibility === current.compatibility;
          return { changes: unchanged ? [] : [{ kind: 'policy', policy: next }], result: () => next };
        },
      }),
      'setPolicy',
      undefined,
    );
  }

  async getPolicy(): Promise<RegistryPolicy> {
    this.#assertOpen('getPolicy');
    const read = this._read({ names: [] }, (reader) => reader.policy(), 'getPolicy');
    return read instanceof Promise ? errorOfCall(read, 'getPolicy', undefined) : read;
  }

  // --- the gateway (issue 37): upstream rows and the audit log, beside the tools -------

  async putUpstream(upstream: UpstreamInput): Promise<Upstream> {
    this.#assertOpen('putUpstream');
    const parsed = parseUpstreamInput(upstream);
    const now = this.now();
    return errorOfCall(this._putUpstream({ ...parsed, created_at: now, updated_at: now }), 'putUpstream', undefined);
  }

  async getUpstream(name: string): Promise<Upstream | undefined> {
    this.#assertOpen('getUpstream');
    assertName('getUpstream', name);
    const found = this._getUpstream(name);
    return found instanceof Promise ? errorOfCall(found, 'getUpstream', undefined) : found;
  }

  async listUpstreams(): Promise<Upstream[]> {
    this.#assertOpen('listUpstreams');
    const listed = this._listUpstreams();
    return (listed instanceof Promise ? await errorOfCall(listed, 'listUpstreams', undefined) : listed).slice();
  }

  async removeUpstream(name: string): Promise<boolean> {
    this.#assertOpen('removeUpstream');
    assertName('removeUpstream', name);
    return errorOfCall(this._removeUpstream(name), 'removeUpstream', undefined);
  }

  async recordCalls(calls: readonly CallRecordInput[]): Promise<void> {
    this.#assertOpen('recordCalls');
    const parsed = parseCallRecords(calls);
    if (parsed.length === 0) return;
    const { maxRows, maxAgeDays } = this.#callRetention;
    // A bound beyond year 0000 keeps every row's age.
    const oldestAt = new Date(Math.max(MIN_CLOCK_MS, Date.parse(this.now()) - maxAgeDays * DAY_MS)).toISOString();
    return errorOfCall(this._recordCalls(parsed, { maxRows, oldestAt }), 'recordCalls', undefined);
  }

  async listCalls(query?: CallsQuery): Promise<CallRecord[]> {
    this.#assertOpen('listCalls');
    const parsed = parseCallsQuery(query);
    const listed = this._listCalls(parsed);
    return (listed instanceof Promise ? await errorOfCall(listed, 'listCalls', undefined) : listed).slice();
  }

  async history(toolName: string): Promise<HistoryEntry[]> {
    this.#assertOpen('history', toolName);
    assertToolName('history', toolName);
    return (await errorOfCall(this._history(toolName), 'history', toolName)).slice();
  }

  async changes(options?: ChangesOptions): Promise<ChangesPage> {
    this.#assertOpen('changes');
    const given = optionsObject('changes', options);
    const since = countOption('changes', 'since', given.since, 0);
    const limit = countOption('changes', 'limit', given.limit, 1000);
    const page = await this._changes(since, limit);
    // limit 0 asks for the revision alone (how a consumer reads it before resyncing from a
    // snapshot): no event is asked for, so none can have expired.
    if (limit > 0) checkCursor(since, page.oldestRevision, page.revision);
    // A page is an object handed out, so deeply frozen, its list of events included (as an import report's plan).
    return Object.freeze({ revision: page.revision, events: Object.freeze(page.events.slice()) });
  }

  watch(options?: WatchOptions): AsyncIterable<ChangeEvent> {
    this.#assertOpen('watch');
    const given = optionsObject('watch', options);
    const { signal } = given;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new TypeError(`watch(): signal must be an AbortSignal, got ${typeof signal}`);
    }
    // Without `since`, the feed starts at the revision of the call, not of the first next().
    // Asked now (a store that must ask its server sends the question now and is awaited at the first next()).
    const since = given.since === undefined ? this._revision() : countOption('watch', 'since', given.since, 0);
    if (since instanceof Promise) since.catch(() => {});
    return this.#watch(since, signal);
  }

  async *#watch(from: number | Promise<number>, signal: AbortSignal | undefined): AsyncGenerator<ChangeEvent, void, undefined> {
    const since = await from;
    // One signal for "stop": the caller's abort or close() (AbortSignal.any needs Node 20.3).
    const controller = new AbortController();
    const abort = (): void => controller.abort();
    const sources = signal === undefined ? [this.#closing.signal] : [signal, this.#closing.signal];
    for (const source of sources) {
      if (source.aborted) controller.abort();
      else source.addEventListener('abort', abort, { once: true });
    }
    try {
      yield* this.#follow(since, controller.signal);
    } finally {
      for (const source of sources) source.removeEventListener('abort', abort);
    }
  }

  async *#follow(since: number, stop: AbortSignal): AsyncGenerator<ChangeEvent, void, undefined> {
    let cursor = since;
    /** The log position at the cursor, as the store marked it (see `FollowRead`). */
    let mark: string | undefined;
    let failures = 0;
    while (!stop.aborted && !this.#closed) {
      let page: ChangeLogPage;
      try {
        page = await this._changes(cursor, WATCH_PAGE, { mark, signal: stop });
        failures = 0;
      } catch (error) {
        if (stop.aborted || this.#closed) return;
        if (!this._isTransient(error)) throw error;
        // A timer that keeps the process alive: a watch waiting out a server restart may be all
        // the process is doing (`tool-registry watch`). An abort ends the wait early.
        await sleep(Math.min(WATCH_RETRY_MAX_MS, WATCH_RETRY_FIRST_MS * 2 ** failures++), undefined, { signal: stop }).catch(() => {});
        continue;
      }
      if (stop.aborted || this.#closed) return;
      // A log that no longer holds the cursor's position, or ends before it, is not the log
      // this watch followed (a restored backup or dump): its revisions are handed out again
      // for other changes, and following it by number would skip them silently.
      if (page.replaced === true || cursor > page.revision) throw new ChangesExpiredError(cursor, page.oldestRevision, page.revision, true);
      checkCursor(cursor, page.oldestRevision, page.revision);
      mark = page.mark;
      for (const event of page.events) {
        cursor = event.revision;
        yield event;
        if (stop.aborted || this.#closed) return;
      }
      if (page.events.length < WATCH_PAGE) {
        // Nothing more up to page.revision (one view): entries that are not events are skipped.
        cursor = Math.max(cursor, page.revision);
        await this._waitForChange(cursor, stop);
      }
    }
  }

  async exportSnapshot(): Promise<ToolRegistrySnapshot> {
    this.#assertOpen('exportSnapshot');
    // A deprecation is written only when set: a snapshot without any stays readable by the Python registry.
    return Object.freeze({ tools: Object.freeze((await this._list(true)).map(snapshotRegistration)) as ToolRegistrySnapshot['tools'] });
  }

  async importSnapshot(snapshot: unknown, options?: ImportOptions): Promise<ImportReport> {
    this.#assertOpen('importSnapshot');
    const { mode, dryRun } = importOptions(options);
    if (dryRun) {
      // A dry run reads the snapshot at the call.
      const entries = parseSnapshot(snapshot);
      const { plan, revision } = await this._read({ all: true }, (reader) => ({ plan: importPlan(reader.records(), entries, mode), revision: reader.revision() }), 'importSnapshot');
      // What the import would refuse after its conflicts: a merge the compatibility policy
      // refuses (a dry run that passed while the import failed misled a deploy's check).
      if (mode === 'merge' && plan.firstConflict === undefined) await this.#checkDryRunPolicies(snapshot, entries, plan);
      return importReport(plan, true, revision);
    }
    const now = this.#callTime();
    return this._write('importSnapshot', {
      scope: { all: true },
      needsRevision: true,
      decide: (view) => {
        // Pass 1, when the import runs, inside its atomic step: validate every entry, keeping
        // only what the plan needs (no spec text), and plan. Pass 2 (importChanges) builds each
        // text as the store writes it. An invalid snapshot or a conflict throws here: nothing is written.
        const sameTurn = sameTurnFlag();
        const entries = parseSnapshot(snapshot);
        const plan = importPlan(view.records(), entries, mode);
        if (plan.firstConflict !== undefined) throw plan.firstConflict;
        if (mode === 'merge') checkImportPolicies(view, snapshot, entries, plan);
        return {
          changes: importChanges(view.records(), snapshot, entries, plan, now, sameTurn),
          result: (applied) => importReport(plan, false, applied.revision()),
        };
      },
    });
  }

  /**
   * A dry run's `checkImportPolicies`, on the stored policies (getPolicy: a read may hold an
   * instance's older copy) and the stored specs of the tools it would update (a read of those
   * names loads their specs in every store).
   */
  async #checkDryRunPolicies(snapshot: unknown, entries: readonly PreparedImportEntry[], plan: ImportPlan): Promise<void> {
    const policy = await this.getPolicy();
    if (policy.compatibility === 'none') return;
    const names = entries.filter((_, index) => plan.actions[index] === 'update').map((entry) => entry.tool_name);
    if (names.length === 0) return;
    await this._read(
      { names },
      (reader) => checkImportPolicies({ find: (name) => reader.find(name), get: (name) => reader.get(name), records: () => reader.records(), revision: () => reader.revision(), policy: () => policy }, snapshot, entries, plan),
      'importSnapshot',
    );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    // A search made before close() answers from the index (its store calls: _close() waits).
    await Promise.allSettled([...this.#searches]);
    this.#search.clear();
    await this._close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  static {
    registerOf = (registry, spec, options) => registry.#register(spec, options, outcomeOf);
    registerManyOf = (registry, specs, options) => registry.#registerMany(specs, options);
  }
}

/**
 * `registry.registerMany(specs, options)`, and what this call did to each tool: `added`,
 * `updated` (with the `replacedVersion`) or `unchanged` (identical spec, nothing written).
 * Every store of this package decides it in the write's own atomic step, so of several
 * callers racing to add one new tool (in one process or many) exactly one gets `added`.
 * Another implementation of `ToolRegistry` says only what it stored: its actions are judged
 * from a read made just before the write, which a racing writer can outdate.
 * @throws what `registerMany` throws
 */
export async function registerManyWithActions(registry: ToolRegistry, specs: readonly ToolSpecInput[], options?: RegisterManyOptions): Promise<RegistrationOutcome[]> {
  if (registry instanceof BaseToolRegistry) return (await registerManyOf(registry, specs, options)).map((one) => Object.freeze(one));
  const names = Array.isArray(specs) ? specs.map((spec) => (spec as { tool_name?: unknown } | null)?.tool_name) : [];
  const before = await Promise.all(names.map((name) => (typeof name === 'string' ? registry.get(name) : undefined)));
  const after = await registry.registerMany(specs, options);
  return after.map((registration, i) => Object.freeze(outcomeFromRead(before[i], registration)));
}

/**
 * `registry.register(spec, options)`, and what this call did to the tool, as
 * `registerManyWithActions` says it for a batch: `added`, `updated` (with the
 * `replacedVersion`) or `unchanged`. Every store of this package decides it in the write's
 * own atomic step. Another implementation of `ToolRegistry` is exact when the write is
 * conditional (`expectedVersion`: a write that succeeded knows what it found) and otherwise
 * judges from a read made just before the write, which a racing writer can outdate.
 * @throws what `register` throws
 */
export async function registerWithAction(registry: ToolRegistry, spec: ToolSpecInput, options?: RegistrationOptions): Promise<RegistrationOutcome> {
  if (registry instanceof BaseToolRegistry) return Object.freeze(await registerOf(registry, spec, options));
  const expected = options?.expectedVersion;
  const name = (spec as { tool_name?: unknown } | null)?.tool_name;
  const before = expected === undefined && typeof name === 'string' ? await registry.get(name) : undefined;
  const registration = await registry.register(spec, options);
  if (expected === undefined) return Object.freeze(outcomeFromRead(before, registration));
  // The write found the tool absent (null), or at the expected version: the same version is
  // the identical spec (a different one is VERSION_CONFLICT), another version replaced it.
  if (expected === null) return Object.freeze({ registration, action: 'added' });
  if (registration.spec.version === expected) return Object.freeze({ registration, action: 'unchanged' });
  return Object.freeze({ registration, action: 'updated', replacedVersion: expected });
}

/** What a write did, judged from the registration read before it and the one it returned. */
function outcomeFromRead(before: ToolRegistration | undefined, after: ToolRegistration): RegistrationOutcome {
  if (before === undefined) return { registration: after, action: 'added' };
  const same = before.created_at === after.created_at && before.enabled === after.enabled && fingerprintOf(before.spec) === fingerprintOf(after.spec);
  return same ? { registration: after, action: 'unchanged' } : { registration: after, action: 'updated', replacedVersion: before.spec.version };
}

/** The ISO text of a clock's reading, for a write of `toolName`; see `BaseToolRegistry.now()`. */
function clockTime(time: unknown, toolName: string | undefined): string {
  if (!(time instanceof Date)) throw new TypeError(`clock() must return a Date, got ${previewValue(time)}`);
  const ms = time.getTime();
  // Year 0000 to 9999: what toISOString writes as four digits (and ISO 8601 without an expanded year).
  if (Number.isNaN(ms) || ms < MIN_CLOCK_MS || ms > MAX_CLOCK_MS) {
    const shown = Number.isNaN(ms) ? 'an invalid Date' : `a Date in year ${time.getUTCFullYear()}`;
    const message = `clock() returned ${shown}; created_at needs a valid date in the years 0000 to 9999`;
    throw new ValidationError(`invalid created_at from the registry's clock: ${message}`, [
      Object.freeze({ code: 'custom', message, path: Object.freeze(['created_at']), pathText: 'created_at' }),
    ], toolName === undefined ? { path: 'created_at' } : { tool_name: toolName, path: 'created_at' });
  }
  // Writes of one batch mostly fall in the same millisecond: its text is formatted once.
  if (ms !== lastClockMs) {
    lastClockText = time.toISOString();
    lastClockMs = ms;
  }
  return lastClockText;
}

let lastClockMs = Number.NaN;
let lastClockText = '';

/** 0000-01-01T00:00:00.000Z (Date.UTC reads years 0-99 as 1900-1999). */
const MIN_CLOCK_MS = -62_167_219_200_000;
const MAX_CLOCK_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * `true` until the current synchronous run ends (any microtask runs, so any await passes).
 * Whatever a synchronous store does in one transaction sees `true`; a store that awaits
 * between chunks sees `false` after its first await, when the caller's code may have run.
 */
function sameTurnFlag(): () => boolean {
  let same = true;
  queueMicrotask(() => {
    same = false;
  });
  return () => same;
}

/**
 * An import's pass 2: the puts for the entries the plan adds or updates, in snapshot order,
 * each spec text built only when the store asks for it, then the removals. An entry read
 * after the caller's code may have run is validated again (`snapshotEntryJson`).
 */
function* importChanges(
  current: ReadonlyMap<string, ToolRecord>,
  snapshot: unknown,
  entries: readonly PreparedImportEntry[],
  plan: ImportPlan,
  now: (toolName: string) => string,
  sameTurn: () => boolean,
): Generator<StoreChange, void, undefined> {
  let writtenAt: string | undefined;
  for (let index = 0; index < entries.length; index++) {
    const action = plan.actions[index];
    if (action !== 'add' && action !== 'update') continue;
    const entry = entries[index] as PreparedImportEntry;
    const { tool_name, version, fingerprint, enabled, created_at } = entry;
    const existing = current.get(tool_name);
    const registrationChanges = existing === undefined || existing.fingerprint !== fingerprint || existing.enabled !== enabled || existing.created_at !== created_at;
    // The put keeps the deprecation the tool has (none when new); a separate change sets the snapshot's.
    const kept = existing?.deprecation ?? null;
    if (registrationChanges) {
      yield {
        kind: 'put',
        tool: {
          record: { tool_name, version, fingerprint, enabled, created_at, deprecation: kept },
          json: snapshotEntryJson(snapshot, index, entry, !sameTurn()),
          // The snapshot's created_at is kept verbatim; the history records when the import wrote it.
          firstRegisteredAt: (writtenAt ??= now(tool_name)),
        },
      };
    }
    if (!sameDeprecation(kept, entry.deprecation)) yield { kind: 'deprecate', toolName: tool_name, deprecation: entry.deprecation };
  }
  for (const toolName of plan.removals) yield { kind: 'delete', toolName };
}

/**
 * A merge import obeys the `compatibility` policy for each tool it moves to another spec (an
 * entry that changes only `enabled`, `created_at` or the deprecation is not judged).
 * @throws COMPATIBILITY_FAILED or VALIDATION_FAILED (path `tools[i]`), naming the first entry refused
 */
function checkImportPolicies(view: StoreReader, snapshot: unknown, entries: readonly PreparedImportEntry[], plan: ImportPlan): void {
  const policy = view.policy();
  if (policy.compatibility === 'none') return;
  const onlyCompatibility: RegistryPolicy = Object.freeze({ versionOrder: 'any', compatibility: policy.compatibility });
  const budget = new PatternBudget();
  entries.forEach((entry, index) => {
    if (plan.actions[index] !== 'update') return;
    const existing = view.find(entry.tool_name);
    if (existing === undefined || existing.fingerprint === entry.fingerprint) return;
    const spec = (snapshot as { tools: { spec: Record<string, unknown> }[] }).tools[index]?.spec as Record<string, unknown>;
    checkPolicies(onlyCompatibility, getOrFail(view, entry.tool_name), {
      tool_name: entry.tool_name,
      version: entry.version,
      input_schema: spec.input_schema,
      output_schema: spec.output_schema,
    }, { allowDowngrade: false, path: entry.path, budget });
  });
}

/** `allowIncompatible` of register's or registerMany's options (default false). */
function allowIncompatibleOf(method: string, options: unknown): boolean {
  const { allowIncompatible = false } = optionsObject(method, options) as RegistrationOptions;
  if (typeof allowIncompatible !== 'boolean') throw new TypeError(`${method}(): allowIncompatible must be a boolean, got ${typeof allowIncompatible}`);
  return allowIncompatible;
}

/** `allowDowngrade` of register's or registerMany's options (default false). */
function allowDowngradeOf(method: string, options: unknown): boolean {
  const { allowDowngrade = false } = optionsObject(method, options) as RegistrationOptions;
  if (typeof allowDowngrade !== 'boolean') throw new TypeError(`${method}(): allowDowngrade must be a boolean, got ${typeof allowDowngrade}`);
  return allowDowngrade;
}

/** The frozen report of an import; only a dry run carries the per-tool plan. */
function importReport(plan: ImportPlan, dryRun: boolean, revision: number): ImportReport {
  const { added, updated, unchanged, removed, conflicts } = plan;
  const counts = { added, updated, unchanged, removed, conflicts, dryRun, revision };
  return Object.freeze(dryRun ? { ...counts, plan: Object.freeze(plan.steps.map((step) => Object.freeze(step))) } : counts);
}

function getOrFail(reader: Pick<StoreReader, 'get'>, toolName: string): ToolRegistration {
  const registration = reader.get(toolName);
  if (registration === undefined) throw new ToolNotFoundError(toolName);
  return registration;
}
