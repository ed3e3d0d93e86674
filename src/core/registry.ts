import type { DeprecationInput, ToolRegistration, ToolRegistrySnapshot, ToolSpec, ToolSpecInput } from './contracts.js';
import type { RegistryPolicy, RegistryPolicyInput } from './versions.js';
import type { CallRecord, CallRecordInput, CallRetention, CallsQuery, Upstream, UpstreamInput } from './upstreams.js';

/** `merge` (default) leaves unnamed tools alone; `replace` makes the registry equal to the snapshot. */
export type ImportMode = 'merge' | 'replace';

export interface ImportOptions {
  /** Default `'merge'`. */
  readonly mode?: ImportMode;
  /** Plan only: the report comes back with `plan`, nothing is written, conflicts are not thrown. */
  readonly dryRun?: boolean;
}

/** One tool's fate in an import. */
export interface ImportStep {
  readonly tool_name: string;
  readonly action: 'add' | 'update' | 'unchanged' | 'remove' | 'conflict';
  /** Where the tool stands in the snapshot (`tools[3]`); absent for `remove`. */
  readonly path?: string;
  /** The stored version before the import; absent for `add`. */
  readonly from_version?: string | null;
  /** The snapshot's version; absent for `remove`. */
  readonly to_version?: string | null;
}

/** What an import did (or, with `dryRun`, would do). */
export interface ImportReport {
  readonly added: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly removed: number;
  /** Conflicting entries; only a dry run can report more than 0 (a real import throws). */
  readonly conflicts: number;
  readonly dryRun: boolean;
  /** Per-tool plan sorted by `tool_name`; present on a dry run only. */
  readonly plan?: readonly ImportStep[];
  /**
   * The store-wide revision the registry is at right after the import committed (a dry run:
   * the revision the plan was made against). Follow the change feed from here
   * (`changes({ since: revision })`) to stay in step after resyncing from a snapshot.
   */
  readonly revision: number;
}

/**
 * What a change did to a tool. `updated`: its spec or `created_at` changed (an import may also
 * flip `enabled`). `deprecated`: a deprecation was set or changed; `undeprecated`: it was lifted.
 */
export type ChangeAction = 'added' | 'updated' | 'enabled' | 'disabled' | 'removed' | 'deprecated' | 'undeprecated';

/** One committed change to one tool, as the change feed (`changes`, `watch`) reports it. */
export interface ChangeEvent {
  /** Store-wide, only grows; the events of one commit have consecutive revisions. */
  readonly revision: number;
  readonly tool_name: string;
  readonly action: ChangeAction;
  /** The tool's version after the change (for `removed`: the version that was removed). */
  readonly version: string | null;
  /**
   * When the change was committed: ISO 8601 UTC from the system clock (not the `clock`
   * option); in SQLite stamped per statement, so one commit's events may differ by milliseconds.
   */
  readonly at: string;
  /** Present (`true`) on an `updated` event that rolled the tool back to a lower SemVer (`allowDowngrade`). */
  readonly rollback?: true;
}

export interface ChangesOptions {
  /** Return the events after this revision. Default 0 (from the start of the retained log). */
  readonly since?: number;
  /** At most this many events (0 or more). Default 1000. */
  readonly limit?: number;
}

/** A page of the change feed. */
export interface ChangesPage {
  /** The store's current revision when the page was read (events beyond the page may exist: ask again from the last event's revision). */
  readonly revision: number;
  /** Events after `since`, oldest first, at most `limit`. */
  readonly events: readonly ChangeEvent[];
}

export interface WatchOptions {
  /** Deliver the events after this revision. Default: the revision when `watch()` is called (only new events). */
  readonly since?: number;
  /** Aborting it ends the iteration (no error). */
  readonly signal?: AbortSignal;
}

/** One distinct spec ever stored under a name. */
export interface HistoryEntry {
  /** The spec in the key order it was last stored with. */
  readonly spec: ToolSpec;
  /** SHA-256 of the spec's canonical JSON: its identity. */
  readonly fingerprint: string;
  /** When this spec was first stored under the name (ISO 8601). */
  readonly first_registered_at: string;
}

/** Options of a conditional write. */
export interface WriteOptions {
  /**
   * The write happens only if the tool's stored version is exactly this one; `null` means
   * "the tool must not exist" (an unversioned tool cannot be expected by version). Left out:
   * no condition. A mismatch is `PRECONDITION_FAILED` and changes nothing; the check and the
   * write are one atomic step.
   */
  readonly expectedVersion?: string | null;
}

/** What one write did to one tool: stored it new, replaced its spec, or left it as it was (nothing written). */
export type RegistrationAction = 'added' | 'updated' | 'unchanged';

/** One tool of `registerManyWithActions`'s answer, or `registerWithAction`'s. */
export interface RegistrationOutcome {
  /** The registration now stored, as `registerMany` (or `register`) returns it. */
  readonly registration: ToolRegistration;
  /** What this call did to the tool (not what another writer did before or after it). */
  readonly action: RegistrationAction;
  /**
   * With `action: 'updated'` only: the version of the spec this call replaced (`null`:
   * unversioned), read in the same atomic step as the write, so no other writer's version.
   */
  readonly replacedVersion?: string | null;
}

/** Options of `register` and `registerMany`. */
export interface RegistrationOptions extends WriteOptions {
  /**
   * Under the policy `versionOrder: 'semver'`, accept a version lower than the stored one (a
   * rollback: its change event is `updated` with `rollback: true`). Default `false`.
   * (`expectedVersion` applies to `register` only.)
   */
  readonly allowDowngrade?: boolean;
  /**
   * Under the policy `compatibility: 'backward'` or `'semver-major'`, store a version the
   * policy would refuse as incompatible (an explicit override, e.g. the gateway's
   * `upstream approve --force`: the upstream already changed, so refusing it only leaves the
   * tool unserved). Default `false`. The `versionOrder` policy still applies.
   */
  readonly allowIncompatible?: boolean;
}

export interface ListOptions {
  /** Also list disabled tools. Default `false`. */
  readonly includeDisabled?: boolean;
  /** Only tools carrying every one of these tags (exact, case-sensitive). Default: no filter. */
  readonly tags?: readonly string[];
}

// --- Discovery (issue 26): search and keyset pages -------------------------------------

/** The user's embedder for optional semantic ranking: one vector per text (all of one length). */
export type EmbedFunction = (texts: string[]) => Promise<readonly (readonly number[])[]> | readonly (readonly number[])[];

export interface SearchOptions {
  /** Results per page, 1-1000. Default 10. */
  readonly limit?: number;
  /** Only tools carrying every one of these tags. */
  readonly tags?: readonly string[];
  /** Also search disabled tools. Default `false`. */
  readonly includeDisabled?: boolean;
  /** A `next_cursor` of the previous page of the same query and filters. */
  readonly cursor?: string | null;
  /**
   * Semantic ranking: the ranking by term (BM25F) and the ranking by cosine similarity of
   * `embed`'s vectors are fused by reciprocal rank fusion (docs/search.md). Tools' vectors
   * are cached per spec fingerprint; the query is embedded on each call.
   */
  readonly embed?: EmbedFunction;
}

/** One search result: the registration and its score (higher is better; comparable within one query only). */
export interface SearchResult {
  readonly registration: ToolRegistration;
  readonly score: number;
}

/** A page of search results, best first (ties by `tool_name`). */
export interface SearchPage {
  readonly results: readonly SearchResult[];
  /** Opaque; pass it as `cursor` for the next page. `null` on the last page. */
  readonly next_cursor: string | null;
}

export interface ListPageOptions extends ListOptions {
  /** Registrations per page, 1-1000. Default 100. */
  readonly limit?: number;
  /** A `next_cursor` of the previous page. */
  readonly cursor?: string | null;
}

/** A keyset page of registrations by `tool_name`. */
export interface ListPageResult {
  readonly registrations: readonly ToolRegistration[];
  /** Opaque; pass it as `cursor` for the next page. `null` on the last page. */
  readonly next_cursor: string | null;
}

/** What issue 26 adds to every registry. */
export interface DiscoveryMethods {
  /**
   * The tools that best match `query`, ranked by BM25F over the name (split at `_ . -` and
   * camelCase), description, tags and the input schema's property names and descriptions,
   * after NFKC, case folding and English stemming; ties by `tool_name`. A tool matching no
   * term of the query is not a result (a query without terms has none). Every store returns
   * the same results and scores for the same tools; writes of other processes are seen as
   * soon as `get` sees them. Pages: `next_cursor` carries the first page's ranking statistics,
   * so whatever is written between pages, each tool of the first page's ranking that is still
   * there (and passes the filters) is on exactly one page, added tools are not, and paging ends
   * (docs/search.md, "Pages under writes").
   * @throws VALIDATION_FAILED (`context.path` `limit` or `cursor`) for a limit outside 1-1000
   *   or a cursor this registry did not hand out for this query; STORAGE_BUSY
   */
  search(query: string, options?: SearchOptions): Promise<SearchPage>;

  /**
   * A page of current registrations by `tool_name` (code-point order), after the cursor's
   * name: tools added or removed between pages never shift or repeat one.
   * @throws VALIDATION_FAILED (`context.path` `limit` or `cursor`); STORAGE_BUSY
   */
  listPage(options?: ListPageOptions): Promise<ListPageResult>;
}

/**
 * The registry contract every store obeys identically (docs/contract.md). All methods are
 * async (except `watch`, which returns an async iterable). Objects handed out are deeply
 * frozen; lists are fresh arrays. After `close()`, every method rejects with
 * `REGISTRY_CLOSED` (`watch` throws it at the call). Wrong argument types (a number for a name)
 * are a plain `TypeError`.
 */
export interface ToolRegistry extends AsyncDisposable, DiscoveryMethods {
  /**
   * Registers a spec by the registration rule:
   * a new name is stored enabled with `created_at` now; the identical spec (canonical JSON
   * equal) returns the existing registration unchanged and writes nothing; another version
   * replaces the spec with a new `created_at` and keeps `enabled`; the same version with a
   * different spec throws `VERSION_CONFLICT` and changes nothing.
   * The spec comes back (here and from every read) in the key order it was given, defaults
   * added after the given keys; identity ignores key order, so an identical re-register in
   * another key order writes nothing and keeps the stored text.
   * With `expectedVersion`, the rule runs only if the stored version is the expected one
   * (`null`: the name must not be registered); the identical spec is still checked.
   * The registry's policies (`getPolicy()`) apply to rules 1 and 3, read in the same atomic step.
   * @throws VALIDATION_FAILED (with every issue and its path), VERSION_CONFLICT,
   *   PRECONDITION_FAILED, VERSION_DOWNGRADE, COMPATIBILITY_FAILED, STORAGE_BUSY
   */
  register(spec: ToolSpecInput, options?: RegistrationOptions): Promise<ToolRegistration>;

  /**
   * Registers several specs all-or-nothing, each by the registration rule, in one atomic
   * write; returns their registrations in the given order (one `created_at` for the batch).
   * Every invalid spec is reported in one `VALIDATION_FAILED` with paths like `[2].version`;
   * a name given twice is `DUPLICATE_TOOL`; one conflict (`context.path` `[2]`) changes
   * nothing. A batch of only identical specs writes nothing. An empty batch returns `[]`.
   * The policies apply to each spec (one refusal, `context.path` `[2]`, changes nothing).
   * @throws VALIDATION_FAILED, DUPLICATE_TOOL, VERSION_CONFLICT, VERSION_DOWNGRADE,
   *   COMPATIBILITY_FAILED, STORAGE_BUSY
   */
  registerMany(specs: readonly ToolSpecInput[], options?: Pick<RegistrationOptions, 'allowDowngrade' | 'allowIncompatible'>): Promise<ToolRegistration[]>;

  /** The registration of exactly this name (case-sensitive), or `undefined`. */
  get(toolName: string): Promise<ToolRegistration | undefined>;

  /** Whether this exact name is registered (enabled or not). */
  has(toolName: string): Promise<boolean>;

  /** Current registrations sorted by `tool_name` in code-point order; disabled ones only when asked; `tags` filters. */
  listAll(options?: ListOptions): Promise<ToolRegistration[]>;

  /**
   * Enables or disables a tool and returns its registration; setting the current state
   * writes nothing and returns an equal registration. `expectedVersion` is checked first
   * (see `WriteOptions`).
   * @throws TOOL_NOT_FOUND, PRECONDITION_FAILED, STORAGE_BUSY
   */
  setEnabled(toolName: string, enabled: boolean, options?: WriteOptions): Promise<ToolRegistration>;

  /**
   * Removes a tool; `true` when something was removed, `false` when it was not there
   * (idempotent). Its spec history is kept. `expectedVersion` is checked first (`null` and an
   * absent tool: `false`).
   * @throws PRECONDITION_FAILED, STORAGE_BUSY
   */
  remove(toolName: string, options?: WriteOptions): Promise<boolean>;

  /**
   * Every distinct spec ever stored under the name (by fingerprint), oldest first, kept
   * across `remove` and re-register; `[]` for a name never registered.
   */
  history(toolName: string): Promise<HistoryEntry[]>;

  /**
   * The committed changes after revision `since` (default 0), oldest first, at most `limit`
   * (default 1000), from every connection and process, with the current revision. The log
   * is bounded (at least the last 10,000 changes, or one per tool when there are more tools).
   * `limit: 0` returns the current revision alone and never throws CHANGES_EXPIRED: read
   * the revision that way before resyncing from a snapshot.
   * @throws CHANGES_EXPIRED (with `context.oldest_revision`) when `since` is older than the
   *   log retains (and `limit` is above 0): resync from a snapshot.
   */
  changes(options?: ChangesOptions): Promise<ChangesPage>;

  /**
   * The change feed as an async iterable: every event after `since` (default: the revision
   * at the call), then each new commit's events as they happen, in any process, each exactly
   * once and in order. Ends (without error) when `signal` aborts or the registry is closed.
   * Idle, it costs a timer (SQLite: a `data_version` probe every 50 ms; memory: nothing).
   * Iterating throws CHANGES_EXPIRED when it falls further behind than the log retains, or
   * when the log it follows was replaced (a restored backup or dump: `context.replaced`).
   * Over a caller's SQLite handle, only committed events: it waits out a transaction open on it.
   */
  watch(options?: WatchOptions): AsyncIterable<ChangeEvent>;

  /** Every tool, disabled ones too, sorted by `tool_name`. */
  exportSnapshot(): Promise<ToolRegistrySnapshot>;

  /**
   * Imports a snapshot all-or-nothing. `merge`: named tools become exactly the snapshot's
   * (spec, `enabled`, `created_at`), a same-version different-spec entry is a conflict.
   * `replace`: the registry becomes the snapshot (a restore; conflicts allowed). A `merge` also
   * obeys the `compatibility` policy for each tool it changes to another spec.
   * @throws SNAPSHOT_INVALID (with paths like `tools[3].spec.version`), DUPLICATE_TOOL,
   *   VERSION_CONFLICT (with `context.path`), COMPATIBILITY_FAILED, STORAGE_BUSY
   */
  importSnapshot(snapshot: unknown, options?: ImportOptions): Promise<ImportReport>;

  /** Releases the store. Idempotent. A caller's own database handle is left open. */
  close(): Promise<void>;

  // --- versions with meaning (issue 27): deprecation and the registry's policies -----------

  /**
   * Marks a tool deprecated (or changes its deprecation): `message` (required), `replacement`
   * (a tool name) and `sunset` (an ISO 8601 date or date-time, after which `loadToolSet`
   * leaves the tool out). The tool keeps working; the deprecation survives new versions, export
   * and import, and goes with `remove`. Setting the same deprecation writes nothing.
   * Change event `deprecated`.
   * @throws VALIDATION_FAILED (paths `message`, `replacement`, `sunset`), TOOL_NOT_FOUND,
   *   PRECONDITION_FAILED, STORAGE_BUSY
   */
  deprecate(toolName: string, deprecation: DeprecationInput, options?: WriteOptions): Promise<ToolRegistration>;

  /**
   * Lifts a tool's deprecation; a tool not deprecated is returned unchanged (nothing written).
   * Change event `undeprecated`.
   * @throws TOOL_NOT_FOUND, PRECONDITION_FAILED, STORAGE_BUSY
   */
  undeprecate(toolName: string, options?: WriteOptions): Promise<ToolRegistration>;

  /**
   * Sets the registry's policies (the ones given; the others are kept), stored in the
   * registry itself so that every process and instance obeys them from its next write.
   * Returns the policies now in force.
   * @throws VALIDATION_FAILED for an unknown policy or value (nothing changes), STORAGE_BUSY
   */
  setPolicy(policy: RegistryPolicyInput): Promise<RegistryPolicy>;

  /** The registry's policies: `{ versionOrder: 'any', compatibility: 'none' }` until set. */
  getPolicy(): Promise<RegistryPolicy>;

  // --- the gateway (issue 37): upstream MCP servers and the audit log of tool calls ---------

  /**
   * Stores an upstream (a new name, or replaces the row of that name, keeping `created_at`).
   * The row is the registry's, so every process and server of a fleet sees the same list; its
   * tools are ordinary specs (tag `upstream:NAME`) written with `register`. Writes no change event.
   * @throws VALIDATION_FAILED (with each issue's path: `name`, `transport.url`, ...), STORAGE_BUSY
   */
  putUpstream(upstream: UpstreamInput): Promise<Upstream>;

  /** The upstream of exactly this name, or `undefined`. */
  getUpstream(name: string): Promise<Upstream | undefined>;

  /** Every upstream, sorted by name. */
  listUpstreams(): Promise<Upstream[]>;

  /** Removes the upstream's row (its tools stay registered until removed); `true` when it was there. */
  removeUpstream(name: string): Promise<boolean>;

  /**
   * Appends rows to the audit log (one atomic write) and applies the retention
   * (`DEFAULT_CALL_RETENTION` unless the store was opened with `callRetention`).
   * @throws VALIDATION_FAILED (path `[2].duration_ms`, ...), STORAGE_BUSY
   */
  recordCalls(calls: readonly CallRecordInput[]): Promise<void>;

  /** Audit rows, newest first, filtered and paged by `query`. @throws VALIDATION_FAILED for a bad filter */
  listCalls(query?: CallsQuery): Promise<CallRecord[]>;
}

/** Options every store takes. */
export interface RegistryOptions {
  /** Where `created_at` comes from; `clock().toISOString()` is stored. Default `() => new Date()`. */
  readonly clock?: () => Date;
  /** The audit log's bounds (`recordCalls`). Default `DEFAULT_CALL_RETENTION`: 100,000 rows, 30 days. */
  readonly callRetention?: Partial<CallRetention>;
}
