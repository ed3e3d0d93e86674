// What a handler can tell or ask its caller during a call: progress, log messages, and
// requests to the calling client (sampling, elicitation). Over MCP createMcpServer wires them
// to the session; in-process they go to invoke's callbacks, and a request with no client fails.

/** MCP's log levels (RFC 5424's), from the least to the most severe. */
export type McpLogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** The log levels in order of severity. */
export const MCP_LOG_LEVELS: readonly McpLogLevel[] = Object.freeze(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

/** One progress report of a handler (`progress` rises with each; `total` when known). */
export interface ProgressReport {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** One log message of a handler: MCP `notifications/message` params. */
export interface LogEntry {
  readonly level: McpLogLevel;
  /** Any JSON value: a string, or an object of details. */
  readonly data: unknown;
  /** The logger's name; the tool's name when the handler gave none. */
  readonly logger?: string;
}

/** `sampling/createMessage` params (MCP `CreateMessageRequest['params']`): the messages and `maxTokens` at least. */
export interface SampleParams {
  readonly messages: readonly { readonly role: 'user' | 'assistant'; readonly content: unknown }[];
  readonly maxTokens: number;
  readonly systemPrompt?: string;
  readonly [key: string]: unknown;
}

/** The client's answer to a sampling request (MCP `CreateMessageResult`). */
export interface SampleResult {
  readonly role: 'user' | 'assistant';
  readonly content: unknown;
  readonly model: string;
  readonly stopReason?: string;
  readonly [key: string]: unknown;
}

/** `elicitation/create` params (MCP `ElicitRequest['params']`): a `message` and, for a form, its `requestedSchema`. */
export interface ElicitParams {
  readonly message: string;
  readonly requestedSchema?: { readonly type: 'object'; readonly properties: Record<string, unknown>; readonly required?: readonly string[] };
  readonly mode?: 'form' | 'url';
  readonly [key: string]: unknown;
}

/** The user's answer through the client (MCP `ElicitResult`). */
export interface ElicitResult {
  readonly action: 'accept' | 'decline' | 'cancel';
  readonly content?: Record<string, unknown>;
  readonly [key: string]: unknown;
}

/**
 * The client a call came from, for a handler's requests to it (`invoke`'s `client` option).
 * `createMcpServer` gives the calling MCP session's; in-process, give one to answer sampling
 * or elicitation yourself (a model call, a prompt), or none.
 */
export interface ToolClient {
  createMessage(params: SampleParams, options: { readonly signal: AbortSignal }): Promise<SampleResult>;
  elicitInput(params: ElicitParams, options: { readonly signal: AbortSignal }): Promise<ElicitResult>;
  /** Who is asking: the same object for every call of one client session (MCP: one per session); the handler sees it as `session`. */
  readonly session?: object;
}

/**
 * What `sample` and `elicit` throw (reject with) when the call has no client to ask: an
 * in-process `invoke` without the `client` option. Catch it by `code`; uncaught, the call
 * is `TOOL_FAILED` with this message.
 */
export class ClientUnavailableError extends Error {
  readonly code = 'CLIENT_UNAVAILABLE' as const;
  readonly context: { readonly tool_name: string; readonly method: string };
  constructor(toolName: string, method: string) {
    super(`CLIENT_UNAVAILABLE: tool '${toolName}' asked its client for ${method}, but it was invoked without one (not over MCP, no client option)`);
    this.name = 'ClientUnavailableError';
    this.context = Object.freeze({ tool_name: toolName, method });
  }
}

/** The reporting half of a call's context, as invoke hands it to the handler. */
export interface CallChannel {
  readonly onProgress: ((report: ProgressReport) => void) | undefined;
  readonly onLog: ((entry: LogEntry) => void) | undefined;
  readonly client: ToolClient | undefined;
}

function levelOf(level: unknown): McpLogLevel {
  if (typeof level !== 'string' || !(MCP_LOG_LEVELS as readonly string[]).includes(level)) {
    throw new TypeError(`log(): level must be one of ${MCP_LOG_LEVELS.join(', ')}, got ${JSON.stringify(level)}`);
  }
  return level as McpLogLevel;
}

/** `progress(progress, total?, message?)` for one call: checks the numbers, then reports (or does nothing). */
export function progressFunction(onProgress: ((report: ProgressReport) => void) | undefined): (progress: number, total?: number, message?: string) => void {
  return (progress, total, message) => {
    if (typeof progress !== 'number' || !Number.isFinite(progress)) throw new TypeError(`progress(): progress must be a finite number, got ${String(progress)}`);
    if (total !== undefined && (typeof total !== 'number' || !Number.isFinite(total))) throw new TypeError(`progress(): total must be a finite number, got ${String(total)}`);
    if (message !== undefined && typeof message !== 'string') throw new TypeError('progress(): message must be a string');
    if (onProgress === undefined) return;
    const report: { progress: number; total?: number; message?: string } = { progress };
    if (total !== undefined) report.total = total;
    if (message !== undefined) report.message = message;
    onProgress(report);
  };
}

/** `log(level, data, logger?)` for one call. */
export function logFunction(onLog: ((entry: LogEntry) => void) | undefined, toolName: string): (level: McpLogLevel, data: unknown, logger?: string) => void {
  return (level, data, logger) => {
    const checked = levelOf(level);
    if (onLog !== undefined) onLog({ level: checked, data, logger: logger ?? toolName });
  };
}

/** `sample(params)` and `elicit(params)` for one call: to the client, or a ClientUnavailableError. */
export function requestFunctions(
  client: ToolClient | undefined,
  toolName: string,
  signal: () => AbortSignal,
): { sample: (params: SampleParams) => Promise<SampleResult>; elicit: (params: ElicitParams) => Promise<ElicitResult> } {
  if (client === undefined) {
    return {
      sample: () => Promise.reject(new ClientUnavailableError(toolName, 'sampling/createMessage')),
      elicit: () => Promise.reject(new ClientUnavailableError(toolName, 'elicitation/create')),
    };
  }
  // A call already ended (timed out, aborted) asks its client nothing, as the MCP SDK refuses a request with an aborted signal.
  const ask = <T>(request: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const current = signal();
    return current.aborted ? Promise.reject(current.reason) : request(current);
  };
  return {
    sample: (params) => ask((current) => client.createMessage(params, { signal: current })),
    elicit: (params) => ask((current) => client.elicitInput(params, { signal: current })),
  };
}
