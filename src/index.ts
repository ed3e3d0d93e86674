// The public API of tool-registry. Everything not exported here is internal.
export { ToolSpec, ToolRegistration, ToolRegistrySnapshot, TOOL_NAME_PATTERN } from './core/contracts.js';
export type {
  JsonObject,
  JsonValue,
  ToolSpecInput,
  ToolRegistrationInput,
  ToolRegistrySnapshotInput,
} from './core/contracts.js';
export type {
  ToolRegistry,
  RegistryOptions,
  ListOptions,
  ImportMode,
  ImportOptions,
  ImportReport,
  ImportStep,
  ChangeAction,
  ChangeEvent,
  ChangesOptions,
  ChangesPage,
  WatchOptions,
  HistoryEntry,
  WriteOptions,
} from './core/registry.js';
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
  ProviderIncompatibleError,
  PreconditionFailedError,
  ChangesExpiredError,
} from './core/errors.js';
export type { ToolRegistryErrorCode, ToolRegistryErrorContext } from './core/errors.js';
export type { RegistryIssue } from './core/issues.js';
export { canonicalJson, fingerprintOf } from './core/canonical.js';
export { InMemoryToolRegistry } from './stores/memory/in-memory-tool-registry.js';
export type { InMemoryToolRegistryOptions } from './stores/memory/in-memory-tool-registry.js';
export { openSqliteToolRegistry } from './stores/sqlite/sqlite-tool-registry.js';
export type {
  SqliteToolRegistry,
  SqliteToolRegistryOptions,
  SqliteStatus,
  VerifyReport,
  VerifyProblem,
} from './stores/sqlite/sqlite-tool-registry.js';
export {
  toMcpTools,
  toOpenAITools,
  toAnthropicTools,
  toGeminiTools,
  toAiSdkTools,
  lintTools,
  toMcpCallToolResult,
  toAnthropicToolResult,
  toOpenAIToolOutput,
} from './exports/index.js';
export type {
  LintFinding,
  LintOptions,
  LintProvider,
  LintSeverity,
  ExportItem,
  ExportItems,
  ExportOptions,
  ToolLike,
  ToolSetLike,
  McpRevision,
  McpExportOptions,
  OpenAIExportOptions,
  AnthropicExportOptions,
  GeminiExportOptions,
  ObjectJsonSchema,
  McpTool,
  OpenAIChatTool,
  OpenAIResponsesTool,
  AnthropicTool,
  GeminiFunctionDeclaration,
  GeminiTools,
  AiSdkTools,
  ToolResult,
  ToolResultCode,
  McpCallToolResult,
  AnthropicToolResult,
  OpenAIChatToolOutput,
  OpenAIResponsesToolOutput,
} from './exports/index.js';
export { openPostgresToolRegistry } from './stores/postgres/postgres-tool-registry.js';
export type {
  PostgresToolRegistry,
  PostgresToolRegistryOptions,
  PostgresStatus,
  PostgresVerifyReport,
  PostgresVerifyProblem,
} from './stores/postgres/postgres-tool-registry.js';
