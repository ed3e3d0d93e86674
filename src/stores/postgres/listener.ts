// LISTEN on a dedicated connection (never one of the pool's: a pooled connection goes back
// to the pool, and PgBouncer's transaction pooling cannot LISTEN at all), the way pg-boss
// does it: a heartbeat proves the connection alive, a lost connection is reconnected with
// capped, jittered backoff, and every (re)connect tells the owner to resync from the change
// log, because notifications sent while disconnected are gone. A notification is only a
// wake-up: what changed is always read from the log.
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { nodePostgres } from '../../node-postgres.js';
import { quoteIdentifier } from './identifiers.js';

export interface ChangeListenerOptions {
  /** How to open the dedicated connection (a connection string, or a pool's settings). */
  readonly connection: pg.ClientConfig;
  readonly channel: string;
  /** A `SELECT 1` this often proves the connection alive; one that takes as long fails it. Default 1000. */
  readonly heartbeatMs?: number;
  /** First and longest wait between reconnect attempts. Default 100 and 5000 ms. */
  readonly reconnectMs?: { readonly initial?: number; readonly max?: number };
  /** A notification on the channel (the payload is whatever the sender put there). */
  readonly onNotify: (payload: string) => void;
  /** Connected and listening (first time and after every reconnect): resync now. */
  readonly onConnect: () => void;
  /** The connection is gone; notifications are missed until the next onConnect. */
  readonly onDisconnect: (error: unknown) => void;
}

export class ChangeListener {
  readonly #options: ChangeListenerOptions;
  readonly #heartbeatMs: number;
  readonly #stop = new AbortController();
  #client: pg.Client | undefined;
  #listening = false;
  #confirmedAt = Number.NEGATIVE_INFINITY;
  #backendPid: number | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: ChangeListenerOptions) {
    this.#options = options;
    this.#heartbeatMs = options.heartbeatMs ?? 1000;
  }

  /** Whether the connection is up and LISTENing now. */
  get listening(): boolean {
    return this.#listening;
  }

  /**
   * `performance.now()` when a heartbeat that then succeeded was sent (or LISTEN began): every
   * commit before that moment has been notified to this listener, give or take the server's
   * signal delivery. `-Infinity` while not listening.
   */
  get confirmedAt(): number {
    return this.#listening ? this.#confirmedAt : Number.NEGATIVE_INFINITY;
  }

  /** The server process id of the listening connection (for pg_stat_activity), while listening. */
  get backendPid(): number | undefined {
    return this.#listening ? this.#backendPid : undefined;
  }

  /**
   * Starts listening and keeps at it until close(). Resolves `true` once the first connection
   * listens, `false` if the first attempt failed (it keeps retrying in the background).
   */
  start(): Promise<boolean> {
    if (this.#loop !== undefined) throw new Error('ChangeListener.start(): already started');
    return new Promise((resolve) => {
      this.#loop = this.#run(resolve);
    });
  }

  async #run(firstAttempt: (listening: boolean) => void): Promise<void> {
    const initial = this.#options.reconnectMs?.initial ?? 100;
    const max = this.#options.reconnectMs?.max ?? 5000;
    let delay = initial;
    while (!this.#stop.signal.aborted) {
      let lost: Promise<unknown> | undefined;
      try {
        ({ lost } = await this.#connect());
        delay = initial;
      } catch (error) {
        this.#teardown();
        if (!this.#stop.signal.aborted) this.#options.onDisconnect(error);
      }
      firstAttempt(lost !== undefined);
      if (lost !== undefined) {
        callSafely(this.#options.onConnect);
        const error = await lost;
        this.#teardown();
        if (this.#stop.signal.aborted) return;
        callSafely(() => this.#options.onDisconnect(error));
      }
      try {
        await sleep(delay * (0.5 + Math.random()), undefined, { signal: this.#stop.signal });
      } catch {
        return;
      }
      delay = Math.min(delay * 2, max);
    }
  }

  /** Connects and LISTENs; `lost` settles (with the cause) when the connection is lost. */
  async #connect(): Promise<{ lost: Promise<unknown> }> {
    const client = new (nodePostgres().Client)({ ...this.#options.connection, keepAlive: true });
    this.#client = client;
    let markLost!: (error: unknown) => void;
    const lost = new Promise<unknown>((resolve) => (markLost = resolve));
    client.on('error', (error) => markLost(error));
    client.on('end', () => markLost(new Error('the listener connection ended')));
    client.on('notification', (message) => {
      if (message.channel !== this.#options.channel) return;
      callSafely(() => this.#options.onNotify(message.payload ?? ''));
    });
    // pg's connect() never settles when end() comes before the server answered (close()
    // during a reconnect): stop waiting for it when the listener stops.
    await untilStopped(client.connect(), this.#stop.signal);
    const listenedAt = performance.now();
    await client.query(`LISTEN ${quoteIdentifier(this.#options.channel)}`);
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    this.#backendPid = rows[0]?.pid;
    this.#confirmedAt = listenedAt;
    this.#listening = true;
    this.#heartbeat(client, markLost);
    return { lost };
  }

  /** Sends `SELECT 1` every heartbeatMs until the connection is lost. */
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
        const answer = await Promise.race([
          client.query('SELECT 1').then(() => true, (error: unknown) => error),
          sleep(this.#heartbeatMs, false, { signal: timeout.signal, ref: false }).catch(() => false),
        ]);
        timeout.abort();
        if (answer === true) {
          this.#confirmedAt = Math.max(this.#confirmedAt, sent);
        } else {
          markLost(answer === false ? new Error(`the listener connection did not answer a heartbeat within ${this.#heartbeatMs} ms`) : answer);
          return;
        }
      }
    };
    void beat();
  }

  /** Forgets the current connection and closes its socket without waiting for the server. */
  #teardown(): void {
    this.#listening = false;
    const client = this.#client;
    this.#client = undefined;
    if (client === undefined) return;
    client.removeAllListeners('notification');
    client.on('error', () => {});
    client.connection.stream.destroy();
  }

  /** Stops listening and closes the connection; no reconnect after this. */
  async close(): Promise<void> {
    this.#stop.abort();
    const client = this.#client;
    this.#listening = false;
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
