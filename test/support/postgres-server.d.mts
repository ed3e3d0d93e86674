// Types of postgres-server.mjs.
export interface TestPostgresServer {
  /** A URL of a superuser on the server's `postgres` database. */
  readonly url: string;
  /** Whether this process started the server (false: TOOL_REGISTRY_TEST_PG_URL). */
  readonly embedded: boolean;
  stop(): Promise<void>;
}

/** Starts (or reuses, from TOOL_REGISTRY_TEST_PG_URL) the run's server; `durable` keeps fsync on; `settings` are more `-c name=value`. */
export function startTestPostgres(options?: { readonly durable?: boolean; readonly settings?: readonly string[] }): Promise<TestPostgresServer>;

/** A TCP port nobody listens on right now, on 127.0.0.1. */
export function freePort(): Promise<number>;
