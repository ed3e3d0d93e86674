// The console's only way to the registry: the HTTP API, with the bearer token from this
// tab's session storage. Tokens never go into a URL (a navigation cannot carry a header).

const TOKEN_KEY = 'tool-registry.token';

export function storedToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token) {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** A response that was not 2xx, with the RFC 9457 problem body when there is one. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = problem?.code ?? null;
    this.context = problem?.context ?? {};
    this.problem = problem ?? null;
  }
}

/** @param {Record<string, string>} [extra] @returns {Record<string, string>} */
function headers(extra = {}) {
  /** @type {Record<string, string>} */
  const result = { Accept: 'application/json', ...extra };
  const token = storedToken();
  if (token !== null) result.Authorization = `Bearer ${token}`;
  return result;
}

/** The server could not be reached at all (a network error, not an HTTP status). */
export class UnreachableError extends Error {
  constructor(cause) {
    super('cannot reach the server', { cause });
    this.name = 'UnreachableError';
  }
}

/**
 * Why a path segment cannot go into a URL: `.` and `..` (plain or percent-encoded, which the
 * browser's URL parser resolves away: `/v1/tools/.` would fetch the list), or null when it can.
 */
export function unaddressable(segment) {
  return segment === '.' || segment === '..'
    ? `a URL path cannot name ${JSON.stringify(segment)}: browsers resolve "." and ".." segments away, so the HTTP API cannot serve this name (the command can: tool-registry get ${segment}, and enable, disable, deprecate, remove…)`
    : null;
}

/**
 * The namespaces the header's switch offers, from whoami (`identity`) and, for a token that may
 * read, `GET /v1/namespaces` (`listed`, or null when that failed). A token without `read` is
 * refused that list: its switch is the namespaces whoami says it is bound to, sorted as the list
 * is. A write-only token bound to every namespace (whoami's `null`) gets null, no switch: the
 * console cannot learn the server's namespaces for it (its addresses `#/ns/NS/import` still work).
 * @param {{ scopes?: string[], namespaces?: string[] | null } | null} identity
 * @param {string[] | null} listed
 * @returns {string[] | null}
 */
export function switchNamespaces(identity, listed) {
  if ((identity?.scopes ?? []).includes('read')) return listed;
  const bound = identity?.namespaces;
  return Array.isArray(bound) ? [...bound].sort() : null;
}

/** One path segment, percent-encoded; a `.` or `..` segment is refused rather than sent to another resource. */
export function segment(value) {
  const reason = unaddressable(value);
  if (reason !== null) throw new TypeError(reason);
  return encodeURIComponent(value);
}

/** The URL prefix of a namespace's routes: `default` is the unprefixed `/v1`. */
export function base(namespace) {
  return namespace === 'default' ? '/v1' : `/v1/namespaces/${segment(namespace)}`;
}

export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(key, String(one));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** fetch(), with a network failure (server stopped, connection refused) as an UnreachableError. */
async function reach(path, init) {
  try {
    return await fetch(path, init);
  } catch (error) {
    if (init.signal?.aborted) throw error;
    throw new UnreachableError(error);
  }
}

async function body(response) {
  const text = await response.text();
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return { detail: text };
  }
}

/**
 * One API call. `json` is JSON-encoded unless it is bytes (an uploaded file is sent as its own
 * bytes, so its key order reaches the server as written, and bytes that are not UTF-8 reach
 * the server's check rather than being replaced on the way).
 * @param {string} path
 * @param {{ method?: string, json?: unknown, signal?: AbortSignal }} [options]
 */
export async function call(path, { method = 'GET', json, signal } = {}) {
  /** @type {RequestInit & { headers: Record<string, string> }} */
  const init = { method, headers: headers(), signal, cache: 'no-store' };
  if (json !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = json instanceof ArrayBuffer ? json : JSON.stringify(json);
  }
  const response = await reach(path, init);
  // A server may close the connection after an error's status line (431: the headers too large):
  // the status still says what happened. A 2xx whose body was lost: the answer did not reach us.
  const data = await body(response).catch((error) => {
    // A screen left while the body was read: its abort, as when the fetch itself is aborted.
    if (signal?.aborted) throw error;
    if (response.ok) throw new UnreachableError(error);
    return null;
  });
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

/** The largest page the API serves (`limit` of GET /v1/tools). */
export const PAGE_MAX = 1000;

/** Every page of a cursor-paged list (`next_cursor` until null), PAGE_MAX at a time. */
export async function callAll(path, params, key, signal) {
  const items = [];
  let cursor;
  do {
    const page = await call(path + query({ ...params, limit: PAGE_MAX, cursor }), { signal });
    items.push(...page[key]);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return items;
}

/**
 * Tools per request of "Approve all": 500 names pinned to their hash (`TOOL@HASH`, at most 146
 * bytes each) are at most about 73 KB, far under the server's default body limit (1 MiB).
 */
export const APPROVE_BATCH = 500;

/** "Approve all" stopped at a refusal: `approved` is what the requests before it approved (they stay approved); `cause` the refusal. */
export class ApprovalStopped extends Error {
  constructor(approved, cause) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'ApprovalStopped';
    this.approved = approved;
  }
}

const utf8 = new TextEncoder();

/** The bytes of `{"tools":[...]}` for these tools, as call() sends it. */
function approveBodyBytes(tools) {
  return utf8.encode(JSON.stringify({ tools })).length;
}

/** The tools from `start` that one request takes: at most `batch`, in a body of at most `maxBytes` (one tool at least). */
function nextBatch(tools, start, batch, maxBytes) {
  const chosen = [];
  let bytes = approveBodyBytes([]);
  for (let index = start; index < tools.length && chosen.length < batch; index++) {
    const more = approveBodyBytes([tools[index]]) - approveBodyBytes([]) + (chosen.length > 0 ? 1 : 0);
    if (chosen.length > 0 && bytes + more > maxBytes) break;
    chosen.push(tools[index]);
    bytes += more;
  }
  return chosen;
}

/**
 * Approves `tools` (as approve takes them, `TOOL@HASH`) at `path` (POST .../upstreams/NAME/approve)
 * in requests of at most `batch` tools, one after another: one request for 10,000 tools passed the
 * server's body limit (`--max-body`), a 413. A 413 names the limit (`context.limit`) and approved
 * nothing: its tools are sent again in requests that fit it. Any other refusal stops there: each
 * request is all or nothing, and what the requests before it approved stays approved.
 * `onProgress({ sent, total, approved })` after each answered request.
 * @param {string} path
 * @param {string[]} tools
 * @param {{ batch?: number, onProgress?: (progress: { sent: number, total: number, approved: number }) => void, send?: typeof call }} [options]
 * @returns {Promise<object[]>} every approved entry, in order
 * @throws {ApprovalStopped} at the first refusal (or an answer that did not come), with what was approved before it
 */
export async function approveInBatches(path, tools, { batch = APPROVE_BATCH, onProgress = () => undefined, send = call } = {}) {
  const approved = [];
  let maxBytes = Infinity;
  let sent = 0;
  while (sent < tools.length) {
    const chunk = nextBatch(tools, sent, batch, maxBytes);
    try {
      const result = await send(path, { method: 'POST', json: { tools: chunk } });
      approved.push(...(result?.approved ?? []));
    } catch (error) {
      const limit = error instanceof ApiError && error.status === 413 ? error.context.limit : undefined;
      // Smaller requests only while they can be: one tool over the limit, or a limit this body kept to, stops.
      if (typeof limit === 'number' && chunk.length > 1 && approveBodyBytes(chunk) > limit) {
        maxBytes = limit;
        continue;
      }
      throw new ApprovalStopped(approved, error);
    }
    sent += chunk.length;
    onProgress({ sent, total: tools.length, approved: approved.length });
  }
  return approved;
}

/**
 * The import screen's plans (upload, dry run, confirm), without the page, which shows what these
 * answer: a plan is a dry run of one file's bytes in one mode, and Import runs it. Each plan
 * belongs to the form as it was when it was asked for: any change (another file or mode picked, a
 * plan asked again, Cancel) starts a new generation, and an answer asked for in an older one (a
 * dry run, Import's re-check) is dropped, so that the confirm step never shows, nor imports, the
 * plan of a file the form no longer holds. `snapshotUrl(mode, dryRun)` is the snapshot route's
 * URL; `send` is `call` (a test's stand-in).
 */
export class ImportPlans {
  #url;
  #send;
  /** Changes of the form (the file, the mode, a plan asked, Cancel): an answer asked for before one is not the form's. */
  #generation = 0;
  /** The generation of the last plan asked for: a dry run answered after a newer one was asked is superseded, not the form's change. */
  #asked = 0;
  /** @type {{ bytes: ArrayBuffer, size: number, mode: string, report: any, generation: number } | null} the plan shown, which Import runs */
  planned = null;
  /** Import is under way: a second click does nothing. */
  importing = false;

  /** @param {(mode: string, dryRun: boolean) => string} snapshotUrl @param {{ send?: typeof call }} [options] */
  constructor(snapshotUrl, { send = call } = {}) {
    this.#url = snapshotUrl;
    this.#send = send;
  }

  /**
   * The form's file or mode changed: true when that dropped the plan shown. While Import runs
   * too: its re-check then imports nothing (once the import itself went out, it goes on).
   */
  changed() {
    this.#generation += 1;
    const dropped = this.planned !== null;
    this.planned = null;
    return dropped;
  }

  /** The plan shown was cancelled (while Import's re-check runs too: nothing is imported). */
  cancel() {
    this.#generation += 1;
    this.planned = null;
  }

  /**
   * A dry run of `bytes` (the file's, `size` bytes, or their read under way) in `mode`:
   * `{ planned }`, the plan now shown; `{ stale: true }` when the form changed while it ran; or
   * `{ superseded: true }` when a newer plan was asked for meanwhile (its answer is the one to
   * show). Asking drops the plan shown. Throws what `call` throws (and the read).
   * @param {ArrayBuffer | Promise<ArrayBuffer>} read @param {number} size @param {string} mode
   * @returns {Promise<{ planned: NonNullable<ImportPlans['planned']> } | { stale: true } | { superseded: true }>}
   */
  async plan(read, size, mode) {
    const generation = ++this.#generation;
    this.#asked = generation;
    this.planned = null;
    /** @returns {{ stale: true } | { superseded: true }} */
    const dropped = () => (this.#asked === generation ? { stale: /** @type {const} */ (true) } : { superseded: /** @type {const} */ (true) });
    let bytes;
    let report;
    try {
      bytes = await read;
      report = await this.#send(this.#url(mode, true), { method: 'POST', json: bytes });
    } catch (error) {
      // A refusal (not a snapshot, too large, no server) of a file no longer picked is dropped as its plan would be.
      if (generation !== this.#generation) return dropped();
      throw error;
    }
    if (generation !== this.#generation) return dropped();
    this.planned = { bytes, size, mode, report, generation };
    return { planned: this.planned };
  }

  /**
   * Import: the plan shown is planned again (it was made against a revision; if the registry
   * moved since, the new plan is shown rather than applied blind), then imported. The answer:
   * `none` (no plan, or Import under way), `stale` (the form changed during the re-check:
   * nothing was imported, and the re-check's plan, of the old file, is dropped), `replanned` (the
   * new `report`, now the plan shown), `imported` (the import's `report`), or `failed` (`error`;
   * `sent`: the import itself went out, so a connection lost on the way back may have seen it
   * made; `plan`, the plan it ran).
   * @returns {Promise<{ outcome: 'none' | 'stale' } | { outcome: 'replanned' | 'imported', report: any } | { outcome: 'failed', error: unknown, sent: boolean, plan: { size: number, mode: string } }>}
   */
  async confirm() {
    // A second click (a double-click, Enter pressed twice) while the first runs would import
    // again and report the second import's "0 added, … unchanged" over the first's.
    if (this.importing || this.planned === null) return { outcome: 'none' };
    this.importing = true;
    const plan = this.planned; // the plan confirmed: once its import went out, even if the form changes meanwhile
    let sent = false;
    try {
      const again = await this.#send(this.#url(plan.mode, true), { method: 'POST', json: plan.bytes });
      // Another file or mode picked, a plan asked again, Cancel: the form is no longer this plan's.
      if (plan.generation !== this.#generation) return { outcome: 'stale' };
      if (JSON.stringify(again.plan) !== JSON.stringify(plan.report.plan)) {
        this.planned = { ...plan, report: again };
        return { outcome: 'replanned', report: again };
      }
      sent = true;
      const report = await this.#send(this.#url(plan.mode, false), { method: 'POST', json: plan.bytes });
      this.planned = null;
      return { outcome: 'imported', report };
    } catch (error) {
      // The re-check refused after the form changed: nothing was imported, and the refusal is the old file's.
      if (!sent && plan.generation !== this.#generation) return { outcome: 'stale' };
      return { outcome: 'failed', error, sent, plan };
    } finally {
      this.importing = false;
    }
  }
}

/** Parses a text/event-stream body into `{ id, event, data }` messages. */
async function* events(stream) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let message = { id: null, event: 'message', data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (message.data.length > 0) yield { id: message.id, event: message.event, data: message.data.join('\n') };
        message = { id: null, event: 'message', data: [] };
        continue;
      }
      if (line.startsWith(':')) continue; // a heartbeat comment
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') message.data.push(value);
      else if (field === 'id') message.id = value;
      else if (field === 'event') message.event = value;
    }
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms, signal) {
  return /** @type {Promise<void>} */ (
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
    })
  );
}

/**
 * Calls `retry` once, after `ms` in a visible tab: a hidden tab asks nothing (the wait stops when
 * it hides) and retries at once when shown, as the live feed resumes. `onWait(hidden)` is told at
 * the start and at each change, so the screen can say when it retries. `page` is the document
 * (its `visibilityState` and `visibilitychange`). Nothing after `signal` aborts.
 * @param {number} ms
 * @param {{ signal: AbortSignal, retry: () => void, onWait?: (hidden: boolean) => void, page?: EventTarget & { visibilityState: string } }} options
 */
export function retryWhenShown(ms, { signal, retry, onWait = () => undefined, page = document }) {
  let timer = null;
  const stop = () => {
    clearTimeout(timer);
    page.removeEventListener('visibilitychange', changed);
  };
  const fire = () => {
    stop();
    retry();
  };
  function changed() {
    if (signal.aborted) return stop();
    if (page.visibilityState === 'hidden') {
      clearTimeout(timer);
      timer = null;
      onWait(true);
    } else if (timer === null) fire(); // shown after a hidden wait: at once
  }
  page.addEventListener('visibilitychange', changed);
  signal.addEventListener('abort', stop, { once: true });
  if (page.visibilityState === 'hidden') onWait(true);
  else {
    timer = setTimeout(fire, ms);
    onWait(false);
  }
}

/**
 * The live change feed, read with fetch so the bearer header goes along (EventSource cannot
 * send one). Calls `onEvent` with each change event after `since`, reconnects with
 * `Last-Event-ID` (1 s, doubling to 15 s) and reports `live`, `reconnecting` (the stream
 * ended), `unreachable` (no answer from the server), `refused` (429 or 503: no room for the
 * stream; `recheck()` is awaited every 2 s until the retry) or `failed` (an answer not worth
 * retrying: 401, 403, 404, 410) to `onState`, until `signal` aborts.
 */
export async function follow(namespace, since, { signal, onEvent, onState, recheck }) {
  let last = since;
  let delay = 1000;
  while (!signal.aborted) {
    let state = 'reconnecting';
    let refused = null;
    try {
      const response = await reach(`${base(namespace)}/changes${query({ since: last })}`, {
        headers: headers({ Accept: 'text/event-stream', 'Last-Event-ID': String(last) }),
        signal,
        cache: 'no-store',
      });
      if (!response.ok) throw new ApiError(response.status, await body(response));
      onState('live');
      delay = 1000;
      for await (const message of events(response.body)) {
        const event = JSON.parse(message.data);
        if (typeof event?.revision !== 'number' || typeof event.tool_name !== 'string') continue;
        if (event.revision <= last) continue;
        last = event.revision;
        onEvent(event);
      }
    } catch (error) {
      if (signal.aborted) return;
      // Not worth retrying: no access (a revoked token: 401), or the feed moved past our revision (410: reload the screen).
      if (error instanceof ApiError && [401, 403, 404, 410].includes(error.status)) {
        onState('failed', error);
        return;
      }
      if (error instanceof UnreachableError) state = 'unreachable';
      if (error instanceof ApiError && (error.status === 429 || error.status === 503)) {
        state = 'refused';
        refused = error;
      }
    }
    if (signal.aborted) return;
    onState(state, refused);
    if (refused === null) await pause(delay, signal);
    else {
      // No stream, so no cut to learn a revoke from: `recheck()` every 2 s until the retry (it was asked at each retry only).
      for (const until = Date.now() + delay; !signal.aborted && Date.now() < until;) {
        await pause(Math.min(2000, until - Date.now()), signal);
        if (!signal.aborted && Date.now() < until) await recheck();
      }
    }
    delay = Math.min(delay * 2, 15000);
  }
}

/**
 * Learns that the server cut this token's streams, on any screen: it holds one change-feed stream
 * open and reads past its events. The server ends a revoked or changed token's streams within
 * 2 s (an `error` event, then the end); each time the stream ends or is refused, `onCut()` is
 * awaited (the console asks whoami), then the stream opens again after 1 s, doubling to 15 s
 * while refused. A token that may not read the feed (`reads` false, or a 403 or 404) cannot hold
 * one: `onCut()` runs every 2 s instead, and nothing else is asked (the refused stream was asked
 * again each time: two requests every 2 s). One refused for want of room (429 over the token's
 * share of `--max-streams`, 503 over the server's) is asked again after 1 s, doubling to 15 s, and
 * `onCut()` runs every 2 s meanwhile. `onLive()` is called each time a stream opens (the server
 * answers again). Until `signal` aborts.
 */
export async function watchStreams(namespace, { signal, onCut, onLive, reads = true }) {
  let delay = 1000;
  let streams = reads;
  let retryAt = 0; // a stream refused for want of room (429, 503) is asked again then; whoami every 2 s meanwhile
  while (!signal.aborted) {
    let wait = delay;
    if (!streams || Date.now() < retryAt) {
      // Its scopes or namespaces changing re-renders the screen, which starts another watch: this one never needs the stream again.
      await pause(streams ? Math.min(2000, retryAt - Date.now()) : 2000, signal);
      if (signal.aborted) return;
      if (!streams || Date.now() < retryAt) await onCut();
      continue;
    }
    try {
      const response = await reach(`${base(namespace)}/changes`, { headers: headers({ Accept: 'text/event-stream' }), signal, cache: 'no-store' });
      if (response.ok) {
        delay = 1000;
        wait = delay;
        onLive();
        for await (const message of events(response.body)) void message; // only its end matters
      } else {
        await response.body?.cancel();
        if (response.status === 403 || response.status === 404) streams = false;
        else if (response.status === 429 || response.status === 503) {
          // Over the token's share of --max-streams (its other tabs, its scripts) or the server's: no stream, so
          // whoami every 2 s meanwhile (it waited 1 s, doubling to 15 s, so a revoke signed it out only that late).
          retryAt = Date.now() + delay;
          delay = Math.min(delay * 2, 15000);
          wait = 0;
        } else delay = Math.min(delay * 2, 15000);
      }
    } catch {
      if (signal.aborted) return;
      delay = Math.min(delay * 2, 15000); // unreachable, or the stream broke off
    }
    if (signal.aborted) return;
    await onCut();
    if (streams) await pause(wait, signal);
  }
}
