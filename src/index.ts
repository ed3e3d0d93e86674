// The public API of tool-registry. Everything not exported here is internal.
export { ToolSpec, ToolRegistration, ToolRegistrySnapshot } from './core/public-contracts.js';
export { TOOL_NAME_PATTERN } from './core/contracts.js';
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
  StorageUnavailableError,
  ReadOnlyError,
  ProviderIncompatibleError,
  PreconditionFailedError,
  ChangesExpiredError,
  SpecMismatchError,
} from './core/errors.js';
export type { ToolRegistryErrorCode, ToolRegistryErrorContext } from './core/errors.js';
export type { RegistryIssue } from './core/issues.js';
export { canonicalJson } from './core/canonical.js';
export { fingerprintOf } from './core/validation.js';
export { planImport } from './core/rules.js';
export { InMemoryToolRegistry } from './stores/memory/in-memory-tool-registry.js';
export type { InMemoryToolRegistryOptions, InMemoryStatus } from './stores/memory/in-memory-tool-registry.js';
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
  ToolBoxLike,
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
// ToolResult and ToolResultCode come from the runtime below (the exporters accept them).

// The runtime (issue 8): tools with handlers, ToolSet, ToolBox, policies, invoke, the bridge.
export { defineTool } from './runtime/define-tool.js';
export type {
  Tool,
  ToolDefinition,
  ToolHandlerOptions,
  ToolPermissions,
  CollisionPolicy,
  JsonSchemaObject,
  ZodSchema,
} from './runtime/define-tool.js';
export { ToolSet, createToolSet } from './runtime/tool-set.js';
export type { ExcludedTool } from './runtime/tool-set.js';
export { ToolBox } from './runtime/tool-box.js';
export type { TurnContext, RegisterOptions, MergeOptions } from './runtime/tool-box.js';
export type { InvokeOptions } from './runtime/invoke.js';
export type { ToolResult, ToolResultCode, ToolResultIssue, ToolSuccess, ToolFailure } from './runtime/tool-result.js';
export { checkToolPermission } from './runtime/policy.js';
export type { ToolPolicy, PermissionCheck, PermissionSubject } from './runtime/policy.js';
export { READ_FS, WRITE_FS, NET_HTTP, EXEC_SHELL, READ_ENV, DB_READ, DB_WRITE, PERMISSION_NAME_PATTERN } from './runtime/permissions.js';
export { publishTools, loadToolSet } from './runtime/bridge.js';
export type { ToolSource, LoadToolSetOptions } from './runtime/bridge.js';

// Discovery (issue 26): search, keyset pages, tool search for agents, deferred loading.
export type {
  DiscoveryMethods,
  SearchOptions,
  SearchResult,
  SearchPage,
  ListPageOptions,
  ListPageResult,
  EmbedFunction,
} from './core/registry.js';
export { toolSearchTool } from './runtime/tool-search-tool.js';
export type { ToolSearchToolOptions, ToolSearchOutput } from './runtime/tool-search-tool.js';
export type { ToolSearchHit } from './runtime/tool-set.js';
export { toAnthropicToolReferences } from './exports/index.js';
export type { DeferLoadingOptions, AnthropicToolSearchTool, AnthropicToolReference, OpenAIToolSearchTool } from './exports/index.js';

// Versions with meaning (issue 27): deprecation, version policies, schema comparison, check and diff.
export { Deprecation } from './core/public-contracts.js';
export type { DeprecationInput } from './core/contracts.js';
export type { RegistrationOptions } from './core/registry.js';
export type { StoreMetrics } from './core/store-metrics.js';
export { VersionDowngradeError, CompatibilityFailedError } from './core/errors.js';
export { compareSchemas, compareToolSchemas, SCHEMA_DIFFERENCE_TYPES } from './core/schema-compare.js';
export type { SchemaComparison, SchemaDifference, SchemaDifferenceType, ToolSchemas } from './core/schema-compare.js';
export { DEFAULT_POLICY, VERSION_ORDERS, COMPATIBILITY_POLICIES, isSemVer } from './core/versions.js';
export type { RegistryPolicy, RegistryPolicyInput, VersionOrder, CompatibilityPolicy } from './core/versions.js';
export { checkSpecs, diffVersions } from './core/check.js';
export type { CheckReport, CheckResult, VersionDiff } from './core/check.js';

// The server (issue 23): the registry over HTTP, its tokens and namespaces (src/server/).
export { LINT_PROVIDERS } from './exports/index.js';
export { createToolRegistryServer } from './server/server.js';
export type { ToolRegistryServer, ToolRegistryServerOptions, Mount, MountContext, RequestLogEntry } from './server/server.js';
export { listen } from './server/listen.js';
export type { ListenOptions, ListeningServer } from './server/listen.js';
export { DEFAULT_NAMESPACE, memoryNamespaces, fixedNamespaces, singleNamespace, sqliteNamespaces, postgresNamespaces } from './server/namespaces.js';
export type { NamespaceSource } from './server/namespaces.js';
export {
  createToken,
  listTokens,
  revokeToken,
  tokenVerifier,
  tokenFileVerifier,
  hashToken,
  TOKEN_SCOPES,
  NAMESPACE_PATTERN,
} from './server/tokens.js';
export type { TokenScope, StoredToken, AuthenticatedToken, TokenVerifier, CreateTokenOptions } from './server/tokens.js';
export { PROBLEM_STATUS } from './server/problems.js';
export { defaultConsoleRoot } from './server/console-root.js';
export type { ProblemBody, ServerErrorCode } from './server/problems.js';

// MCP (issue 24): live tool sets, tool titles and annotations, the MCP shapes they feed.
export { liveToolSet } from './runtime/live-tool-set.js';
export type { LiveToolSet, LiveToolSetOptions, LiveToolSetChange } from './runtime/live-tool-set.js';
export type { ToolAnnotations } from './runtime/define-tool.js';
export type { McpToolAnnotations } from './exports/index.js';
