import type { RegistryIssue } from './issues.js';

/** Every stable error code the registry throws. Documented in docs/contract.md. */
export type ToolRegistryErrorCode =
  | 'VALIDATION_FAILED'
  | 'VERSION_CONFLICT'
  | 'TOOL_NOT_FOUND'
  | 'DUPLICATE_TOOL'
  | 'SNAPSHOT_INVALID'
  | 'SCHEMA_TOO_NEW'
  | 'REGISTRY_CLOSED'
  | 'STORAGE_BUSY'
  | 'STORAGE_UNAVAILABLE'
  | 'READ_ONLY'
  | 'PRECONDITION_FAILED'
  | 'CHANGES_EXPIRED'
  | 'PROVIDER_INCOMPATIBLE'
  | 'SPEC_MISMATCH'
  | 'VERSION_DOWNGRADE'
  | 'COMPATIBILITY_FAILED';

/** Machine-readable details of an error; `tool_name` is set wherever a tool is involved. */
export interface ToolRegistryErrorContext {
  readonly tool_name?: string;
  /** Where in the input the problem is, such as `tools[3].spec.version`. */
  readonly path?: string;
  readonly [key: string]: unknown;
}

/**
 * Base class of every error the registry throws on purpose. Branch on `code`, never on the
 * message: codes are stable, messages are for humans.
 */
export class ToolRegistryError extends Error {
  readonly code: ToolRegistryErrorCode;
  readonly context: ToolRegistryErrorContext;

  constructor(
    code: ToolRegistryErrorCode,
    message: string,
    options: { context?: ToolRegistryErrorContext; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.context = Object.freeze({ ...options.context });
  }
}

/** Input that does not satisfy a contract (`ToolSpec`, `ToolRegistration`). */
export class ValidationError extends ToolRegistryError {
  /** Every problem found, each with its path (zod issues, path formatted). */
  readonly issues: readonly RegistryIssue[];
  constructor(message: string, issues: readonly RegistryIssue[], context: ToolRegistryErrorContext = {}, cause?: unknown) {
    super('VALIDATION_FAILED', message, { context: { ...context, issues }, cause });
    this.issues = issues;
  }
}

/** A snapshot that is not a valid `ToolRegistrySnapshot`. */
export class SnapshotInvalidError extends ToolRegistryError {
  readonly issues: readonly RegistryIssue[];
  constructor(message: string, issues: readonly RegistryIssue[], context: ToolRegistryErrorContext = {}) {
    super('SNAPSHOT_INVALID', message, { context: { ...context, issues } });
    this.issues = issues;
  }
}

/** Same name, same version, different spec (registration rule 4). */
export class VersionConflictError extends ToolRegistryError {
  constructor(
    message: string,
    context: ToolRegistryErrorContext & {
      tool_name: string;
      version: string | null;
      existing_fingerprint: string;
      incoming_fingerprint: string;
    },
  ) {
    super('VERSION_CONFLICT', message, { context });
  }
}

/** The named tool is not registered. */
export class ToolNotFoundError extends ToolRegistryError {
  constructor(toolName: string) {
    super('TOOL_NOT_FOUND', `tool ${JSON.stringify(toolName)} is not registered`, {
      context: { tool_name: toolName },
    });
  }
}

/** A snapshot (or a batch) names the same tool twice. */
export class DuplicateToolError extends ToolRegistryError {
  constructor(toolName: string, path: string, firstPath: string) {
    super('DUPLICATE_TOOL', `tool ${JSON.stringify(toolName)} appears twice: at ${firstPath} and at ${path}`, {
      context: { tool_name: toolName, path, first_path: firstPath },
    });
  }
}

/** The database was migrated by a newer release of tool-registry; it was left untouched. */
export class SchemaTooNewError extends ToolRegistryError {
  constructor(message: string, context: ToolRegistryErrorContext = {}) {
    super('SCHEMA_TOO_NEW', message, { context });
  }
}

/** The registry was closed; every method after `close()` throws this (`context.tool_name`: the one tool the call named). */
export class RegistryClosedError extends ToolRegistryError {
  constructor(method: string, toolName?: string) {
    super('REGISTRY_CLOSED', `cannot call ${method}(${toolName === undefined ? '' : JSON.stringify(toolName)}): the registry is closed`, {
      context: toolName === undefined ? { method } : { method, tool_name: toolName },
    });
  }
}

/** A lock was not obtained: within the busy timeout, or at once inside the caller's own transaction (SQLite store). */
export class StorageBusyError extends ToolRegistryError {
  constructor(message: string, context: ToolRegistryErrorContext = {}, cause?: unknown) {
    super('STORAGE_BUSY', message, { context, cause });
  }
}

/**
 * The storage cannot be reached: the database server is down, restarting or failing over, or
 * it ended the connection (PostgreSQL: refused or reset connections, `57P01`-`57P03`, `57P05`, `25P03`, `25P04`, class
 * `08`, a connection that ended without a word; a write that a caller's pool's `query_timeout` gave
 * up on, its statement left running). Retry later; the driver's error is `cause`.
 * `context.operation` is the method; for a write, `context.outcome` says what is known of it:
 * `'not_written'` (it failed before its commit was sent: nothing of it is stored) or
 * `'unknown'` (its commit was sent and the answer lost: it is stored whole or not at all; read
 * to find out, or repeat it: the registration rule makes a repeated write of the same input a
 * no-op).
 */
export class StorageUnavailableError extends ToolRegistryError {
  constructor(message: string, context: ToolRegistryErrorContext = {}, cause?: unknown) {
    super('STORAGE_UNAVAILABLE', message, { context, cause });
  }
}

/** A write was attempted on a registry opened with `readonly: true`, or on storage that refused it as read-only. */
export class ReadOnlyError extends ToolRegistryError {
  /**
   * Without `cause`: the registry was opened read-only. With `cause` (the store's own error):
   * the storage refused the write, such as a SQLite file this process may not write.
   * `toolName`: the one tool the write named (`context.tool_name`). `detail`: what the
   * operator can do about it (`context.detail`, also appended to the message), such as the
   * right a PostgreSQL role lacks or the migrations it may not apply.
   */
  constructor(method: string, options: { cause?: unknown; toolName?: string; detail?: string } = {}) {
    const why =
      options.cause === undefined
        ? 'the registry was opened read-only'
        : `the database cannot be written by this process (${options.cause instanceof Error ? options.cause.message : String(options.cause)})`;
    const call = `${method}(${options.toolName === undefined ? '' : JSON.stringify(options.toolName)})`;
    const { detail } = options;
    super('READ_ONLY', `cannot call ${call}: ${why}${detail === undefined ? '' : `; ${detail}`}`, {
      context: { method, ...(options.toolName === undefined ? {} : { tool_name: options.toolName }), ...(detail === undefined ? {} : { detail }) },
      cause: options.cause,
    });
  }
}

/**
 * A conditional write's `expectedVersion` did not match the stored tool; nothing was changed.
 * `context.expected` is what the caller expected (`null`: the tool must not exist),
 * `context.actual` the stored version (`null` when unversioned or absent) and
 * `context.exists` whether the tool is registered. The gateway's `approve TOOL@HASH` throws it
 * too when the upstream lists another definition: `expected` and `actual` are then definition hashes.
 */
export class PreconditionFailedError extends ToolRegistryError {
  constructor(
    message: string,
    context: ToolRegistryErrorContext & { tool_name: string; expected: string | null; actual: string | null; exists: boolean },
  ) {
    super('PRECONDITION_FAILED', message, { context });
  }
}

/**
 * A change-feed cursor (`since`) is older than the bounded change log retains: resync from a
 * snapshot. `context.oldest_revision` is the oldest revision still in the log (a `since` of
 * `oldest_revision - 1` or later is served), `context.since` the cursor given.
 */
export class ChangesExpiredError extends ToolRegistryError {
  /** `replaced`: the log no longer holds the position `since` named (a restored backup or dump); `context.replaced` is then true. */
  constructor(since: number, oldestRevision: number, revision: number, replaced = false) {
    super(
      'CHANGES_EXPIRED',
      replaced
        ? `the change log was replaced since revision ${since} (a restored backup or dump; it now ends at revision ${revision}); ` +
            `resync from a snapshot and continue from the revision it reflects`
        : `changes since revision ${since} are no longer in the change log (it keeps revisions ${oldestRevision} to ${revision}); ` +
            `resync from a snapshot and continue from the revision it reflects`,
      { context: replaced ? { since, oldest_revision: oldestRevision, revision, replaced: true } : { since, oldest_revision: oldestRevision, revision } },
    );
  }
}

/**
 * An export a model provider would reject (issue 9). `context.findings` holds every
 * error-severity lint finding (`{ tool_name, provider, path, rule, severity, message }`);
 * `context.tool_name` is the first tool involved, when a tool is. Exporters throw it unless
 * called with `{ onIncompatible: 'skip' }`.
 */
export class ProviderIncompatibleError extends ToolRegistryError {
  constructor(message: string, context: ToolRegistryErrorContext & { provider: string; findings: readonly unknown[] }) {
    super('PROVIDER_INCOMPATIBLE', message, { context });
  }
}

/**
 * Code and registry disagree on a tool's spec: the registry holds a spec under this name
 * whose canonical JSON differs from the code's (`loadToolSet`). Publish the code's spec
 * (with a new version) or deploy the code that matches the registry.
 */
export class SpecMismatchError extends ToolRegistryError {
  constructor(
    message: string,
    context: ToolRegistryErrorContext & {
      tool_name: string;
      /** Fingerprint (SHA-256 of canonical JSON) of the spec the code defines. */
      code_fingerprint: string;
      /** Fingerprint of the spec the registry holds under the same name. */
      registry_fingerprint: string;
      code_version: string | null;
      registry_version: string | null;
    },
  ) {
    super('SPEC_MISMATCH', message, { context });
  }
}

/**
 * Under the policy `versionOrder: 'semver'`, a version lower (by SemVer precedence) than the
 * stored one, without `allowDowngrade: true`; nothing was changed. `context.version` is the
 * refused version, `context.current_version` the stored one.
 */
export class VersionDowngradeError extends ToolRegistryError {
  constructor(message: string, context: ToolRegistryErrorContext & { tool_name: string; version: string; current_version: string }) {
    super('VERSION_DOWNGRADE', message, { context });
  }
}

/**
 * Under the policy `compatibility: 'backward'` (or `'semver-major'` without a major bump), a
 * new version whose schemas would break callers or consumers; nothing was changed.
 * `context.differences` lists every difference (`{ type, path, before, after, breaking }`,
 * paths from the spec: `/input_schema/properties/x`; an enum place's values past 100 (1,000 in a schema), one
 * entry counts the rest in `omitted`), `context.policy` the policy that refused it.
 */
export class CompatibilityFailedError extends ToolRegistryError {
  constructor(
    message: string,
    context: ToolRegistryErrorContext & {
      tool_name: string;
      version: string | null;
      current_version: string | null;
      policy: string;
      differences: readonly unknown[];
    },
  ) {
    super('COMPATIBILITY_FAILED', message, { context });
  }
}
