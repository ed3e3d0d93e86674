// Per-file isolation on the run's one PostgreSQL server (test/support/postgres-global-setup.ts):
// each test file creates its own database, so notification channels and advisory locks of
// one file never meet another's; within a file, each registry may take its own schema.
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
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

/** A connection to the server's own database; `ended` once it failed or ended. */
async function onServer(serverUrl: string): Promise<{ client: pg.Client; ended: () => boolean }> {
  const client = new pg.Client({ connectionString: serverUrl });
  let ended = false;
  client.on('error', () => {
    ended = true;
  });
  client.on('end', () => {
    ended = true;
  });
  await client.connect();
  return { client, ended: () => ended };
}

/** Lets the process exit while `client` idles (a file that fails before its drop()), or not. */
function holdsProcess(client: pg.Client, hold: boolean): void {
  const socket = client.connection.stream as Partial<Socket>;
  if (hold) socket.ref?.();
  else socket.unref?.();
}

/**
 * Creates an empty database on the run's server. The connection that creates it stays open,
 * idle, to drop it: a connection costs the server about 30 ms of CPU, and one for each of the
 * CREATE and the DROP cost the run about 70 (docs/testing.md, twelfth round). A test that ends
 * it (terminating backends) only makes drop() connect again.
 */
export async function createTestDatabase(serverUrl: string = postgresServerUrl()): Promise<TestDatabase> {
  const name = uniqueName('tr_test');
  let admin: Awaited<ReturnType<typeof onServer>> | undefined = await onServer(serverUrl);
  try {
    await admin.client.query(`CREATE DATABASE ${name}`);
  } catch (error) {
    await admin.client.end();
    throw error;
  }
  holdsProcess(admin.client, false);
  return {
    name,
    url: withDatabase(serverUrl, name),
    drop: async () => {
      const kept = admin;
      admin = undefined;
      if (kept !== undefined && kept.ended()) await kept.client.end().catch(() => {});
      const { client } = kept === undefined || kept.ended() ? await onServer(serverUrl) : kept;
      holdsProcess(client, true);
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
