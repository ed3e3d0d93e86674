// The read cache across real processes: a child process commits new versions of a tool; this
// process's cached registry must show each commit (its version or a newer one) within the documented bound (1 s), also
// after its LISTEN connection is killed with pg_terminate_backend mid-run.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { spawnPgWorker, useFileDatabase } from './helpers.js';

const db = useFileDatabase();
/** The staleness bound docs/postgres.md states. */
const BOUND_MS = 1000;

describe('PostgreSQL read cache across processes', () => {
  it("shows another process's commits within the bound, also after its listener is terminated", async () => {
    const schema = db.schema();
    const reader = await openPostgresToolRegistry({ connectionString: db.url(), schema });
    try {
      const COUNT = 40;
      const writer = spawnPgWorker({ url: db.url(), schema, action: 'registerVersions', name: 't', count: COUNT, pauseMs: 40 });
      const firstSeen = new Map<string, number>();
      let killed = false;
      let finished = false;
      const done = writer.next('done').finally(() => (finished = true));
      while (!finished) {
        const version = (await reader.get('t'))?.spec.version;
        if (version != null && !firstSeen.has(version)) firstSeen.set(version, Date.now());
        if (!killed && firstSeen.has(String(COUNT / 2))) {
          const { listenerPid } = await reader.status();
          await db.pool().query('SELECT pg_terminate_backend($1)', [listenerPid]);
          killed = true;
        }
        await sleep(1);
      }
      // A last look after the writer's final commit.
      const last = (await reader.get('t'))?.spec.version;
      if (last != null && !firstSeen.has(last)) firstSeen.set(last, Date.now());
      const result = await done;
      expect(result.ok, JSON.stringify(result.error)).toBe(true);
      expect(killed).toBe(true);
      const committedAt = result.result as number[];
      // A commit is shown once the reader returns that version or a newer one: a version the
      // writer replaced within its pause may never be seen (while the listener reconnects, the
      // cache may lag up to the bound), but the one after it must come within the bound.
      const shownAt = (version: number): number =>
        Math.min(...committedAt.map((_, i) => (i + 1 >= version ? (firstSeen.get(String(i + 1)) ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY)));
      const lags = committedAt.map((at, i) => shownAt(i + 1) - at);
      expect(Math.max(...lags), `lags: ${lags.join(', ')}`).toBeLessThan(BOUND_MS);
      // The writer's last version itself was seen.
      expect(firstSeen.has(String(COUNT))).toBe(true);
      expect((await reader.status()).listening).toBe(true);
    } finally {
      await reader.close();
    }
  });
});
