// One upstream as a serving process holds it: a connection (reconnected with backoff), the
// tool definitions it lists now (listed again on its `notifications/tools/list_changed`), and
// calls forwarded with the calling session's progress, logs, sampling and elicitation.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolRequest, JSONRPCMessage, JSONRPCRequest, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  ProgressNotificationSchema,
  RELATED_TASK_META_KEY,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson, mcpContent } from '../../index.js';
import type { ElicitParams, McpContent, McpContentInput, SampleParams, ToolHandlerOptions, Upstream } from '../../index.js';
import { withCallOutcome } from '../call-outcome.js';
import { relayedCallOf } from '../relayed-call.js';
import type { RelayedCall } from '../relayed-call.js';
import { connectUpstream, invalidAnswerOf } from './connect.js';
import type { InvalidAnswer, UpstreamConnection } from './connect.js';
import { MAX_LISTED_TOOLS, MAX_LIST_PAGES, crowdedListing, endlessListing, listUpstreamToolsPage, listingRefusal } from './upstream-definition.js';
import type { UpstreamToolDefinition } from './upstream-definition.js';

/** The first pause before reconnecting to an upstream that went away or refused; it doubles up to `RECONNECT_MAX_MS`. */
export const RECONNECT_FIRST_MS = 1_000;
/**
 * The longest pause between two attempts to reach an upstream, and how long a connection must
 * last before its end starts the pauses again at `RECONNECT_FIRST_MS`: one that ends sooner
 * (an upstream that floods, or crashes, right after each connection) is reconnected after
 * the doubled pause, so it cannot do it again every second.
 */
export const RECONNECT_MAX_MS = 60_000;
/** The least pause between the end of one listing of an upstream and the start of the next: a list_changed flood is listed at most this often. */
export const LISTING_SPACING_MS = 250;
/**
 * The pause after a listing is at least this many times what it took (from its request to the
 * end of the derivation it caused): a serving process spends at most 1 / (1 + 4), 20 % of a
 * core, on the listings of one upstream. A near-10 MiB listing costs about 0.6 CPU-s; spaced
 * only by `LISTING_SPACING_MS`, an upstream that said list_changed without end held a serving
 * process at about 60 % of a core, other sessions' calls stalled up to 1.4 s.
 */
export const LISTING_COST_FACTOR = 4;
/** The least pause after a listing that took `cost` ms before the next may start: `LISTING_COST_FACTOR` times it, within `LISTING_SPACING_MS` and `RECONNECT_MAX_MS`. */
function listingPause(cost: number): number {
  return Math.min(RECONNECT_MAX_MS, Math.max(LISTING_SPACING_MS, LISTING_COST_FACTOR * cost));
}

/**
 * The notifications (progress reports and log messages together) the gateway relays of one
 * call at once: a bucket that refills at `CALL_NOTIFICATIONS_PER_SECOND`. The excess is dropped
 * (a hostile upstream's flood would else be queued for the session without bound).
 */
export const CALL_NOTIFICATION_BURST = 1_000;
/** The rate the bucket of `CALL_NOTIFICATION_BURST` refills at: a call that reports this often or less loses nothing. */
export const CALL_NOTIFICATIONS_PER_SECOND = 100;
/** The longest progress message or log message (the JSON of its data and logger) relayed; a longer one is dropped. */
export const MAX_NOTIFICATION_BYTES = 64 * 1024;
/** The requests (sampling, elicitation) of one call relayed to its session at once; one more is refused at once. */
export const CALL_REQUESTS_IN_FLIGHT = 10;

/** Options a link takes from the gateway. */
export interface UpstreamLinkOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly connectTimeoutMs: number;
  readonly callTimeoutMs: number;
  /** A stdio upstream leaving more of the gateway's messages unread is closed as failed. */
  readonly maxUnwrittenBytes: number;
  /** Hears what the operator should know (a failed connection, a failed listing). */
  readonly onWarning: (message: string) => void;
  /**
   * Called when the listed definitions changed (or the link went up or down); a listing waits
   * for what it returns (the derivation its change caused), which counts in its cost (`LISTING_COST_FACTOR`).
   */
  readonly onChange: () => void | Promise<unknown>;
}

/** A promise and what settles it (Node 20 has no Promise.withResolvers). */
interface Waiter {
  readonly promise: Promise<void>;
  readonly resolve: () => void;
}

function waiter(): Waiter {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** A call in flight: where what the upstream tells or asks during it goes. */
interface Relay {
  readonly call: ToolHandlerOptions;
  readonly toolName: string;
  /** The notifications it may relay now (`CALL_NOTIFICATION_BURST` at most), as of `refilledAt` (performance.now()). */
  allowance: number;
  refilledAt: number;
  /** A notification of it was dropped: warned once. */
  warned: boolean;
  /** Its requests (sampling, elicitation) relayed to the session and not answered yet. */
  asking: number;
  /** A call to an HTTP upstream: aborted when the call ends without its answer, which ends its POSTs (`ConnectUpstreamOptions.callEnded`). */
  ended?: AbortController;
}

function relayOf(call: ToolHandlerOptions, toolName: string): Relay {
  return { call, toolName, allowance: CALL_NOTIFICATION_BURST, refilledAt: performance.now(), warned: false, asking: 0 };
}

/** The ids (and progress tokens) of the calls a link relays: strings of its own, never the SDK client's numbers. */
const RELAY_ID_PREFIX = 'gateway-';

/** A relayed call waiting for its answer. */
interface Pending {
  readonly connection: UpstreamConnection;
  readonly toolName: string;
  /** What was wrong with its answer, when the SDK's schema refused it (`#invalidAnswer`): that answer comes as a -32603 error. */
  invalid?: InvalidAnswer;
  /** Why the gateway answers it itself (`#unanswered`): the upstream's answer cannot come, and the -32603 error that says so is the gateway's. */
  unanswered?: string;
  /** Ends the call with this result (once; later calls do nothing). */
  readonly finish: (result: McpContent) => void;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Object.hasOwn(value, '__proto__');
}

/**
 * Whether a result (JSON from the transport) is the usual one that CallToolResultSchema gives
 * back unchanged: only `content` (text blocks of `type` and `text` only), a `structuredContent`
 * and `_meta` record, a boolean `isError`; `_meta` without the keys the SDK's schema checks.
 * Anything else is parsed by that schema, as the SDK's client parses it.
 */
function isUsualResult(result: unknown): boolean {
  if (!isRecord(result)) return false;
  for (const key in result) if (key !== 'content' && key !== 'structuredContent' && key !== 'isError' && key !== '_meta') return false;
  const { content, structuredContent, isError, _meta } = result;
  if (!Array.isArray(content)) return false;
  for (const block of content as unknown[]) {
    if (typeof block !== 'object' || block === null) return false;
    let keys = 0;
    for (const key in block) {
      if (key !== 'type' && key !== 'text') return false;
      keys++;
    }
    if (keys !== 2 || (block as { type?: unknown }).type !== 'text' || typeof (block as { text?: unknown }).text !== 'string') return false;
  }
  if (structuredContent !== undefined && !isRecord(structuredContent)) return false;
  if (isError !== undefined && typeof isError !== 'boolean') return false;
  return _meta === undefined || (isRecord(_meta) && !Object.hasOwn(_meta, 'progressToken') && !Object.hasOwn(_meta, RELATED_TASK_META_KEY));
}

/**
 * The call whose forwarding is running: a message the upstream sends on that call's own
 * stream (Streamable HTTP answers) is handled in its async context. Messages of a stdio
 * upstream arrive outside it (JSON-RPC over stdio carries no link to the call: the SDK's
 * `relatedRequestId` only picks an HTTP stream, it is never written into the message): they
 * go to the session of the calls in flight when those all come from one session
 * (`ToolHandlerOptions.session`).
 */
const current = new AsyncLocalStorage<Relay>();

/** An error result of the gateway's own, naming the upstream, marked with its code for the audit log (`withCallOutcome`). */
function outcome(code: 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_ERROR', text: string): McpContent {
  return withCallOutcome(mcpContent({ content: [{ type: 'text', text: `${code}: ${text}` }], isError: true }), code);
}

/** The first problem of a zod error, as `path message` (its own message is every issue as JSON). */
function firstIssue(error: Error): string {
  const issue = (error as { issues?: readonly { path?: readonly PropertyKey[]; message?: string }[] }).issues?.[0];
  if (issue === undefined) return error.message;
  const path = issue.path ?? [];
  return `${path.length === 0 ? 'the result' : path.map(String).join('.')} ${issue.message ?? 'is invalid'}`;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch's TypeError says only `fetch failed`: why (ECONNREFUSED, a socket the server closed) is in its cause.
  const cause: unknown = error.cause;
  return cause instanceof Error && cause.message !== '' && !error.message.includes(cause.message) ? `${error.message} (${cause.message})` : error.message;
}


/**
 * Why `error` (a request's on `connection`) says the upstream no longer knows the connection's
 * Streamable HTTP session, else undefined: HTTP 404 to a request under a session id, as the
 * specification says a server answers once it ended the session (it restarted, or expired it),
 * or a 400 naming the session, as the SDK's example servers and server-everything answer
 * (`Bad Request: No valid session ID provided`). The SDK's client does not start a new session
 * by itself: every call and listing failed so until the serving process restarted.
 */
function sessionEnded(connection: UpstreamConnection, error: unknown): string | undefined {
  if (connection.transport !== 'streamable-http' || !(error instanceof Error)) return undefined;
  if ((connection.client.transport as { readonly sessionId?: string } | undefined)?.sessionId === undefined) return undefined;
  const { code } = error as { code?: unknown };
  if (code !== 404 && !(code === 400 && /session/i.test(error.message))) return undefined;
  return `it no longer knows the gateway's session (HTTP ${code}: it restarted, or ended the session)`;
}

/** A call made as a task: its task's id once the upstream made it, until the task is seen in a terminal status. */
interface TaskCall {
  id?: string;
  /**
   * Set when the call ended before the upstream answered its create: settles once that answer
   * came (its task's id then in `id`) or the request failed, for the task it made to be cancelled.
   */
  creating?: Promise<void>;
}

/** The statuses a task never leaves: nothing is left to cancel. */
const TERMINAL_TASK_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/**
 * A call of a tool the upstream says must run as a task (`execution.taskSupport: 'required'`):
 * made task-augmented, polled by the SDK's client until the task ends, its result as a plain
 * call's. The session sees an ordinary call (the gateway does not offer tasks itself). It ends
 * at once when `signal` aborts (the SDK's client ends its request in flight, but waits out a
 * poll's pause, the upstream's `pollInterval`, first); `task` follows the upstream's task. Ended
 * before the upstream answered the create, the create is left to finish (`task.creating`,
 * bounded by `timeout`): its answer is the only way to learn the id of a task it made.
 */
async function callAsTask(client: Client, params: CallToolRequest['params'], options: { readonly signal: AbortSignal; readonly timeout: number }, task: TaskCall): Promise<unknown> {
  const { signal, timeout } = options;
  // The SDK's requests get their own signal: the call's, aborted during the create, had the SDK's
  // client drop the answer (and send notifications/cancelled, which lets the upstream drop it too).
  const requests = new AbortController();
  const stream = client.experimental.tasks.callToolStream(params, CallToolResultSchema, { timeout, signal: requests.signal, task: {} })[Symbol.asyncIterator]();
  let stop!: (error: unknown) => void;
  const ended = new Promise<never>((_resolve, reject) => (stop = reject));
  // As the SDK's client ends a request whose signal aborts.
  const onAbort = (): void => stop(signal.reason instanceof McpError ? signal.reason : new McpError(ErrorCode.RequestTimeout, String(signal.reason)));
  signal.addEventListener('abort', onAbort, { once: true });
  // The SDK's requests no longer see the call's signal: one aborted already must end the call here.
  if (signal.aborted) onAbort();
  let created = false;
  let waiting: ReturnType<typeof stream.next> | undefined;
  try {
    for (;;) {
      waiting = stream.next();
      const next = await Promise.race([waiting, ended]);
      waiting = undefined;
      if (next.done === true) break;
      const message = next.value;
      if (message.type === 'taskCreated') {
        created = true;
        task.id = message.task.taskId;
      } else if (message.type === 'taskStatus' && TERMINAL_TASK_STATUSES.has(message.task.status)) task.id = undefined;
      else if (message.type === 'result') return message.result;
      else if (message.type === 'error') throw message.error;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    const end = (): void => void stream.return(undefined).catch(() => undefined);
    if (waiting !== undefined && !created) {
      task.creating = waiting.then(
        (next) => {
          if (next.done !== true && next.value.type === 'taskCreated') task.id = next.value.task.taskId;
        },
        () => undefined,
      );
      void task.creating.finally(end);
    } else {
      // A poll or tasks/result in flight ends now; the SDK's generator, in a poll's pause, at its next step.
      if (waiting !== undefined && signal.aborted) requests.abort(signal.reason);
      end();
    }
  }
  throw new McpError(ErrorCode.InternalError, `the task of ${params.name} ended without a result`);
}

export class UpstreamLink {
  #upstream: Upstream;
  readonly #options: UpstreamLinkOptions;
  #connection: UpstreamConnection | undefined;
  #connecting: Promise<void> | undefined;
  #definitions: readonly UpstreamToolDefinition[] | undefined;
  #listedKey = '';
  #listedFor: string | undefined;
  #listing: Promise<void> | undefined;
  #listAgain = false;
  /** Settles when the listing asked for during the one under way has ended. */
  #nextListing: Waiter | undefined;
  /** The listing that waits for its pause (`#listingDueAt`), not started yet: what asks for one now joins it. */
  #waiting: Waiter | undefined;
  /** That pause's timer, and what ends it early (`close`). */
  #pause: { readonly timer: ReturnType<typeof setTimeout>; readonly end: () => void } | undefined;
  /** When (performance.now()) the listing under way started. */
  #listingBegan = 0;
  /** When (performance.now()) the next listing may start: the last one's end, plus its cost times `LISTING_COST_FACTOR` (`LISTING_SPACING_MS` at least). */
  #listingDueAt = 0;
  #retryMs = RECONNECT_FIRST_MS;
  /** When the connection was made (performance.now()): one that lasts `RECONNECT_MAX_MS` resets `#retryMs` at its end. */
  #connectedAt = 0;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** The pause before listing again after a failed listing (doubling as the reconnect's), and its timer. */
  #relistMs = RECONNECT_FIRST_MS;
  #relistTimer: ReturnType<typeof setTimeout> | undefined;
  #lastError: string | undefined;
  /** Why the connection is being closed as failed (its input left unread), for its calls and the warning. */
  #endedWhy: string | undefined;
  #closed = false;
  /** The tools the upstream lists with `execution.taskSupport: 'required'`: called as tasks. */
  #taskRequired: ReadonlySet<string> = new Set();
  readonly #calls = new Set<Relay>();
  /** The upstream's requests (sampling, elicitation) being relayed, of every call. */
  #asking = 0;
  /** The relayed calls waiting for an answer, by the id sent upstream. */
  readonly #pending = new Map<string, Pending>();
  /** The calls in flight by the progress token sent upstream with each. */
  readonly #byToken = new Map<string, Relay>();
  #tokens = 0;
  /** Progress tokens of calls that ended, forgotten at the next immediate. */
  #expiring: string[] = [];

  constructor(upstream: Upstream, options: UpstreamLinkOptions) {
    this.#upstream = upstream;
    this.#options = options;
  }

  get upstream(): Upstream {
    return this.#upstream;
  }

  /** The row changed in a way the connection does not depend on (prefix, permissions, rejections). */
  set upstream(row: Upstream) {
    this.#upstream = row;
  }

  /** The definitions listed last (kept while the upstream is down); undefined before the first listing. */
  get definitions(): readonly UpstreamToolDefinition[] | undefined {
    return this.#definitions;
  }

  /** The `updated_at` of the row the last listing was made under; undefined before the first listing. */
  get listedFor(): string | undefined {
    return this.#listedFor;
  }

  get connected(): boolean {
    return this.#connection !== undefined;
  }

  /** Why the last connection or listing failed, if it did. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** Connects (and lists); settles when that first attempt ended, either way. Later attempts follow by themselves. */
  start(): Promise<void> {
    return this.#connect();
  }

  #connect(): Promise<void> {
    if (this.#closed || this.#connection !== undefined) return Promise.resolve();
    if (this.#connecting !== undefined) return this.#connecting;
    // Outside any call: a stdio child's messages keep the async context it was started in.
    this.#connecting = current.exit(async () => {
      let connection: UpstreamConnection;
      try {
        connection = await connectUpstream(this.#upstream, {
          ...(this.#options.env === undefined ? {} : { env: this.#options.env }),
          timeoutMs: this.#options.connectTimeoutMs,
          callTimeoutMs: this.#options.callTimeoutMs,
          maxUnwrittenBytes: this.#options.maxUnwrittenBytes,
          setup: (client) => this.#setup(client),
          onInvalidAnswer: (id, invalid) => this.#invalidAnswer(id, invalid),
          onUnanswered: (id, reason) => this.#unanswered(id, reason),
          dropNotification: (message) => this.#dropped(message),
          onUnread: (why) => {
            this.#endedWhy = why;
          },
          callEnded: () => current.getStore()?.ended?.signal,
        });
      } catch (error) {
        this.#failed(`cannot connect: ${describe(error)}`);
        return;
      }
      if (this.#closed) {
        await connection.close().catch(() => undefined);
        return;
      }
      this.#connection = connection;
      this.#connectedAt = performance.now();
      connection.client.onclose = () => {
        const why = this.#endedWhy;
        this.#endedWhy = undefined;
        this.#endCalls(connection, why);
        this.#lost(connection, why);
      };
      // The answers to relayed calls are taken before the SDK's client parses them (`#answer`).
      const transport = connection.client.transport;
      if (transport !== undefined) {
        const protocol = transport.onmessage;
        transport.onmessage = ((message: JSONRPCMessage, extra?: MessageExtraInfo) => {
          if (!this.#answer(message)) protocol?.(message, extra);
        }) as Transport['onmessage'];
      }
      // Every level is asked for; each session filters by its own logging/setLevel.
      if (connection.client.getServerCapabilities()?.logging !== undefined) await connection.client.setLoggingLevel('debug').catch(() => undefined);
      await this.relist();
    });
    const attempt = this.#connecting;
    void attempt.finally(() => {
      if (this.#connecting === attempt) this.#connecting = undefined;
    });
    return attempt;
  }

  #setup(client: Client): void {
    // Progress is routed here by our own token rather than by the SDK's `onprogress`: the SDK
    // drops a call's handler as soon as its answer is read, so the last report, sent just
    // before the answer and handled a moment later, would be lost.
    client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
      const { progressToken, progress, total, message } = notification.params;
      const relay = this.#byToken.get(String(progressToken));
      if (relay === undefined || !this.#admits(relay, () => (message === undefined ? 0 : Buffer.byteLength(message, 'utf8')))) return;
      try {
        relay.call.progress(progress, total, message);
      } catch {
        // A progress value that is not a finite number: not relayed.
      }
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      void this.relist(true);
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const relay = this.#relay();
      if (relay === undefined) return;
      const { level, data, logger } = notification.params;
      if (!this.#admits(relay, () => Buffer.byteLength(JSON.stringify({ data, logger }) ?? '', 'utf8'))) return;
      try {
        relay.call.log(level, data, logger);
      } catch {
        // A level this runtime does not know: not relayed.
      }
    });
    client.setRequestHandler(CreateMessageRequestSchema, (request) => this.#ask('sampling/createMessage', (call) => call.sample(request.params as unknown as SampleParams)) as never);
    client.setRequestHandler(ElicitRequestSchema, (request) => this.#ask('elicitation/create', (call) => call.elicit(request.params as unknown as ElicitParams)) as never);
  }

  /**
   * A request of the upstream, asked of the calling session, or a refusal when no call can take
   * it or its call has `CALL_REQUESTS_IN_FLIGHT` unanswered already (a flood of elicitations
   * would be a flood of prompts to the user, each waiting in the session).
   */
  async #ask<T>(method: string, ask: (call: ToolHandlerOptions) => Promise<T>): Promise<T> {
    const relay = this.#relay();
    if (relay !== undefined && relay.asking >= CALL_REQUESTS_IN_FLIGHT) {
      throw new McpError(ErrorCode.InvalidRequest, `the gateway cannot relay ${method}: this call has ${CALL_REQUESTS_IN_FLIGHT} requests to its client unanswered, the most it relays at once`);
    }
    if (relay !== undefined) {
      relay.asking += 1;
      this.#asking += 1;
      try {
        return await ask(relay.call);
      } finally {
        relay.asking -= 1;
        this.#asking -= 1;
      }
    }
    const why =
      current.getStore() !== undefined
        ? 'the call it came with has ended'
        : this.#calls.size === 0
        ? 'no call to this upstream is in progress'
        : 'calls of several sessions to this upstream are in progress and the request does not say which one it belongs to (over stdio nothing links it to its call)';
    throw new McpError(ErrorCode.InvalidRequest, `the gateway cannot relay ${method}: ${why}`);
  }

  /**
   * Where a message of the upstream goes: the call in whose context it arrived (its own
   * Streamable HTTP stream), the only call in flight, or the first call of the one session all
   * calls in flight belong to. Otherwise nowhere: one session's exchange never goes to another,
   * nor does what came in the context of a call that ended (a task's create left open for its
   * answer, `#taskEnded`): it went to the one call left in flight, another session's.
   */
  #relay(): Relay | undefined {
    const mine = current.getStore();
    if (mine !== undefined) return this.#calls.has(mine) ? mine : undefined;
    let first: Relay | undefined;
    for (const relay of this.#calls) {
      if (first === undefined) first = relay;
      else if (relay.call.session === undefined || relay.call.session !== first.call.session) return undefined;
    }
    return first;
  }

  /**
   * Whether a notification of `relay` is relayed: within the call's bucket
   * (`CALL_NOTIFICATION_BURST`, refilled at `CALL_NOTIFICATIONS_PER_SECOND`) and, when it is,
   * at most `MAX_NOTIFICATION_BYTES` (`size`, taken only then: a flood costs no JSON each).
   * The first one dropped is warned of, once a call.
   */
  #admits(relay: Relay, size: () => number): boolean {
    if (this.#spent(relay)) return false;
    // A dropped one counts too: a flood of large ones costs a size each only within the bucket.
    relay.allowance -= 1;
    const bytes = size();
    if (bytes <= MAX_NOTIFICATION_BYTES) return true;
    this.#warnDropped(relay, `one of ${bytes} bytes, over ${MAX_NOTIFICATION_BYTES}`);
    return false;
  }

  /** Whether `relay`'s bucket is empty now (refilled first): its notifications are dropped, warned of once. */
  #spent(relay: Relay): boolean {
    const now = performance.now();
    relay.allowance = Math.min(CALL_NOTIFICATION_BURST, relay.allowance + ((now - relay.refilledAt) * CALL_NOTIFICATIONS_PER_SECOND) / 1000);
    relay.refilledAt = now;
    if (relay.allowance >= 1) return false;
    this.#warnDropped(relay, `more than ${CALL_NOTIFICATION_BURST} at once or ${CALL_NOTIFICATIONS_PER_SECOND} a second`);
    return true;
  }

  #warnDropped(relay: Relay, why: string): void {
    if (relay.warned) return;
    relay.warned = true;
    this.#options.onWarning(`upstream ${this.#upstream.name}: a call of ${relay.toolName} sent notifications (progress, log messages) past the gateway's bound (${why}): they are dropped, the call goes on (warned once a call)`);
  }

  /**
   * An upstream's notification as read (stdio's reader, HTTP's screen), before the SDK's schema: a progress report or log
   * message is dropped there when its call's bucket is empty, or when no call would take it
   * (the handlers would drop it after the parse; one within the bucket is parsed and counted by
   * its handler); one that no handler of the link's client takes is dropped (the SDK's client
   * parsed it and ignored it: a flood of 100,000 cost 4.6-4.8 CPU-s, 0.35-0.5 since).
   */
  #dropped(message: { readonly method: string; readonly params?: unknown }): boolean {
    switch (message.method) {
      case 'notifications/progress': {
        const params = (typeof message.params === 'object' && message.params !== null ? message.params : {}) as { progressToken?: unknown };
        const relay = this.#byToken.get(String(params.progressToken));
        return relay === undefined || this.#spent(relay);
      }
      case 'notifications/message': {
        const relay = this.#relay();
        return relay === undefined || this.#spent(relay);
      }
      // The SDK's Protocol's own: it can only end a request of the upstream's that is being relayed.
      case 'notifications/cancelled':
        return this.#asking === 0;
      // #setup's: it says nothing more while the listing it would ask for is asked for already
      // (or waits for a pause: a failed listing's, or the one its cost sets): relist(true) would do nothing.
      case 'notifications/tools/list_changed':
        return this.#listing === undefined ? this.#relistTimer !== undefined : this.#listAgain || this.#waiting !== undefined;
      default:
        return true;
    }
  }

  /**
   * Closes `connection` as failed when `error` says the upstream no longer knows its Streamable
   * HTTP session (`sessionEnded`): it is reconnected after the usual pause, with a new session.
   * True when it did.
   */
  #sessionCheck(connection: UpstreamConnection, error: unknown): boolean {
    const why = sessionEnded(connection, error);
    if (why === undefined || this.#connection !== connection) return false;
    this.#endedWhy = why;
    void connection.close().catch(() => undefined);
    return true;
  }

  #failed(message: string): void {
    this.#lastError = message;
    this.#options.onWarning(`upstream ${this.#upstream.name}: ${message}; retrying in ${Math.round(this.#retryMs / 1000)} s`);
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#retryTimer !== undefined) return;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, RECONNECT_MAX_MS);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      void this.#connect();
    }, delay);
    this.#retryTimer.unref?.();
  }

  /** The connection ended (the child exited, the server went away): reconnect after a pause. */
  #lost(connection: UpstreamConnection, why = 'the connection ended'): void {
    if (this.#connection !== connection) return;
    this.#connection = undefined;
    this.#cancelRelist();
    if (this.#closed) return;
    // Only a connection that behaved a while starts the pauses again (RECONNECT_MAX_MS).
    if (performance.now() - this.#connectedAt >= RECONNECT_MAX_MS) this.#retryMs = RECONNECT_FIRST_MS;
    this.#failed(why);
    void this.#options.onChange();
  }

  /** Drops the connection and connects again at once (the row's transport changed, or `sync`). */
  async reconnect(): Promise<void> {
    const connection = this.#connection;
    this.#connection = undefined;
    this.#cancelRelist();
    if (connection !== undefined) await connection.close().catch(() => undefined);
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#retryMs = RECONNECT_FIRST_MS;
    await this.#connect();
  }

  /**
   * Lists the upstream's tools again (coalesced: one listing under way, and one more asked for
   * by anything that comes during it); no listing starts sooner after the last one ended than
   * `LISTING_COST_FACTOR` times what the last one took, `LISTING_SPACING_MS` at least, whatever
   * asked for it (`#listingDueAt`); tells the gateway when the definitions changed. Settles when a listing that started after the call has ended (never
   * waiting for the ones after it: an upstream that keeps saying list_changed kept it pending for
   * ever, and a sync with it). `announced`: asked by the upstream's list_changed, which waits for
   * the pause after a failed listing (the listing then due reads the change) rather than taking its place.
   */
  relist(announced = false): Promise<void> {
    // A listing waiting for its pause has not started: it is one that starts after this call.
    if (this.#waiting !== undefined) return this.#waiting.promise;
    if (this.#listing !== undefined) {
      this.#listAgain = true;
      this.#nextListing ??= waiter();
      return this.#nextListing.promise;
    }
    if (announced && this.#relistTimer !== undefined) return Promise.resolve();
    let listing = waiter();
    this.#listing = listing.promise;
    void current.exit(async () => {
      try {
        do {
          // What comes during the pause joins this listing: an upstream that says list_changed
          // without end (or with every answer) is listed at most as often as its cost allows.
          const pause = this.#listingDueAt - performance.now();
          if (pause > 0 && !this.#closed) {
            this.#waiting = listing;
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, pause);
              timer.unref?.();
              this.#pause = { timer, end: resolve };
            });
            this.#pause = undefined;
            this.#waiting = undefined;
            // Closed meanwhile: nothing is listed (the connection being made would be).
            if (this.#closed) break;
          }
          this.#listAgain = false;
          this.#listingBegan = performance.now();
          try {
            await this.#listOnce();
          } finally {
            const ended = performance.now();
            this.#listingDueAt = ended + listingPause(ended - this.#listingBegan);
          }
          listing.resolve();
          // A failed listing is tried again after its pause (#scheduleRelist), whatever came meanwhile.
          if (this.#relistTimer !== undefined) break;
          listing = this.#nextListing ?? waiter();
          this.#nextListing = undefined;
        } while (this.#listAgain && !this.#closed);
      } catch (error) {
        // Never an unhandled rejection out of a listing: it would end the serving process.
        this.#options.onWarning(`upstream ${this.#upstream.name}: cannot list its tools: ${describe(error)}`);
      } finally {
        this.#listing = undefined;
        this.#waiting = undefined;
        listing.resolve();
        this.#nextListing?.resolve();
        this.#nextListing = undefined;
      }
    });
    return listing.promise;
  }

  async #listOnce(): Promise<void> {
    const connection = this.#connection;
    if (connection === undefined) {
      // Not connected: this is a moment to try again (a sync, a changed row).
      if (this.#retryTimer !== undefined && !this.#closed) {
        clearTimeout(this.#retryTimer);
        this.#retryTimer = undefined;
        void this.#connect();
      }
      return;
    }
    // This listing is the one a failed listing waited for (coalesced: a list_changed or sync came first).
    if (this.#relistTimer !== undefined) clearTimeout(this.#relistTimer);
    this.#relistTimer = undefined;
    const listed: UpstreamToolDefinition[] = [];
    const taskRequired = new Set<string>();
    const row = this.#upstream.updated_at;
    try {
      let cursor: string | undefined;
      let pages = 0;
      do {
        // Bounded as the commands' listing is: an upstream whose pages never end (empty ones
        // grow nothing) was asked for the next one without end, and its last listing stayed served.
        if (pages++ === MAX_LIST_PAGES) throw endlessListing();
        const page = await listUpstreamToolsPage(connection.client, cursor, { timeout: this.#options.connectTimeoutMs });
        listed.push(...page.definitions);
        // As the commands' listing: more is an error, never the first pages served as if they were all.
        if (listed.length > MAX_LISTED_TOOLS) throw crowdedListing(listed.length);
        for (const name of page.taskRequired) taskRequired.add(name);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    } catch (error) {
      if (this.#connection !== connection || this.#sessionCheck(connection, error)) return;
      this.#lastError = `cannot list its tools: ${listingRefusal(error) ?? describe(error)}`;
      const delay = this.#scheduleRelist(connection);
      this.#options.onWarning(`upstream ${this.#upstream.name}: ${this.#lastError}; none of its tools is served until it lists them${delay === undefined ? '' : `; listing again in ${Math.round(delay / 1000)} s`}`);
      // The upstream answers, but what it lists now is unknown, so no tool of it can be known
      // to match its approved hash: the last listing is dropped (a rug pull beside one tool
      // the SDK's client refuses, an inputSchema not of type object, would else be served on
      // the old listing). A connection that ended keeps it (#lost: calls answer unavailable).
      if (this.#definitions !== undefined) {
        this.#definitions = undefined;
        this.#listedKey = '';
        await this.#options.onChange();
      }
      return;
    }
    if (this.#connection !== connection || this.#closed) return;
    this.#relistMs = RECONNECT_FIRST_MS;
    this.#lastError = undefined;
    this.#listedFor = row;
    this.#taskRequired = taskRequired;
    const key = canonicalJson(listed as never);
    if (key === this.#listedKey && this.#definitions !== undefined) return;
    this.#listedKey = key;
    this.#definitions = Object.freeze(listed);
    await this.#options.onChange();
  }

  /**
   * Lists again after a pause, while `connection` lives: a listing that failed once (a timeout
   * under load, one error answer) would else leave the upstream unserved until something else
   * lists it (list_changed, sync, the sync interval). Returns the pause (ms); undefined once closed.
   */
  #scheduleRelist(connection: UpstreamConnection): number | undefined {
    if (this.#closed) return undefined;
    if (this.#relistTimer !== undefined) clearTimeout(this.#relistTimer);
    // Never sooner than the pause this listing's cost sets (one that timed out cost its timeout):
    // the listing would wait for it anyway, and the warning says when it comes.
    const delay = Math.max(this.#relistMs, listingPause(performance.now() - this.#listingBegan));
    this.#relistMs = Math.min(this.#relistMs * 2, RECONNECT_MAX_MS);
    this.#relistTimer = setTimeout(() => {
      this.#relistTimer = undefined;
      if (this.#connection === connection && !this.#closed) void this.relist();
    }, delay);
    this.#relistTimer.unref?.();
    return delay;
  }

  /** No listing waits any more (the connection ended or is replaced, or the link closed): the next connection starts at the first pause. */
  #cancelRelist(): void {
    if (this.#relistTimer !== undefined) clearTimeout(this.#relistTimer);
    this.#relistTimer = undefined;
    this.#relistMs = RECONNECT_FIRST_MS;
  }

  /**
   * Forwards one call (arguments already checked against the approved schema). The result
   * comes back as the upstream sent it; a down or silent upstream, or one whose result cannot
   * be carried, is an error result naming it. A call the session relays itself (its `context`
   * is a RelayedCall) is ended by the session; any other by its signal.
   */
  async call(toolName: string, args: Record<string, unknown>, call: ToolHandlerOptions): Promise<McpContent> {
    const { name } = this.#upstream;
    const connection = this.#connection;
    if (connection === undefined) {
      // Not a moment to connect: the pause after a failure is kept (a call connected at once,
      // so an agent calling again and again reconnected a crashing or flooding upstream each time).
      return outcome('UPSTREAM_UNAVAILABLE', `upstream '${name}' is not connected${this.#lastError === undefined ? '' : ` (${this.#lastError})`}; try again later`);
    }
    const relayed = relayedCallOf(call.context);
    if (!this.#taskRequired.has(toolName)) return this.#forward(connection, toolName, args, call, relayed);
    const relay = relayOf(call, toolName);
    if (this.#upstream.transport.type !== 'stdio') relay.ended = new AbortController();
    const progressToken = `${RELAY_ID_PREFIX}${++this.#tokens}`;
    const task: TaskCall = {};
    this.#calls.add(relay);
    this.#byToken.set(progressToken, relay);
    try {
      const forward = (): Promise<unknown> =>
        callAsTask(connection.client, { name: toolName, arguments: args, _meta: { progressToken } }, { signal: relayed?.signal ?? call.signal, timeout: this.#options.callTimeoutMs }, task);
      return this.#relayed(toolName, this.#upstream.transport.type === 'stdio' ? await forward() : await current.run(relay, forward));
    } catch (error) {
      this.#sessionCheck(connection, error);
      this.#taskEnded(connection, relay, task);
      return this.#failure(toolName, error);
    } finally {
      this.#calls.delete(relay);
      // The upstream's last report may be read just after its answer: the token stays a moment.
      this.#expire(progressToken);
    }
  }

  /**
   * A call made as a task ended without its result (cancelled, timed out, its session ended, a
   * request of it failed): its POSTs still open (a blocking tasks/result's) end now, rather than
   * at `callTimeoutMs`, and its task, unless seen in a terminal status, is cancelled upstream with
   * `tasks/cancel` (the specification's way to cancel a task; the SDK's client only sent
   * notifications/cancelled of its request in flight), when the upstream declares it.
   */
  #taskEnded(connection: UpstreamConnection, relay: Relay, task: TaskCall): void {
    // Its create still unanswered: the call's POSTs stay open for that answer (an HTTP upstream
    // sends it on the create's POST), whose task is then cancelled.
    if (task.creating !== undefined) {
      const { creating } = task;
      delete task.creating;
      void creating.then(() => this.#taskEnded(connection, relay, task));
      return;
    }
    relay.ended?.abort(new Error('the call ended before its answer'));
    const taskId = task.id;
    if (taskId === undefined || this.#connection !== connection || connection.client.getServerCapabilities()?.tasks?.cancel === undefined) return;
    // Outside the call's context: its POST is not one of the call's, which were just ended.
    current.exit(() => connection.client.experimental.tasks.cancelTask(taskId, { timeout: this.#options.connectTimeoutMs })).catch(() => undefined);
  }

  /**
   * A plain call, relayed as JSON-RPC on the upstream's transport under an id of the link's
   * own (the SDK's client neither sends it nor reads its answer: `#answer` takes it first).
   * The id is also the call's progress token. Ends with the answer, the link's timeout, the
   * end of the connection, or the caller's cancellation (then `notifications/cancelled` with
   * that id goes upstream).
   */
  #forward(connection: UpstreamConnection, toolName: string, args: Record<string, unknown>, call: ToolHandlerOptions, relayed: RelayedCall | undefined): Promise<McpContent> {
    const transport = connection.client.transport;
    if (transport === undefined) return Promise.resolve(this.#failure(toolName, new Error('Not connected')));
    const signal = relayed === undefined ? call.signal : undefined;
    // Ended before it was sent: nothing goes upstream.
    if (signal?.aborted === true) return Promise.resolve(this.#failure(toolName, signal.reason));
    if (relayed?.cancelled === true) return Promise.resolve(this.#failure(toolName, new McpError(ErrorCode.RequestTimeout, 'cancelled before it was sent')));
    const id = `${RELAY_ID_PREFIX}${++this.#tokens}`;
    const relay = relayOf(call, toolName);
    if (this.#upstream.transport.type !== 'stdio') relay.ended = new AbortController();
    return new Promise<McpContent>((resolve) => {
      const finish = (result: McpContent): void => {
        if (!this.#pending.delete(id)) return;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (relayed !== undefined) relayed.onCancel = undefined;
        this.#calls.delete(relay);
        // No report is left to route: one that came before the answer was handled first (`#answer`).
        this.#byToken.delete(id);
        resolve(result);
      };
      const cancel = (reason: unknown): void => {
        if (!this.#pending.has(id)) return;
        // What the SDK's client answers a cancelled or timed-out request with (the session has answered already).
        finish(this.#failure(toolName, reason instanceof McpError ? reason : new McpError(ErrorCode.RequestTimeout, String(reason))));
        transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason) } }).catch(() => undefined);
        // Its POST (an HTTP upstream's) ends now, after the call: it was held until the upstream answered or callTimeoutMs.
        relay.ended?.abort(new Error(`the call ended before its answer: ${String(reason)}`));
      };
      const onAbort = (): void => cancel(signal?.reason);
      this.#pending.set(id, { connection, toolName, finish });
      this.#calls.add(relay);
      this.#byToken.set(id, relay);
      const timeout = this.#options.callTimeoutMs;
      const timer = setTimeout(() => cancel(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout })), timeout);
      if (signal !== undefined) signal.addEventListener('abort', onAbort, { once: true });
      else if (relayed !== undefined) relayed.onCancel = cancel;
      const message: JSONRPCRequest = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: toolName, arguments: args, _meta: { progressToken: id } } };
      // A stdio upstream's messages never arrive in the call's context (see `current`): the
      // context is set only where it can tell calls apart, since a first run() turns on
      // Node's promise hooks for the whole process, a cost on every promise of every call.
      const sent = this.#upstream.transport.type === 'stdio' ? transport.send(message) : current.run(relay, () => transport.send(message));
      sent.catch((error: unknown) => {
        this.#sessionCheck(connection, error);
        finish(this.#failure(toolName, error));
      });
    });
  }

  /** Takes the upstream's answer to a relayed call (true), or leaves the message to the SDK's client (false). */
  #answer(message: JSONRPCMessage): boolean {
    const { id } = message as { id?: unknown };
    if (typeof id !== 'string' || !id.startsWith(RELAY_ID_PREFIX) || 'method' in message) return false;
    const pending = this.#pending.get(id);
    // A late answer to a call that ended (cancelled, timed out): nothing waits for it.
    if (pending === undefined) return true;
    // After the notifications that came before it: the SDK's client hands each to its handler a
    // microtask later, and a log message must find its call still in flight.
    queueMicrotask(() => {
      if (pending.invalid !== undefined) {
        pending.finish(this.#invalidAnswerResult(pending.toolName, pending.invalid));
      } else if ('error' in message && message.error.message === pending.unanswered) {
        // The gateway's own error (its screen's), not the upstream's answer: said so.
        pending.finish(outcome('UPSTREAM_ERROR', `upstream '${this.#upstream.name}': the gateway could not get its answer to ${pending.toolName}: ${pending.unanswered}`));
      } else if ('error' in message) {
        // The upstream answered: UPSTREAM_ERROR whatever the code, -32000 and -32001 too (a
        // server's own codes, which #failure would read as the SDK's closed connection and timeout).
        const { code, message: text, data } = message.error;
        pending.finish(this.#answeredError(pending.toolName, McpError.fromError(code, text, data)));
      } else {
        pending.finish(this.#relayed(pending.toolName, (message as { result?: unknown }).result));
      }
    });
    return true;
  }

  /**
   * An answer the SDK's schema refuses (`connectUpstream`'s `onInvalidAnswer`, over every
   * transport): when it answers a relayed call, the -32603 error it comes as ends that call as
   * UPSTREAM_ERROR saying what was wrong (`#answer`).
   */
  #invalidAnswer(id: string | number, invalid: InvalidAnswer): void {
    const pending = typeof id === 'string' ? this.#pending.get(id) : undefined;
    if (pending !== undefined) pending.invalid = invalid;
  }

  /** The screen answers a relayed call itself (`connectUpstream`'s `onUnanswered`): its error is then read as the gateway's (`#answer`). */
  #unanswered(id: string | number, reason: string): void {
    const pending = typeof id === 'string' ? this.#pending.get(id) : undefined;
    if (pending !== undefined) pending.unanswered = reason;
  }

  /** The upstream's answer to a call is no JSON-RPC response: its result is not even an object, its error not a JSON-RPC error. */
  #invalidAnswerResult(toolName: string, { member, issue }: InvalidAnswer): McpContent {
    const { name } = this.#upstream;
    if (member === 'result') return this.#invalidResult(toolName, issue);
    if (member === 'error') return outcome('UPSTREAM_ERROR', `upstream '${name}' answered ${toolName} with an error that is not a JSON-RPC error: ${issue}`);
    return outcome('UPSTREAM_ERROR', `upstream '${name}' answered ${toolName} with what is not a JSON-RPC response: ${issue}`);
  }

  /** The upstream answered with a result that is not a CallToolResult (the SDK's schema refuses it). */
  #invalidResult(toolName: string, issue: string): McpContent {
    return outcome('UPSTREAM_ERROR', `upstream '${this.#upstream.name}' returned a result for ${toolName} that cannot be relayed: not a valid CallToolResult: ${issue}`);
  }

  /**
   * The upstream's result as the session gets it: checked as MCP clients would take it
   * (`mcpContent`: copied and frozen), after the SDK's schema (CallToolResultSchema) unless it
   * is the usual result, which that schema would give back as it is.
   */
  #relayed(toolName: string, result: unknown): McpContent {
    let checked = result;
    if (!isUsualResult(result)) {
      const parsed = CallToolResultSchema.safeParse(result);
      if (!parsed.success) return this.#failure(toolName, parsed.error);
      checked = parsed.data;
    }
    const { content, structuredContent, isError, _meta } = checked as McpContentInput;
    const relayed: { -readonly [K in keyof McpContentInput]: McpContentInput[K] } = { content };
    if (structuredContent !== undefined) relayed.structuredContent = structuredContent;
    if (isError !== undefined) relayed.isError = isError;
    if (_meta !== undefined) relayed._meta = _meta;
    try {
      return mcpContent(relayed);
    } catch (error) {
      return outcome('UPSTREAM_ERROR', `upstream '${this.#upstream.name}' returned a result for ${toolName} that cannot be relayed: ${describe(error)}`);
    }
  }

  /** A call that got no result: the upstream timed out, answered a JSON-RPC error, sent what is not MCP, or could not be reached. */
  #failure(toolName: string, error: unknown): McpContent {
    const { name } = this.#upstream;
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return outcome('UPSTREAM_UNAVAILABLE', `upstream '${name}' did not answer ${toolName} within ${this.#options.callTimeoutMs} ms`);
    }
    if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) return this.#answeredError(toolName, error);
    // The SDK's schema refused the result (CallToolResultSchema): the upstream answered, with something that is not MCP.
    if (error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError') && Array.isArray((error as { issues?: unknown }).issues)) {
      // The JSON-RPC schema's union (an answer as a JSON body fails the POST), or CallToolResultSchema's.
      const invalid = invalidAnswerOf(error);
      return invalid === undefined ? this.#invalidResult(toolName, firstIssue(error)) : this.#invalidAnswerResult(toolName, invalid);
    }
    return outcome('UPSTREAM_UNAVAILABLE', `upstream '${name}' could not be reached for ${toolName}: ${describe(error)}`);
  }

  /** The upstream answered the call with a JSON-RPC error. */
  #answeredError(toolName: string, error: McpError): McpContent {
    return outcome('UPSTREAM_ERROR', `upstream '${this.#upstream.name}' answered ${toolName} with error ${error.code}: ${error.message}`);
  }

  /** The connection ended: the calls relayed on it end as the SDK's client ends its requests. */
  #endCalls(connection: UpstreamConnection, why = 'Connection closed'): void {
    for (const pending of [...this.#pending.values()]) {
      if (pending.connection === connection) pending.finish(this.#failure(pending.toolName, new McpError(ErrorCode.ConnectionClosed, why)));
    }
  }

  /** Forgets a call's progress token after this turn of the event loop (one immediate for every call that ended in it). */
  #expire(token: string): void {
    this.#expiring.push(token);
    if (this.#expiring.length > 1) return;
    setImmediate(() => {
      const tokens = this.#expiring;
      this.#expiring = [];
      for (const each of tokens) this.#byToken.delete(each);
    });
  }

  /** Closes the connection (a stdio child is ended) and stops reconnecting. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#cancelRelist();
    // A listing waiting for its pause ends now: a connection being made awaits it (and close that).
    if (this.#pause !== undefined) clearTimeout(this.#pause.timer);
    this.#pause?.end();
    await this.#connecting?.catch(() => undefined);
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection !== undefined) await connection.close().catch(() => undefined);
  }
}
