// LISTEN on a dedicated connection (never one of the pool's: a pooled connection goes back
// to the pool, and PgBouncer's transaction pooling cannot LISTEN at all), the way pg-boss
// does it: a heartbeat proves the connection alive, a lost connection is reconnected with
// capped, jittered backoff, and every (re)connect tells the owner to resync from the change
// log, because notifications sent while disconnected are gone. A notification is only a
// wake-up: what changed is always read from the log.
//
// Listeners given the same `shareKey` (the registries on one pool) share one connection,
// LISTENing on each of their channels: a server that opens many namespaces on one pool holds
// one LISTEN connection, not one per namespace (each is a server process).
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { nodePostgres } from '../../node-postgres.js';
import { quoteIdentifier } from './identifiers.js';

export interface ChangeListenerOptions {
  /** How to open the dedicated connection (a connection string, or a pool's settings). */
  readonly connection: pg.ClientConfig;
  readonly channel: string;
  /**
   * Listeners with the same key, connection string and heartbeat share one connection (the
   * store passes its pool). Without a key the listener has a connection of its own.
   */
  readonly shareKey?: object;
  /** A `SELECT 1` (or the rights' check) this often proves the connection alive; one that takes as long fails it. Default 1000. */
  readonly heartbeatMs?: number;
  /** First and longest wait between reconnect attempts. Default 100 and 5000 ms. */
  readonly reconnectMs?: { readonly initial?: number; readonly max?: number };
  /** A notification on the channel (the payload is whatever the sender put there). */
  readonly onNotify: (payload: string) => void;
  /**
   * What this listener's owner serves from memory: every (re)connect and heartbeat also asks whether `role`
   * (default: the connection's current_user) still has USAGE on `schema` and SELECT on
   * `tables`, and tells onRights. No answer for a schema or role that does not exist.
   */
  readonly rights?: { readonly schema: string; readonly role?: string; readonly tables: readonly string[] };
  /** The answer for `rights`, told just before a (re)connect or a heartbeat counts as confirmed. */
  readonly onRights?: (readable: boolean) => void;
  /** Connected and listening (first time and after every reconnect): resync now. */
  readonly onConnect: () => void;
  /** The connection is gone; notifications are missed until the next onConnect. */
  readonly onDisconnect: (error: unknown) => void;
}

/** One LISTEN on a channel, over a connection it may share with other listeners. */
export class ChangeListener {
  readonly options: ChangeListenerOptions;
  #connection: ListenConnection | undefined;
  #closed = false;
  /** When this listener's LISTEN took effect on the current connection; undefined while not listening. */
  listenedAt: number | undefined;

  constructor(options: ChangeListenerOptions) {
    this.options = options;
  }

  /** Whether the connection is up and LISTENing on this listener's channel now. */
  get listening(): boolean {
    return this.listenedAt !== undefined && this.#connection?.up === true;
  }

  /**
   * `performance.now()` when a heartbeat that then succeeded was sent (or this LISTEN began):
   * every commit before that moment has been notified to this listener, give or take the
   * server's signal delivery. `-Infinity` while not listening.
   */
  get confirmedAt(): number {
    if (!this.listening) return Number.NEGATIVE_INFINITY;
    return Math.max(this.listenedAt as number, (this.#connection as ListenConnection).heartbeatAt);
  }

  /**
   * `confirmedAt` as it was when the connection was last up: kept after it is lost (until the
   * next connect), so the owner knows how old what it was told is. `-Infinity` before the first.
   */
  get lastConfirmedAt(): number {
    return this.listening ? this.confirmedAt : this.confirmedBeforeLoss;
  }

  /** Set by the connection when it is lost (see lastConfirmedAt). */
  confirmedBeforeLoss = Number.NEGATIVE_INFINITY;

  /** The server process id of the listening connection (for pg_stat_activity), while listening. */
  get backendPid(): number | undefined {
    return this.listening ? this.#connection?.backendPid : undefined;
  }

  /**
   * Starts listening and keeps at it until close(). Resolves `true` once the connection
   * listens on the channel, `false` if its attempt failed (it keeps retrying in the background).
   */
  start(): Promise<boolean> {
    if (this.#connection !== undefined) throw new Error('ChangeListener.start(): already started');
    if (this.#closed) return Promise.resolve(false);
    this.#connection = ListenConnection.for(this.options);
    return this.#connection.add(this);
  }

  /** Stops listening (closing the connection when no other listener uses it); no reconnect after this. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#connection?.remove(this);
  }
}

/**
 * The heartbeat when a listener asks for its rights: one row per listener whose schema and
 * role exist, in the same round trip as the `SELECT 1` it replaces. By oid and to_regrole, so
 * that a schema, table or role dropped meanwhile answers nothing instead of failing the
 * heartbeat; each table looked up by (name, schema), the catalog's index. Prepared once per
 * connection (named): planning it cost more than running it (0.6 ms against 0.2 ms).
 */
const RIGHTS_HEARTBEAT = {
  name: 'tool_registry_rights_heartbeat',
  text: `SELECT w.i, has_schema_privilege(w.r, n.oid, 'USAGE')
  AND NOT EXISTS (SELECT FROM unnest(w.tables) AS t(name) JOIN pg_class c ON c.relname = t.name AND c.relnamespace = n.oid WHERE NOT has_table_privilege(w.r, c.oid, 'SELECT')) AS readable
  FROM (SELECT j.i, j.schema, j.tables, to_regrole(quote_ident(coalesce(j.role, current_user))) AS r
        FROM json_to_recordset($1::json) AS j(i integer, schema text, role text, tables text[])) AS w
  JOIN pg_namespace n ON n.nspname = w.schema
  WHERE w.r IS NOT NULL`,
};

interface RightsRow {
  readonly i: number;
  readonly readable: boolean;
}

/** RIGHTS_HEARTBEAT's parameter: each checked listener's rights, numbered. */
function checksOf(checked: readonly ChangeListener[]): string {
  return JSON.stringify(checked.map((listener, i) => ({ i, ...listener.options.rights })));
}

/** Connections shared by key, then by connection string and heartbeat. */
const shared = new WeakMap<object, Map<string, ListenConnection>>();

/** One dedicated connection LISTENing on the channels of its listeners. */
class ListenConnection {
  readonly #options: ChangeListenerOptions;
  readonly #heartbeatMs: number;
  readonly #forget: () => void;
  readonly #listeners = new Set<ChangeListener>();
  readonly #stop = new AbortController();
  /** Listeners whose start() waits for the connection attempt in progress. */
  #waiting: { listener: ChangeListener; resolve: (listening: boolean) => void }[] = [];
  /** The channels LISTENed on the current client, with when their LISTEN began. */
  #channels = new Map<string, Promise<number>>();
  #client: pg.Client | undefined;
  /** Each client's last query: the next waits for it. */
  readonly #sending = new WeakMap<pg.Client, Promise<unknown>>();
  #state: 'idle' | 'connecting' | 'up' | 'waiting' = 'idle';
  #loop: Promise<void> | undefined;
  backendPid: number | undefined;
  heartbeatAt = Number.NEGATIVE_INFINITY;

  static for(options: ChangeListenerOptions): ListenConnection {
    const key = options.shareKey;
    if (key === undefined) return new ListenConnection(options, () => {});
    let byConfig = shared.get(key);
    if (byConfig === undefined) shared.set(key, (byConfig = new Map()));
    const config = `${options.heartbeatMs ?? 1000} ${options.connection.connectionString ?? ''}`;
    // A closing connection has left the map already (#close).
    const found = byConfig.get(config);
    if (found !== undefined) return found;
    const connection = new ListenConnection(options, () => {
      if (byConfig.get(config) === connection) byConfig.delete(config);
    });
    byConfig.set(config, connection);
    return connection;
  }

  private constructor(options: ChangeListenerOptions, forget: () => void) {
    this.#options = options;
    this.#heartbeatMs = options.heartbeatMs ?? 1000;
    this.#forget = forget;
  }

  get up(): boolean {
    return this.#state === 'up';
  }

  add(listener: ChangeListener): Promise<boolean> {
    this.#listeners.add(listener);
    switch (this.#state) {
      case 'idle':
        this.#loop = this.#run();
        return this.#waitForAttempt(listener);
      case 'connecting':
        return this.#waitForAttempt(listener);
      case 'waiting':
        // Between attempts: the next connect listens on this channel too, and says so with onConnect.
        return Promise.resolve(false);
      case 'up':
        return this.#join(listener);
    }
  }

  #waitForAttempt(listener: ChangeListener): Promise<boolean> {
    return new Promise((resolve) => this.#waiting.push({ listener, resolve }));
  }

  /** LISTENs for a listener that comes while the connection is up. */
  async #join(listener: ChangeListener): Promise<boolean> {
    const client = this.#client as pg.Client;
    const joinedAt = performance.now();
    try {
      const listenedAt = await this.#listenOn(client, listener.options.channel);
      if (this.#client !== client || !this.#listeners.has(listener)) return false;
      listener.listenedAt = Math.max(listenedAt, joinedAt);
    } catch {
      // The connection is failing: the loop reconnects, listens on every channel and calls onConnect.
      return false;
    }
    callSafely(listener.options.onConnect);
    return true;
  }

  /**
   * One query at a time on a client: namespaces opened and closed at once sent LISTEN and
   * UNLISTEN together, which pg queues but warns of (a DeprecationWarning on stderr: pg@9
   * refuses them). `send` runs when the client's previous query has settled.
   */
  #query<R>(client: pg.Client, send: () => Promise<R>): Promise<R> {
    const sent = (this.#sending.get(client) ?? Promise.resolve()).then(send);
    this.#sending.set(client, sent.catch(() => {}));
    return sent;
  }

  /** LISTEN on `channel` once per client; resolves with when it began. */
  #listenOn(client: pg.Client, channel: string): Promise<number> {
    const channels = this.#channels;
    const known = channels.get(channel);
    if (known !== undefined) return known;
    const listening = this.#query(client, async () => {
      const began = performance.now();
      await client.query(`LISTEN ${quoteIdentifier(channel)}`);
      return began;
    });
    channels.set(channel, listening);
    // A failed LISTEN is tried again by the next listener (on this client's map, not a newer one's).
    listening.catch(() => channels.get(channel) === listening && channels.delete(channel));
    return listening;
  }

  async remove(listener: ChangeListener): Promise<void> {
    if (!this.#listeners.delete(listener)) return;
    listener.listenedAt = undefined;
    for (const waiting of this.#waiting.filter((entry) => entry.listener === listener)) waiting.resolve(false);
    this.#waiting = this.#waiting.filter((entry) => entry.listener !== listener);
    if (this.#listeners.size === 0) return this.#close();
    const channel = listener.options.channel;
    const client = this.#client;
    if (client !== undefined && ![...this.#listeners].some((other) => other.options.channel === channel) && this.#channels.delete(channel)) {
      // Best effort: a failing connection is the loop's to handle.
      await this.#query(client, () => client.query(`UNLISTEN ${quoteIdentifier(channel)}`)).catch(() => {});
    }
  }

  async #run(): Promise<void> {
    const initial = this.#options.reconnectMs?.initial ?? 100;
    const max = this.#options.reconnectMs?.max ?? 5000;
    let delay = initial;
    while (!this.#stop.signal.aborted) {
      this.#state = 'connecting';
      let lost: Promise<unknown> | undefined;
      try {
        ({ lost } = await this.#connect());
        delay = initial;
      } catch (error) {
        this.#teardown();
        this.#state = 'waiting';
        this.#settleWaiting(false);
        if (!this.#stop.signal.aborted) for (const listener of [...this.#listeners]) callSafely(() => listener.options.onDisconnect(error));
      }
      if (lost !== undefined) {
        const error = await lost;
        this.#teardown();
        this.#state = 'waiting';
        if (this.#stop.signal.aborted) return;
        for (const listener of [...this.#listeners]) callSafely(() => listener.options.onDisconnect(error));
      }
      try {
        await sleep(delay * (0.5 + Math.random()), undefined, { signal: this.#stop.signal });
      } catch {
        return;
      }
      delay = Math.min(delay * 2, max);
    }
  }

  #settleWaiting(listening: boolean): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const entry of waiting) entry.resolve(listening);
  }

  /**
   * Connects and LISTENs on every listener's channel, then (in the same turn) marks the
   * connection up, settles the waiting start()s and calls every onConnect. `lost` settles
   * (with the cause) when the connection is lost.
   */
  async #connect(): Promise<{ lost: Promise<unknown> }> {
    const client = new (nodePostgres().Client)({ ...this.#options.connection, keepAlive: true });
    this.#client = client;
    let markLost!: (error: unknown) => void;
    const lost = new Promise<unknown>((resolve) => (markLost = resolve));
    client.on('error', (error) => markLost(error));
    client.on('end', () => markLost(new Error('the listener connection ended')));
    client.on('notification', (message) => {
      for (const listener of [...this.#listeners]) {
        if (listener.options.channel === message.channel && listener.listenedAt !== undefined) {
          callSafely(() => listener.options.onNotify(message.payload ?? ''));
        }
      }
    });
    // pg's connect() never settles when end() comes before the server answered (close()
    // during a reconnect): stop waiting for it when the listener stops.
    await untilStopped(client.connect(), this.#stop.signal);
    // An idle_session_timeout of the role, the database or the server (PostgreSQL 14+) under the
    // heartbeat would end this connection between beats, over and over: it is never idle long,
    // and it holds no transaction. Off for this session only; missing_ok for older servers.
    // The same round trip checks the rights (RIGHTS_HEARTBEAT's query): a cache whose right was
    // revoked while the listener was down would otherwise answer from memory on the reconnect's
    // confirmation until the first heartbeat. Listeners that come after this statement have
    // never been listening, so their owners hold nothing from memory yet.
    const checked = this.#checked();
    const { rows } = await this.#query(client, () =>
      client.query<{ pid: number; rights: RightsRow[] | null }>(
        `SELECT pg_backend_pid() AS pid, CASE WHEN current_setting('idle_session_timeout', true) IS NOT NULL THEN set_config('idle_session_timeout', '0', false) END,
          (SELECT json_agg(r) FROM (${RIGHTS_HEARTBEAT.text}) AS r) AS rights`,
        [checksOf(checked)],
      ),
    );
    // Listeners may come while a LISTEN is under way: listen until every one's channel is covered.
    const listenedAt = new Map<ChangeListener, number>();
    for (;;) {
      const pending = [...this.#listeners].filter((listener) => !listenedAt.has(listener));
      if (pending.length === 0) break;
      for (const listener of pending) listenedAt.set(listener, await this.#listenOn(client, listener.options.channel));
    }
    if (this.#stop.signal.aborted) throw new Error('the listener was closed');
    this.backendPid = rows[0]?.pid;
    this.heartbeatAt = Number.NEGATIVE_INFINITY;
    // Told before the connection counts as confirmed, as a heartbeat's answer is.
    this.#tellRights(checked, rows[0]?.rights ?? []);
    for (const [listener, at] of listenedAt) if (this.#listeners.has(listener)) listener.listenedAt = at;
    this.#state = 'up';
    this.#heartbeat(client, markLost);
    this.#settleWaiting(true);
    for (const listener of [...this.#listeners]) callSafely(listener.options.onConnect);
    return { lost };
  }

  /** Sends `SELECT 1` (or RIGHTS_HEARTBEAT) every heartbeatMs until the connection is lost. */
  #heartbeat(client: pg.Client, markLost: (error: unknown) => void): void {
    const beat = async (): Promise<void> => {
      while (this.#client === client && !this.#stop.signal.aborted) {
        try {
          await sleep(this.#heartbeatMs, undefined, { signal: this.#stop.signal, ref: false });
        } catch {
          return;
        }
        if (this.#client !== client) return;
        const sent = performance.now();
        const timeout = new AbortController();
        const checked = this.#checked();
        const answer = await Promise.race([
          this.#query(client, () => (checked.length === 0 ? client.query('SELECT 1') : client.query<RightsRow>({ ...RIGHTS_HEARTBEAT, values: [checksOf(checked)] }))).then(
            (result) => result,
            (error: unknown) => ({ error }),
          ),
          sleep(this.#heartbeatMs, false as const, { signal: timeout.signal, ref: false }).catch(() => false as const),
        ]);
        timeout.abort();
        if (answer !== false && !('error' in answer)) {
          // Before the confirmation: a cache told its rights are gone must not answer on it.
          if (checked.length > 0) this.#tellRights(checked, answer.rows as RightsRow[]);
          this.heartbeatAt = Math.max(this.heartbeatAt, sent);
        } else {
          markLost(answer === false ? new Error(`the listener connection did not answer a heartbeat within ${this.#heartbeatMs} ms`) : answer.error);
          return;
        }
      }
    };
    void beat();
  }

  /** The listeners whose rights the connect and each heartbeat check (a row's `i` is the index here). */
  #checked(): ChangeListener[] {
    return [...this.#listeners].filter((listener) => listener.options.rights !== undefined);
  }

  /** Tells each listener still here its row's answer (none for a schema or role that does not exist). */
  #tellRights(checked: readonly ChangeListener[], rows: readonly RightsRow[]): void {
    for (const row of rows) {
      const listener = checked[row.i];
      if (listener !== undefined && this.#listeners.has(listener)) callSafely(() => listener.options.onRights?.(row.readable));
    }
  }

  /** Forgets the current connection and closes its socket without waiting for the server. */
  #teardown(): void {
    for (const listener of this.#listeners) {
      if (listener.listenedAt !== undefined) listener.confirmedBeforeLoss = Math.max(listener.listenedAt, this.heartbeatAt);
      listener.listenedAt = undefined;
    }
    this.#channels = new Map();
    const client = this.#client;
    this.#client = undefined;
    if (client === undefined) return;
    client.removeAllListeners('notification');
    client.on('error', () => {});
    client.connection.stream.destroy();
  }

  /** The last listener left: stop, and close the connection. */
  async #close(): Promise<void> {
    this.#forget();
    this.#stop.abort();
    this.#settleWaiting(false);
    const client = this.#client;
    this.#state = 'waiting';
    if (client !== undefined) {
      this.#client = undefined;
      client.on('error', () => {});
      // A polite end; a dead socket would never answer it.
      await Promise.race([client.end().catch(() => {}), sleep(1000, undefined, { ref: false })]);
      client.connection.stream.destroy();
    }
    await this.#loop;
  }
}

/** `pending`, or a rejection as soon as `signal` aborts (`pending` is then left to settle unobserved). */
function untilStopped<T>(pending: Promise<T>, signal: AbortSignal): Promise<T> {
  pending.catch(() => {});
  if (signal.aborted) return Promise.reject(new Error('the listener was closed'));
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(new Error('the listener was closed'));
    signal.addEventListener('abort', stop, { once: true });
    pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

function callSafely(callback: () => void): void {
  try {
    callback();
  } catch {
    // A callback's failure must not stop the listener; the owner handles its own errors.
  }
}
