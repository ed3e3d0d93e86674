// The audit log's writer: call records buffered in memory and written to the registry in
// batches (`recordCalls`), so a call never waits for the database and never fails for it.
import type { CallRecordInput, ToolRegistry } from '../index.js';

/** Options of `createCallRecorder`. */
export interface CallRecorderOptions {
  /** The longest a record waits in the buffer before it is written, in ms. Default 250. */
  readonly flushMs?: number;
  /** A write as soon as this many records wait, and at most this many rows per write. Default 100. */
  readonly batchRows?: number;
  /**
   * Records held at most (waiting, or kept for a retry while the store fails). A record that
   * comes when the buffer is full is dropped and counted (`stats.dropped`): the calls go on,
   * the oldest records of the gap are the ones kept. Default 10,000.
   */
  readonly maxBufferedRows?: number;
  /** Hears a failed write (`rows`: how many records it carried). Default: a process warning. */
  readonly onError?: (error: unknown, rows: number) => void;
}

/** What a recorder did so far (counters only grow; `buffered` is now). */
export interface CallRecorderStats {
  /** Records written to the registry. */
  readonly written: number;
  /** Writes that failed (each is retried later, unless the store refused its rows for good). */
  readonly failedWrites: number;
  /** Records dropped: the buffer was full, the recorder was closed, or the store refused them for good (invalid, read-only, closed). */
  readonly dropped: number;
  /** Records waiting now. */
  readonly buffered: number;
}

/** A buffer of call records in front of `registry.recordCalls`. */
export interface CallRecorder {
  /** Takes one record (never throws, never waits): written within `flushMs`, or as soon as `batchRows` wait. */
  record(call: CallRecordInput): void;
  /** Writes what waits now (one write per `batchRows`); a failed write is reported, never thrown. */
  flush(): Promise<void>;
  /** Writes what waits, then takes no more (later records are dropped and counted). Idempotent. */
  close(): Promise<void>;
  readonly stats: CallRecorderStats;
}

export const DEFAULT_CALL_FLUSH_MS = 250;
export const DEFAULT_CALL_BATCH_ROWS = 100;
export const DEFAULT_CALL_BUFFER_ROWS = 10_000;
/** The longest pause between retries while the store keeps failing. */
const MAX_RETRY_MS = 5_000;
/** Errors that a retry cannot cure: the rows are dropped (and counted) rather than kept. */
const FOR_GOOD = new Set(['VALIDATION_FAILED', 'READ_ONLY', 'REGISTRY_CLOSED']);

function whole(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new TypeError(`createCallRecorder(): ${name} must be a whole number > 0, got ${JSON.stringify(value)}`);
  }
  return value;
}

function warn(error: unknown, rows: number): void {
  const text = error instanceof Error ? `${(error as { code?: unknown }).code ?? error.name}: ${error.message}` : String(error);
  process.emitWarning(`the audit log could not write ${rows} call record(s) (${text}); they are retried`, 'ToolRegistryWarning');
}

/**
 * A recorder of `tools/call` records for the audit log (`createMcpServer`'s `onCall`):
 * records wait in a bounded buffer and are written with `registry.recordCalls` in batches,
 * every `flushMs` or as soon as `batchRows` wait, one write at a time. A call never waits for
 * the database: a failed write is reported to `onError` and counted, and its rows are tried
 * again later (pauses doubling from `flushMs` up to 5 s) unless the store refused them for
 * good (VALIDATION_FAILED, READ_ONLY, REGISTRY_CLOSED: dropped and counted). A full buffer
 * drops the incoming record (counted in `stats.dropped`). `close()` writes what waits.
 * @throws TypeError for bad options
 */
export function createCallRecorder(registry: ToolRegistry, options: CallRecorderOptions = {}): CallRecorder {
  if (typeof registry !== 'object' || registry === null || typeof registry.recordCalls !== 'function') {
    throw new TypeError('createCallRecorder(): registry must be a ToolRegistry');
  }
  const flushMs = whole('flushMs', options.flushMs, DEFAULT_CALL_FLUSH_MS);
  const batchRows = whole('batchRows', options.batchRows, DEFAULT_CALL_BATCH_ROWS);
  const maxBuffered = whole('maxBufferedRows', options.maxBufferedRows, DEFAULT_CALL_BUFFER_ROWS);
  if (options.onError !== undefined && typeof options.onError !== 'function') throw new TypeError('createCallRecorder(): onError must be a function');
  const onError = options.onError ?? warn;

  let buffer: CallRecordInput[] = [];
  let written = 0;
  let failedWrites = 0;
  let dropped = 0;
  let closed = false;
  /** Failed writes in a row: the next attempt waits flushMs * 2^failures (at most 5 s). */
  let failures = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The write (or writes) under way: flushes run one after another. */
  let writing: Promise<void> = Promise.resolve();

  const report = (error: unknown, rows: number): void => {
    try {
      onError(error, rows);
    } catch {
      // A failing listener must not break the recorder.
    }
  };

  /** One pass: writes every batch that waits; stops at the first failure (its rows kept for a retry, or dropped). */
  const writeAll = async (): Promise<void> => {
    while (buffer.length > 0) {
      const batch = buffer.slice(0, batchRows);
      buffer = buffer.slice(batch.length);
      try {
        await registry.recordCalls(batch);
        written += batch.length;
        failures = 0;
      } catch (error) {
        failedWrites += 1;
        report(error, batch.length);
        const code = (error as { code?: unknown } | null)?.code;
        if (code === 'VALIDATION_FAILED' && batch.length > 1) {
          // One row the store refuses must not cost the others: they go one at a time.
          for (const row of batch) {
            try {
              await registry.recordCalls([row]);
              written += 1;
            } catch {
              dropped += 1;
            }
          }
          continue;
        }
        if (closed || (typeof code === 'string' && FOR_GOOD.has(code))) {
          dropped += batch.length;
          continue;
        }
        // Kept for the retry, in front of what came meanwhile, within the bound (the newest go).
        const kept = [...batch, ...buffer];
        dropped += Math.max(0, kept.length - maxBuffered);
        buffer = kept.slice(0, maxBuffered);
        failures += 1;
        return;
      }
    }
  };

  /** A pass queued behind the write under way and not started yet: another flush joins it. */
  let queued: Promise<void> | undefined;
  const flush = (): Promise<void> => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (queued !== undefined) return queued;
    const pass = writing.then(() => {
      queued = undefined;
      return writeAll();
    });
    queued = pass;
    writing = pass.then(schedule);
    return writing;
  };

  /** A timer for what waits (none while a write is under way: its end schedules one). */
  function schedule(): void {
    if (timer !== undefined || buffer.length === 0 || closed) return;
    const delay = failures === 0 ? flushMs : Math.min(MAX_RETRY_MS, flushMs * 2 ** failures);
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, delay);
    // A process with nothing else to do ends; the command's close() writes what waits.
    timer.unref?.();
  }

  return {
    record(call: CallRecordInput): void {
      if (closed || buffer.length >= maxBuffered) {
        dropped += 1;
        return;
      }
      buffer.push(call);
      if (buffer.length >= batchRows && failures === 0) void flush();
      else schedule();
    },
    flush,
    async close(): Promise<void> {
      if (closed) return writing;
      const last = flush();
      closed = true;
      await last;
    },
    get stats(): CallRecorderStats {
      return { written, failedWrites, dropped, buffered: buffer.length };
    },
  };
}
