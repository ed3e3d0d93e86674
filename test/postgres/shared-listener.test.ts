// Registries on one pool (the server's namespaces: postgresNamespaces hands each the same
// pool) share one LISTEN connection, LISTENing on each schema's channel: one server process
// instead of one per registry. Each registry's cache still hears only its own schema's
// commits, all of them resync after the shared connection is killed, and the connection
// goes when the last registry on it closes.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { postgresNamespaces } from '../../src/server/index.js';
import type { PostgresToolRegistry } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { until } from '../support/waiting.js';
import { useFileDatabase } from './helpers.js';

const db = useFileDatabase();

const versionOf = async (registry: PostgresToolRegistry, name: string): Promise<string | null | undefined> => (await registry.get(name))?.spec.version;

/** The backends of this database with this application_name. */
async function backends(admin: pg.Pool, appName: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 ORDER BY pid', [appName]);
  return rows.map((row) => row.pid);
}

describe('PostgreSQL registries on one pool', () => {
  it('share one LISTEN connection; each cache hears its own schema; all resync after it is killed; the last close ends it', async () => {
    const admin = db.pool();
    const pool = db.pool({ max: 4, application_name: 'tr-shared-pool' });
    const schemas = [db.schema(), db.schema(), db.schema()];
    const registries = await Promise.all(schemas.map((schema) => openPostgresToolRegistry({ pool, schema })));
    // Another instance per schema, on its own pool, makes the commits the shared listener must carry.
    const writers = await Promise.all(schemas.map((schema) => openPostgresToolRegistry({ connectionString: db.url(), schema, cache: false })));
    const closed = new Set<PostgresToolRegistry>();
    try {
      const statuses = await Promise.all(registries.map((registry) => registry.status()));
      expect(statuses.map((status) => status.listening)).toEqual([true, true, true]);
      const pid = statuses[0]!.listenerPid;
      expect(typeof pid).toBe('number');
      // One connection listens for all three (one per registry before).
      expect(statuses.map((status) => status.listenerPid)).toEqual([pid, pid, pid]);
      expect(await backends(admin, 'tr-shared-pool')).toContain(pid);

      // A registry opened on the pool while the connection is up joins it.
      const late = await openPostgresToolRegistry({ pool, schema: db.schema() });
      try {
        expect(await late.status()).toMatchObject({ listening: true, listenerPid: pid });
        const lateWriter = await openPostgresToolRegistry({ connectionString: db.url(), schema: (await late.status()).schema, cache: false });
        await lateWriter.register(minimalSpec('late', { version: '1' }));
        await lateWriter.close();
        await until(async () => (await versionOf(late, 'late')) === '1', 'the late registry to hear its schema');
      } finally {
        await late.close();
      }
      // Its close left the others listening on the same connection.
      expect((await Promise.all(registries.map((registry) => registry.status()))).map((status) => status.listenerPid)).toEqual([pid, pid, pid]);

      // Each commit reaches its own schema's registry, and only that one changes.
      for (const [index, writer] of writers.entries()) await writer.register(minimalSpec('t', { version: String(index + 1) }));
      await until(async () => (await Promise.all(registries.map((registry) => versionOf(registry, 't')))).join() === '1,2,3', 'each registry to see its own schema');

      // The shared connection killed: every registry reconnects (on one new connection) and
      // catches up with a commit made while it was away.
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await until(async () => (await Promise.all(registries.map((registry) => registry.status()))).every((status) => status.listenerPid !== pid && status.listening), 'every registry to listen again');
      for (const [index, writer] of writers.entries()) await writer.register(minimalSpec('t', { version: String(index + 11) }));
      await until(async () => (await Promise.all(registries.map((registry) => versionOf(registry, 't')))).join() === '11,12,13', 'each registry to catch up after the reconnect');
      const again = await Promise.all(registries.map((registry) => registry.status()));
      const newPid = again[0]!.listenerPid;
      expect(again.map((status) => status.listenerPid)).toEqual([newPid, newPid, newPid]);

      // Closing two leaves the third listening on the same connection, still hearing its schema.
      for (const registry of registries.slice(0, 2)) {
        await registry.close();
        closed.add(registry);
      }
      const last = registries[2]!;
      expect(await last.status()).toMatchObject({ listening: true, listenerPid: newPid });
      await writers[2]!.register(minimalSpec('t', { version: '23' }));
      await until(async () => (await versionOf(last, 't')) === '23', 'the last registry to hear its schema');

      // The last close ends the LISTEN connection on the server (the pool, the caller's, stays).
      await last.close();
      closed.add(last);
      await until(async () => !(await backends(admin, 'tr-shared-pool')).includes(newPid as number), 'the LISTEN connection to end');
    } finally {
      for (const registry of registries) if (!closed.has(registry)) await registry.close();
      for (const writer of writers) await writer.close();
    }
  });

  it("the server's PostgreSQL namespaces (one pool) listen on one connection", async () => {
    const source = postgresNamespaces({ connectionString: db.url(), schema: db.schema() });
    try {
      const registries = await Promise.all(['default', 'alpha', 'beta'].map(async (ns) => (await source.create(ns)).registry as PostgresToolRegistry));
      const pids = (await Promise.all(registries.map((registry) => registry.status()))).map((status) => status.listenerPid);
      expect(typeof pids[0]).toBe('number');
      expect(pids).toEqual([pids[0], pids[0], pids[0]]);
    } finally {
      await source.close();
    }
  });
});
