/**
 * Counters a store may expose for operators (`storeMetrics()`; the server's /metrics reads
 * them): each since the registry was opened, absent where the store has no such thing.
 */
export interface StoreMetrics {
  /** Reads the read cache answered. */
  readonly cacheHits?: number;
  /** Reads that went to the database because the cache was not confirmed current. */
  readonly cacheMisses?: number;
  /** Reads the cache answered while the database could not be reached (PostgreSQL's `staleIfErrorMs`). */
  readonly staleReads?: number;
  /** Write transactions committed (a group commit of several calls counts once). */
  readonly writeBatches?: number;
}
