// Group commit: concurrent writes from one process share one BEGIN IMMEDIATE transaction,
// and so one fsync. Calls are queued and drained on setImmediate (core/batch-queue.ts, which
// the PostgreSQL store's group commit shares), so every caller that arrives in the same turn
// of the event loop joins the batch. Calls run in arrival order,
// each against the state the calls before it left: a call that throws (a version conflict)
// fails alone; the others commit. A failed COMMIT fails exactly the calls of that batch; a
// busy lock retries the whole batch within the busy timeout.
//
// A call that throws almost always throws before it writes (the rules decide first), and
// then has nothing to undo, so calls run without a savepoint each (two statements a call
// saved). Only when a call throws after it wrote does the batch roll back and run again,
// each call in its own SAVEPOINT, so that call is undone alone.
import type BetterSqlite3 from 'better-sqlite3';
import { BatchQueue } from '../../core/batch-queue.js';
import { busyInCallersTransaction, isBusyError, retryWhileBusy } from './busy.js';

/** One queued write: synchronous work that runs inside the batch's transaction. */
interface Pending {
  readonly method: string;
  readonly work: () => unknown;
  /** Runs in a transaction of its own (importSnapshot): no savepoint, no neighbours. */
  readonly alone: boolean;
  /** The tools the call may change; undefined when it may change any. */
  readonly names: readonly string[] | undefined;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * Told what becomes of each transaction the batch opens itself (never of a caller's), so the
 * store can follow its own writes: none of these may throw.
 */
export interface BatchObserver {
  /** BEGIN IMMEDIATE succeeded; the batch's calls may change these tools (undefined: any). */
  begun(names: readonly string[] | undefined): void;
  /** A call's savepoint is about to open: a mark that `undone` goes back to. */
  mark(): number;
  /** The call's savepoint was rolled back. */
  undone(mark: number): void;
  /** Inside the transaction, right before COMMIT. */
  committing(): void;
  /** COMMIT succeeded. */
  committed(): void;
  /** The transaction ended without committing (rolled back, or its COMMIT failed). */
  abandoned(): void;
}

export interface GroupCommitOptions {
  readonly busyTimeoutMs: number;
  /**
   * How many write statements the calls have started so far (any count that grows with every
   * write a call makes): a call that threw with this unchanged wrote nothing.
   */
  readonly writes: () => number;
  /** Throws (REGISTRY_CLOSED) when the registry was closed during a busy wait. */
  readonly assertOpen: (method: string) => void;
  readonly observer?: BatchObserver;
}

const UNOBSERVED: BatchObserver = {
  begun: () => {},
  mark: () => 0,
  undone: () => {},
  committing: () => {},
  committed: () => {},
  abandoned: () => {},
};

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
  readonly #observer: BatchObserver;
  /** Calls in arrival order, a batch at a time: up to the first one that must run alone. */
  readonly #queue = new BatchQueue<Pending>({
    joins: (batch, next) => !(batch[0] as Pending).alone && !next.alone && batch.length < MAX_BATCH,
    run: (batch) => this.#runBatch(batch),
  });

  constructor(db: BetterSqlite3.Database, options: GroupCommitOptions) {
    this.#db = db;
    this.#options = options;
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT tool_registry');
    this.#release = db.prepare('RELEASE tool_registry');
    this.#rollbackTo = db.prepare('ROLLBACK TO tool_registry');
    this.#observer = options.observer ?? UNOBSERVED;
  }

  /**
   * Queues `work`, which may change the tools `names` (undefined: any); settles once the
   * transaction it ran in has committed (or failed).
   */
  run<T>(method: string, work: () => T, { alone = false, names }: { alone?: boolean; names?: readonly string[] } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ method, work, alone, names, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Nothing queued and no batch in flight: every write called so far has settled its transaction. */
  get idle(): boolean {
    return this.#queue.idle;
  }

  /** Runs everything queued now and waits for it (close() calls this before closing the handle). */
  flush(): Promise<void> {
    return this.#queue.flush();
  }

  async #runBatch(batch: Pending[]): Promise<void> {
    let pending = batch;
    let savepoints = false;
    for (;;) {
      const method = (pending[0] as Pending).method;
      let result: TransactionResult;
      try {
        const inSavepoints = savepoints;
        result = await retryWhileBusy(
          { timeoutMs: this.#options.busyTimeoutMs, operation: method, beforeRetry: () => this.#options.assertOpen(method) },
          () => this.#transaction(pending, inSavepoints),
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
      if (result.failed === undefined) {
        // A call threw after it wrote (rolled back with the batch): again, a savepoint each.
        savepoints = true;
        continue;
      }
      // One call's error ended the transaction (SQLite rolls back on a full disk and some
      // I/O errors): it fails alone, and the others run again in a new transaction.
      (pending[result.failed] as Pending).reject(result.error);
      pending = pending.filter((_, i) => i !== result.failed);
      if (pending.length === 0) return;
    }
  }

  /**
   * One synchronous BEGIN IMMEDIATE ... COMMIT over the calls (each in its own savepoint when
   * `savepoints`). Throws, after rolling back, when the transaction as a whole fails (BEGIN,
   * COMMIT, busy).
   */
  #transaction(calls: readonly Pending[], savepoints: boolean): TransactionResult {
    // A caller's own transaction opened on its handle since these calls queued: join it, one
    // savepoint each, as a direct write would (its lock mode and commit are the caller's).
    if (this.#db.inTransaction) return this.#joined(calls);
    this.#begin.run();
    const observer = this.#observer;
    let committed = false;
    try {
      observer.begun(calls.every((call) => call.names !== undefined) ? calls.flatMap((call) => call.names as readonly string[]) : undefined);
      const result = this.#batch(calls, savepoints);
      committed = result.committed && this.#commitIf(result);
      // Not committed and still open: a call threw after it wrote; the batch runs again.
      if (!result.committed && this.#db.inTransaction) this.#rollback.run();
      return result;
    } catch (error) {
      if (this.#db.inTransaction) this.#rollback.run();
      throw error;
    } finally {
      if (committed) observer.committed();
      else observer.abandoned();
    }
  }

  /** COMMIT, unless no call succeeded (then ROLLBACK: nothing to keep); whether it committed. */
  #commitIf(result: TransactionResult & { committed: true }): boolean {
    if (!this.#db.inTransaction) return false;
    if (result.outcomes.every((outcome) => !outcome.ok)) {
      // Nothing to keep (a lone call that failed, or every call of the batch).
      this.#rollback.run();
      return false;
    }
    this.#observer.committing();
    this.#commit.run();
    return true;
  }

  /** The calls of the batch's own transaction (BEGIN already run), in arrival order. */
  #batch(calls: readonly Pending[], savepoints: boolean): TransactionResult {
    const db = this.#db;
    // A lone call needs no savepoint: its failure rolls the whole transaction back.
    if (calls.length === 1 || (calls[0] as Pending).alone) {
      const outcome = attempt(calls[0] as Pending);
      if (!outcome.ok && isBusyError(outcome.error)) throw outcome.error;
      return { committed: true, outcomes: [outcome] };
    }
    const outcomes: Outcome[] = [];
    for (const [index, call] of calls.entries()) {
      const mark = this.#observer.mark();
      const writes = this.#options.writes();
      const outcome = savepoints ? this.#inSavepoint(call, mark) : attempt(call);
      if (!outcome.ok) {
        if (isBusyError(outcome.error)) throw outcome.error;
        if (!db.inTransaction) return { committed: false, failed: index, error: outcome.error };
        if (!savepoints) {
          // Nothing to undo unless it wrote; then only a savepoint can undo it alone.
          if (this.#options.writes() !== writes) return { committed: false };
          this.#observer.undone(mark);
        }
      }
      outcomes.push(outcome);
    }
    return { committed: true, outcomes };
  }

  /** Inside the caller's transaction every call stands alone, as a direct write would. */
  #joined(calls: readonly Pending[]): TransactionResult {
    const outcomes = calls.map((call): Outcome => {
      const outcome = this.#inSavepoint(call, undefined);
      if (outcome.ok || !isBusyError(outcome.error)) return outcome;
      return { ok: false, error: busyInCallersTransaction(call.method, outcome.error) };
    });
    return { committed: true, outcomes };
  }

  /**
   * One call in a savepoint of its own: its value, or its error after rolling back to the
   * savepoint (when the transaction is still open); `mark` is the observer's, in our own transaction.
   */
  #inSavepoint(call: Pending, mark: number | undefined): Outcome {
    this.#savepoint.run();
    try {
      const value = call.work();
      this.#release.run();
      return { ok: true, value };
    } catch (error) {
      if (this.#db.inTransaction) {
        this.#undo();
        if (mark !== undefined) this.#observer.undone(mark);
      }
      return { ok: false, error };
    }
  }

  #undo(): void {
    this.#rollbackTo.run();
    this.#release.run();
  }
}

/**
 * What a batch's transaction came to: committed (each call's outcome); or ended by call
 * `failed`'s error (SQLite rolled it back); or rolled back to run again with a savepoint per
 * call (`failed` undefined: a call threw after it wrote).
 */
type TransactionResult =
  | { readonly committed: true; readonly outcomes: readonly Outcome[] }
  | { readonly committed: false; readonly failed: number; readonly error: unknown }
  | { readonly committed: false; readonly failed?: undefined };

function attempt(call: Pending): Outcome {
  try {
    return { ok: true, value: call.work() };
  } catch (error) {
    return { ok: false, error };
  }
}

function settle(call: Pending, outcome: Outcome): void {
  if (outcome.ok) call.resolve(outcome.value);
  else call.reject(outcome.error);
}
