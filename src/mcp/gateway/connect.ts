// Connecting to an upstream MCP server with the official SDK's client: Streamable HTTP
// (falling back to the older HTTP+SSE transport) or a child process over stdio. `${VAR}`
// references in headers and environment values are expanded here, from the connecting
// process's environment, and nowhere else.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { ErrorCode, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ClientCapabilities, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Upstream } from '../../index.js';

/** A `${VAR}` the environment does not have: the connection is refused, never made with an empty secret. */
export class MissingVariableError extends Error {
  constructor(
    readonly variable: string,
    readonly where: string,
  ) {
    super(`${where} names \${${variable}}, which is not set in this process's environment`);
    this.name = 'MissingVariableError';
  }
}

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Expands every `${VAR}` in `text` from `env`; `where` names the value in the error. */
export function expandVariables(text: string, env: NodeJS.ProcessEnv, where: string): string {
  return text.replace(VARIABLE, (_match, name: string) => {
    const value = env[name];
    if (value === undefined) throw new MissingVariableError(name, where);
    return value;
  });
}

function expandAll(values: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv, where: string): Record<string, string> {
  const expanded: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) expanded[key] = expandVariables(value, env, `${where} ${key}`);
  return expanded;
}

/**
 * What the gateway tells every upstream it can do: sampling and elicitation, relayed to the
 * calling session. Every connection declares the same (the commands' and the API's listings
 * too): a server may list some tools only to clients that can sample or elicit
 * (server-everything does), and a listing must be the one the serving processes see.
 */
function gatewayClientCapabilities(): ClientCapabilities {
  return { sampling: {}, elicitation: {} };
}

export interface ConnectUpstreamOptions {
  /** Where `${VAR}` comes from. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** What the gateway tells the upstream it can do. Default: sampling and elicitation, as every connection of the gateway declares them. */
  readonly capabilities?: ClientCapabilities;
  /** Gives up connecting after this many ms. Default 10,000. */
  readonly timeoutMs?: number;
  /** Where a stdio upstream's stderr goes. Default `'ignore'`. */
  readonly stderr?: 'ignore' | 'inherit' | 'pipe';
  /**
   * Called with each client before it connects: the place to set request and notification
   * handlers, so that nothing the upstream sends right after `initialize` goes unheard.
   */
  readonly setup?: (client: Client) => void;
  /**
   * A stdio upstream's line that is JSON but no JSON-RPC message (a response whose `result` is
   * null, 5, or missing along with `error`): the SDK's transport would drop it (to its
   * `onerror`), and a request waiting for that answer would wait for its timeout. Called first
   * with the value and the schema's error; true when it is taken. Else a response (an `id`, no
   * `method`) reaches the client as a JSON-RPC error -32603 saying what was wrong, so the SDK's
   * own request (initialize, tools/list, a task's) fails at once; anything else is dropped.
   */
  readonly onInvalidMessage?: (value: unknown, error: Error) => boolean;
}

/** A connected upstream: the SDK client and which transport answered. */
export interface UpstreamConnection {
  readonly client: Client;
  readonly transport: 'streamable-http' | 'sse' | 'stdio';
  close(): Promise<void>;
}

/**
 * Connects and initializes. HTTP tries Streamable HTTP first; a 4xx answer to its first POST
 * (a server of the 2024-11-05 protocol) falls back to HTTP+SSE, as the specification advises.
 */
export async function connectUpstream(upstream: Pick<Upstream, 'name' | 'transport'>, options: ConnectUpstreamOptions = {}): Promise<UpstreamConnection> {
  const env = options.env ?? process.env;
  const timeout = options.timeoutMs ?? 10_000;
  // The SDK's client side is loaded by the first connection: a process serving no upstream
  // (most `mcp` and `serve` runs) does without it (docs/testing.md, tenth round).
  const [{ Client }, { SSEClientTransport }, { getDefaultEnvironment, StdioClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const newClient = (): Client => {
    const client = new Client({ name: 'tool-registry-gateway', version: '1' }, { capabilities: options.capabilities ?? gatewayClientCapabilities() });
    options.setup?.(client);
    return client;
  };
  const transport = upstream.transport;
  if (transport.type === 'stdio') {
    const [command, ...args] = transport.command;
    const child = new StdioClientTransport({
      command: command as string,
      args,
      env: { ...getDefaultEnvironment(), ...expandAll(transport.env, env, `upstream ${upstream.name} env`) },
      ...(transport.cwd === null ? {} : { cwd: transport.cwd }),
      stderr: options.stderr ?? 'ignore',
    });
    observeInvalidLines(child, options.onInvalidMessage ?? (() => false));
    const client = newClient();
    await client.connect(child, { timeout });
    return { client, transport: 'stdio', close: () => closeStdio(client, child.pid) };
  }
  const headers = expandAll(transport.headers, env, `upstream ${upstream.name} header`);
  checkHeaderValues(headers, upstream.name);
  const url = new URL(transport.url);
  const client = newClient();
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }), { timeout });
    return { client, transport: 'streamable-http', close: () => client.close() };
  } catch (error) {
    await client.close().catch(() => {});
    if (!isLegacyServerAnswer(error)) throw error;
  }
  const legacy = newClient();
  await legacy.connect(new SSEClientTransport(url, { requestInit: { headers }, eventSourceInit: { fetch: (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...headers } }) } }), { timeout });
  return { client: legacy, transport: 'sse', close: () => legacy.close() };
}

/**
 * What is wrong with a message the SDK's JSON-RPC schema refused, when it is a response whose
 * only fault is its `result` (null, a number, absent along with `error`): `result ` and the
 * schema's message. Undefined for any other message (a broken notification, not JSON-RPC).
 */
export function invalidResultIssue(error: unknown): string | undefined {
  type Issue = { readonly path?: readonly PropertyKey[]; readonly message?: string };
  const union = (error as { issues?: readonly { code?: string; errors?: readonly (readonly Issue[])[] }[] } | null)?.issues?.[0];
  if (union?.code !== 'invalid_union' || union.errors === undefined || !Array.isArray(union.errors)) return undefined;
  const branch = union.errors.find((issues: readonly Issue[]) => issues.length > 0 && issues.every((issue: Issue) => issue.path?.length === 1 && issue.path[0] === 'result'));
  return branch === undefined ? undefined : `result ${branch[0]?.message ?? 'is invalid'}`;
}

/**
 * The child's output read as the SDK's `ReadBuffer` reads it (one message a line, the same size
 * bound, the same schema), except that a JSON line the schema refuses goes to `invalid` first.
 */
class ObservedReadBuffer {
  #buffer: Buffer | undefined;
  readonly #invalid: (value: unknown, error: Error) => boolean;

  constructor(invalid: (value: unknown, error: Error) => boolean) {
    this.#invalid = invalid;
  }

  append(chunk: Buffer): void {
    if ((this.#buffer?.length ?? 0) + chunk.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${STDIO_DEFAULT_MAX_BUFFER_SIZE} bytes`);
    }
    this.#buffer = this.#buffer === undefined ? chunk : Buffer.concat([this.#buffer, chunk]);
  }

  readMessage(): JSONRPCMessage | null {
    for (;;) {
      const index = this.#buffer?.indexOf('\n') ?? -1;
      if (this.#buffer === undefined || index === -1) return null;
      const line = this.#buffer.toString('utf8', 0, index).replace(/\r$/, '');
      this.#buffer = this.#buffer.subarray(index + 1);
      // Not JSON: thrown, as the SDK's reader throws (the transport reports it and reads on).
      const value: unknown = JSON.parse(line);
      const parsed = JSONRPCMessageSchema.safeParse(value);
      if (parsed.success) return parsed.data;
      if (this.#invalid(value, parsed.error)) continue;
      const id = (value as { id?: unknown } | null)?.id;
      if (typeof value !== 'object' || value === null || 'method' in value || (typeof id !== 'string' && typeof id !== 'number')) throw parsed.error;
      return { jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: `the upstream's answer is not a JSON-RPC response: ${invalidResultIssue(parsed.error) ?? 'neither a result object nor a valid error'}` } };
    }
  }

  clear(): void {
    this.#buffer = undefined;
  }
}

/**
 * Gives the SDK's stdio transport our reader. It has no public hook before its schema (SDK
 * 1.x keeps the reader in `_readBuffer`, used only through append, readMessage and clear); a
 * transport without that field keeps its own, and test/mcp/gateway-relay.test.ts then fails.
 */
function observeInvalidLines(transport: StdioClientTransport, invalid: (value: unknown, error: Error) => boolean): void {
  const fields = transport as unknown as { _readBuffer?: unknown };
  if (fields._readBuffer !== undefined) fields._readBuffer = new ObservedReadBuffer(invalid);
}

/** After its input closes, how long a stdio upstream has to exit before SIGTERM, and before SIGKILL. */
const STDIO_TERM_AFTER_MS = 300;
const STDIO_KILL_AFTER_MS = 800;

/**
 * Closes a stdio upstream's client and with it the child: its input ends, then SIGTERM, then
 * SIGKILL. The SDK's transport gives a child 2 s for each step, so one that ignores the end of
 * its input (and SIGTERM) held a shutdown 2-4 s, where `mcp` and `serve` promise to exit
 * within 2 s of a signal whatever a tool does; here the steps come after 0.3 and 0.8 s.
 */
async function closeStdio(client: Client, pid: number | null): Promise<void> {
  const signal = (name: NodeJS.Signals) => (): void => {
    try {
      if (pid !== null) process.kill(pid, name);
    } catch {
      // gone already
    }
  };
  const term = setTimeout(signal('SIGTERM'), STDIO_TERM_AFTER_MS);
  const kill = setTimeout(signal('SIGKILL'), STDIO_KILL_AFTER_MS);
  try {
    await client.close();
  } finally {
    // The transport resolves once the child has closed: its pid is not signalled after that.
    clearTimeout(term);
    clearTimeout(kill);
  }
}

/**
 * Refuses a header value fetch would refuse, naming the header but never the value: fetch's
 * own error quotes the value, and an expanded `${VAR}` (a secret with a line break) would
 * then reach the console, the serving process's log and the API's `error`.
 */
function checkHeaderValues(headers: Readonly<Record<string, string>>, upstream: string): void {
  for (const [name, value] of Object.entries(headers)) {
    try {
      new Headers([[name, value]]);
    } catch {
      throw new Error(`upstream ${upstream} header ${name}: its value, with every \${VAR} expanded, is not a valid HTTP header value (a line break, NUL or a character above U+00FF); the value is not shown`);
    }
  }
}

/** A 4xx status to the first Streamable HTTP POST: the server speaks the older HTTP+SSE transport. */
function isLegacyServerAnswer(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' && code >= 400 && code < 500;
}
