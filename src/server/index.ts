// The server's public surface (`tool-registry/server`): the registry over HTTP, its tokens and
// namespaces, the console's pages. It uses the library only through the package's index; the
// MCP endpoint is mounted by whoever builds the server (`mcpMount` of `tool-registry/mcp`), so
// nothing here imports MCP.
export { createToolRegistryServer } from './server.js';
export type { ToolRegistryServer, ToolRegistryServerOptions, Mount, MountContext, RequestLogEntry } from './server.js';
export { listen } from './listen.js';
export type { ListenOptions, ListeningServer } from './listen.js';
export { DEFAULT_NAMESPACE, memoryNamespaces, fixedNamespaces, singleNamespace, sqliteNamespaces, postgresNamespaces } from './namespaces.js';
export type { NamespaceSource } from './namespaces.js';
export {
  createToken,
  listTokens,
  revokeToken,
  tokenVerifier,
  tokenFileVerifier,
  hashToken,
  TOKEN_SCOPES,
  NAMESPACE_PATTERN,
} from './tokens.js';
export type { TokenScope, StoredToken, AuthenticatedToken, TokenVerifier, CreateTokenOptions } from './tokens.js';
export { PROBLEM_STATUS } from './problems.js';
export type { ProblemBody, ServerErrorCode } from './problems.js';
export { defaultConsoleRoot } from './console-root.js';
export type { UpstreamGovernance, UpstreamToolStateView, UpstreamApproveView } from './upstream-routes.js';
