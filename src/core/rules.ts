// The registration rule and the import plan: pure functions, the one place these
// decisions are made. Stores only make them atomic.
import { compareCodePoints } from './canonical.js';
import { ChangesExpiredError, PreconditionFailedError, VersionConflictError } from './errors.js';
import type { Deprecation, ToolRegistrationInput, ToolRegistrySnapshotInput } from './contracts.js';
import type { ChangeAction, ImportMode, ImportStep } from './registry.js';
import { parseSnapshot } from './validation.js';
import type { PreparedImportEntry, PreparedSpec } from './validation.js';

/** What a store knows about a current tool without loading its spec. */
export interface ToolRecord {
  readonly tool_name: string;
  readonly version: string | null;
  readonly fingerprint: string;
  readonly enabled: boolean;
  readonly created_at: string | null;
  /** The tool's deprecation (null: not deprecated); frozen. */
  readonly deprecation: Deprecation | null;
}

/** Whether two deprecations are the same (both null, or equal fields). */
export function sameDeprecation(a: Deprecation | null, b: Deprecation | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  return a.message === b.message && a.replacement === b.replacement && a.sunset === b.sunset;
}

export type RegistrationDecision =
  /** Rule 1: a new name. */
  | { readonly action: 'create' }
  /** Rule 2: the identical spec; nothing is written. */
  | { readonly action: 'keep' }
  /** Rule 3: another version replaces the spec; `enabled` is kept. */
  | { readonly action: 'replace'; readonly enabled: boolean };

function describeVersion(version: string | null): string {
  return version === null ? 'unversioned' : `version ${JSON.stringify(version)}`;
}

/** The error of rule 4, shared by `register` and `importSnapshot`. */
export function versionConflict(
  current: ToolRecord,
  incoming: Pick<PreparedSpec, 'tool_name' | 'version' | 'fingerprint'>,
  path?: string,
): VersionConflictError {
  const where = path === undefined ? '' : ` (at ${path})`;
  const what =
    incoming.version === null
      ? `both the stored spec and the new one are unversioned, and the specs differ`
      : `the stored spec and the new one are both ${describeVersion(incoming.version)}, and the specs differ`;
  return new VersionConflictError(
    `version conflict for tool ${JSON.stringify(incoming.tool_name)}${where}: ${what} ` +
      `(stored fingerprint ${current.fingerprint.slice(0, 12)}, new ${incoming.fingerprint.slice(0, 12)}); ` +
      `give the changed spec a new version`,
    {
      tool_name: incoming.tool_name,
      version: incoming.version,
      existing_fingerprint: current.fingerprint,
      incoming_fingerprint: incoming.fingerprint,
      ...(path === undefined ? {} : { path }),
    },
  );
}

/**
 * The registration rule (docs/contract.md), exactly:
 * 1. new name: create; 2. identical spec: keep; 3. other version (null counts, lower
 * counts): replace, keeping `enabled`; 4. same version, different spec: VERSION_CONFLICT.
 */
export function decideRegistration(
  current: ToolRecord | undefined,
  incoming: PreparedSpec,
  /** Where the spec stood in a batch (`[2]`), named by the conflict error. */
  path?: string,
): RegistrationDecision {
  if (current === undefined) return { action: 'create' };
  if (current.fingerprint === incoming.fingerprint) return { action: 'keep' };
  if (current.version !== incoming.version) return { action: 'replace', enabled: current.enabled };
  throw versionConflict(current, incoming, path);
}

/** The plan of an import: the action per snapshot entry, the tools to remove, and the counts. */
export interface ImportPlan {
  /** One step per tool, sorted by name (built on first access: only a dry run reports it). */
  readonly steps: ImportStep[];
  /** The action of each snapshot entry, in snapshot order. */
  readonly actions: readonly ImportStep['action'][];
  /** The current tools a `replace` removes, sorted by name. */
  readonly removals: readonly string[];
  readonly added: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly removed: number;
  readonly conflicts: number;
  /** The first conflict in snapshot order, as the error an import would throw. */
  readonly firstConflict: VersionConflictError | undefined;
}

/**
 * Plans an import against the current tools. `merge` leaves unnamed tools alone and marks a
 * same-version, different-spec entry as a conflict; `replace` is a restore: the registry
 * becomes the snapshot, conflicts included, and unnamed tools are removed.
 */
export function importPlan(
  current: ReadonlyMap<string, ToolRecord>,
  entries: readonly PreparedImportEntry[],
  mode: ImportMode,
): ImportPlan {
  const actions: ImportStep['action'][] = [];
  const counts = { added: 0, updated: 0, unchanged: 0, removed: 0, conflicts: 0 };
  let firstConflict: VersionConflictError | undefined;
  for (const entry of entries) {
    const existing = current.get(entry.tool_name);
    let action: ImportStep['action'];
    if (existing === undefined) {
      action = 'add';
      counts.added++;
    } else if (
      existing.fingerprint === entry.fingerprint &&
      existing.enabled === entry.enabled &&
      existing.created_at === entry.created_at &&
      sameDeprecation(existing.deprecation, entry.deprecation)
    ) {
      action = 'unchanged';
      counts.unchanged++;
    } else if (mode === 'merge' && existing.fingerprint !== entry.fingerprint && existing.version === entry.version) {
      action = 'conflict';
      counts.conflicts++;
      firstConflict ??= versionConflict(existing, entry, entry.path);
    } else {
      action = 'update';
      counts.updated++;
    }
    actions.push(action);
  }
  const removals: string[] = [];
  if (mode === 'replace') {
    const named = new Set(entries.map((entry) => entry.tool_name));
    for (const existing of current.values()) if (!named.has(existing.tool_name)) removals.push(existing.tool_name);
    removals.sort(compareCodePoints);
    counts.removed = removals.length;
  }
  // Sorting 100k steps costs more than the rest of the plan; a real import never reads them.
  let steps: ImportStep[] | undefined;
  const buildSteps = (): ImportStep[] => {
    const built: ImportStep[] = entries.map((entry, index) => {
      const action = actions[index] as ImportStep['action'];
      const existing = current.get(entry.tool_name);
      return existing === undefined
        ? { tool_name: entry.tool_name, action, path: entry.path, to_version: entry.version }
        : { tool_name: entry.tool_name, action, path: entry.path, from_version: existing.version, to_version: entry.version };
    });
    for (const name of removals) {
      built.push({ tool_name: name, action: 'remove', from_version: (current.get(name) as ToolRecord).version });
    }
    return built.sort((a, b) => compareCodePoints(a.tool_name, b.tool_name));
  };
  return {
    get steps() {
      return (steps ??= buildSteps());
    },
    actions,
    removals,
    ...counts,
    firstConflict,
  };
}

/**
 * `mode` of an import as given to `method`: 'merge' (the default) or 'replace'.
 * @throws TypeError for anything else
 */
export function importMode(method: string, mode: unknown = 'merge'): ImportMode {
  if (mode !== 'merge' && mode !== 'replace') {
    throw new TypeError(`${method}(): mode must be 'merge' or 'replace', got ${JSON.stringify(mode)}`);
  }
  return mode;
}

/**
 * The import rule over plain data, as a pure function: what `importSnapshot(snapshot, { mode })`
 * would do to a registry whose tools are `current`, one step per tool sorted by name (`add`,
 * `update`, `unchanged`, `remove` or `conflict`): the `plan` a dry run reports. `current` is
 * a registry's tools as `exportSnapshot()` or `listAll({ includeDisabled: true })` return them.
 * Nothing is read or written; a store applies such a plan atomically in `importSnapshot`.
 * @throws SNAPSHOT_INVALID or DUPLICATE_TOOL when `snapshot` (or `current`, as a snapshot of
 *   its tools) is not a valid snapshot, naming the entry; TypeError for a bad `mode`
 */
export function planImport(
  current: ToolRegistrySnapshotInput | readonly ToolRegistrationInput[],
  snapshot: ToolRegistrySnapshotInput,
  options: { readonly mode?: ImportMode } = {},
): readonly ImportStep[] {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`planImport(): options must be an object, got ${typeof options}`);
  }
  const mode = importMode('planImport', options.mode);
  const records = new Map<string, ToolRecord>();
  for (const entry of parseSnapshot(Array.isArray(current) ? { tools: current } : current)) records.set(entry.tool_name, entry);
  const plan = importPlan(records, parseSnapshot(snapshot), mode);
  return Object.freeze(plan.steps.map((step) => Object.freeze(step)));
}

/**
 * The condition of a conditional write: `expected` undefined is no condition, `null` means
 * the tool must not exist, a string that it exists with exactly that version.
 * @throws PRECONDITION_FAILED when the stored tool does not match
 */
export function checkExpectedVersion(
  toolName: string,
  current: { readonly version: string | null } | undefined,
  expected: string | null | undefined,
): void {
  if (expected === undefined) return;
  if (expected === null ? current === undefined : current !== undefined && current.version === expected) return;
  const wanted = expected === null ? 'not to be registered' : `to be at version ${JSON.stringify(expected)}`;
  const found =
    current === undefined ? 'it is not registered' : `it is at ${describeVersion(current.version)}`;
  throw new PreconditionFailedError(
    `precondition failed for tool ${JSON.stringify(toolName)}: expected it ${wanted}, but ${found}; nothing was changed`,
    { tool_name: toolName, expected, actual: current?.version ?? null, exists: current !== undefined },
  );
}

/**
 * What a change to one tool is called in the change feed, from its record before and after
 * (undefined: absent); `undefined` when nothing a reader sees changed. The SQLite store's
 * triggers (migrations 0004 and 0006) compute the same thing in SQL. A write changes either
 * the registration (spec, `created_at`, `enabled`) or the deprecation, never both at once:
 * an import that changes both logs two changes.
 */
export function changeAction(before: ToolRecord | undefined, after: ToolRecord | undefined): ChangeAction | undefined {
  if (before === undefined) return after === undefined ? undefined : 'added';
  if (after === undefined) return 'removed';
  if (before.fingerprint !== after.fingerprint || before.created_at !== after.created_at) return 'updated';
  if (before.enabled !== after.enabled) return after.enabled ? 'enabled' : 'disabled';
  if (!sameDeprecation(before.deprecation, after.deprecation)) return after.deprecation === null ? 'undeprecated' : 'deprecated';
  return undefined;
}

/** The change log keeps at least the last this many changes... */
export const CHANGE_LOG_RETAINED = 10_000;
/** ...and is trimmed when a revision is a multiple of this. */
export const CHANGE_LOG_TRIM_EVERY = 1000;

/**
 * How many of the latest changes the log keeps when it is trimmed with `tools` tools
 * registered: 10,000, or as many as there are tools when more (migration 0003's rule, so a
 * cache can catch up on a change to every tool).
 */
export function changeLogRetained(tools: number): number {
  return Math.max(CHANGE_LOG_RETAINED, tools);
}

/**
 * Whether a change-feed cursor can still be served: the log holds every event after `since`
 * only when `since` is at least the oldest retained revision minus one.
 * @throws CHANGES_EXPIRED with `context.oldest_revision`
 */
export function checkCursor(since: number, oldestRevision: number, revision: number): void {
  if (since + 1 < oldestRevision) throw new ChangesExpiredError(since, oldestRevision, revision);
}
