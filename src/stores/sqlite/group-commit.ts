// Group commit: concurrent writes from one process share one BEGIN IMMEDIATE transaction,
// and so one fsync. Calls are queued and drained on setImmediate, so every caller that
// arrives in the same turn of the event loop joins the batch. Each call runs in its own
// SAVEPOINT, in arrival order, against the state the calls before it left: a call that
// throws (a version conflict) is rolled back alone and fails alone; the others commit. A
// failed COMMIT fails exactly the calls of that batch; a busy lock retries the whole batch
// within the busy timeout.
import type BetterSqlite3 from 'better-sqlite3';
import { busyInCallersTransaction, isBusyError, retryWhileBusy } from './busy.js';

/** One queued write: synchronous work that runs inside the batch's transaction. */
interface Pending {
  readonly method: string;
  readonly work: () => unknown;
  /** Runs in a transaction of its own (importSnapshot): no savepoint, no neighbours. */
  readonly alone: boolean;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export interface GroupCommitOptions {
  readonly busyTimeoutMs: number;
  /** Throws (REGISTRY_CLOSED) when the registry was closed during a busy wait. */
  readonly assertOpen: (method: string) => void;
}

/** Upper bound of calls in one transaction, so one batch cannot hold the lock for long. */
const MAX_BATCH = 1024;

export class GroupCommit {
  readonly #db: BetterSqlite3.Database;
  readonly #options: GroupCommitOptions;
  readonly #begin: BetterSqlite3.Statement;
  readonly #commit: BetterSqlite3.Statement;
  readonly #rollback: BetterSqlite3.Statement;
  readonly #savepoint: BetterSqlite3.Statement;
  readonly #release: BetterSqlite3.Statement;
  readonly #rollbackTo: BetterSqlite3.Statement;
  #queue: Pending[] = [];
  #scheduled = false;
  /** The drain in progress (a busy batch waits asynchronously), so close() can wait for it. */
  #draining: Promise<void> | undefined;

  constructor(db: BetterSqlite3.Database, options: GroupCommitOptions) {
    this.#db = db;
    this.#options = options;
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT tool_registry');
    this.#release = db.prepare('RELEASE tool_registry');
    this.#rollbackTo = db.prepare('ROLLBACK TO tool_registry');
  }

  /** Queues `work`; settles once the transaction it ran in has committed (or failed). */
  run<T>(method: string, work: () => T, { alone = false } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ method, work, alone, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled && this.#draining === undefined) {
        this.#scheduled = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  /** Runs everything queued now and waits for it (close() calls this before closing the handle). */
  async flush(): Promise<void> {
    while (this.#draining !== undefined || this.#queue.length > 0) {
      await (this.#draining ?? this.#drain());
    }
  }

  #drain(): Promise<void> {
    this.#scheduled = false;
    if (this.#draining !== undefined) return this.#draining;
    this.#draining = (async () => {
      try {
        while (this.#queue.length > 0) await this.#runBatch(this.#takeBatch());
      } finally {
        this.#draining = undefined;
      }
    })();
    return this.#draining;
  }

  /** The next batch: calls in arrival order up to the first one that must run alone. */
  #takeBatch(): Pending[] {
    const first = this.#queue[0] as Pending;
    if (first.alone) return this.#queue.splice(0, 1);
    let end = 1;
    while (end < this.#queue.length && end < MAX_BATCH && !(this.#queue[end] as Pending).alone) end++;
    return this.#queue.splice(0, end);
  }

  async #runBatch(batch: Pending[]): Promise<void> {
    let pending = batch;
    for (;;) {
      const method = (pending[0] as Pending).method;
      let result: TransactionResult;
      try {
        result = await retryWhileBusy(
          { timeoutMs: this.#options.busyTimeoutMs, operation: method, beforeRetry: () => this.#options.assertOpen(method) },
          () => this.#transaction(pending),
        );
      } catch (error) {
        // BEGIN or COMMIT failed (or the lock never came): the batch failed as a whole.
        for (const call of pending) call.reject(error);
        return;
      }
      if (result.committed) {
        pending.forEach((call, i) => settle(call, result.outcomes[i] as Outcome));
        return;
      }
      // One call's error ended the transaction (SQLite rolls back on a full disk and some
      // I/O errors): it fails alone, and the others run again in a new transaction.
      (pending[result.failed] as Pending).reject(result.error);
      pending = pending.filter((_, i) => i !== result.failed);
      if (pending.length === 0) return;
    }
  }

  /**
   * One synchronous BEGIN IMMEDIATE ... COMMIT over the calls, each in its own savepoint.
   * Throws, after rolling back, when the transaction as a whole fails (BEGIN, COMMIT, busy).
   */
  #transaction(calls: readonly Pending[]): TransactionResult {
    const db = this.#db;
    // A caller's own transaction opened on its handle since these calls queued: join it, one
    // savepoint each, as a direct write would (its lock mode and commit are the caller's).
    const joined = db.inTransaction;
    if (!joined) this.#begin.run();
    try {
      // A lone call needs no savepoint: its failure rolls the whole transaction back.
      if (!joined && (calls.length === 1 || (calls[0] as Pending).alone)) return this.#solo(calls[0] as Pending);
      const outcomes: Outcome[] = [];
      for (const [index, call] of calls.entries()) {
        this.#savepoint.run();
        try {
          const value = call.work();
          this.#release.run();
          outcomes.push({ ok: true, value });
        } catch (error) {
          if (joined) {
            // Inside the caller's transaction every call stands alone, as a direct write would.
            if (db.inTransaction) this.#undo();
            outcomes.push({ ok: false, error: isBusyError(error) ? busyInCallersTransaction(call.method, error) : error });
            continue;
          }
          if (isBusyError(error)) throw error;
          if (!db.inTransaction) return { committed: false, failed: index, error };
          this.#undo();
          outcomes.push({ ok: false, error });
        }
      }
      if (!joined) this.#commit.run();
      return { committed: true, outcomes };
    } catch (error) {
      if (!joined && db.inTransaction) this.#rollback.run();
      throw error;
    }
  }

  /** One call in a transaction of its own (BEGIN already run). */
  #solo(call: Pending): TransactionResult {
    let value: unknown;
    try {
      value = call.work();
    } catch (error) {
      if (isBusyError(error)) throw error;
      if (this.#db.inTransaction) this.#rollback.run();
      return { committed: true, outcomes: [{ ok: false, error }] };
    }
    this.#commit.run();
    return { committed: true, outcomes: [{ ok: true, value }] };
  }

  #undo(): void {
    this.#rollbackTo.run();
    this.#release.run();
  }
}

type TransactionResult =
  | { readonly committed: true; readonly outcomes: readonly Outcome[] }
  | { readonly committed: false; readonly failed: number; readonly error: unknown };

function settle(call: Pending, outcome: Outcome): void {
  if (outcome.ok) call.resolve(outcome.value);
  else call.reject(outcome.error);
}
