// One MCP session over a live tool set: the SDK's low-level Server (raw JSON Schema as it is),
// tools/list in name order with cursors, tools/call through invoke, list_changed pushed live.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type {
  CallToolResult,
  CreateMessageRequestParams,
  ElicitRequestParams,
  JSONRPCMessage,
  JSONRPCRequest,
  ListToolsResult,
  MessageExtraInfo,
  RequestId,
  ServerNotification,
  ServerRequest,
  Tool as SdkTool,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { performance } from 'node:perf_hooks';
import { canonicalJson, checkToolPermission, defineTool, fingerprintOf, MAX_TIMER_MS, MCP_LOG_LEVELS, toMcpCallToolResult, toMcpTools, ToolSet } from '../index.js';
import type { CallRecordInput, Deprecation, ElicitParams, ElicitResult, InvokeOptions, LiveToolSet, LogEntry, McpTool, ProgressReport, SampleResult, Tool, ToolPolicy, ToolResult } from '../index.js';
import { packageVersion } from '../package-files.js';
import { callOutcomeOf, TOOL_ERROR_OUTCOME } from './call-outcome.js';
import { UPSTREAM_TAG_PREFIX } from './gateway/upstream-definition.js';
import { errorReply, isId, isObject } from './json-rpc.js';
import { isRelayedTool, RelayedCall } from './relayed-call.js';
import { rememberResultJson } from './result-json.js';

/** The default wait for one `tools/call` (below the 60 s request timeout of the usual clients). */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** The default number of tools in one `tools/list` page. */
export const DEFAULT_PAGE_SIZE = 500;
/**
 * The default bound of one `tools/call` result: the bytes of its JSON-RPC result, so the text
 * and `structuredContent` both count. 4 MiB, well under the 10 MiB line the SDK's stdio
 * client reads (a bigger line ends its session).
 */
export const DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024;
/**
 * The default number of `tools/call`s one session may have unanswered at once: 10,000 slow
 * calls of one session (100 POSTs of 100-call batches) were all accepted and held `/healthz`
 * up to 5.6 s while they arrived. Past it a call is refused at once (-32000); the session lives on.
 */
export const DEFAULT_MAX_CALLS_IN_FLIGHT = 100;
/** The JSON-RPC error code of a call refused past `maxCallsInFlight` (the implementation-defined server error). */
const CALLS_IN_FLIGHT_ERROR_CODE = -32000;
/**
 * The `_meta` key of a deprecated tool's call result: `{ message, replacement, sunset }`, the
 * registry's deprecation (a prefix of our own, as the MCP specification's `_meta` rules ask).
 */
export const DEPRECATION_META_KEY = 'tool-registry/deprecation';

/** Options of an MCP session (`createMcpServer`). */
export interface McpServerOptions {
  /** The persona whose tools the session lists and may call (`ToolSet.forPolicy`, and `invoke`'s `policy`). */
  readonly policy?: ToolPolicy;
  /** Each `tools/call` ends with a `TIMEOUT` error result after this many ms. Default 30,000. */
  readonly callTimeoutMs?: number;
  /** Tools per `tools/list` page; more come with `nextCursor`. Default 500. */
  readonly pageSize?: number;
  /**
   * A `tools/call` result whose JSON is longer than this many bytes (text and
   * `structuredContent` both counted) is replaced by an `isError` result saying so; the
   * session goes on. Default 4 MiB (`DEFAULT_MAX_RESULT_BYTES`). It bounds the tool's result:
   * an error result the server makes itself (a timeout, invalid arguments, a thrown error) may
   * take 1,024 bytes whatever the limit, and is cut to fit, never replaced.
   */
  readonly maxResultBytes?: number;
  /**
   * `tools/call`s the session may have unanswered at once; one more is refused at once with
   * JSON-RPC error -32000 naming the bound (`data: { limit, resource: 'calls' }`), runs
   * nothing and leaves no call record; the session goes on. Default 100 (`DEFAULT_MAX_CALLS_IN_FLIGHT`).
   */
  readonly maxCallsInFlight?: number;
  /** Hears a tool that cannot be served (an input schema MCP clients would reject), once per tool and listener (sessions given the same function hear it once). */
  readonly onWarning?: (message: string) => void;
  /**
   * Hears every `tools/call` of the session once it is answered, one record each (the audit
   * log: `createCallRecorder(registry).record`): when it started, the token's name and the
   * policy's persona, the namespace, the tool with its version, fingerprint and upstream (its
   * `upstream:NAME` tag), how long it took, and its outcome: `ok` or the code the caller got
   * (docs/gateway.md, "Audit log"). Never the arguments or the result. A listener that throws
   * is ignored; the call is answered as if there were none.
   */
  readonly onCall?: (record: CallRecordInput) => void;
  /** The token name the session's call records carry (`token`). Default null (no tokens, stdio). */
  readonly tokenName?: string | null;
  /** The namespace the session's call records carry. Default `default`. */
  readonly namespace?: string;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const SERVER_INFO = Object.freeze({ name: 'tool-registry', version: packageVersion() });

/** Each tool's `tools/list` entry, built once per deprecation; `null` for a tool MCP clients would reject, with why. */
const entries = new WeakMap<Tool, { readonly deprecation: Deprecation | null; readonly entry: SdkTool | null; readonly refusal?: string }>();
/** The bytes of each `tools/list` entry's JSON, measured once per entry. */
const entrySizes = new WeakMap<SdkTool, number>();
function entryBytes(entry: SdkTool): number {
  let size = entrySizes.get(entry);
  if (size === undefined) {
    size = Buffer.byteLength(JSON.stringify(entry), 'utf8');
    entrySizes.set(entry, size);
  }
  return size;
}
/** Each set's view for a policy (by the policy's canonical JSON), built once per set. */
const views = new WeakMap<ToolSet, Map<string, ServedView>>();
/**
 * Views kept per set; past it the set's views start again (a bound, not a cache policy). A set
 * lives until the registry changes, and each session's own persona (a user's, say) kept its
 * view: about 40 KB each with 300 tools, for as long as the registry stayed as it was.
 */
const MAX_VIEWS_PER_SET = 64;

/** What one policy sees of one set: the tools it lists (servable, in name order) and their entries. */
interface ServedView {
  readonly set: ToolSet;
  readonly tools: readonly Tool[];
  readonly names: readonly string[];
  readonly entries: readonly SdkTool[];
  readonly byName: ReadonlyMap<string, Tool>;
  /** The policy's set (`forPolicy`): calls run on it, so a deprecation's replacement the policy forbids is not named. */
  readonly allowed: ToolSet;
  /** What the registry left out that the policy would allow (`forPolicy`'s `excluded`): only these may be named in an answer. */
  readonly excluded: ToolSet['excluded'];
  /** The tools the policy allows that MCP clients would reject, with why. */
  readonly refused: readonly (readonly [Tool, string])[];
}

function sameDeprecation(a: Deprecation | null, b: Deprecation | null): boolean {
  return a === b || (a !== null && b !== null && a.message === b.message && a.replacement === b.replacement && a.sunset === b.sunset);
}

function entryOf(tool: Tool, deprecation: Deprecation | null): { readonly entry: SdkTool | null; readonly refusal?: string } {
  const known = entries.get(tool);
  if (known !== undefined && sameDeprecation(known.deprecation, deprecation)) return known;
  let entry: SdkTool | null;
  let refusal: string | undefined;
  try {
    // A deprecated tool's description says so, in the exports' words (toMcpTools annotates a
    // registration-like item that carries its deprecation).
    const item = deprecation === null ? tool : { spec: tool.spec, title: tool.title, annotations: tool.annotations, deprecation };
    const [listed] = toMcpTools([item as Tool], { nonObjectOutputSchema: 'omit' }) as (McpTool & SdkTool)[];
    entry = listed ?? null;
  } catch (error) {
    entry = null;
    refusal = `tool ${JSON.stringify(tool.name)} is not served over MCP: ${(error as Error).message}`;
  }
  const made = { deprecation, entry, ...(refusal === undefined ? {} : { refusal }) };
  entries.set(tool, made);
  return made;
}

/**
 * The tools each listener heard of as not served. Per listener, not per process: entries and
 * views are shared by every server in the process, and a second server's listener (another
 * registry's) heard nothing of a tool the first had been told of.
 */
const warned = new WeakMap<(message: string) => void, WeakSet<Tool>>();

function warnRefused(view: ServedView, onWarning: (message: string) => void): void {
  if (view.refused.length === 0) return;
  let told = warned.get(onWarning);
  if (told === undefined) warned.set(onWarning, (told = new WeakSet()));
  for (const [tool, message] of view.refused) {
    if (told.has(tool)) continue;
    told.add(tool);
    onWarning(message);
  }
}

function viewOf(set: ToolSet, policy: ToolPolicy | undefined, policyKey: string, onWarning: ((message: string) => void) | undefined): ServedView {
  let perPolicy = views.get(set);
  if (perPolicy === undefined) views.set(set, (perPolicy = new Map()));
  let view = perPolicy.get(policyKey);
  if (view === undefined) {
    const tools: Tool[] = [];
    const listed: SdkTool[] = [];
    const refused: (readonly [Tool, string])[] = [];
    const allowed = policy === undefined ? set : set.forPolicy(policy);
    for (const tool of allowed) {
      const { entry, refusal } = entryOf(tool, allowed.deprecation(tool.name));
      if (refusal !== undefined) refused.push([tool, refusal]);
      if (entry === null) continue;
      tools.push(tool);
      listed.push(entry);
    }
    view = { set, tools, names: tools.map((tool) => tool.name), entries: listed, byName: new Map(tools.map((tool) => [tool.name, tool])), allowed, excluded: allowed.excluded, refused };
    if (perPolicy.size >= MAX_VIEWS_PER_SET) perPolicy.clear();
    perPolicy.set(policyKey, view);
  }
  if (onWarning !== undefined) warnRefused(view, onWarning);
  return view;
}

/** Whether two views list the same tools, deprecated alike. */
function sameTools(a: ServedView, b: ServedView): boolean {
  return (
    a.tools.length === b.tools.length &&
    a.tools.every((tool, index) => tool === b.tools[index] && sameDeprecation(a.allowed.deprecation(tool.name), b.allowed.deprecation(tool.name)))
  );
}

/**
 * A JSON-RPC error for the client. Not the SDK's McpError: its message already says "MCP
 * error -32602:", and the client's McpError says it again.
 */
function protocolError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * The SDK's Server checks a form's elicitation answer against its `requestedSchema` with an
 * ajv of its own, on the event loop with no time bound: a `pattern` there (a handler's, or an
 * upstream's the gateway relays) and a client's crafted answer held the process for hours. It
 * checks nothing now (ANSWERS_UNCHECKED); `checkedAnswer` makes its check with the runtime's
 * validation, whose pattern tests are bounded: a Tool of that schema, invoked on the answer.
 */
const ANSWERS_UNCHECKED = { getValidator: () => (input: unknown) => ({ valid: true as const, data: input as never, errorMessage: undefined }) };

/** An `elicitInput` answer, or the SDK's refusal of it (with the runtime's issues), as the SDK's check would have it. */
async function checkedAnswer(params: ElicitParams, result: ElicitResult): Promise<ElicitResult> {
  // What the SDK checks: an accepted form answer with content, against a requestedSchema.
  if ((params.mode ?? 'form') !== 'form' || result.action !== 'accept' || result.content === undefined || params.requestedSchema === undefined) return result;
  let form: ToolSet;
  try {
    form = new ToolSet([defineTool({ name: 'elicitation', input_schema: params.requestedSchema as never, handler: () => null })]);
  } catch (error) {
    throw protocolError(ErrorCode.InternalError, `Error validating elicitation response: ${error instanceof Error ? error.message : String(error)}`);
  }
  const checked = await form.invoke('elicitation', result.content);
  if (checked.success) return result;
  const issues = (checked.issues ?? []).map((issue) => `${issue.path === '' ? '(root)' : issue.path} ${issue.message}`).join('; ');
  throw protocolError(ErrorCode.InvalidParams, `Elicitation response content does not match requested schema: ${issues || checked.error}`);
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

/** A time in ms that a timer will wait: 1 to MAX_TIMER_MS. */
export function timerMs(caller: string, name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new TypeError(`${caller}(): ${name} must be a whole number from 1 to ${MAX_TIMER_MS} (the longest timer Node keeps), got ${JSON.stringify(value)}`);
  }
  return value;
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

/** A result over the session's bound: the call failed (the session goes on), and the model learns why. */
function tooLarge(name: string, bytes: number, limit: number): CallToolResult {
  const text = `TOOL_FAILED: Tool '${name}' returned ${bytes} bytes (text and structuredContent together), over this server's limit of ${limit} bytes (maxResultBytes); ask for less`;
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * The bytes a result the server makes itself (a timeout, invalid arguments, a handler's thrown
 * error, the gateway's own error) may take whatever `maxResultBytes` is: the limit bounds what
 * a tool returns, and never turns the server's own verdict into an oversize one (under about
 * 110 bytes a TIMEOUT read as "returned N bytes, over this server's limit").
 */
const SERVER_RESULT_BYTES = 1024;

/** How many bytes `char` (one UTF-16 unit, `next` the one after it) takes in JSON.stringify's output; 4 for a surrogate pair (both units). */
function jsonBytesOf(char: number, next: number): number {
  if (char === 0x22 || char === 0x5c) return 2;
  if (char < 0x20) return char === 0x08 || char === 0x09 || char === 0x0a || char === 0x0c || char === 0x0d ? 2 : 6;
  if (char < 0x80) return 1;
  if (char < 0x800) return 2;
  if (char >= 0xd800 && char <= 0xdbff) return next >= 0xdc00 && next <= 0xdfff ? 4 : 6;
  return char >= 0xdc00 && char <= 0xdfff ? 6 : 3;
}

/** The longest start of `text` whose JSON string takes at most `budget` bytes (never half a surrogate pair). */
function jsonPrefix(text: string, budget: number): string {
  let used = 2;
  let index = 0;
  while (index < text.length) {
    const char = text.charCodeAt(index);
    const bytes = jsonBytesOf(char, text.charCodeAt(index + 1));
    if (used + bytes > budget) break;
    used += bytes;
    index += bytes === 4 ? 2 : 1;
  }
  return text.slice(0, index);
}

/**
 * A result the server made itself that is over the bound (a handler's thrown error of 5 MB, an
 * upstream's long error text): its text cut to fit `limit`, its code first (`CODE: ...`) kept
 * whatever the cut, and a note of how long it was; nothing else of it goes.
 */
function cutToFit(out: CallToolResult, bytes: number, limit: number, code: string, result: ToolResult): CallToolResult {
  const block = out.content.find((item) => item.type === 'text');
  const text = block?.type === 'text' ? block.text : '';
  const note = ` ... (cut: the result was ${bytes} bytes, over this server's limit of ${limit} bytes)`;
  const empty = Buffer.byteLength(JSON.stringify(withDeprecation({ content: [{ type: 'text', text: note }], isError: true }, result)), 'utf8');
  const head = `${code}: `;
  const kept = jsonPrefix(text, Math.max(limit - empty + 2, 2));
  return withDeprecation({ content: [{ type: 'text', text: `${kept.startsWith(head) ? kept : head}${note}` }], isError: true }, result);
}

/** `out` with the deprecation of the called tool in `_meta`, when it has one: every result of a deprecated tool says so, the ones this server makes in place of the handler's too. */
function withDeprecation(out: CallToolResult, result: ToolResult): CallToolResult {
  if (result.deprecated === undefined) return out;
  const { message, replacement, sunset } = result.deprecated;
  out._meta = { ...out._meta, [DEPRECATION_META_KEY]: { message, replacement, sunset } };
  return out;
}

/** A value for a message: JSON, cut short. */
function shown(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Whether an object is one the SDK's schemas take as a record (zod's isPlainObject, narrowed): a plain prototype, no `constructor` of its own. */
function isPlainRecord(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && !Object.hasOwn(value, 'constructor');
}

/**
 * The longest progress token a tools/call may give (characters): every progress report of the
 * call carries it back, so a token of megabytes made each report (a tool's, an upstream's, up
 * to 1,000 a call) megabytes the server wrote and buffered for a client that need not read.
 */
const MAX_PROGRESS_TOKEN_LENGTH = 1_024;

/** What is wrong with a tools/call's progress token, or undefined. */
function progressTokenProblem(params: Record<string, unknown>): string | undefined {
  const meta = params._meta;
  const token = typeof meta === 'object' && meta !== null ? (meta as { progressToken?: unknown }).progressToken : undefined;
  if (typeof token !== 'string' || token.length <= MAX_PROGRESS_TOKEN_LENGTH) return undefined;
  return `"_meta.progressToken" must be at most ${MAX_PROGRESS_TOKEN_LENGTH} characters, got a string of ${token.length}`;
}

/**
 * Whether tools/call params (a string `name`, `arguments` an object or absent: checked by
 * paramsOf) hold nothing else than plain `arguments` and a `_meta` with at most a progress
 * token: then CallToolRequestSchema accepts them as they are, and parsing them again would
 * only copy them (the usual call; anything else goes through the schema).
 */
function isPlainCall(params: Record<string, unknown>): boolean {
  for (const key in params) {
    if (key === 'name') continue;
    if (key === 'arguments') {
      const args = params.arguments;
      // Not an object (null, "x", []): paramsOf says what is wrong.
      if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args) || !isPlainRecord(args))) return false;
      continue;
    }
    if (key !== '_meta') return false;
    const meta = params._meta;
    if (meta === undefined) continue;
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return false;
    for (const metaKey in meta) {
      if (metaKey !== 'progressToken') return false;
      const token = (meta as { progressToken?: unknown }).progressToken;
      if (typeof token !== 'string' && !Number.isSafeInteger(token)) return false;
      // paramsOf refuses it.
      if (typeof token === 'string' && token.length > MAX_PROGRESS_TOKEN_LENGTH) return false;
    }
  }
  return true;
}

/** zod's issues with a request's params, in one line: `"level": Invalid option: ...; "clientInfo": ...`. */
type ParamsIssues = readonly { path: readonly PropertyKey[]; message: string }[];
function issuesText(issues: ParamsIssues): string {
  return issues.map((issue) => `${issue.path.length > 1 ? `"${issue.path.slice(1).map(String).join('.')}"` : 'params'}: ${issue.message}`).join('; ');
}

/** The requests the SDK's Server answers itself, by their schema: it answers params its schema refuses with -32603 and zod's raw issues. */
const SDK_ANSWERED = new Map<string, { safeParse(value: unknown): { success: boolean; error?: { issues: ParamsIssues } } }>([
  ['initialize', InitializeRequestSchema],
  ['logging/setLevel', SetLevelRequestSchema],
]);

/**
 * For a request the SDK's Server answers itself (`initialize`, `logging/setLevel`) with params
 * its schema refuses: the message of the -32602 Invalid params reply, saying what is wrong.
 * Undefined for any other message.
 */
export function invalidParamsOf(message: { readonly method?: unknown }): string | undefined {
  const schema = typeof message.method === 'string' ? SDK_ANSWERED.get(message.method) : undefined;
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(message);
  return parsed.success ? undefined : `Invalid params of ${message.method as string}: ${issuesText(parsed.error?.issues ?? [])}`;
}

/**
 * The params of a request checked by the SDK's schema, or -32602 with a readable message
 * (the SDK's own check answers -32603 with a dump of zod's issues).
 */
function paramsOf<T>(request: JSONRPCRequest, schema: { safeParse(value: unknown): { success: true; data: { params?: T } } | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } } }): T | undefined {
  const { method, params } = request;
  const invalid = (problem: string): Error => protocolError(ErrorCode.InvalidParams, `Invalid params of ${method}: ${problem}`);
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) throw invalid(`params must be an object, got ${shown(params)}`);
  const given = (params ?? {}) as Record<string, unknown>;
  if (method === 'tools/call') {
    if (typeof given.name !== 'string') throw invalid(`"name" must be a tool's name (a string), got ${shown(given.name)}`);
    const args = given.arguments;
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) throw invalid(`"arguments" must be an object, got ${shown(args)}`);
    const token = progressTokenProblem(given);
    if (token !== undefined) throw invalid(token);
  }
  if (given.cursor !== undefined && typeof given.cursor !== 'string') throw invalid(`"cursor" must be a string, got ${shown(given.cursor)}`);
  // What clients send (a name, arguments, perhaps a progress token) is what the schema accepts as it is.
  if (method === 'tools/call' && isPlainCall(given)) return given as T;
  const parsed = schema.safeParse(request);
  if (!parsed.success) {
    throw invalid(issuesText(parsed.error.issues));
  }
  return parsed.data.params;
}

/** The longest tool name a call record carries: an unknown name a caller sent is cut there (a served tool's name is at most 128). */
const MAX_RECORDED_NAME = 128;
/** Text as a record carries it: U+0000, which no store keeps, as U+FFFD. */
function recordedText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\ufffd') : text;
}

/** The name a caller asked for, as its record carries it: cut at 128 characters; the empty name (no tool's) as `""`. */
function recordedName(name: string): string {
  if (name === '') return '""';
  return recordedText(name.length > MAX_RECORDED_NAME ? name.slice(0, MAX_RECORDED_NAME) : name);
}

/** What a call record says of a tool: its version, fingerprint and upstream. */
interface ToolIdentity {
  readonly version: string | null;
  readonly fingerprint: string;
  readonly upstream: string | null;
}
/** Each tool's identity for call records, computed once per Tool. */
const identities = new WeakMap<Tool, ToolIdentity>();

/** What one call's record needs, filled in as the call goes: the tool's name once known, the Tool once found, the outcome. */
interface CallFacts {
  name?: string;
  tool?: Tool;
  outcome?: string;
}

function identityOf(tool: Tool): ToolIdentity {
  let known = identities.get(tool);
  if (known === undefined) {
    const { version, tags } = tool.spec;
    const tag = tags.find((each) => each.startsWith(UPSTREAM_TAG_PREFIX));
    known = {
      version: version === null ? null : recordedText(version),
      fingerprint: fingerprintOf(tool.spec),
      upstream: tag === undefined ? null : recordedText(tag.slice(UPSTREAM_TAG_PREFIX.length)),
    };
    identities.set(tool, known);
  }
  return known;
}

/** Whether a message is a JSON-RPC request as the SDK's schema reads one (no other member), with params an object. */
function isPlainRequest(value: Record<string, unknown>): boolean {
  let members = 0;
  for (const key in value) {
    if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return false;
    members++;
  }
  return members === 4 && value.jsonrpc === '2.0' && isId(value.id) && isObject(value.params) && isPlainRecord(value.params);
}

/** What a session does with a message before the SDK's Protocol: true when it took the message (`passOn` hands it to the Protocol later). */
type Intercept = (message: JSONRPCMessage, transport: Transport, passOn: () => void) => boolean;

/** The SDK's Server, with a look at every message the transport brings before its Protocol has one. */
class SessionServer extends Server {
  intercept: Intercept | undefined;

  /**
   * A `tools/call` asking for a task (MCP 2025-11-25) runs as a plain call: a receiver that does
   * not declare tasks for a request type MUST process it normally, ignoring the task metadata
   * (the SDK answered -32603 `Server does not support task creation`).
   */
  protected override assertTaskHandlerCapability(): void {}

  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    const protocol = transport.onmessage;
    transport.onmessage = ((message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      const passOn = (): void => protocol?.(message, extra);
      if (this.intercept?.(message, transport, passOn) !== true) passOn();
    }) as Transport['onmessage'];
  }
}

/**
 * Checks a session's options (without making a session): the live set, the numbers, and the
 * policy (VALIDATION_FAILED naming the field). Returns the numbers with their defaults.
 */
export function checkSessionOptions(live: LiveToolSet, options: McpServerOptions): { callTimeoutMs: number; pageSize: number; maxResultBytes: number; maxCallsInFlight: number } {
  if (typeof live !== 'object' || live === null || typeof live.current !== 'function' || typeof live.subscribe !== 'function') {
    throw new TypeError('createMcpServer(): live must be a LiveToolSet (liveToolSet())');
  }
  if (typeof options !== 'object' || options === null) throw new TypeError('createMcpServer(): options must be an object');
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') throw new TypeError('createMcpServer(): onWarning must be a function');
  if (options.onCall !== undefined && typeof options.onCall !== 'function') throw new TypeError('createMcpServer(): onCall must be a function');
  if (options.tokenName !== undefined && options.tokenName !== null && typeof options.tokenName !== 'string') throw new TypeError('createMcpServer(): tokenName must be a string or null');
  if (options.namespace !== undefined && typeof options.namespace !== 'string') throw new TypeError('createMcpServer(): namespace must be a string');
  if (options.policy !== undefined) checkToolPermission(options.policy, { name: 'x' });
  return {
    callTimeoutMs: timerMs('createMcpServer', 'callTimeoutMs', options.callTimeoutMs, DEFAULT_CALL_TIMEOUT_MS),
    pageSize: positiveInteger('pageSize', options.pageSize, DEFAULT_PAGE_SIZE),
    maxResultBytes: positiveInteger('maxResultBytes', options.maxResultBytes, DEFAULT_MAX_RESULT_BYTES),
    maxCallsInFlight: positiveInteger('maxCallsInFlight', options.maxCallsInFlight, DEFAULT_MAX_CALLS_IN_FLIGHT),
  };
}

/**
 * One MCP session's server over a live tool set: the SDK's low-level `Server`, not yet
 * connected (`server.connect(transport)`). It declares `tools.listChanged`; `tools/list`
 * gives the tools the session's policy allows, in name order, `pageSize` a page with
 * `nextCursor`, a deprecated tool's description saying so; `tools/call` runs `invoke` under
 * the policy with `callTimeoutMs`, and maps the result (success: `structuredContent` for
 * object data plus the JSON as text; failure: `isError` with the code and issues; a result
 * over `maxResultBytes`: `isError` saying so; a deprecated tool's result carries the
 * deprecation in `_meta['tool-registry/deprecation']`; data made by `mcpContent` goes as that
 * `CallToolResult`). It declares `logging` and answers `logging/setLevel`; a handler's
 * `progress` goes as `notifications/progress` under the request's progress token, its `log`
 * as `notifications/message` at or above the session's level, its `sample` and `elicit` as
 * `sampling/createMessage` and `elicitation/create` to this session, related to the call. A call checks the registry first
 * (`LiveToolSet.latest()`): a tool disabled, removed or sunset by any process before the
 * call is refused although the change feed has not brought it yet. A tool the session does
 * not see (unknown, disabled, not allowed) is the protocol error -32602, as are invalid
 * params (a readable message); a request before `initialize` is -32600. After each change
 * of the live set that changes what this session lists (or a listed tool's deprecation),
 * the client gets `notifications/tools/list_changed`.
 * @throws VALIDATION_FAILED for an invalid policy; TypeError for bad options
 */
export function createMcpServer(live: LiveToolSet, options: McpServerOptions = {}): Server {
  const { callTimeoutMs, pageSize, maxResultBytes, maxCallsInFlight } = checkSessionOptions(live, options);
  const { policy, onWarning, onCall } = options;
  const policyKey = policy === undefined ? '' : canonicalJson(policy as never);
  const current = (): ServedView => viewOf(live.current(), policy, policyKey, onWarning);

  const server = new SessionServer(SERVER_INFO, { capabilities: { tools: { listChanged: true }, logging: {} }, jsonSchemaValidator: ANSWERS_UNCHECKED });
  // The session's log level (logging/setLevel); until the client sets one, every message goes.
  let logLevel = 0;
  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    logLevel = MCP_LOG_LEVELS.indexOf(request.params.level);
    return {};
  });

  const listTools = (request: JSONRPCRequest): ListToolsResult => {
    const params = paramsOf(request, ListToolsRequestSchema);
    const view = current();
    const cursor = params?.cursor;
    const start = cursor === undefined ? 0 : firstAfter(view.names, decodeCursor(cursor));
    let end = Math.min(start + pageSize, view.entries.length);
    // A page is within maxResultBytes too (large descriptions and schemas, an upstream's
    // included, would pass the line a stdio client reads): it ends before the entry that would
    // pass the bound, one entry at least.
    let bytes = 0;
    for (let index = start; index < end; index++) {
      bytes += entryBytes(view.entries[index] as SdkTool) + 1;
      if (bytes > maxResultBytes && index > start) end = index;
    }
    const page: ListToolsResult = { tools: start === 0 && end === view.entries.length ? (view.entries as SdkTool[]) : view.entries.slice(start, end) };
    if (end < view.entries.length) page.nextCursor = encodeCursor(view.names[end - 1] as string);
    return page;
  };

  /** This session, as handlers see it (`ToolHandlerOptions.session`): the gateway routes an upstream's requests by it. */
  const session = Object.freeze({});
  /**
   * The options of one call's invoke: the timeout and what a handler tells or asks during the
   * call, sent on the call's own stream (related to its request): progress only under the
   * caller's progress token, logs at or above the level. `send` sends a notification of the
   * call; `related` gives the options of a request to the client.
   */
  const callOptions = (
    progressToken: string | number | undefined,
    send: (notification: ServerNotification) => void,
    related: (signal: AbortSignal) => { relatedRequestId: RequestId; signal: AbortSignal },
  ): { -readonly [K in keyof InvokeOptions]: InvokeOptions[K] } => {
    // A notification over maxResultBytes (an 11 MiB log message) would pass the line a stdio
    // client reads (10 MiB for the SDK's) and end its session, as a result would: it is not
    // sent; a log message is replaced by a short one saying so, and onWarning hears the first
    // of the call only (a hostile upstream's flood of them would fill the log otherwise).
    let warned = false;
    const bounded = (notification: ServerNotification): void => {
      let bytes = 0;
      try {
        const text = JSON.stringify(notification);
        bytes = text.length > maxResultBytes / 3 ? Buffer.byteLength(text, 'utf8') : text.length;
      } catch {
        // Not JSON: the transport refuses it, as before.
      }
      if (bytes <= maxResultBytes) {
        send(notification);
        return;
      }
      const note = `a ${notification.method} of ${bytes} bytes from a tool was not sent: over this server's limit of ${maxResultBytes} bytes (maxResultBytes)`;
      if (!warned) onWarning?.(`${note} (warned once a call)`);
      warned = true;
      if (notification.method === 'notifications/message') send({ method: 'notifications/message', params: { level: notification.params.level, data: note } });
    };
    // A request to the client as big would end its session the same way: the handler's sample() or elicit() fails instead.
    const withinBound = <T>(what: string, params: T): T => {
      let bytes = 0;
      try {
        bytes = Buffer.byteLength(JSON.stringify(params) ?? '', 'utf8');
      } catch {
        // Not JSON: the transport refuses it, as before.
      }
      if (bytes > maxResultBytes) throw new RangeError(`${what}(): the request is ${bytes} bytes, over this server's limit of ${maxResultBytes} bytes (maxResultBytes)`);
      return params;
    };
    const options: { -readonly [K in keyof InvokeOptions]: InvokeOptions[K] } = {
      timeoutMs: callTimeoutMs,
      onLog: (entry: LogEntry) => {
        if (MCP_LOG_LEVELS.indexOf(entry.level) >= logLevel) bounded({ method: 'notifications/message', params: { ...entry } });
      },
      client: {
        session,
        createMessage: async (params, { signal }) => (await server.createMessage(withinBound('sample', params) as unknown as CreateMessageRequestParams, related(signal))) as SampleResult,
        elicitInput: async (params, { signal }) => checkedAnswer(params, (await server.elicitInput(withinBound('elicit', params) as unknown as ElicitRequestParams, related(signal))) as ElicitResult),
      },
    };
    if (progressToken !== undefined) options.onProgress = (report: ProgressReport) => bounded({ method: 'notifications/progress', params: { progressToken, ...report } });
    return options;
  };
  /** A call the SDK's Server dispatched: the client's cancellation is its signal; notifications go through its `extra`. */
  const invokeOptions = (request: JSONRPCRequest, extra: Extra): InvokeOptions => {
    const options = callOptions(
      (request.params?._meta as { progressToken?: string | number } | undefined)?.progressToken,
      (notification) => void extra.sendNotification(notification).catch(() => undefined),
      (signal) => ({ relatedRequestId: extra.requestId, signal }),
    );
    options.signal = extra.signal;
    if (policy !== undefined) options.policy = policy;
    return options;
  };

  /** The tool a call names in `set`, or the -32602 a caller gets for a tool it does not see (the record says why). */
  const toolFor = (set: ToolSet, name: string, facts: CallFacts): Tool => {
    const view = viewOf(set, policy, policyKey, onWarning);
    const tool = view.byName.get(name);
    if (tool !== undefined) return tool;
    const known = set.resolve(name) ?? undefined;
    // A tool the policy denies is "unknown" to the caller (it cannot probe), but the audit log says why.
    facts.tool = known;
    facts.outcome = known !== undefined && policy !== undefined && !checkToolPermission(policy, known).allowed ? 'PERMISSION_DENIED' : 'TOOL_NOT_FOUND';
    // The registry's reason only for a tool the policy allows: a denied one is as unknown as a name that does not exist.
    const reason = view.excluded.find((entry) => entry.tool_name === name)?.reason;
    throw protocolError(ErrorCode.InvalidParams, reason === undefined ? `Unknown tool: ${name}` : `Unknown tool: ${name} (${reason.replace('_', ' ')} in the registry)`);
  };

  /** A call's result as the client gets it (and its outcome in `facts`): mapped, deprecation in `_meta`, within `maxResultBytes`. */
  const answerOf = (name: string, result: ToolResult, facts: CallFacts): CallToolResult => {
    facts.outcome = result.success ? 'ok' : result.code;
    let out: CallToolResult;
    try {
      out = toMcpCallToolResult(result) as CallToolResult;
    } catch (error) {
      facts.outcome = 'TOOL_FAILED';
      return withDeprecation(unsendable(name, error), result);
    }
    // An isError result the handler returned: its own verdict (or the gateway's mark).
    if (result.success && out.isError === true) facts.outcome = callOutcomeOf(result.data) ?? TOOL_ERROR_OUTCOME;
    withDeprecation(out, result);
    // The bytes the result takes in its JSON-RPC message (JSON escapes included); a transport
    // of ours sends this very text.
    const text = JSON.stringify(out);
    const bytes = Buffer.byteLength(text, 'utf8');
    // The server's own verdict (a failure the runtime made, or the gateway's marked result) is
    // bounded by SERVER_RESULT_BYTES at least: it says what happened, never "too large".
    const own = !result.success || (out.isError === true && callOutcomeOf(result.data) !== undefined);
    const limit = own ? Math.max(maxResultBytes, SERVER_RESULT_BYTES) : maxResultBytes;
    if (bytes <= limit) {
      rememberResultJson(server.transport, out, text);
      return out;
    }
    if (own) return cutToFit(out, bytes, limit, result.success ? (facts.outcome ?? TOOL_ERROR_OUTCOME) : result.code, result);
    facts.outcome = 'TOOL_FAILED';
    return withDeprecation(tooLarge(name, bytes, maxResultBytes), result);
  };

  const runCall = async (request: JSONRPCRequest, extra: Extra, facts: CallFacts): Promise<CallToolResult> => {
    // A name that is a string names the call's tool even when the rest of the params is invalid.
    const given = (request.params as { name?: unknown } | undefined)?.name;
    if (typeof given === 'string') facts.name = given;
    facts.outcome = 'INVALID_ARGUMENTS';
    const params = paramsOf(request, CallToolRequestSchema) as { name: string; arguments?: Record<string, unknown> };
    const { name } = params;
    facts.outcome = undefined;
    // The registry as it is now: a tool disabled a moment ago, by any process, is unknown now.
    const set = typeof live.latest === 'function' ? await live.latest(name) : live.current();
    facts.tool = toolFor(set, name, facts);
    const served = viewOf(set, policy, policyKey, onWarning).allowed;
    return answerOf(name, await served.invoke(name, params.arguments ?? {}, invokeOptions(request, extra)), facts);
  };

  const persona = policy?.persona ?? null;
  const namespace = options.namespace ?? 'default';
  const tokenName = options.tokenName ?? null;
  /** Hears the record of a call (`onCall`), from when it started (`at`, `started`) to now. */
  const record = (facts: CallFacts, at: string, started: number): void => {
    // A request that names no tool (params without a string name) is a malformed request, not a call: no record.
    if (onCall === undefined || facts.name === undefined) return;
    const identity = facts.tool === undefined ? undefined : identityOf(facts.tool);
    const entry: CallRecordInput = {
      at,
      token: tokenName,
      persona: persona === null ? null : recordedText(persona),
      namespace,
      tool: recordedName(facts.name),
      version: identity?.version ?? null,
      fingerprint: identity?.fingerprint ?? null,
      upstream: identity?.upstream ?? null,
      duration_ms: Math.round((performance.now() - started) * 100) / 100,
      outcome: facts.outcome ?? 'INTERNAL_ERROR',
    };
    try {
      onCall(entry);
    } catch {
      // A listener's failure is never the caller's.
    }
  };
  /** A failure nothing above named (the registry could not be read): its code, else INTERNAL_ERROR. */
  const failedOutcome = (facts: CallFacts, error: unknown): void => {
    if (facts.outcome !== undefined) return;
    const code = (error as { code?: unknown } | null)?.code;
    facts.outcome = typeof code === 'string' ? code : 'INTERNAL_ERROR';
  };
  const callTool = async (request: JSONRPCRequest, extra: Extra): Promise<CallToolResult> => {
    if (onCall === undefined) return runCall(request, extra, {});
    const at = new Date().toISOString();
    const started = performance.now();
    const facts: CallFacts = {};
    try {
      return await runCall(request, extra, facts);
    } catch (error) {
      failedOutcome(facts, error);
      throw error;
    } finally {
      record(facts, at, started);
    }
  };

  /**
   * The session's calls not answered yet, both ways (the SDK's Server and relayCall): one past
   * maxCallsInFlight is refused before it runs, so a client cannot queue thousands of slow calls.
   */
  let callsInFlight = 0;
  // One error for every refusal of the session (the SDK's Server reads its code, message and
  // data): a new Error each captures a stack, 80 ms of the 2 s a flood of 9,900 refusals took in a profile.
  let tooManyCalls: Error | undefined;
  const refusal = (): Error =>
    (tooManyCalls ??= Object.assign(
      new Error(`Too many calls in flight: this session has ${maxCallsInFlight} tools/call requests unanswered, its limit (maxCallsInFlight; serve and mcp --max-calls-in-flight); retry once one is answered`),
      { code: CALLS_IN_FLIGHT_ERROR_CODE, data: Object.freeze({ limit: maxCallsInFlight, resource: 'calls' }) },
    ));

  /**
   * The calls of the gateway's upstream tools are answered here, not by the SDK's Server (its
   * dispatch, an AbortController per request, and three zod checks of every message cost about
   * what the upstream's own answer does): the same checks and the same answer, sent on the
   * transport (docs/gateway.md, "How a call is relayed"). By the client's request id.
   */
  const relayedCalls = new Map<RequestId, RelayedCall>();
  const relayCall = async (request: JSONRPCRequest, transport: Transport, passOn: () => void): Promise<void> => {
    const { id } = request;
    const params = request.params as { name: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: string | number } };
    const { name } = params;
    const relayed = new RelayedCall();
    relayedCalls.set(id, relayed);
    callsInFlight += 1;
    const facts: CallFacts = { name };
    const at = onCall === undefined ? '' : new Date().toISOString();
    const started = performance.now();
    let reply: JSONRPCMessage | undefined;
    try {
      const set = typeof live.latest === 'function' ? await live.latest(name) : live.current();
      const tool = toolFor(set, name, facts);
      if (!isRelayedTool(tool)) {
        // Another tool of that name since the message came (the set changed): the SDK's Server answers it, and records it.
        facts.name = undefined;
        relayedCalls.delete(id);
        passOn();
        return;
      }
      facts.tool = tool;
      // Cancelled while the registry was read: never called (invoke says ABORTED for an aborted signal, and no answer goes).
      if (relayed.cancelled) {
        facts.outcome = 'ABORTED';
        return;
      }
      // No policy: the view the tool came from is the policy's. No signal: the session cancels a relayed call itself.
      const options = callOptions(
        params._meta?.progressToken,
        (notification) => {
          if (!relayed.cancelled) server.notification(notification, { relatedRequestId: id }).catch(() => undefined);
        },
        () => ({ relatedRequestId: id, signal: relayed.signal }),
      );
      options.context = relayed;
      const result = await viewOf(set, policy, policyKey, onWarning).allowed.invoke(name, params.arguments ?? {}, options);
      // Cancelled by the client or its session's end: no answer, as the SDK's Server gives none.
      if (relayed.cancelled) facts.outcome = 'ABORTED';
      else {
        reply = { result: answerOf(name, result, facts), jsonrpc: '2.0', id } as JSONRPCMessage;
        // Timed out: the upstream's part of the call ends too (notifications/cancelled).
        if (!result.success && result.code === 'TIMEOUT') relayed.cancel(result.error);
      }
    } catch (error) {
      failedOutcome(facts, error);
      const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
      // As the SDK's Server answers a handler's error.
      if (!relayed.cancelled) reply = { jsonrpc: '2.0', id, error: { code: Number.isSafeInteger(code) ? code : ErrorCode.InternalError, message: message ?? 'Internal error', ...(data !== undefined && { data }) } } as JSONRPCMessage;
    } finally {
      callsInFlight -= 1;
      if (relayedCalls.get(id) === relayed) relayedCalls.delete(id);
      record(facts, at, started);
    }
    if (reply !== undefined) transport.send(reply).catch(() => undefined);
  };

  /**
   * Whether the session takes `message` itself: a plain tools/call (what isPlainCall accepts,
   * after initialize) of a relayed tool it lists now, or the client's cancellation of such a
   * call. Anything else goes to the SDK's Server.
   */
  server.intercept = (message, transport, passOn): boolean => {
    const value = message as Record<string, unknown>;
    if (value.method === 'notifications/cancelled') {
      const requestId = (value.params as { requestId?: unknown } | undefined)?.requestId;
      const relayed = relayedCalls.size === 0 || !isId(requestId) ? undefined : relayedCalls.get(requestId);
      if (relayed === undefined) return false;
      const reason = (value.params as { reason?: unknown }).reason;
      relayed.cancel(typeof reason === 'string' ? reason : 'cancelled by the client');
      return true;
    }
    if (value.method !== 'tools/call') {
      // initialize and logging/setLevel with bad params: -32602 saying what is wrong, not the SDK's -32603 with zod's issues.
      const invalid = isId(value.id) ? invalidParamsOf(value) : undefined;
      if (invalid === undefined) return false;
      transport.send(errorReply(value.id as RequestId, ErrorCode.InvalidParams, invalid) as JSONRPCMessage).catch(() => undefined);
      return true;
    }
    if (!isPlainRequest(value)) return false;
    const params = value.params as Record<string, unknown>;
    if (typeof params.name !== 'string' || !isPlainCall(params) || server.getClientVersion() === undefined || relayedCalls.has(value.id as RequestId)) return false;
    const tool = current().byName.get(params.name);
    // At the bound: the SDK's Server takes it, and its handler refuses it (below).
    if (tool === undefined || !isRelayedTool(tool) || callsInFlight >= maxCallsInFlight) return false;
    void relayCall(message as JSONRPCRequest, transport, passOn);
    return true;
  };

  // tools/list and tools/call are answered here rather than through setRequestHandler: the
  // SDK parses a request's params before a handler sees them and answers a bad one with
  // -32603 and zod's raw issues; here it is -32602 with a readable message.
  server.fallbackRequestHandler = async (request, extra) => {
    if (request.method !== 'tools/list' && request.method !== 'tools/call') throw protocolError(ErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    // The SDK records the client at `initialize`; before it, only ping is answered.
    if (server.getClientVersion() === undefined) throw protocolError(ErrorCode.InvalidRequest, `${request.method} before initialize: the session is not initialized`);
    if (request.method === 'tools/list') return listTools(request);
    if (callsInFlight >= maxCallsInFlight) throw refusal();
    callsInFlight += 1;
    try {
      return await callTool(request, extra);
    } finally {
      callsInFlight -= 1;
    }
  };

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
    // The calls it answers itself end as the SDK's Server ends its handlers' (aborted, no answer).
    for (const relayed of [...relayedCalls.values()]) relayed.cancel('the session ended');
    previousOnClose?.();
  };
  return server;
}
