// MCP over stdio: one session on the process's standard input and output.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { LiveToolSet } from '../index.js';
import { createMcpServer } from './tool-server.js';
import type { McpServerOptions } from './tool-server.js';

/** Options of `serveMcpStdio`: the session's, and the streams (default: the process's). */
export interface McpStdioOptions extends McpServerOptions {
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout?: NodeJS.WritableStream;
}

/** A running stdio session. */
export interface McpStdioSession {
  /** Settles when the session ends: the client closed standard input, or `close()`. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves one MCP session over standard input and output (what Claude Desktop, Cursor and
 * other clients spawn). Nothing else may write to `stdout`: it carries the protocol.
 * @throws VALIDATION_FAILED for an invalid policy; TypeError for bad options
 */
export async function serveMcpStdio(live: LiveToolSet, options: McpStdioOptions = {}): Promise<McpStdioSession> {
  const { stdin = process.stdin, stdout = process.stdout, ...sessionOptions } = options;
  const server = createMcpServer(live, sessionOptions);
  const transport = new StdioServerTransport(stdin as never, stdout as never);
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const previous = server.onclose;
  server.onclose = () => {
    previous?.();
    stdin.off('end', onEnd);
    ended();
  };
  // The SDK's transport does not notice the end of its input: the client is gone then.
  const onEnd = (): void => {
    void server.close();
  };
  stdin.once('end', onEnd);
  await server.connect(transport);
  return { closed, close: () => server.close() };
}
