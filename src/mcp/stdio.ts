// MCP over stdio: one session on the process's standard input and output. The transport is our
// own, not the SDK's StdioServerTransport: that one answers nothing to a line it cannot parse
// (a garbage line, an object id, "jsonrpc":"1.0", a batch: the client waits forever) and ends
// the session silently on a line over 10 MiB. This one answers every such line as JSON-RPC 2.0
// says, and skips an over-long line with an error reply, the session going on.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { parseJsonBytes, ValidationError } from '../index.js';
import type { LiveToolSet } from '../index.js';
import { MAX_MESSAGE_DEPTH, boundedBatchReply, errorReply, isId, isObject, refusalOf, whyInvalid } from './json-rpc.js';
import type { Id } from './json-rpc.js';
import { responseJson, sendsResultJson } from './result-json.js';
import { checkSessionOptions, createMcpServer } from './tool-server.js';
import type { McpServerOptions } from './tool-server.js';

/**
 * The default bound of one message the client sends (one line): 4 MiB. A longer line is
 * skipped up to its end, unread, with an error reply (-32600, id null) and a warning.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** Options of `serveMcpStdio`: the session's, and the streams (default: the process's). */
export interface McpStdioOptions extends McpServerOptions {
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout?: NodeJS.WritableStream;
  /** The longest line (one JSON-RPC message) read from `stdin`, in bytes. Default 4 MiB (`DEFAULT_MAX_MESSAGE_BYTES`). */
  readonly maxMessageBytes?: number;
}

/** A running stdio session. */
export interface McpStdioSession {
  /** Settles when the session ends: the client closed standard input, reading or writing failed, or `close()`. */
  readonly closed: Promise<void>;
  /** How many lines were over `maxMessageBytes` and skipped (each answered with an error). */
  readonly skippedMessages: number;
  close(): Promise<void>;
}

/** The revisions of MCP that have JSON-RPC batches: 2025-03-26 added them, 2025-06-18 removed them. */
const BATCH_REVISIONS = new Set(['2025-03-26']);
/** The most messages one batch may hold: its answer is one line, which a client reads whole. */
const MAX_BATCH_MESSAGES = 1000;
/** A batch being answered (MCP 2025-03-26): the ids still owed a response, and the responses so far (their JSON, `bytes` in all). */
interface Batch {
  readonly pending: Set<Id>;
  readonly replies: string[];
  bytes: number;
  /** While its items are being passed on: the replies go out after the last. */
  reading: boolean;
}

/** How many bytes of a skipped line's start and end are kept to find its id. */
const EDGE_BYTES = 256;
const EMPTY = Buffer.alloc(0);

/** The first `count` bytes of buffers read in order. */
function firstBytes(buffers: readonly Buffer[], count: number): Buffer {
  const kept: Buffer[] = [];
  let size = 0;
  for (const buffer of buffers) {
    if (size >= count) break;
    kept.push(buffer.subarray(0, count - size));
    size += kept[kept.length - 1]?.length ?? 0;
  }
  return Buffer.concat(kept);
}

/** The last `count` bytes of buffers read in order (a copy: the chunks they come from are let go). */
function lastBytes(buffers: readonly Buffer[], count: number): Buffer {
  const kept: Buffer[] = [];
  let size = 0;
  for (let index = buffers.length - 1; index >= 0 && size < count; index--) {
    const buffer = buffers[index] as Buffer;
    const part = buffer.subarray(Math.max(0, buffer.length - (count - size)));
    kept.unshift(part);
    size += part.length;
  }
  return Buffer.from(Buffer.concat(kept));
}

/** A JSON-RPC id as JSON text: an integer or a short string. */
const ID_TEXT = String.raw`(-?\d{1,16}|"(?:[^"\\]|\\.){0,200}")`;
/** `{"jsonrpc":"2.0","id":7,` (members before the id may be jsonrpc and method). */
const ID_AT_START = new RegExp(String.raw`^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"(?:[^"\\]|\\.){0,200}"\s*,)*\s*"id"\s*:\s*${ID_TEXT}\s*[,}]`);
/** `…,"id":7}` at the end of the line: the message's last member. */
const ID_AT_END = new RegExp(String.raw`,\s*"id"\s*:\s*${ID_TEXT}\s*\}\s*$`);

function idIn(bytes: Buffer, pattern: RegExp): Id | undefined {
  const match = pattern.exec(bytes.toString('utf8'));
  if (match === null) return undefined;
  try {
    const id: unknown = JSON.parse(match[1] as string);
    return isId(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

const idAtStart = (bytes: Buffer): Id | undefined => idIn(bytes, ID_AT_START);
const idAtEnd = (bytes: Buffer): Id | undefined => idIn(bytes, ID_AT_END);

/** Newline-delimited JSON-RPC on two streams, every line answered (see the header). */
class StdioLines implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #stdin: NodeJS.ReadableStream;
  readonly #stdout: NodeJS.WritableStream;
  /** The writes waiting for stdout's 'drain' (one listener for them all). */
  #draining: (() => void)[] = [];
  readonly #maxBytes: number;
  /** The most a batch's answer takes (the session's maxResultBytes). */
  readonly #maxAnswerBytes: number;
  readonly #warn: (message: string) => void;
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  /** The current line so far, and its length; `#skipping` while the rest of an over-long line goes by. */
  #parts: Buffer[] = [];
  #size = 0;
  #skipping = false;
  /** The first and the last bytes of the line being skipped. */
  #head: Buffer = EMPTY;
  #tail: Buffer = EMPTY;
  #closed = false;
  /** Over-long lines skipped so far. */
  skipped = 0;
  /** The id of the `initialize` request, and the revision its answer agreed. */
  #initializeId: Id | undefined;
  #revision: string | undefined;
  readonly #batches = new Map<Id, Batch>();
  /**
   * The ids of the client's requests not answered (nor cancelled) yet, each with a mark of its
   * request (#cancelled). A request reusing one is refused, as over HTTP: the SDK's Server kept one abort
   * controller per id, so the first call was no longer aborted when the session ended or the
   * client cancelled, and the client got two answers with one id.
   */
  readonly #unanswered = new Map<Id, object>();

  constructor(stdin: NodeJS.ReadableStream, stdout: NodeJS.WritableStream, maxBytes: number, maxAnswerBytes: number, warn: (message: string) => void) {
    this.#stdin = stdin;
    this.#stdout = stdout;
    this.#maxBytes = maxBytes;
    this.#maxAnswerBytes = maxAnswerBytes;
    this.#warn = warn;
    sendsResultJson(this);
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    while (start < data.length && !this.#closed) {
      const end = data.indexOf(0x0a, start);
      const piece = data.subarray(start, end === -1 ? data.length : end);
      if (!this.#skipping) {
        this.#size += piece.length;
        if (this.#size > this.#maxBytes) this.#tooLong(piece);
        else this.#parts.push(piece);
      } else {
        this.#tail = lastBytes([this.#tail, piece], EDGE_BYTES);
      }
      if (end === -1) return;
      start = end + 1;
      if (this.#skipping) this.#skippedLine();
      else this.#line(this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts));
      this.#parts = [];
      this.#size = 0;
    }
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
    // A stream that failed gives nothing more, and no 'end' follows: the session stayed open for good.
    this.#warn(`standard input failed (${error.message}); the session ends`);
    void this.close();
  };

  readonly #onWriteError = (error: Error): void => {
    // The client is gone (EPIPE): unheard, the stream's 'error' was an uncaught exception.
    this.#warn(`standard output failed (${error.message}); the session ends`);
    void this.close();
  };

  readonly #onEnd = (): void => {
    // A last line without its newline (truncated JSON, garbage) is a line too: answered, not dropped.
    if (!this.#skipping && this.#size > 0) {
      this.#line(Buffer.concat(this.#parts));
      // A request in it gets the turn it needs to be answered before the session closes.
      setImmediate(() => void this.close());
    } else {
      if (this.#skipping) this.#skippedLine();
      void this.close();
    }
  };

  async start(): Promise<void> {
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onError);
    this.#stdout.on('error', this.#onWriteError);
    // The client is gone when our input ends (the SDK's transport did not notice).
    this.#stdin.once('end', this.#onEnd);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onError);
    this.#stdin.off('end', this.#onEnd);
    this.#stdout.off('error', this.#onWriteError);
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    this.#parts = [];
    this.onclose?.();
  }

  send(message: JSONRPCMessage): Promise<void> {
    const reply = message as { id?: unknown; result?: { protocolVersion?: unknown } };
    if (isId(reply.id) && !('method' in message)) {
      this.#unanswered.delete(reply.id);
      if (reply.id === this.#initializeId) {
        if (typeof reply.result?.protocolVersion === 'string') this.#revision = reply.result.protocolVersion;
        // A refused initialize (bad params) leaves the session uninitialized: another may follow.
        else this.#initializeId = undefined;
      }
      const batch = this.#batches.get(reply.id);
      if (batch !== undefined) {
        this.#batches.delete(reply.id);
        batch.pending.delete(reply.id);
        this.#addReply(batch, message);
        return this.#answer(batch);
      }
    }
    return this.#write(message);
  }

  #write(value: object): Promise<void> {
    // A tools/call result was serialised already, to measure it: its text is sent as it is.
    return this.#writeText(responseJson(value) ?? JSON.stringify(value));
  }

  #writeText(text: string): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.#stdout.write(`${text}\n`)) {
        resolve();
        return;
      }
      // One 'drain' listener for every write waiting (a listener each: a client slow to read
      // a flood of notifications got Node's MaxListenersExceededWarning on stderr, and 100,000 listeners).
      this.#draining.push(resolve);
      if (this.#draining.length === 1) {
        // Backpressure: its input waits until the client reads what we wrote. A client writing
        // requests without reading the answers kept each waiting in memory (about 4 KiB a ping), without bound.
        this.#stdin.pause();
        this.#stdout.once('drain', () => {
          const waiting = this.#draining;
          this.#draining = [];
          if (!this.#closed) this.#stdin.resume();
          for (const each of waiting) each();
        });
      }
    });
  }

  /** The line so far and `piece` went over the bound: the rest goes by unread; its first and last bytes are kept to find its id. */
  #tooLong(piece: Buffer): void {
    this.skipped++;
    this.#skipping = true;
    this.#head = firstBytes([...this.#parts, piece], EDGE_BYTES);
    this.#tail = lastBytes([...this.#parts, piece], EDGE_BYTES);
    this.#parts = [];
    this.#size = 0;
    this.#warn(this.#tooLongText());
  }

  #tooLongText(): string {
    return `a message (line) over ${this.#maxBytes} bytes was skipped unread (the limit is maxMessageBytes, --max-message-bytes)`;
  }

  /**
   * The end of a skipped line: its -32600 reply, with the request's id when the line's first
   * or last bytes show it (`{"jsonrpc":"2.0","id":7,…` or `…,"id":7}`, how the SDK's client
   * writes a request), so that its client stops waiting; else id null.
   */
  #skippedLine(): void {
    this.#skipping = false;
    const id = idAtStart(this.#head) ?? idAtEnd(this.#tail) ?? null;
    this.#head = EMPTY;
    this.#tail = EMPTY;
    void this.#write(errorReply(id, -32600, `Invalid Request: ${this.#tooLongText()}`));
  }

  /** One complete line: answered when it is not a message, else passed to the session. */
  #line(bytes: Buffer): void {
    let value: unknown;
    try {
      // Read as the HTTP endpoint reads a body: a number JSON.parse would change
      // (18446744073709551616 read as 18446744073709552000) or a key given twice in one object
      // (JSON.parse keeps the last) is refused, never passed on altered.
      value = parseJsonBytes(bytes, { name: 'the line', refuseRepeatedKeys: true, maxDepth: MAX_MESSAGE_DEPTH });
    } catch (error) {
      const refusal = this.#unreadable(bytes, error);
      if (refusal !== undefined) void this.#write(refusal);
      return;
    }
    if (!Array.isArray(value)) {
      const refusal = this.#message(value);
      if (refusal !== undefined) void this.#write(refusal);
      return;
    }
    if (value.length === 0) {
      void this.#write(errorReply(null, -32600, 'Invalid Request: an empty batch'));
      return;
    }
    if (this.#revision === undefined || !BATCH_REVISIONS.has(this.#revision)) {
      const session = this.#revision === undefined ? 'before initialize' : `in a session of MCP ${this.#revision}`;
      void this.#write(errorReply(null, -32600, `Invalid Request: JSON-RPC batches are not accepted ${session} (MCP 2025-06-18 removed them; only 2025-03-26 has them): send one message per line`));
      return;
    }
    if (value.length > MAX_BATCH_MESSAGES) {
      void this.#write(errorReply(null, -32600, `Invalid Request: a batch of ${value.length} messages, over the ${MAX_BATCH_MESSAGES} one batch may hold: send fewer at a time`));
      return;
    }
    const batch: Batch = { pending: new Set(), replies: [], bytes: 0, reading: true };
    // The ids owed a response first: a request answered at once must find its batch.
    for (const item of value) {
      if (!isObject(item) || !isId(item.id) || item.method === 'initialize' || typeof item.method !== 'string' || !JSONRPCMessageSchema.safeParse(item).success) continue;
      // An id in use (before this batch, or earlier in it) is refused below: the answer owed under it is not this batch's.
      if (this.#unanswered.has(item.id) || batch.pending.has(item.id)) continue;
      batch.pending.add(item.id);
      this.#batches.set(item.id, batch);
    }
    for (const item of value) {
      const refusal = isObject(item) && isId(item.id) && item.method === 'initialize' ? errorReply(item.id, -32600, 'Invalid Request: initialize must not be part of a batch') : this.#message(item);
      if (refusal !== undefined) this.#addReply(batch, refusal);
    }
    batch.reading = false;
    void this.#answer(batch);
  }

  /** Writes a batch's replies once none is owed any more (nothing when it had none to give). */
  #answer(batch: Batch): Promise<void> {
    if (batch.reading || batch.pending.size > 0 || batch.replies.length === 0) return Promise.resolve();
    return this.#writeText(`[${batch.replies.join(',')}]`);
  }

  /** Adds a reply to its batch's answer, held to `maxAnswerBytes` (boundedBatchReply). */
  #addReply(batch: Batch, reply: object): void {
    const text = boundedBatchReply(reply, responseJson(reply) ?? JSON.stringify(reply), batch.bytes, this.#maxAnswerBytes);
    batch.bytes += Buffer.byteLength(text, 'utf8') + 1;
    batch.replies.push(text);
  }

  /**
   * A request the client cancelled is owed no response (MCP: the server sends none): its batch
   * no longer waits for it. It waited forever, so the batch's other replies never went out and
   * the batch stayed for the session's life.
   */
  #cancelled(message: JSONRPCMessage): void {
    if (!('method' in message) || message.method !== 'notifications/cancelled' || 'id' in message) return;
    const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
    const batch = isId(id) ? this.#batches.get(id) : undefined;
    const request = isId(id) ? this.#unanswered.get(id) : undefined;
    // Free once the SDK has heard the cancel (it aborts by id in a later microtask: a request
    // reusing the id in the same chunk took that abort, and the cancelled call was answered under
    // the id); the mark keeps a request answered and reusing the id meanwhile in the set.
    if (request !== undefined) {
      setImmediate(() => {
        if (this.#unanswered.get(id as Id) === request) this.#unanswered.delete(id as Id);
      });
    }
    if (batch === undefined) return;
    this.#batches.delete(id as Id);
    batch.pending.delete(id as Id);
    void this.#answer(batch);
  }

  /** The -32700 reply to a line parseJsonBytes refused (undefined for an empty line, which carries nothing to answer). */
  #unreadable(bytes: Buffer, refused: unknown): object | undefined {
    let text: string;
    try {
      text = this.#decoder.decode(bytes);
    } catch {
      return errorReply(null, -32700, 'Parse error: the line is not UTF-8 text');
    }
    if (text.trim() === '') return undefined;
    // Too deep to parse cheaply: the id from the line's ends, as for a line over the size limit.
    if (refused instanceof ValidationError && refused.context.max_depth !== undefined) return errorReply(idAtStart(bytes.subarray(0, EDGE_BYTES)) ?? idAtEnd(bytes.subarray(-EDGE_BYTES)) ?? null, -32700, `Parse error: ${refused.message}`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return errorReply(null, -32700, `Parse error: ${(error as Error).message}`);
    }
    // JSON, but a number or a key it would alter: named by its place, with the request's id (null when that is the key given twice).
    const [issue] = refused instanceof ValidationError ? refused.issues : [];
    const id = isObject(value) && isId(value.id) && issue?.pathText !== 'id' ? value.id : null;
    return errorReply(id, -32700, `Parse error: ${issue === undefined ? (refused as Error).message : `${issue.pathText}: ${issue.message}`}`);
  }

  /** Passes a JSON-RPC message on; for anything else, the error reply (undefined: nothing to answer). */
  #message(value: unknown): object | undefined {
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (parsed.success) {
      const message = parsed.data;
      if ('method' in message && 'id' in message && this.#unanswered.has(message.id)) {
        return errorReply(message.id, -32600, `Invalid Request: request id ${JSON.stringify(message.id)} is already in use by a request of this session not yet answered; give each request a new id`);
      }
      if ('method' in message && 'id' in message && message.method === 'initialize') {
        // Once per session, as over HTTP (the SDK's transport refuses it there): a second one re-negotiated the revision.
        if (this.#initializeId !== undefined) {
          const state = this.#revision === undefined ? 'an initialize is already in progress' : `the session is already initialized (MCP ${this.#revision})`;
          return errorReply(message.id, -32600, `Invalid Request: ${state}; initialize once per session`);
        }
        this.#initializeId = message.id;
      }
      if ('method' in message && 'id' in message) this.#unanswered.set(message.id, {});
      this.onmessage?.(message);
      this.#cancelled(message);
      return undefined;
    }
    // A malformed response from the client: JSON-RPC never answers a response.
    if (isObject(value) && !('method' in value) && ('result' in value || 'error' in value)) {
      this.#warn(`a malformed response from the client was ignored: ${whyInvalid(value)}`);
      return undefined;
    }
    const refusal = refusalOf(value);
    // A notification whose only fault is its params (by position, a bad _meta): JSON-RPC never answers a notification.
    if (refusal.code === -32602 && isObject(value) && !('id' in value)) {
      this.#warn(`a notification was ignored, not answered (JSON-RPC answers no notification): ${refusal.message}`);
      return undefined;
    }
    return errorReply(refusal.id, refusal.code, refusal.message);
  }
}

/**
 * Serves one MCP session over standard input and output (what Claude Desktop, Cursor and
 * other clients spawn). Nothing else may write to `stdout`: it carries the protocol. Every
 * line is answered as JSON-RPC 2.0 says: not JSON is -32700 (id null), not a message is
 * -32600; a batch is answered in a session of MCP 2025-03-26 and refused (-32600) in later
 * revisions, which removed batches; a line over `maxMessageBytes` is skipped with a -32600
 * reply and `onWarning` (counted in `skippedMessages`). A last line without its newline is
 * read as a line. While `stdout` holds more than its buffer unread, `stdin` is paused
 * (backpressure). The session ends when `stdin` ends, either stream fails (`onWarning` says
 * why: an EPIPE on `stdout` was an uncaught error) or on `close()`: the calls still
 * running are aborted (their handler's signal).
 * @throws VALIDATION_FAILED for an invalid policy; TypeError for bad options
 */
export async function serveMcpStdio(live: LiveToolSet, options: McpStdioOptions = {}): Promise<McpStdioSession> {
  const { stdin = process.stdin, stdout = process.stdout, maxMessageBytes, ...sessionOptions } = options;
  const { maxResultBytes } = checkSessionOptions(live, sessionOptions);
  if (maxMessageBytes !== undefined && (typeof maxMessageBytes !== 'number' || !Number.isSafeInteger(maxMessageBytes) || maxMessageBytes <= 0)) {
    throw new TypeError(`serveMcpStdio(): maxMessageBytes must be a whole number > 0, got ${JSON.stringify(maxMessageBytes)}`);
  }
  const server = createMcpServer(live, sessionOptions);
  const warn = (message: string): void => sessionOptions.onWarning?.(message);
  const transport = new StdioLines(stdin, stdout, maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, maxResultBytes, warn);
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const previous = server.onclose;
  server.onclose = () => {
    previous?.();
    ended();
  };
  await server.connect(transport);
  return {
    closed,
    get skippedMessages() {
      return transport.skipped;
    },
    close: () => server.close(),
  };
}
