// The MCP layer's public surface (`tool-registry/mcp`): a live tool set served to MCP clients
// over stdio or Streamable HTTP. It uses the library only through the package's index.
export { createMcpServer, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MAX_CALLS_IN_FLIGHT, DEFAULT_MAX_RESULT_BYTES, DEFAULT_PAGE_SIZE, DEPRECATION_META_KEY } from './tool-server.js';
export type { McpServerOptions } from './tool-server.js';
export { DEFAULT_MAX_MESSAGE_BYTES, serveMcpStdio } from './stdio.js';
export type { McpStdioOptions, McpStdioSession } from './stdio.js';
export { createMcpHttpHandler, DEFAULT_SESSION_IDLE_MS } from './http-handler.js';
export type { McpHttpHandler, McpHttpHandlerOptions, McpRequestContext } from './http-handler.js';
export { loadToolsModule, ToolsModuleError } from './tools-module.js';
export { mcpMount } from './mount.js';
export type { McpMount, McpMountOptions } from './mount.js';
export { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_STARTUP_WAIT_MS, DEFAULT_SYNC_INTERVAL_MS, DEFAULT_UPSTREAM_CALL_TIMEOUT_MS, gatewayToolSet, UPSTREAM_POLL_MS } from './gateway/gateway.js';
export type { GatewayOptions, GatewayToolSet, UpstreamStatus } from './gateway/gateway.js';
export { CALL_NOTIFICATION_BURST, CALL_NOTIFICATIONS_PER_SECOND, CALL_REQUESTS_IN_FLIGHT, LISTING_COST_FACTOR, LISTING_SPACING_MS, MAX_NOTIFICATION_BYTES, RECONNECT_FIRST_MS, RECONNECT_MAX_MS } from './gateway/upstream-link.js';
// The gateway's governance (issue 37): connecting to an upstream, its tools' states, approve and reject.
export { MAX_UNWRITTEN_BYTES, MAX_UPSTREAM_REQUESTS, UPSTREAM_REQUEST_WINDOW_MS, connectUpstream, expandVariables, MissingVariableError } from './gateway/connect.js';
export type { ConnectUpstreamOptions, InvalidAnswer, UpstreamConnection } from './gateway/connect.js';
export { approvedByForce, approvedDefinitionHash, definitionOf, FORCED_BUILD_MARK, MAX_DEFINITION_BYTES, upstreamDefinitionHash, upstreamTag, upstreamToolName, upstreamToolSpec } from './gateway/upstream-definition.js';
export type { UpstreamToolDefinition } from './gateway/upstream-definition.js';
export { upstreamGovernance } from './gateway/governance.js';
export type { UpstreamGovernanceOptions } from './gateway/governance.js';
export {
  approveUpstreamTools,
  computeUpstreamStates,
  countUpstreamStates,
  describeUpstreamTarget,
  fetchUpstreamDefinitions,
  GatewayError,
  listUpstreamDefinitions,
  nextUpstreamVersion,
  rejectUpstreamTool,
  requireUpstream,
  upstreamInputOf,
  upstreamRegistrations,
  upstreamStates,
} from './gateway/sync.js';
export type {
  ApprovedTool,
  ApprovedUpstreamTool,
  ApproveOptions,
  ApproveResult,
  GatewayErrorCode,
  UpstreamToolCounts,
  UpstreamToolDiff,
  UpstreamToolState,
  UpstreamToolStateName,
} from './gateway/sync.js';
export { createCallRecorder, DEFAULT_CALL_BATCH_ROWS, DEFAULT_CALL_BUFFER_ROWS, DEFAULT_CALL_FLUSH_MS } from './call-recorder.js';
export type { CallRecorder, CallRecorderOptions, CallRecorderStats } from './call-recorder.js';
