// Real processes sharing one PostgreSQL schema (children run dist/, built by pretest): races
// of first registrations, distinct writers, migrations of a fresh database, a replace import
// racing registrations, and kill -9 in the middle of an import.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type pg from 'pg';
import { openPostgresToolRegistry } from '../../src/index.js';
import type { PostgresToolRegistry } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import { until } from '../support/waiting.js';
import { racePgWorkers, SHIPPED, spawnPgWorker, useFileDatabase } from './helpers.js';

const db = useFileDatabase();

/**
 * This process's registry on `schema`, to prepare a race or read its outcome: on `pool`, one
 * pool per test (ended after it), without the read cache, so it reads the tables themselves and
 * opens no LISTEN connection. A connection costs the server about 30 ms of CPU; a registry on a
 * pool of its own opened two, four or six per test besides the racing processes' own
 * (docs/testing.md, twelfth round).
 */
function inThisProcess(pool: pg.Pool, schema: string): Promise<PostgresToolRegistry> {
  return openPostgresToolRegistry({ pool, schema, cache: false });
}

/** A schema created and migrated up front, so a race is about its action alone. */
async function migratedSchema(pool: pg.Pool): Promise<string> {
  const schema = db.schema();
  await (await inThisProcess(pool, schema)).close();
  return schema;
}

describe('PostgreSQL schema shared by processes', () => {
  it('six processes register one new name, same version, different specs: one wins, five VERSION_CONFLICT', async () => {
    const pool = db.pool();
    const schema = await migratedSchema(pool);
    const results = await racePgWorkers(
      Array.from({ length: 6 }, (_, i) => ({
        url: db.url(),
        schema,
        action: 'register',
        spec: minimalSpec('contested', { version: '1.0.0', description: `from child ${i}` }),
      })),
    );
    const winners = results.filter((result) => result.ok);
    expect(winners).toHaveLength(1);
    expect(results.filter((result) => !result.ok).map((result) => result.error?.code)).toEqual(Array(5).fill('VERSION_CONFLICT'));
    const registry = await inThisProcess(pool, schema);
    try {
      expect(await registry.get('contested')).toEqual(winners[0]?.result);
      expect((await registry.changes()).events.map((event) => event.action)).toEqual(['added']);
    } finally {
      await registry.close();
    }
  });

  it('four processes register 40 distinct tools each: all 160 are kept', async () => {
    const pool = db.pool();
    const schema = await migratedSchema(pool);
    const results = await racePgWorkers(
      Array.from({ length: 4 }, (_, i) => ({ url: db.url(), schema, action: 'registerEach', prefix: `p${i}`, count: 40 })),
    );
    for (const result of results) {
      expect(result.ok, JSON.stringify(result.error)).toBe(true);
      expect(result.result).toEqual(Array(40).fill('ok'));
    }
    const registry = await inThisProcess(pool, schema);
    try {
      expect(await registry.listAll()).toHaveLength(160);
      const { revision, events } = await registry.changes({ limit: 1000 });
      expect(revision).toBe(160);
      expect(events.map((event) => event.revision)).toEqual(Array.from({ length: 160 }, (_, i) => i + 1));
    } finally {
      await registry.close();
    }
  });

  it('eight processes open one fresh database at once: each migration is recorded once', async () => {
    const schema = db.schema();
    const results = await racePgWorkers(Array.from({ length: 8 }, () => ({ url: db.url(), schema, action: 'open' })));
    for (const result of results) {
      expect(result.ok, JSON.stringify(result.error)).toBe(true);
      expect(result.result).toEqual(SHIPPED);
    }
    const { rows } = await db.pool().query(`SELECT name, count(*)::int AS n FROM ${schema}.schema_migrations GROUP BY name ORDER BY name`);
    expect(rows).toEqual(SHIPPED.map((name) => ({ name, n: 1 })));
  });

  it('a replace import of 20,000 tools while four processes register: the outcome is some serial order', async () => {
    const pool = db.pool();
    const schema = await migratedSchema(pool);
    const jobs = [
      { url: db.url(), schema, action: 'import', mode: 'replace', prefix: 'imported', count: 20_000, options: { busyTimeoutMs: 60_000 } },
      ...Array.from({ length: 4 }, (_, i) => ({
        url: db.url(),
        schema,
        action: 'registerEach',
        prefix: `p${i}`,
        count: 60,
        options: { busyTimeoutMs: 60_000 },
      })),
    ];
    const results = await racePgWorkers(jobs);
    for (const result of results) expect(result.ok, JSON.stringify(result.error)).toBe(true);
    for (const result of results.slice(1)) expect(result.result).toEqual(Array(60).fill('ok'));
    const registry = await inThisProcess(pool, schema);
    try {
      const names = new Set((await registry.listAll()).map((registration) => registration.spec.tool_name));
      expect([...names].filter((name) => name.startsWith('imported_'))).toHaveLength(20_000);
      // Each process registered in order; the import removed what came before it and nothing after:
      // what is left of each process is a suffix of its sequence.
      let kept = 0;
      for (let p = 0; p < 4; p++) {
        const present = Array.from({ length: 60 }, (_, i) => names.has(`p${p}_${String(i).padStart(4, '0')}`));
        const first = present.indexOf(true);
        const suffix = first < 0 ? [] : present.slice(first);
        expect(suffix.every(Boolean), `process ${p}: ${present.map(Number).join('')}`).toBe(true);
        kept += suffix.length;
      }
      expect(names.size).toBe(20_000 + kept);
    } finally {
      await registry.close();
    }
  });

  it('kill -9 of a process in the middle of an import: nothing of that import is visible', async () => {
    const pool = db.pool();
    const schema = await migratedSchema(pool);
    const before = await inThisProcess(pool, schema);
    await before.register(minimalSpec('existing'));
    const revision = (await before.changes()).revision;
    await before.close();
    const worker = spawnPgWorker({ url: db.url(), schema, action: 'import', count: 100_000, descriptionLength: 200 });
    await worker.next('importing');
    // Wait until its transaction is writing, then kill the process. Another backend's: this
    // query's own text matches the pattern too, which made the wait end at once, before the
    // import had validated its tools and sent its statement.
    await until(
      async () => {
        const { rowCount } = await pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE '%tool_registry_write%' AND pid <> pg_backend_pid()`,
        );
        return (rowCount ?? 0) > 0;
      },
      "the import's write to be running",
      { timeoutMs: 60_000 },
    );
    worker.child.kill('SIGKILL');
    expect((await worker.exited).signal).toBe('SIGKILL');
    // The server ends the dead client's transaction once it notices the socket closed.
    for (let i = 0; i < 1000; i++) {
      const { rowCount } = await pool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%tool_registry_write%' AND pid <> pg_backend_pid() AND state <> 'idle'`);
      if (rowCount === 0) break;
      await sleep(10);
    }
    const after = await inThisProcess(pool, schema);
    try {
      expect((await after.listAll()).map((registration) => registration.spec.tool_name)).toEqual(['existing']);
      expect((await after.changes()).revision).toBe(revision);
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${schema}.tool_specs`);
      expect(rows[0].n).toBe(1);
    } finally {
      await after.close();
    }
  });
});
