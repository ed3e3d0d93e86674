// One MCP session over a live tool set: the SDK's low-level Server (raw JSON Schema as it is),
// tools/list in name order with cursors, tools/call through invoke, list_changed pushed live.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, ListToolsResult, Tool as SdkTool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson, checkToolPermission, toMcpCallToolResult, toMcpTools } from '../index.js';
import type { LiveToolSet, McpTool, Tool, ToolPolicy, ToolSet } from '../index.js';
import { packageVersion } from '../package-files.js';

/** The default wait for one `tools/call` (below the 60 s request timeout of the usual clients). */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** The default number of tools in one `tools/list` page. */
export const DEFAULT_PAGE_SIZE = 500;

/** Options of an MCP session (`createMcpServer`). */
export interface McpServerOptions {
  /** The persona whose tools the session lists and may call (`ToolSet.forPolicy`, and `invoke`'s `policy`). */
  readonly policy?: ToolPolicy;
  /** Each `tools/call` ends with a `TIMEOUT` error result after this many ms. Default 30,000. */
  readonly callTimeoutMs?: number;
  /** Tools per `tools/list` page; more come with `nextCursor`. Default 500. */
  readonly pageSize?: number;
  /** Hears a tool that cannot be served (an input schema MCP clients would reject), once per tool. */
  readonly onWarning?: (message: string) => void;
}

const SERVER_INFO = Object.freeze({ name: 'tool-registry', version: packageVersion() });

/** Each tool's `tools/list` entry, built once; `null` for a tool MCP clients would reject. */
const entries = new WeakMap<Tool, SdkTool | null>();
/** Each set's view for a policy (by the policy's canonical JSON), built once per set. */
const views = new WeakMap<ToolSet, Map<string, ServedView>>();

/** What one policy sees of one set: the tools it lists (servable, in name order) and their entries. */
interface ServedView {
  readonly tools: readonly Tool[];
  readonly names: readonly string[];
  readonly entries: readonly SdkTool[];
  readonly byName: ReadonlyMap<string, Tool>;
}

function entryOf(tool: Tool, onWarning: ((message: string) => void) | undefined): SdkTool | null {
  const known = entries.get(tool);
  if (known !== undefined) return known;
  let entry: SdkTool | null;
  try {
    const [listed] = toMcpTools([tool], { nonObjectOutputSchema: 'omit' }) as (McpTool & SdkTool)[];
    entry = listed ?? null;
  } catch (error) {
    entry = null;
    onWarning?.(`tool ${JSON.stringify(tool.name)} is not served over MCP: ${(error as Error).message}`);
  }
  entries.set(tool, entry);
  return entry;
}

function viewOf(set: ToolSet, policy: ToolPolicy | undefined, policyKey: string, onWarning: ((message: string) => void) | undefined): ServedView {
  let perPolicy = views.get(set);
  if (perPolicy === undefined) views.set(set, (perPolicy = new Map()));
  const known = perPolicy.get(policyKey);
  if (known !== undefined) return known;
  const tools: Tool[] = [];
  const listed: SdkTool[] = [];
  for (const tool of policy === undefined ? set : set.forPolicy(policy)) {
    const entry = entryOf(tool, onWarning);
    if (entry === null) continue;
    tools.push(tool);
    listed.push(entry);
  }
  const view: ServedView = { tools, names: tools.map((tool) => tool.name), entries: listed, byName: new Map(tools.map((tool) => [tool.name, tool])) };
  perPolicy.set(policyKey, view);
  return view;
}

function sameTools(a: ServedView, b: ServedView): boolean {
  return a.tools.length === b.tools.length && a.tools.every((tool, index) => tool === b.tools[index]);
}

/**
 * A JSON-RPC error for the client. Not the SDK's McpError: its message already says "MCP
 * error -32602:", and the client's McpError says it again.
 */
function protocolError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

function encodeCursor(name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (name === '' || encodeCursor(name) !== cursor) throw protocolError(ErrorCode.InvalidParams, `Invalid cursor: ${JSON.stringify(cursor)}`);
  return name;
}

/** The index of the first name after `name` in a sorted list. */
function firstAfter(names: readonly string[], name: string): number {
  let low = 0;
  let high = names.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((names[middle] as string) <= name) low = middle + 1;
    else high = middle;
  }
  return low;
}

function positiveInteger(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new TypeError(`createMcpServer(): ${name} must be a whole number > 0, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** A result for data the protocol cannot carry (not JSON): the call failed, as the model should learn. */
function unsendable(name: string, error: unknown): CallToolResult {
  return { content: [{ type: 'text', text: `TOOL_FAILED: Tool '${name}' returned a value that cannot be sent: ${(error as Error).message}` }], isError: true };
}

/**
 * Checks a session's options (without making a session): the live set, the numbers, and the
 * policy (VALIDATION_FAILED naming the field). Returns the numbers with their defaults.
 */
export function checkSessionOptions(live: LiveToolSet, options: McpServerOptions): { callTimeoutMs: number; pageSize: number } {
  if (typeof live !== 'object' || live === null || typeof live.current !== 'function' || typeof live.subscribe !== 'function') {
    throw new TypeError('createMcpServer(): live must be a LiveToolSet (liveToolSet())');
  }
  if (typeof options !== 'object' || options === null) throw new TypeError('createMcpServer(): options must be an object');
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') throw new TypeError('createMcpServer(): onWarning must be a function');
  if (options.policy !== undefined) checkToolPermission(options.policy, { name: 'x' });
  return {
    callTimeoutMs: positiveInteger('callTimeoutMs', options.callTimeoutMs, DEFAULT_CALL_TIMEOUT_MS),
    pageSize: positiveInteger('pageSize', options.pageSize, DEFAULT_PAGE_SIZE),
  };
}

/**
 * One MCP session's server over a live tool set: the SDK's low-level `Server`, not yet
 * connected (`server.connect(transport)`). It declares `tools.listChanged`; `tools/list`
 * gives the tools the session's policy allows, in name order, `pageSize` a page with
 * `nextCursor`; `tools/call` runs `invoke` under the policy with `callTimeoutMs`, and maps the
 * result (success: `structuredContent` for object data plus the JSON as text; failure:
 * `isError` with the code and issues). A tool the session does not see (unknown, disabled,
 * not allowed) is the protocol error -32602. After each change of the live set that changes
 * what this session lists, the client gets `notifications/tools/list_changed`.
 * @throws VALIDATION_FAILED for an invalid policy; TypeError for bad options
 */
export function createMcpServer(live: LiveToolSet, options: McpServerOptions = {}): Server {
  const { callTimeoutMs, pageSize } = checkSessionOptions(live, options);
  const { policy, onWarning } = options;
  const policyKey = policy === undefined ? '' : canonicalJson(policy as never);
  const current = (): ServedView => viewOf(live.current(), policy, policyKey, onWarning);

  const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: true } } });

  server.setRequestHandler(ListToolsRequestSchema, (request): ListToolsResult => {
    const view = current();
    const cursor = request.params?.cursor;
    const start = cursor === undefined ? 0 : firstAfter(view.names, decodeCursor(cursor));
    const end = Math.min(start + pageSize, view.entries.length);
    const page: ListToolsResult = { tools: start === 0 && end === view.entries.length ? (view.entries as SdkTool[]) : view.entries.slice(start, end) };
    if (end < view.entries.length) page.nextCursor = encodeCursor(view.names[end - 1] as string);
    return page;
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    // Looked up in the newest set: a tool disabled a moment ago is unknown now.
    const set = live.current();
    if (!viewOf(set, policy, policyKey, onWarning).byName.has(name)) throw protocolError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const result = await set.invoke(name, request.params.arguments ?? {}, {
      timeoutMs: callTimeoutMs,
      signal: extra.signal,
      ...(policy === undefined ? {} : { policy }),
    });
    try {
      return toMcpCallToolResult(result) as CallToolResult;
    } catch (error) {
      return unsendable(name, error);
    }
  });

  // What the client was last told it can list; a change elsewhere in the set says nothing.
  let announced = current();
  let initialized = false;
  server.oninitialized = () => {
    initialized = true;
  };
  const unsubscribe = live.subscribe(() => {
    const next = current();
    if (sameTools(next, announced)) return;
    announced = next;
    if (initialized) server.sendToolListChanged().catch(() => undefined);
  });
  const previousOnClose = server.onclose;
  server.onclose = () => {
    unsubscribe();
    previousOnClose?.();
  };
  return server;
}
