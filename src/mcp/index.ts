// The MCP layer's public surface (`tool-registry/mcp`): a live tool set served to MCP clients
// over stdio or Streamable HTTP. It uses the library only through the package's index.
export { createMcpServer, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MAX_RESULT_BYTES, DEFAULT_PAGE_SIZE, DEPRECATION_META_KEY } from './tool-server.js';
export type { McpServerOptions } from './tool-server.js';
export { DEFAULT_MAX_MESSAGE_BYTES, serveMcpStdio } from './stdio.js';
export type { McpStdioOptions, McpStdioSession } from './stdio.js';
export { createMcpHttpHandler, DEFAULT_SESSION_IDLE_MS } from './http-handler.js';
export type { McpHttpHandler, McpHttpHandlerOptions, McpRequestContext } from './http-handler.js';
export { loadToolsModule, ToolsModuleError } from './tools-module.js';
export { mcpMount } from './mount.js';
export type { McpMountOptions } from './mount.js';
export { createCallRecorder, DEFAULT_CALL_BATCH_ROWS, DEFAULT_CALL_BUFFER_ROWS, DEFAULT_CALL_FLUSH_MS } from './call-recorder.js';
export type { CallRecorder, CallRecorderOptions, CallRecorderStats } from './call-recorder.js';
