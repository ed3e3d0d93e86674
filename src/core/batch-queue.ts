// Group commit's queue, shared by the stores: calls queued in the same turn of the event loop
// are drained together on setImmediate, in arrival order, one batch at a time; calls that
// arrive while a batch is in flight make the next one. What a batch is (one SQLite
// transaction, one PostgreSQL statement) and how its calls settle is the store's.

export interface BatchQueueOptions<P> {
  /** Whether `next` may join `batch` (never empty; arrival order): when not, it starts the next batch. */
  readonly joins: (batch: readonly P[], next: P) => boolean;
  /** Runs one batch and settles every call of it; rejects never. */
  readonly run: (batch: P[]) => Promise<void>;
}

export class BatchQueue<P> {
  readonly #options: BatchQueueOptions<P>;
  #queue: P[] = [];
  #scheduled = false;
  /** The drain in progress (a batch awaits its storage), so flush() can wait for it. */
  #draining: Promise<void> | undefined;

  constructor(options: BatchQueueOptions<P>) {
    this.#options = options;
  }

  /** Queues a call; it runs with the calls queued in the same turn of the event loop. */
  push(call: P): void {
    this.#queue.push(call);
    if (!this.#scheduled && this.#draining === undefined) {
      this.#scheduled = true;
      setImmediate(() => void this.#drain());
    }
  }

  /** Nothing queued and no batch in flight. */
  get idle(): boolean {
    return this.#queue.length === 0 && this.#draining === undefined;
  }

  /** Runs everything queued now and waits for it. */
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
        while (this.#queue.length > 0) await this.#options.run(this.#take());
      } finally {
        this.#draining = undefined;
      }
    })();
    return this.#draining;
  }

  /** The next batch: the longest run of calls, from the first, that each join the ones before. */
  #take(): P[] {
    const batch = [this.#queue[0] as P];
    while (batch.length < this.#queue.length && this.#options.joins(batch, this.#queue[batch.length] as P)) batch.push(this.#queue[batch.length] as P);
    this.#queue.splice(0, batch.length);
    return batch;
  }
}
