// Connecting to an upstream MCP server with the official SDK's client: Streamable HTTP
// (falling back to the older HTTP+SSE transport) or a child process over stdio. `${VAR}`
// references in headers and environment values are expanded here, from the connecting
// process's environment, and nowhere else.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ClientCapabilities, JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import type { Upstream } from '../../index.js';
import { StdioUpstreamTransport } from './stdio-transport.js';

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
  /**
   * Gives up connecting after this many ms. Default 10,000. Over HTTP, also how long any request
   * but a call's (a listing, a ping, a notification, an answer, a GET) waits for the upstream's
   * answer to begin (`boundedWaits`).
   */
  readonly timeoutMs?: number;
  /** Over HTTP, how long a POST of a tools/call (or of a task's request) waits for the upstream's answer to begin. Default `timeoutMs`. */
  readonly callTimeoutMs?: number;
  /** Where a stdio upstream's stderr goes. Default `'ignore'`. */
  readonly stderr?: 'ignore' | 'inherit' | 'pipe';
  /**
   * Called with each client before it connects: the place to set request and notification
   * handlers, so that nothing the upstream sends right after `initialize` goes unheard.
   */
  readonly setup?: (client: Client) => void;
  /**
   * An answer the SDK's JSON-RPC schema refuses (a response, with an `id` and no `method`, whose
   * `result` is null or 5, whose `error` is 5 or has no `message`, ...), over any transport: the
   * SDK's client transports would drop it (to their `onerror`), and the request waiting for it
   * would wait for its timeout. It reaches the client as a JSON-RPC error -32603 of its id
   * ("the upstream's answer is not a JSON-RPC response: …"), so that request fails at once;
   * this hears it first, with the id and what was wrong.
   */
  readonly onInvalidAnswer?: (id: string | number, invalid: InvalidAnswer) => void;
  /**
   * A request the gateway answers itself with a JSON-RPC error -32603 of its id, since the
   * upstream's answer cannot come (its HTTP stream was cut at the 10 MiB bound, or ended
   * without it): this hears the id and that error's message first, so that a relayed call can
   * say the gateway made the error, not the upstream.
   */
  readonly onUnanswered?: (id: string | number, reason: string) => void;
  /**
   * Asked of each notification as read (JSON with a string `method` and no `id`, unchecked),
   * over stdio and HTTP alike, before the SDK's transport parses it with its schema: true drops
   * it there (a flood past the gateway's per-call bound, or of a notification no handler takes,
   * costs one JSON.parse of each, not the SDK's parse and schema too).
   */
  readonly dropNotification?: (message: { readonly method: string; readonly params?: unknown }) => boolean;
  /**
   * Over stdio, the child left more than `MAX_UNWRITTEN_BYTES` of the gateway's messages unread
   * (it floods requests the gateway answers and never reads its input); over HTTP, it left
   * `MAX_ANSWERS_IN_FLIGHT` of the gateway's answers to its requests unaccepted at once (each
   * answer is a POST); over any transport, it sent more than `MAX_UPSTREAM_REQUESTS` requests
   * within `UPSTREAM_REQUEST_WINDOW_MS`: the connection is closed as failed, and this hears why
   * first (its calls in flight end with that reason).
   */
  readonly onUnread?: (why: string) => void;
  /** That bound. Default `MAX_UNWRITTEN_BYTES`. */
  readonly maxUnwrittenBytes?: number;
  /**
   * Internal, for tests: the bound on the rate of the upstream's requests (`MAX_UPSTREAM_REQUESTS`
   * within `UPSTREAM_REQUEST_WINDOW_MS`, read from `performance.now()`). Past it the connection is
   * closed as failed, `onUnread` hearing why first, as past the bounds above.
   */
  readonly requestRate?: RequestRate;
  /**
   * Over Streamable HTTP, asked (in the caller's async context) when a call's POST is made: a
   * signal that aborts when that call ended without its answer (cancelled, timed out, its
   * session ended). The POST is then aborted, its socket closed, and its event stream ends
   * without a resume, rather than held until the upstream answers or `callTimeoutMs`.
   */
  readonly callEnded?: () => AbortSignal | undefined;
}

/**
 * The bytes the gateway may have written to a stdio upstream that it has not read yet. Past
 * them, the connection is closed as failed: a child that floods requests (pings) and never
 * reads its input grew the gateway's write buffer about 2x what it sent, without a bound. Above
 * the one-message bound (10 MiB), so a slow reader of one large call is not cut.
 */
export const MAX_UNWRITTEN_BYTES = 16 * 1024 * 1024;

/**
 * The gateway's answers to an HTTP upstream's requests (pings, sampling, elicitation) that may
 * wait for the upstream at once, each a POST: past them the connection is closed as failed. 20,000
 * pings sent at once made 20,000 POSTs at once (590 MB, 28 CPU-s, thousands of Node warnings).
 */
const MAX_ANSWERS_IN_FLIGHT = 256;

/**
 * The requests (pings, sampling, elicitation, any other) an upstream may send the gateway within
 * `UPSTREAM_REQUEST_WINDOW_MS`, over any transport: one more closes the connection as failed. The
 * bounds above count what waits at once; an upstream that sends requests slowly enough for each
 * answer to be taken (a ping every millisecond, for ever) passed them and cost the gateway a
 * parse, a handler and an answer (over HTTP a POST) each, without end. 1,000 a minute is far
 * above what pings (seconds apart) and sampling or elicitation (each waiting for a model or a
 * person, 10 at once a call) need.
 */
export const MAX_UPSTREAM_REQUESTS = 1_000;
/** The window of `MAX_UPSTREAM_REQUESTS`: a sliding minute. */
export const UPSTREAM_REQUEST_WINDOW_MS = 60_000;

/** A bound on the rate of an upstream's requests: at most `requests` within any `windowMs` by `now` (ms). */
export interface RequestRate {
  readonly requests: number;
  readonly windowMs: number;
  readonly now?: () => number;
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
  const [{ Client }, { SSEClientTransport }, { getDefaultEnvironment }, { StreamableHTTPClientTransport }] = await Promise.all([
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
    const client = newClient();
    const child = new StdioUpstreamTransport({
      command: command as string,
      args,
      env: { ...getDefaultEnvironment(), ...expandAll(transport.env, env, `upstream ${upstream.name} env`) },
      ...(transport.cwd === null ? {} : { cwd: transport.cwd }),
      stderr: options.stderr ?? 'ignore',
      reader: new ObservedReadBuffer(options.onInvalidAnswer, options.onUnanswered, options.dropNotification),
      maxUnwrittenBytes: options.maxUnwrittenBytes ?? MAX_UNWRITTEN_BYTES,
      onUnread: (why) => {
        options.onUnread?.(why);
        void client.close().catch(() => undefined);
      },
    });
    try {
      await client.connect(boundedRequestRate(child, client, options.onUnread, options.requestRate), { timeout });
    } catch (error) {
      // The SDK's client closes the transport itself, unawaited: the child is ended (a command
      // that gave up after --timeout waited for that) before the failure is told. One that was
      // never spawned has nothing to end.
      if (child.pid !== null) await child.close().catch(() => undefined);
      throw error;
    }
    return { client, transport: 'stdio', close: () => client.close() };
  }
  const headers = expandAll(transport.headers, env, `upstream ${upstream.name} header`);
  checkHeaderValues(headers, upstream.name);
  const url = new URL(transport.url);
  const client = newClient();
  const waits = boundedWaits(fetch, timeout, options.callTimeoutMs ?? timeout, options.callEnded);
  try {
    const screened = screeningFetch(boundedErrorBodies(waits), options.onInvalidAnswer, options.onUnanswered, RECONNECTION_OPTIONS.maxRetries, options.dropNotification, options.callEnded);
    const streamable = new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch: screened, reconnectionOptions: RECONNECTION_OPTIONS });
    await client.connect(boundedRequestRate(boundedAnswers(streamable, client, options.onUnread), client, options.onUnread, options.requestRate), { timeout });
    return { client, transport: 'streamable-http', close: () => client.close() };
  } catch (error) {
    await client.close().catch(() => {});
    if (!isLegacyServerAnswer(error)) throw error;
  }
  const legacy = newClient();
  // Its answers come on the one event stream (the POSTs are answered 202): screened there, by id.
  const events = screeningFetch((input, init) => waits(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), ...headers } }), options.onInvalidAnswer, options.onUnanswered, undefined, options.dropNotification);
  const sse = new SSEClientTransport(url, { requestInit: { headers }, eventSourceInit: { fetch: events }, fetch: boundedErrorBodies(waits) });
  await legacy.connect(boundedRequestRate(boundedAnswers(sse, legacy, options.onUnread), legacy, options.onUnread, options.requestRate), { timeout });
  return { client: legacy, transport: 'sse', close: () => legacy.close() };
}

/**
 * The Streamable HTTP transport's resume options: the SDK's own defaults (its
 * DEFAULT_STREAMABLE_HTTP_RECONNECTION_OPTIONS, not exported), given so that the screen knows
 * after how many failed GETs the transport gives a resume up.
 */
const RECONNECTION_OPTIONS = { initialReconnectionDelay: 1_000, maxReconnectionDelay: 30_000, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 } as const;

/** What was wrong with an upstream's answer that the SDK's JSON-RPC schema refused. */
export interface InvalidAnswer {
  /**
   * The member at fault: `result` (null, 5, or absent along with `error`), `error` (5, null,
   * a `code` that is no integer, no `message`), or undefined (anything else, such as both).
   */
  readonly member: 'result' | 'error' | undefined;
  /** Each refused place of that member with the schema's message (`error.code Invalid input: expected number, received string`), `; ` between two. */
  readonly issue: string;
}

/** A refused response whose fault is neither its result alone nor its error alone (both present, a `jsonrpc` of another version). */
const NEITHER: InvalidAnswer = { member: undefined, issue: 'neither a result object nor a valid error' };

/**
 * What is wrong with a response the SDK's JSON-RPC schema refused (`error`, the schema's), by
 * the union's branch that only that member spoils; undefined for an error that is not that
 * schema's refusal of a whole message (CallToolResultSchema's, say).
 */
export function invalidAnswerOf(error: unknown): InvalidAnswer | undefined {
  type Issue = { readonly path?: readonly PropertyKey[]; readonly message?: string };
  const union = (error as { issues?: readonly { code?: string; path?: readonly PropertyKey[]; errors?: readonly (readonly Issue[])[] }[] } | null)?.issues?.[0];
  if (union?.code !== 'invalid_union' || union.path?.length !== 0 || !Array.isArray(union.errors)) return undefined;
  const branches: readonly (readonly Issue[])[] = union.errors;
  // `result` first: an answer with neither member spoils both branches alone, and says so of its result.
  for (const member of ['result', 'error'] as const) {
    const branch = branches.find((issues) => issues.length > 0 && issues.every((issue) => issue.path?.[0] === member));
    if (branch === undefined) continue;
    return { member, issue: branch.map((issue) => `${(issue.path ?? []).map(String).join('.')} ${issue.message ?? 'is invalid'}`).join('; ') };
  }
  return NEITHER;
}

type HearInvalidAnswer = ConnectUpstreamOptions['onInvalidAnswer'];
type DropNotification = ConnectUpstreamOptions['dropNotification'];
type HearUnanswered = ConnectUpstreamOptions['onUnanswered'];

/**
 * A JSON value the SDK's schema refused (its `error`), as the gateway passes it on: a response
 * (an `id`, no `method`) becomes a JSON-RPC error -32603 of its id saying what was wrong, heard
 * by `hear` first; anything else (a broken request or notification) is undefined, for the
 * transport to drop as it does.
 */
function refusedAnswer(value: unknown, error: unknown, hear: HearInvalidAnswer): JSONRPCMessage | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'method' in value) return undefined;
  const { id } = value as { id?: unknown };
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  const invalid = invalidAnswerOf(error) ?? NEITHER;
  hear?.(id as string | number, invalid);
  return { jsonrpc: '2.0', id: id as string | number, error: { code: ErrorCode.InternalError, message: `the upstream's answer is not a JSON-RPC response: ${invalid.issue}` } };
}

/** How much of an over-long line's start and end is kept to find its `id` in. */
const SNIFFED_BYTES = 256;
/** An `id`'s value where a member's value begins: a string (at most 200 characters) or an integer. */
const SNIFFED_ID = /\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16}(?![\d.eE]))/y;

/** Whether the quote at `at` ends or opens a string: not escaped (an even run of backslashes before it). */
function unescapedQuote(text: string, at: number): boolean {
  let backslashes = 0;
  while (text[at - 1 - backslashes] === '\\') backslashes++;
  return backslashes % 2 === 0;
}

/** The index of the quote that ends the string whose opening quote is at `open`, or -1 (cut off). */
function stringEnd(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1 && !unescapedQuote(text, at)) at = text.indexOf('"', at + 1);
  return at;
}

/** The index of the quote that opens the string whose closing quote is at `close`, or -1 (cut off). */
function stringStart(text: string, close: number): number {
  let at = close === 0 ? -1 : text.lastIndexOf('"', close - 1);
  while (at > 0 && !unescapedQuote(text, at)) at = text.lastIndexOf('"', at - 1);
  return at;
}

/**
 * The members of a JSON object's text at its own level (never one of an object nested in it,
 * nor text inside a string): each key, raw, and where its value begins. Read from the start, or
 * (`fromEnd`) back from the end, which must then be the object's closing brace; read as far as
 * the text can be (a string cut off ends it).
 */
function ownMembers(text: string, fromEnd: boolean): { readonly key: string; readonly value: number }[] {
  const members: { key: string; value: number }[] = [];
  const member = (open: number, close: number): void => {
    const colon = /\s*:/y;
    colon.lastIndex = close + 1;
    if (colon.exec(text) !== null) members.push({ key: text.slice(open + 1, close), value: colon.lastIndex });
  };
  // Read back from the end, a closing bracket goes one level in.
  const [inward, outward] = fromEnd ? ['}]', '{['] : ['{[', '}]'];
  let at = fromEnd ? text.trimEnd().length - 1 : 0;
  if (fromEnd && text[at] !== '}') return members;
  for (let depth = 0; at >= 0 && at < text.length; at += fromEnd ? -1 : 1) {
    const char = text[at] as string;
    if (char === '"') {
      const other = fromEnd ? stringStart(text, at) : stringEnd(text, at);
      if (other === -1) break;
      if (depth === 1) member(Math.min(at, other), Math.max(at, other));
      at = other;
    } else if (inward.includes(char)) depth++;
    else if (outward.includes(char) && --depth === 0) break;
  }
  return members;
}

/**
 * The `id` of a message that cannot be parsed, read at the message's own level only (an `id`
 * inside its result, a row of a table, is another request's: failing it failed the wrong call):
 * the first in `head`, else the last in `tail` (an over-long line's first and last bytes: an
 * answer names it before or after its result); `tail` undefined: `head` is the whole message.
 * Undefined when neither names one, or the message has a `method` (a request or notification:
 * nothing waits for it).
 */
function sniffedId(head: string, tail?: string): string | number | undefined {
  const read = [head, tail ?? ''].map((text, index) => ({ text, members: ownMembers(text, index === 1) }));
  if (read.some(({ members }) => members.some((member) => member.key === 'method'))) return undefined;
  for (const { text, members } of read) {
    for (const member of members) {
      if (member.key !== 'id') continue;
      SNIFFED_ID.lastIndex = member.value;
      const match = SNIFFED_ID.exec(text);
      if (match?.[1] === undefined) continue;
      let id: unknown;
      try {
        id = JSON.parse(match[1]);
      } catch {
        continue; // an escape JSON does not have (`"\x"`): no id
      }
      if (typeof id === 'string' || Number.isSafeInteger(id)) return id as string | number;
    }
  }
  return undefined;
}

/**
 * How much of a message that is no JSON is read from its start for its `id`: a shorter one is
 * read whole (exactly), a longer one to here and its last `SNIFFED_BYTES` back from its end
 * (reading 10 MiB of brackets and quotes whole took 50-110 ms).
 */
const SNIFFED_WHOLE_CHARS = 64 * 1024;

/** `sniffedId` of a message that is no JSON (a line, an event's data, a body). */
function unparsedId(text: string): string | number | undefined {
  return text.length <= SNIFFED_WHOLE_CHARS ? sniffedId(text) : sniffedId(text.slice(0, SNIFFED_WHOLE_CHARS), text.slice(-SNIFFED_BYTES));
}

/**
 * The error answering request `id` whose answer is no JSON (`error`, JSON.parse's), over stdio
 * and HTTP alike: `unanswered` hears it first (the gateway made it, not the upstream).
 */
function notJsonAnswer(id: string | number, error: unknown, unanswered: HearUnanswered): JSONRPCMessage {
  const reason = `the upstream's answer is not JSON (${(error as Error).message})`;
  unanswered?.(id, reason);
  return { jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: reason } };
}

/**
 * The child's output read as the SDK's `ReadBuffer` reads it (one message a line, the same size
 * bound, the same schema), except that an answer the schema refuses becomes `refusedAnswer`'s
 * error, and a line over the bound is skipped to its end rather than thrown: a stdio transport
 * (the SDK's, `StdioUpstreamTransport` as it) closes the connection on that throw, ending every call in flight as `Connection
 * closed` (one tool's 11 MB answer restarted the upstream). The answer so skipped gets a
 * -32603 error of its id at once (`the upstream's answer is over 10485760 bytes`, heard by
 * `unanswered`), when its first or last bytes name it; else its request waits for its timeout.
 */
class ObservedReadBuffer {
  #buffer: Buffer | undefined;
  readonly #hear: HearInvalidAnswer;
  readonly #unanswered: HearUnanswered;
  readonly #drop: DropNotification;
  /** A tools/list_changed was read in this read of the transport's (`readMessage` until null). */
  #listChangedRead = false;
  /** The start of a line whose end has not come yet, chunk by chunk. */
  #pieces: Buffer[] = [];
  /** The start of the over-long line being skipped (undefined: none is). */
  #skipping: Buffer | undefined;
  /** Its last bytes so far. */
  #tail: Buffer = Buffer.alloc(0);
  /** The errors answering skipped lines, given before any later line. */
  readonly #made: JSONRPCMessage[] = [];

  constructor(hear: HearInvalidAnswer, unanswered: HearUnanswered, drop: DropNotification) {
    this.#hear = hear;
    this.#unanswered = unanswered;
    this.#drop = drop;
  }

  append(chunk: Buffer): void {
    if (this.#skipping !== undefined) {
      const end = chunk.indexOf('\n');
      this.#tail = lastBytes(Buffer.concat([this.#tail, end === -1 ? chunk : chunk.subarray(0, end)]));
      if (end === -1) return;
      this.#skipped(this.#skipping, this.#tail);
      chunk = chunk.subarray(end + 1);
    }
    // What is buffered is one line's start (the transport reads every whole line after each
    // append): kept as pieces until its end comes, then joined once (a concat for each
    // chunk copied a 10 MiB line about 160 times).
    if (this.#buffer !== undefined && this.#buffer.length > 0) this.#pieces.push(this.#buffer);
    this.#buffer = undefined;
    const end = chunk.indexOf('\n');
    if (this.#piecesLength() + (end === -1 ? chunk.length : end) > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      const head = Buffer.concat([...this.#pieces, chunk.subarray(0, SNIFFED_BYTES)]).subarray(0, SNIFFED_BYTES);
      this.#pieces = [];
      if (end === -1) {
        this.#skipping = Buffer.from(head);
        this.#tail = lastBytes(chunk);
        return;
      }
      this.#skipped(Buffer.from(head), lastBytes(chunk.subarray(0, end)));
      chunk = chunk.subarray(end + 1);
      if (chunk.indexOf('\n') === -1) {
        if (chunk.length > 0) this.#pieces.push(chunk);
        return;
      }
    } else if (end === -1) {
      this.#pieces.push(chunk);
      return;
    }
    this.#buffer = this.#pieces.length === 0 ? chunk : Buffer.concat([...this.#pieces, chunk]);
    this.#pieces = [];
  }

  #piecesLength(): number {
    let length = 0;
    for (const piece of this.#pieces) length += piece.length;
    return length;
  }

  /** A line over the bound was skipped: its answer's error, when its id is known. */
  #skipped(head: Buffer, tail: Buffer): void {
    this.#skipping = undefined;
    this.#tail = Buffer.alloc(0);
    const id = sniffedId(head.toString('utf8'), tail.toString('utf8'));
    if (id === undefined) return;
    this.#unanswered?.(id, OVER_BOUND);
    this.#made.push({ jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: OVER_BOUND } });
  }

  readMessage(): JSONRPCMessage | null {
    const made = this.#made.shift();
    if (made !== undefined) return made;
    for (;;) {
      const index = this.#buffer?.indexOf('\n') ?? -1;
      if (this.#buffer === undefined || index === -1) {
        // The transport reads every whole line at once; the next read is a later turn of the loop.
        this.#listChangedRead = false;
        return null;
      }
      const line = this.#buffer.toString('utf8', 0, index).replace(/\r$/, '');
      this.#buffer = this.#buffer.subarray(index + 1);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (error) {
        // Not JSON: an answer whose id its first or last bytes name fails its request at once (it
        // waited for its timeout); any other line is thrown, as the SDK's reader throws (the
        // transport reports it and reads on).
        const id = unparsedId(line);
        if (id === undefined) throw error;
        return notJsonAnswer(id, error, this.#unanswered);
      }
      // A list_changed after another of the same read says nothing more: the handlers run after
      // the read, so the listing the first one asks for is sent after both. Dropped before the
      // schema (about 70 µs of CPU each: a flood of 10,000 took 0.7 s).
      if (isListChanged(value)) {
        if (this.#listChangedRead) continue;
        this.#listChangedRead = true;
      }
      if (this.#drop !== undefined && isNotification(value) && this.#drop(value)) continue;
      const parsed = JSONRPCMessageSchema.safeParse(value);
      if (parsed.success) return parsed.data;
      const answer = refusedAnswer(value, parsed.error, this.#hear);
      if (answer === undefined) throw parsed.error;
      return answer;
    }
  }

  clear(): void {
    this.#buffer = undefined;
    this.#pieces = [];
    this.#skipping = undefined;
    this.#tail = Buffer.alloc(0);
    this.#made.length = 0;
  }
}

/** A `notifications/tools/list_changed` (no id: a notification). */
function isListChanged(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { method?: unknown }).method === 'notifications/tools/list_changed' && !('id' in value);
}

/** A notification: a string `method`, no `id`. */
function isNotification(value: unknown): value is { readonly method: string; readonly params?: unknown } {
  return typeof value === 'object' && value !== null && !('id' in value) && typeof (value as { method?: unknown }).method === 'string';
}

/** The last `SNIFFED_BYTES` of `bytes`, copied (a slice would keep a whole chunk alive). */
function lastBytes(bytes: Buffer): Buffer {
  return Buffer.from(bytes.subarray(Math.max(0, bytes.length - SNIFFED_BYTES)));
}

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * Whether a request is a call's POST: its body (a message, or a batch) holds a `tools/call` or a
 * task's request (the polling of a call made as a task), read from the parsed body. (The first
 * 256 characters were matched as text: a body whose `"method"` came later, after a long id or
 * `_meta`, members in another order, got the connect timeout, and an answer whose content held
 * `{"method":"tools/call"}` early got the call's.) Only a body that holds the method's text, or
 * an escape that could spell it, is parsed: an answer to a ping is not.
 */
function isCallPost(init: RequestInit | undefined): boolean {
  if (init?.method !== 'POST' || typeof init.body !== 'string') return false;
  const body = init.body;
  if (!body.includes('tools/call') && !body.includes('tasks/') && !body.includes('\\')) return false;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return false;
  }
  return (Array.isArray(value) ? value : [value]).some((message: unknown) => {
    const method = typeof message === 'object' && message !== null ? (message as { method?: unknown }).method : undefined;
    return method === 'tools/call' || (typeof method === 'string' && method.startsWith('tasks/'));
  });
}

/**
 * `base`, each request of which waits for the upstream's answer to begin (its status and
 * headers) at most `callMs` for a call's POST (`isCallPost`) and `ms` for any other: then it is
 * aborted, closing its socket. Without it a request the upstream never answers (server-everything's
 * SSE mode never answers a POST to an unknown session) held its socket, after its call or
 * listing had timed out, until undici's 300-s headers timeout. The body that follows is not
 * bounded by it (a call's stream lasts as the call does), and still ends when the transport
 * closes (its own signal is followed until the body ends).
 */
function boundedWaits(base: Fetch, ms: number, callMs: number, callEnded?: () => AbortSignal | undefined): Fetch {
  return async (url, init) => {
    const call = isCallPost(init);
    const bound = call ? callMs : ms;
    const waited = new AbortController();
    const timer = setTimeout(() => waited.abort(new Error(`the upstream did not begin its answer within ${bound} ms`)), bound);
    // Followed by hand, not AbortSignal.any: that kept about 40 bytes on the transport's signal for each request (Node 20).
    const transport = init?.signal ?? undefined;
    const follow = (): void => waited.abort(transport?.reason);
    if (transport?.aborted === true) follow();
    else transport?.addEventListener('abort', follow, { once: true });
    // A call that ended without its answer (its session ended, it was cancelled or timed out): its POST ends too, its socket closed.
    const ended = call ? callEnded?.() : undefined;
    const stop = (): void => waited.abort(ended?.reason);
    if (ended?.aborted === true) stop();
    else ended?.addEventListener('abort', stop, { once: true });
    const unfollow = (): void => {
      transport?.removeEventListener('abort', follow);
      ended?.removeEventListener('abort', stop);
    };
    let response: Response;
    try {
      response = await base(url, { ...init, signal: waited.signal });
    } catch (error) {
      unfollow();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    if (response.body === null || (transport === undefined && ended === undefined)) {
      unfollow();
      return response;
    }
    return rebuilt(response, untilEnd(response.body, unfollow));
  };
}

/** `body`, calling `end` once when it is read to its end, fails or is cancelled. */
function untilEnd(body: ReadableStream<Uint8Array>, end: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      try {
        const { done, value } = await reader.read();
        if (!done) {
          controller.enqueue(value);
          return;
        }
        end();
        controller.close();
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel: async (reason) => {
      end();
      await reader.cancel(reason);
    },
  });
}

/** The most of an HTTP upstream's error body (a non-2xx answer to a POST) that is read. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * `base`, whose error bodies (a non-2xx answer to a POST) are read up to `MAX_ERROR_BODY_BYTES`:
 * the SDK's transports read one whole, for their error's message (a 200 MB body: 924 MB and 8
 * CPU-s, and the message 4 MB of it). A longer one is cancelled and its body says so instead.
 */
function boundedErrorBodies(base: Fetch): Fetch {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.ok || response.body === null || init?.method !== 'POST') return response;
    try {
      return rebuilt(response, await boundedText(response, MAX_ERROR_BODY_BYTES));
    } catch (error) {
      return rebuilt(response, `(${(error as Error).message}: not read)`);
    }
  };
}

/**
 * `transport`, refusing an answer of the gateway's (a message with no `method`: a result or an
 * error, each sent as a POST) once `MAX_ANSWERS_IN_FLIGHT` are waiting for the upstream: then
 * `client` is closed as failed, `hear` hearing why first. Told apart on the message, before it
 * is serialized: a body with `"method"` anywhere (an answer whose id, or elicited content, held
 * one) was not counted.
 */
function boundedAnswers<T extends Transport>(transport: T, client: Client, hear: ConnectUpstreamOptions['onUnread']): T {
  const send = transport.send.bind(transport);
  let waiting = 0;
  let why: string | undefined;
  transport.send = async (message, options) => {
    if ('method' in message) return send(message, options);
    if (why === undefined && waiting >= MAX_ANSWERS_IN_FLIGHT) {
      why = `it left ${MAX_ANSWERS_IN_FLIGHT} of the gateway's answers to its requests (pings, sampling, elicitation) waiting at once, the most the gateway sends it: closed as failed`;
      hear?.(why);
      void client.close().catch(() => undefined);
    }
    if (why !== undefined) throw new Error(why);
    waiting += 1;
    try {
      return await send(message, options);
    } finally {
      waiting -= 1;
    }
  };
  return transport;
}

/**
 * `transport`, closing `client` as failed (`hear` hearing why first) at the upstream's request
 * past `rate` (default `MAX_UPSTREAM_REQUESTS` within `UPSTREAM_REQUEST_WINDOW_MS`): that request
 * and any after it are dropped before the SDK's client sees them. The times of the last
 * `requests` requests are kept in a ring: one more within the window of the oldest is one too many.
 */
function boundedRequestRate<T extends Transport>(transport: T, client: Client, hear: ConnectUpstreamOptions['onUnread'], rate: RequestRate = { requests: MAX_UPSTREAM_REQUESTS, windowMs: UPSTREAM_REQUEST_WINDOW_MS }): T {
  const start = transport.start.bind(transport);
  const now = rate.now ?? (() => performance.now());
  // The SDK's client sets its handler before it starts the transport: wrapped here, before any message.
  transport.start = async () => {
    const protocol = transport.onmessage;
    const times = new Float64Array(rate.requests);
    let next = 0;
    let counted = 0;
    let why: string | undefined;
    transport.onmessage = ((message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      if ('method' in message && 'id' in message) {
        if (why !== undefined) return;
        const at = now();
        if (counted >= rate.requests && at - (times[next] as number) < rate.windowMs) {
          why = `it sent more than ${rate.requests} requests (pings, sampling, elicitation) within ${rate.windowMs / 1000} s, the most the gateway answers: closed as failed`;
          hear?.(why);
          void client.close().catch(() => undefined);
          return;
        }
        times[next] = at;
        next = (next + 1) % rate.requests;
        counted += 1;
      }
      protocol?.(message, extra);
    }) as Transport['onmessage'];
    return start();
  };
  return transport;
}

/**
 * `fetch` for the SDK's HTTP transports (their public `fetch` and `eventSourceInit.fetch`
 * options), whose event streams (a 2xx `text/event-stream`) are read through `screenedEvents`
 * and whose JSON bodies (a 2xx `application/json` answering a POST) through `screenedMessage`:
 * the transports parse each message with the schema and drop what it refuses outside any
 * request's context (or fail the POST with it), so an answer is matched here by its `id`, as on
 * stdio. A stream answering a POST is watched for the requests of its body (`watchedEvents`).
 * (The gateway gives the transports no auth provider, whose requests this fetch would make too.)
 * `unanswered` hears each request the screen answers itself (`ConnectUpstreamOptions.onUnanswered`).
 * A POST's stream left to the SDK's resume is followed to that GET (a Last-Event-ID): when the
 * resume fails for good (405, which the transport takes silently, or `maxRetries` failed GETs),
 * its requests still unanswered are answered at once, rather than left to their timeout.
 */
export function screeningFetch(
  base: Fetch,
  hear: HearInvalidAnswer,
  unanswered?: HearUnanswered,
  maxRetries: number = RECONNECTION_OPTIONS.maxRetries,
  drop?: DropNotification,
  callEnded?: () => AbortSignal | undefined,
): Fetch {
  /** Why a resume from an event id is refused without a request: a stream was cut after it (a resume would replay the event cut), or its resume failed. */
  const refused = new Map<string, string>();
  const refuse = (lastId: string, why: string): void => {
    refused.delete(lastId);
    refused.set(lastId, why);
    // Bounded as every buffer of the gateway: the oldest is forgotten (its resume then costs one more cut).
    if (refused.size > MAX_REMEMBERED_CUTS) refused.delete(refused.keys().next().value as string);
  };
  /** POST streams that ended unanswered and that the SDK's transport resumes: by the event id it resumes from, the requests waiting and its failed GETs. */
  const resumes = new Map<string, { readonly ids: readonly RequestId[]; failures: number }>();
  const screen: Screen = {
    hear,
    unanswered,
    drop,
    cut: (lastId) => refuse(lastId, `the upstream's next event is over ${MAX_UPSTREAM_MESSAGE_BYTES} bytes`),
    leftToResume: (lastId, ids) => {
      resumes.delete(lastId);
      resumes.set(lastId, { ids, failures: 0 });
      // The oldest forgotten: its requests wait for their timeout, as the SDK's transport leaves them.
      if (resumes.size > MAX_REMEMBERED_CUTS) resumes.delete(resumes.keys().next().value as string);
    },
  };
  /** A GET resuming a POST's stream: the resumed stream is watched for the same requests; a resume that fails for good answers them. */
  const resume = async (lastId: string, waiting: { readonly ids: readonly RequestId[]; failures: number }, url: string | URL, init: RequestInit | undefined): Promise<Response> => {
    let response: Response;
    try {
      response = await base(url, init);
    } catch (error) {
      if (init?.signal?.aborted === true || ++waiting.failures < maxRetries) throw error;
      return failedResume(lastId, waiting.ids, error instanceof Error ? error.message : String(error));
    }
    if (response.ok) {
      resumes.delete(lastId);
      // No body: nothing will come, so the watch's end answers them.
      return rebuilt(response, watchedEvents(response.body ?? new ReadableStream({ start: (controller) => controller.close() }), screen, waiting.ids, init?.signal));
    }
    // A redirect the transport follows through this fetch (or reports): not a failed resume.
    if (response.status >= 300 && response.status < 400) return response;
    // A 405 the transport takes as "no stream here", silently, and tries no more.
    if (response.status !== 405 && ++waiting.failures < maxRetries) return response;
    await response.body?.cancel().catch(() => undefined);
    return failedResume(lastId, waiting.ids, `HTTP ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}`);
  };
  /**
   * The transport's last GET of a resume failed: a stream of its own answers each request at
   * once. Its events carry `lastId`, so the transport, which resumes an ended stream that gave no
   * result, asks for that id again and is refused without a request until it gives up (else it
   * would open a GET without Last-Event-ID, a second listening stream).
   */
  const failedResume = (lastId: string, ids: readonly RequestId[], failure: string): Response => {
    resumes.delete(lastId);
    const why = `the upstream's answer stream could not be resumed: ${failure}`;
    refuse(lastId, why);
    return new Response(unansweredEvents(ids, why, unanswered, lastId), { headers: { 'content-type': 'text/event-stream' } });
  };
  return async (url, init) => {
    const resumed = (refused.size > 0 || resumes.size > 0) && (init?.method ?? 'GET') === 'GET' ? new Headers(init?.headers).get('last-event-id') : null;
    if (resumed !== null) {
      const why = refused.get(resumed);
      // Refused without a request: the SDK's transport tries again at most its maxRetries (else it resumed each second, 10 MiB a time).
      if (why !== undefined) throw new Error(`not resumed after event ${resumed}: ${why}`);
      const waiting = resumes.get(resumed);
      if (waiting !== undefined) return resume(resumed, waiting, url, init);
    }
    // Asked before the request: in the call's async context, as the fetch under it asks (`boundedWaits`).
    const ended = isCallPost(init) ? callEnded?.() : undefined;
    const response = await base(url, init);
    const type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (!response.ok || response.body === null) return response;
    if (type === 'text/event-stream') {
      const awaited = init?.method === 'POST' ? requestIds(init.body) : [];
      return rebuilt(response, awaited.length === 0 ? response.body.pipeThrough(screenedEvents(screen)) : watchedEvents(response.body, screen, awaited, init?.signal, ended));
    }
    if (type !== 'application/json' || init?.method !== 'POST') return response;
    const text = await boundedText(response);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      // Not JSON: failed by the SDK's transport at once, as "could not be reached"; an answer that
      // names its id fails its request as an event's or a stdio line's does.
      const named = unparsedId(text);
      return rebuilt(response, named === undefined ? text : JSON.stringify(notJsonAnswer(named, error, unanswered)));
    }
    const messages: unknown[] = Array.isArray(value) ? value : [value];
    const screened = messages.map((message) => screenedMessage(message, hear) ?? message);
    if (screened.every((message, index) => message === messages[index])) return rebuilt(response, text);
    return rebuilt(response, JSON.stringify(Array.isArray(value) ? screened : screened[0]));
  };
}

/**
 * The most of one upstream message the HTTP screen holds (an event of a stream, a JSON body):
 * the stdio reader's bound, so no transport lets an upstream grow the gateway's memory more.
 */
const MAX_UPSTREAM_MESSAGE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;
/** How many refused and resumed streams' last event ids `screeningFetch` remembers (each). */
const MAX_REMEMBERED_CUTS = 64;
/**
 * What the screen of one fetch hears and tells: an answer the schema refuses (`hear`), a
 * request it answers itself (`unanswered`), the last event id before a cut, and a POST's stream
 * that ended unanswered, left to the SDK's transport to resume from its last event id.
 */
interface Screen {
  readonly hear: HearInvalidAnswer;
  readonly unanswered: HearUnanswered;
  /** Asked of each notification event's JSON: true leaves the event out (the SDK's transport never parses it). */
  readonly drop: DropNotification | undefined;
  readonly cut: (lastId: string) => void;
  readonly leftToResume: (lastId: string, ids: readonly RequestId[]) => void;
}

/** Why a request gets an error at once: its answer (a JSON body, an event) passed that bound, or its stream ended without it. */
const OVER_BOUND = `the upstream's answer is over ${MAX_UPSTREAM_MESSAGE_BYTES} bytes`;
const ENDED_UNANSWERED = "the upstream ended the answer's stream without answering";

/** The body's text, read up to `bound` bytes (past it, cancelled and refused). */
async function boundedText(response: Response, bound = MAX_UPSTREAM_MESSAGE_BYTES): Promise<string> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > bound) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`the upstream's answer is over ${bound} bytes`);
    }
    chunks.push(value);
  }
  // Decoded as Response.text() decodes (a leading BOM dropped), so the screen reads what the SDK would.
  return new TextDecoder().decode(Buffer.concat(chunks));
}

type RequestId = string | number;

/** The ids of the requests in a POST's body (one JSON-RPC message or a batch, as the SDK's transport writes it). */
function requestIds(body: RequestInit['body']): RequestId[] {
  if (typeof body !== 'string') return [];
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return [];
  }
  const messages: unknown[] = Array.isArray(value) ? value : [value];
  return messages.flatMap((message) => {
    if (typeof message !== 'object' || message === null || !('method' in message)) return [];
    const { id } = message as { id?: unknown };
    return responseId(id) === undefined ? [] : [id as RequestId];
  });
}

/** `id` when it is one a JSON-RPC response can carry (the SDK's schema's: a string or an integer). */
function responseId(id: unknown): RequestId | undefined {
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as RequestId) : undefined;
}

/**
 * What the screen learns of a stream answering a POST: the requests of its body not yet
 * answered on it, whether an event the SDK's parser dispatches had an `id` (then the SDK's
 * transport resumes the stream with Last-Event-ID when it ends unanswered), and the error that
 * dropped it.
 */
interface AnswerWatch {
  readonly unsettled: Set<RequestId>;
  resumable: boolean;
  dropped?: { readonly error: unknown };
  /** The call it answers ended without the answer, and the gateway ended its stream (`ConnectUpstreamOptions.callEnded`). */
  ended?: boolean;
}

/** An event answering each of `ids` with a JSON-RPC error -32603 saying `reason` (of event id `eventId`, if given), each heard by `hear` first. */
function unansweredEvents(ids: Iterable<RequestId>, reason: string, hear: HearUnanswered, eventId?: string): string {
  let events = '';
  for (const id of ids) {
    hear?.(id, reason);
    events += `${eventId === undefined ? '' : `id: ${eventId}\n`}data: ${JSON.stringify({ jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: reason } })}\n\n`;
  }
  return events;
}

/**
 * `body` (an event stream answering a POST of requests `awaited`) through `screenedEvents`,
 * which answers a request at once when the stream is cut at the bound or ends without its
 * answer. A stream the upstream drops (its connection fails) ends the screen's input as a
 * closed one would, so that it can answer them; with nothing to answer, it fails as it came.
 */
function watchedEvents(
  body: ReadableStream<Uint8Array>,
  screen: Screen,
  awaited: readonly RequestId[],
  signal: AbortSignal | null | undefined,
  ended?: AbortSignal,
): ReadableStream<Uint8Array> {
  const watch: AnswerWatch = { unsettled: new Set(awaited), resumable: false };
  const reader = body.getReader();
  const input = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        // The SDK's transport closing (its abort) is no upstream's doing: nothing is answered for it.
        if (signal?.aborted === true) {
          controller.error(error);
          return;
        }
        // Its call ended first (the gateway aborted the POST): the stream ends, and is not resumed (screenedEvents' flush).
        if (ended?.aborted === true) {
          watch.ended = true;
          controller.close();
          return;
        }
        watch.dropped = { error };
        controller.close();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return input.pipeThrough(screenedEvents(screen, watch));
}

/** `response` with another body. */
function rebuilt(response: Response, body: ReadableStream<Uint8Array> | string): Response {
  const screened = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  // What a Response made here cannot be given: EventSource reads both.
  Object.defineProperties(screened, { url: { value: response.url }, redirected: { value: response.redirected } });
  return screened;
}

/**
 * `refusedAnswer`'s error for a parsed message that is a response the SDK's schema refuses;
 * undefined for any other (the schema is asked of responses only: a broken notification or
 * request goes on, to be dropped).
 */
function screenedMessage(value: unknown, hear: HearInvalidAnswer): JSONRPCMessage | undefined {
  if (typeof value !== 'object' || value === null || (value as { id?: unknown }).id === undefined || 'method' in value) return undefined;
  const parsed = JSONRPCMessageSchema.safeParse(value);
  return parsed.success ? undefined : refusedAnswer(value, parsed.error, hear);
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Passes an event stream on event by event, each as the bytes it came as (UTF-8's multi-byte
 * characters hold no CR or LF, so the lines are found in the bytes), except a message event (no
 * `event` field, or `message`) whose data is JSON, a response and refused by the SDK's schema:
 * its data becomes `refusedAnswer`'s error of its id, its other fields kept; and a notification
 * `drop` takes, left out (`screen` gives '').
 */
function screenedEvents({ hear, unanswered, drop, cut, leftToResume }: Screen, watch?: AnswerWatch): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  /** The bytes of the event read so far, and how many. */
  let pieces: Uint8Array[] = [];
  let held = 0;
  /** The last byte read ended a line (a blank line next ends the event), and it was a CR (an LF next completes a CRLF). */
  let lineStart = true;
  let afterCr = false;
  /** The id the SDK's transport resumes from: the last non-empty one of an event it was handed. */
  let lastId = '';
  const screen = (text: string): string | undefined => {
    let type = '';
    let id = '';
    const data: string[] = [];
    const others: string[] = [];
    for (const line of text.split(/\r\n|\n|\r/)) {
      if (line === '') continue;
      const colon = line.indexOf(':');
      const field = (colon === -1 ? line : line.slice(0, colon)).replace(/^\uFEFF/, '');
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') data.push(value);
      else others.push(line);
      if (field === 'event') type = value;
      // As eventsource-parser reads it: an id with a NUL is ignored, an empty one clears it.
      else if (field === 'id' && !value.includes('\0')) id = value;
    }
    // The SDK's transport counts an event it is handed (one with data) whose id is not empty.
    const handed = (): void => {
      if (id === '' || data.length === 0) return;
      lastId = id;
      if (watch !== undefined) watch.resumable = true;
    };
    if ((type !== '' && type !== 'message') || data.length === 0) {
      handed();
      return undefined;
    }
    let value: unknown;
    const joined = data.join('\n');
    try {
      value = JSON.parse(joined);
    } catch (error) {
      handed();
      // Not JSON: an answer whose id its first or last bytes name fails its request at once, as
      // the stdio reader does (the SDK's transport dropped it to its onerror, and the request
      // waited for its timeout); any other such event goes on, for the transport to drop.
      const named = unparsedId(joined);
      if (named === undefined) return undefined;
      watch?.unsettled.delete(named);
      return `${others.map((line) => `${line}\n`).join('')}data: ${JSON.stringify(notJsonAnswer(named, error, unanswered))}\n\n`;
    }
    // Left out (never handed, its id not counted): the SDK's transport would parse it with its schema, and the client drop it.
    if (drop !== undefined && isNotification(value) && drop(value)) return '';
    handed();
    // A response reaches the SDK's client (as it came, or as the refusal of it): its request is answered.
    if (watch !== undefined && typeof value === 'object' && value !== null && !('method' in value)) {
      const answered = responseId((value as { id?: unknown }).id);
      if (answered !== undefined) watch.unsettled.delete(answered);
    }
    const answer = screenedMessage(value, hear);
    return answer === undefined ? undefined : `${others.map((line) => `${line}\n`).join('')}data: ${JSON.stringify(answer)}\n\n`;
  };
  /** The event of `pieces` and then `tail`, screened: undefined when it goes on as it came. */
  const screenEvent = (tail: Uint8Array): string | undefined => {
    let text = '';
    for (const piece of pieces) text += decoder.decode(piece, { stream: true });
    return screen(text + decoder.decode(tail));
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform: (chunk, controller) => {
      // The chunk's bytes from `from` to `start` are whole events that go on as they came: passed on
      // together (one chunk, as the transport would have read it), not one by one.
      let from = 0;
      let start = 0;
      let nextLf = -2;
      let nextCr = -2;
      for (let at = 0; at < chunk.length; ) {
        const byte = chunk[at];
        if (byte === LF && afterCr) {
          afterCr = false;
          at++;
        } else if (byte === LF || byte === CR) {
          afterCr = byte === CR;
          at++;
          if (lineStart) {
            // A blank line: the event ends with it (and with the LF of its CRLF, when that has come).
            if (afterCr && chunk[at] === LF) {
              afterCr = false;
              at++;
            }
            const screened = screenEvent(chunk.subarray(start, at));
            if (screened === undefined) {
              // Its start came in earlier chunks (then it is the chunk's first event): that goes first.
              for (const piece of pieces) controller.enqueue(piece);
            } else {
              if (start > from) controller.enqueue(chunk.subarray(from, start));
              // An empty one: the event is left out.
              if (screened !== '') controller.enqueue(encoder.encode(screened));
              from = at;
            }
            pieces = [];
            held = 0;
            start = at;
          }
          lineStart = true;
        } else {
          afterCr = false;
          lineStart = false;
          // Where the next LF and CR are, each looked for again only once passed (-1: none in the chunk).
          if (nextLf !== -1 && nextLf < at) nextLf = chunk.indexOf(LF, at);
          if (nextCr !== -1 && nextCr < at) nextCr = chunk.indexOf(CR, at);
          at = nextLf === -1 ? (nextCr === -1 ? chunk.length : nextCr) : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
        }
      }
      if (start > from) controller.enqueue(chunk.subarray(from, start));
      if (start < chunk.length) {
        pieces.push(chunk.subarray(start));
        held += chunk.length - start;
        // An event that does not end: refused at the stdio reader's bound, not held without one.
        if (held > MAX_UPSTREAM_MESSAGE_BYTES) {
          pieces = [];
          if (lastId !== '') cut(lastId);
          if (watch !== undefined && watch.unsettled.size > 0) {
            // The POST's requests not yet answered get an error each (a resumed stream would
            // replay the same event), then the stream ends (and the upstream's is cancelled).
            controller.enqueue(encoder.encode(unansweredEvents(watch.unsettled, OVER_BOUND, unanswered)));
            watch.unsettled.clear();
            controller.terminate();
          } else controller.error(new Error(`an event of the upstream's stream is over ${MAX_UPSTREAM_MESSAGE_BYTES} bytes`));
        }
      }
    },
    flush: (controller) => {
      if (watch?.ended === true && watch.unsettled.size > 0) {
        // Its call ended without the answer: a result of the gateway's own ends it, which nothing
        // reads (the link takes every answer of its ids, and the call is over), so that the SDK's
        // transport, which resumes a stream that gave no result, does not ask the upstream to
        // replay it (a GET held as the POST was). An event it ended inside is left out.
        for (const id of watch.unsettled) controller.enqueue(encoder.encode(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } })}\n\n`));
        watch.unsettled.clear();
        return;
      }
      if (watch !== undefined && watch.unsettled.size > 0 && !watch.resumable) {
        // Ended (or dropped) unanswered, and the SDK's transport cannot resume it: each request
        // gets its error now. An event it ended inside is left out: no reader dispatches it,
        // and the errors after it would be read as its lines.
        controller.enqueue(encoder.encode(unansweredEvents(watch.unsettled, ENDED_UNANSWERED, unanswered)));
        watch.unsettled.clear();
        return;
      }
      // The SDK's transport resumes it from its last event id: the screen follows that GET (`screeningFetch`).
      if (watch !== undefined && watch.unsettled.size > 0) leftToResume(lastId, [...watch.unsettled]);
      // The stream ended inside an event (which no reader dispatches): the rest goes on as it came.
      for (const piece of pieces) controller.enqueue(piece);
      if (watch?.dropped !== undefined) controller.error(watch.dropped.error);
    },
  });
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
