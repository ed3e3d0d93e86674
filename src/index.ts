// The public API of tool-registry. Everything not exported here is internal.
export { ToolSpec, ToolRegistration, ToolRegistrySnapshot, TOOL_NAME_PATTERN } from './contracts.js';
export type {
  JsonObject,
  JsonValue,
  ToolSpecInput,
  ToolRegistrationInput,
  ToolRegistrySnapshotInput,
} from './contracts.js';
export type {
  ToolRegistry,
  RegistryOptions,
  ListOptions,
  ImportMode,
  ImportOptions,
  ImportReport,
  ImportStep,
} from './registry.js';
export {
  ToolRegistryError,
  ValidationError,
  VersionConflictError,
  ToolNotFoundError,
  DuplicateToolError,
  SnapshotInvalidError,
  SchemaTooNewError,
  RegistryClosedError,
  StorageBusyError,
  ReadOnlyError,
} from './errors.js';
export type { ToolRegistryErrorCode, ToolRegistryErrorContext } from './errors.js';
export type { RegistryIssue } from './issues.js';
export { canonicalJson, fingerprintOf } from './canonical.js';
export { InMemoryToolRegistry } from './memory/in-memory-tool-registry.js';
export type { InMemoryToolRegistryOptions } from './memory/in-memory-tool-registry.js';
export { openSqliteToolRegistry } from './sqlite/sqlite-tool-registry.js';
export type {
  SqliteToolRegistry,
  SqliteToolRegistryOptions,
  SqliteStatus,
  VerifyReport,
  VerifyProblem,
} from './sqlite/sqlite-tool-registry.js';
