// What the MCP endpoint answers itself, for /openapi.json, in a module of its own (no imports):
// `serve` mounts the endpoint before loading the MCP SDK (on its first request), and its
// document must describe it all the same.

/** What the MCP endpoint answers itself, for /openapi.json (the server declares its own problems beside them). */
const MCP_RESPONSES: Readonly<Record<string, string>> = Object.freeze({
  '200': 'A JSON-RPC response (application/json), or an event stream: GET\'s notifications, or a call that sends something first; DELETE: the session ended',
  '202': 'A notification or a response from the client, accepted',
  '400': 'A JSON-RPC error: not JSON or not UTF-8 or an inexact number (-32700), not a JSON-RPC request (-32600), no session header, or a query parameter (the endpoint takes none)',
  '404': 'A session this token does not hold (unknown, ended, or another token\'s): open a new one; or a path below the endpoint\'s (it has one path)',
  '405': 'A method other than GET, POST and DELETE',
  '406': 'Accept lacks application/json and text/event-stream (POST) or text/event-stream (GET)',
  '409': 'The session already has its notification stream open',
  '413': 'A body over the limit',
  '415': 'A body that is not application/json',
  '500': 'An internal error (a JSON-RPC error)',
  '503': 'The endpoint is closing (a JSON-RPC error, with Retry-After)',
});

/** The `responses`, `headers` and `noContent` of the MCP mount (a `Mount`'s description of its own answers). */
export const MCP_MOUNT_DESCRIPTION = Object.freeze({
  responses: MCP_RESPONSES,
  headers: Object.freeze({ '200': Object.freeze({ 'Mcp-Session-Id': "initialize's answer: the new session's id, sent with every later request of the session" }) }),
  // The SDK's transport answers these with no body.
  noContent: Object.freeze({ post: Object.freeze(['202']), delete: Object.freeze(['200']) }),
});
