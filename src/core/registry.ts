import type { ToolRegistration, ToolRegistrySnapshot, ToolSpecInput } from './contracts.js';

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
}

export interface ListOptions {
  /** Also list disabled tools. Default `false`. */
  readonly includeDisabled?: boolean;
}

/**
 * The registry contract every store obeys identically (docs/contract.md). All methods are
 * async. Objects handed out are deeply frozen; lists are fresh arrays. After `close()`,
 * every method rejects with `REGISTRY_CLOSED`. Wrong argument types (a number for a name)
 * are a plain `TypeError`.
 */
export interface ToolRegistry extends AsyncDisposable {
  /**
   * Registers a spec by the registration rule:
   * a new name is stored enabled with `created_at` now; the identical spec (canonical JSON
   * equal) returns the existing registration unchanged and writes nothing; another version
   * replaces the spec with a new `created_at` and keeps `enabled`; the same version with a
   * different spec throws `VERSION_CONFLICT` and changes nothing.
   * @throws VALIDATION_FAILED (with every issue and its path), VERSION_CONFLICT, STORAGE_BUSY
   */
  register(spec: ToolSpecInput): Promise<ToolRegistration>;

  /**
   * Registers several specs all-or-nothing, each by the registration rule, in one atomic
   * write; returns their registrations in the given order (one `created_at` for the batch).
   * Every invalid spec is reported in one `VALIDATION_FAILED` with paths like `[2].version`;
   * a name given twice is `DUPLICATE_TOOL`; one conflict (`context.path` `[2]`) changes
   * nothing. A batch of only identical specs writes nothing. An empty batch returns `[]`.
   * @throws VALIDATION_FAILED, DUPLICATE_TOOL, VERSION_CONFLICT, STORAGE_BUSY
   */
  registerMany(specs: readonly ToolSpecInput[]): Promise<ToolRegistration[]>;

  /** The registration of exactly this name (case-sensitive), or `undefined`. */
  get(toolName: string): Promise<ToolRegistration | undefined>;

  /** Whether this exact name is registered (enabled or not). */
  has(toolName: string): Promise<boolean>;

  /** Current registrations sorted by `tool_name` in code-point order; disabled ones only when asked. */
  listAll(options?: ListOptions): Promise<ToolRegistration[]>;

  /**
   * Enables or disables a tool and returns its registration; setting the current state
   * writes nothing and returns an equal registration.
   * @throws TOOL_NOT_FOUND, STORAGE_BUSY
   */
  setEnabled(toolName: string, enabled: boolean): Promise<ToolRegistration>;

  /** Removes a tool; `true` when something was removed, `false` when it was not there (idempotent). */
  remove(toolName: string): Promise<boolean>;

  /** Every tool, disabled ones too, sorted by `tool_name`. */
  exportSnapshot(): Promise<ToolRegistrySnapshot>;

  /**
   * Imports a snapshot all-or-nothing. `merge`: named tools become exactly the snapshot's
   * (spec, `enabled`, `created_at`), a same-version different-spec entry is a conflict.
   * `replace`: the registry becomes the snapshot (a restore; conflicts allowed).
   * @throws SNAPSHOT_INVALID (with paths like `tools[3].spec.version`), DUPLICATE_TOOL,
   *   VERSION_CONFLICT (with `context.path`), STORAGE_BUSY
   */
  importSnapshot(snapshot: unknown, options?: ImportOptions): Promise<ImportReport>;

  /** Releases the store. Idempotent. A caller's own database handle is left open. */
  close(): Promise<void>;
}

/** Options every store takes. */
export interface RegistryOptions {
  /** Where `created_at` comes from; `clock().toISOString()` is stored. Default `() => new Date()`. */
  readonly clock?: () => Date;
}
