// The public API of tool-registry. Everything not exported here is internal. The MCP layer
// and the server are entries of their own (tool-registry/mcp, tool-registry/server): they
// stand on this one, and nothing here imports them.
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
  RegistrationAction,
  RegistrationOutcome,
} from './core/registry.js';
export { registerManyWithActions, registerWithAction } from './core/base-tool-registry.js';
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
export { parseJsonBytes } from './core/json-text.js';
export type { JsonBytesOptions } from './core/json-text.js';
export { canonicalJson } from './core/canonical.js';
export { fingerprintOf, validateSpecs, validateSnapshot } from './core/validation.js';
export { inexactNumberIssues, jsonDepth } from './core/json-text.js';
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
export { isConnectionFailure } from './stores/postgres/connections.js';
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
export { MAX_TIMER_MS } from './runtime/invoke.js';
export type { InvokeOptions } from './runtime/invoke.js';
// Rich MCP results and the call's context (issue 37): content blocks, progress, logs, client requests.
export { mcpContent, isMcpContent } from './runtime/mcp-content.js';
export type {
  McpContent,
  McpContentInput,
  McpContentBlock,
  McpContentAnnotations,
  McpTextContent,
  McpImageContent,
  McpAudioContent,
  McpEmbeddedResource,
  McpResourceContents,
  McpResourceLink,
} from './runtime/mcp-content.js';
export { ClientUnavailableError, MCP_LOG_LEVELS } from './runtime/call-context.js';
export type { McpLogLevel, ProgressReport, LogEntry, SampleParams, SampleResult, ElicitParams, ElicitResult, ToolClient } from './runtime/call-context.js';
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

// The server (issue 23) is an entry of its own: 'tool-registry/server' (src/server/index.ts).
// LINT_PROVIDERS names the providers `lintTools` and the server's lint route know.
export { LINT_PROVIDERS } from './exports/index.js';

// MCP (issue 24): live tool sets, tool titles and annotations, the MCP shapes they feed.
export { liveToolSet } from './runtime/live-tool-set.js';
export type { LiveToolSet, LiveToolSetOptions, LiveToolSetChange } from './runtime/live-tool-set.js';
export type { ToolAnnotations } from './runtime/define-tool.js';
export type { McpToolAnnotations } from './exports/index.js';

// The gateway's rows (issue 37): upstream MCP servers and the audit log.
export { UPSTREAM_NAME_PATTERN, DEFAULT_CALL_RETENTION } from './core/upstreams.js';
export type { Upstream, UpstreamInput, UpstreamTransport, UpstreamApproval, UpstreamRejection, CallRecord, CallRecordInput, CallsQuery, CallRetention } from './core/upstreams.js';
