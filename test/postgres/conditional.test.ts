// Conditional writes (expectedVersion, issue 11) racing from several real processes on one
// PostgreSQL schema: exactly the outcomes of some serial order, PRECONDITION_FAILED for the
// rest, and a final state and change feed that agree with the winners. The same race on SQLite
// is in test/sqlite/change-feed.test.ts; the in-process behaviour in test/conformance/.
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import type { PostgresToolRegistry, ToolRegistration } from '../../src/index.js';
import { minimalSpec } from '../support/registry-helpers.js';
import type { WorkerMessage } from '../support/workers.js';
import { useFileDatabase, usePgWorkers } from './helpers.js';

const db = useFileDatabase();
const workers = usePgWorkers();

/** A fresh schema holding tool `deploy` at version 1.4.0. */
async function deployAt140(): Promise<string> {
  const schema = db.schema();
  const registry = await openPostgresToolRegistry({ connectionString: db.url(), schema });
  await registry.register(minimalSpec('deploy', { version: '1.4.0' }));
  await registry.close();
  return schema;
}

async function withRegistry<T>(schema: string, work: (registry: PostgresToolRegistry) => Promise<T>): Promise<T> {
  const registry = await openPostgresToolRegistry({ connectionString: db.url(), schema });
  try {
    return await work(registry);
  } finally {
    await registry.close();
  }
}

/** A conditional write on `deploy` expecting 1.4.0. */
function conditional(schema: string, write: Record<string, unknown>): Record<string, unknown> {
  return { url: db.url(), schema, action: 'conditional', name: 'deploy', options: { expectedVersion: '1.4.0' }, ...write };
}

/** Each loser failed the precondition on `deploy` expecting 1.4.0, nothing else. */
function expectPreconditionFailed(losers: readonly WorkerMessage[]): void {
  for (const loser of losers) {
    expect(loser.ok).toBe(false);
    expect(loser.error?.code, loser.error?.message).toBe('PRECONDITION_FAILED');
    expect(loser.error?.context).toMatchObject({ tool_name: 'deploy', expected: '1.4.0' });
  }
}

describe('PostgreSQL conditional writes from several processes', () => {
  it('six processes switch a version conditionally at once: exactly one wins, five PRECONDITION_FAILED', async () => {
    const schema = await deployAt140();
    const results = await workers.race(
      Array.from({ length: 6 }, (_, i) => conditional(schema, { method: 'register', spec: minimalSpec('deploy', { version: `2.0.${i}` }) })),
    );
    const winners = results.filter((result) => result.ok);
    expect(winners).toHaveLength(1);
    expectPreconditionFailed(results.filter((result) => !result.ok));
    const version = (winners[0]?.result as ToolRegistration).spec.version;
    for (const loser of results.filter((result) => !result.ok)) expect(loser.error?.context).toMatchObject({ actual: version, exists: true });
    await withRegistry(schema, async (registry) => {
      expect(await registry.get('deploy')).toEqual(winners[0]?.result);
      expect((await registry.changes()).events.map((event) => [event.action, event.version])).toEqual([
        ['added', '1.4.0'],
        ['updated', version],
      ]);
      expect((await registry.history('deploy')).map((entry) => entry.spec.version)).toEqual(['1.4.0', version]);
    });
  });

  it('six processes remove conditionally at once: exactly one removes, five PRECONDITION_FAILED', async () => {
    const schema = await deployAt140();
    const results = await workers.race(Array.from({ length: 6 }, () => conditional(schema, { method: 'remove' })));
    const winners = results.filter((result) => result.ok);
    expect(winners.map((winner) => winner.result)).toEqual([true]);
    expectPreconditionFailed(results.filter((result) => !result.ok));
    for (const loser of results.filter((result) => !result.ok)) expect(loser.error?.context).toMatchObject({ exists: false });
    await withRegistry(schema, async (registry) => {
      expect(await registry.has('deploy')).toBe(false);
      expect((await registry.changes()).events.map((event) => [event.action, event.version])).toEqual([
        ['added', '1.4.0'],
        ['removed', '1.4.0'],
      ]);
    });
  });

  it('six processes disable conditionally at once: the version holds, so all succeed and one disable is written', async () => {
    const schema = await deployAt140();
    const results = await workers.race(Array.from({ length: 6 }, () => conditional(schema, { method: 'setEnabled', enabled: false })));
    for (const result of results) {
      expect(result.ok, JSON.stringify(result.error)).toBe(true);
      expect(result.result).toMatchObject({ enabled: false, spec: { version: '1.4.0' } });
    }
    await withRegistry(schema, async (registry) => {
      expect((await registry.changes()).events.map((event) => event.action)).toEqual(['added', 'disabled']);
    });
  });

  it('register, disable and remove race on one expected version: the outcomes, the final state and the feed are one serial order', async () => {
    const schema = await deployAt140();
    const jobs = [
      conditional(schema, { method: 'register', spec: minimalSpec('deploy', { version: '2.0.0' }) }),
      conditional(schema, { method: 'register', spec: minimalSpec('deploy', { version: '2.0.1' }) }),
      conditional(schema, { method: 'setEnabled', enabled: false }),
      conditional(schema, { method: 'setEnabled', enabled: false }),
      conditional(schema, { method: 'remove' }),
      conditional(schema, { method: 'remove' }),
    ];
    const results = await workers.race(jobs);
    // The version changes only with a register or a remove: exactly one of them wins.
    const changers = results.filter((result, i) => result.ok && jobs[i]?.method !== 'setEnabled');
    expect(changers).toHaveLength(1);
    expectPreconditionFailed(results.filter((result) => !result.ok));
    // A disable succeeds only before the winner (as disabled at 1.4.0); after it, it fails.
    const disabled = results.filter((result, i) => result.ok && jobs[i]?.method === 'setEnabled');
    for (const result of disabled) expect(result.result).toMatchObject({ enabled: false, spec: { version: '1.4.0' } });
    const winner = results.findIndex((result, i) => result.ok && jobs[i]?.method !== 'setEnabled');
    const removed = jobs[winner]?.method === 'remove';
    await withRegistry(schema, async (registry) => {
      const feed = (await registry.changes()).events.map((event) => [event.action, event.version]);
      const current = await registry.get('deploy');
      if (removed) {
        expect(results[winner]?.result).toBe(true);
        expect(current).toBeUndefined();
        expect(feed).toEqual([['added', '1.4.0'], ...(disabled.length > 0 ? [['disabled', '1.4.0']] : []), ['removed', '1.4.0']]);
      } else {
        const registration = results[winner]?.result as ToolRegistration;
        // A new version keeps `enabled`: disabled if a disable came first.
        expect(registration.enabled).toBe(disabled.length === 0);
        expect(current).toEqual(registration);
        expect(feed).toEqual([['added', '1.4.0'], ...(disabled.length > 0 ? [['disabled', '1.4.0']] : []), ['updated', registration.spec.version]]);
      }
    });
  });

  it('four processes compare-and-set a version 15 times each: every version is written once, by one process, in order', async () => {
    const schema = db.schema();
    await withRegistry(schema, (registry) => registry.register(minimalSpec('counter', { version: '0' })));
    const PROCESSES = 4;
    const EACH = 15;
    const results = await workers.race(
      Array.from({ length: PROCESSES }, () => ({ url: db.url(), schema, action: 'bumpVersion', name: 'counter', count: EACH })),
    );
    const wrote: string[] = [];
    for (const result of results) {
      expect(result.ok, JSON.stringify(result.error)).toBe(true);
      const { wrote: own } = result.result as { wrote: string[]; preconditionFailed: number };
      // Each process's versions grow.
      expect(own.map(Number)).toEqual([...own.map(Number)].sort((a, b) => a - b));
      wrote.push(...own);
    }
    const TOTAL = PROCESSES * EACH;
    const versions = Array.from({ length: TOTAL }, (_, i) => String(i + 1));
    // No lost update: every version 1..60 was written by exactly one process.
    expect(wrote.map(Number).sort((a, b) => a - b).map(String)).toEqual(versions);
    await withRegistry(schema, async (registry) => {
      expect((await registry.get('counter'))?.spec.version).toBe(String(TOTAL));
      expect((await registry.changes()).events.map((event) => [event.action, event.version])).toEqual([
        ['added', '0'],
        ...versions.map((version) => ['updated', version]),
      ]);
    });
  });
});
