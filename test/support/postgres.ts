// Per-file isolation on the run's one PostgreSQL server (test/support/postgres-global-setup.ts):
// each test file creates its own database, so notification channels and advisory locks of
// one file never meet another's; within a file, each registry may take its own schema.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** The run's server (superuser URL on its `postgres` database). */
export function postgresServerUrl(): string {
  return inject('postgresUrl');
}

/** `url` pointing at another database on the same server. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A fresh, unique name usable unquoted as a database or schema name. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  /** Drops the database, ending whatever is still connected to it. */
  drop(): Promise<void>;
}

async function onServer<T>(serverUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database on the run's server. */
export async function createTestDatabase(serverUrl: string = postgresServerUrl()): Promise<TestDatabase> {
  const name = uniqueName('tr_test');
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  return {
    name,
    url: withDatabase(serverUrl, name),
    drop: async () => {
      await onServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
