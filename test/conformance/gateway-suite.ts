// Conformance, issue 37 (the gateway's rows): upstream MCP servers and the audit log of tool
// calls, identical in every store: round trips, validation paths, ordering and paging, the
// retention bounds, and another instance over the same storage.
import { describe, expect, it } from 'vitest';
import type { CallRecordInput, ToolRegistry, UpstreamInput } from '../../src/index.js';
import { expectCode, expectPlainTypeError, isDeepFrozen } from '../support/registry-helpers.js';
import type { StoreHarness } from './stores.js';
import { T0, useSuiteRegistries } from './suite-registries.js';

const T1 = '2025-01-02T03:04:05.678Z';

const HTTP: UpstreamInput = {
  name: 'github',
  transport: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${GW_SUITE_SECRET}' } },
};

const STDIO: UpstreamInput = {
  name: 'files',
  transport: { type: 'stdio', command: ['node', 'server.js', '--root', '/srv'], env: { API_KEY: '${GW_SUITE_SECRET}' }, cwd: '/opt/files' },
  prefix: '',
  approve: 'none',
  permissions: ['FS_READ'],
  rejected: [{ tool: 'delete', definition: 'abc123' }],
};

function call(tool: string, extra: Partial<CallRecordInput> = {}): CallRecordInput {
  return {
    at: T0,
    token: 'ci',
    persona: null,
    namespace: 'default',
    tool,
    version: '1.0.0',
    fingerprint: null,
    upstream: null,
    duration_ms: 12.5,
    outcome: 'ok',
    ...extra,
  };
}

async function tools(registry: ToolRegistry, query?: Parameters<ToolRegistry['listCalls']>[0]): Promise<string[]> {
  return (await registry.listCalls(query)).map((row) => row.tool);
}

export function defineGatewaySuite(harness: StoreHarness): void {
  const { clock, open, restart } = useSuiteRegistries(harness);

  describe('upstreams', () => {
    it('both transports round trip (defaults applied, ${VAR} kept unexpanded, frozen) and survive a restart; a put of a stored name replaces it, keeping created_at', async () => {
      process.env.GW_SUITE_SECRET = 'must-not-be-stored';
      let registry = await open();
      try {
        const http = await registry.putUpstream(HTTP);
        expect(http).toEqual({
          name: 'github',
          transport: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${GW_SUITE_SECRET}' } },
          prefix: 'github_',
          approve: 'all',
          permissions: [],
          rejected: [],
          created_at: T0,
          updated_at: T0,
        });
        expect(isDeepFrozen(http)).toBe(true);
        const stdio = await registry.putUpstream(STDIO);
        expect(stdio).toEqual({ ...STDIO, created_at: T0, updated_at: T0 });
        registry = await restart(registry);
        expect(await registry.getUpstream('github')).toEqual(http);
        expect(await registry.getUpstream('files')).toEqual(stdio);
        expect(isDeepFrozen(await registry.getUpstream('files'))).toBe(true);
        expect(await registry.getUpstream('absent')).toBeUndefined();
        // Defaults filled for a stdio transport given without env and cwd.
        const bare = await registry.putUpstream({ name: 'bare', transport: { type: 'stdio', command: ['srv'] } as never });
        expect(bare.transport).toEqual({ type: 'stdio', command: ['srv'], env: {}, cwd: null });
      } finally {
        delete process.env.GW_SUITE_SECRET;
      }
      // putUpstream of a stored name replaces the row, keeping created_at and moving updated_at.
      clock.set(T1);
      const replaced = await registry.putUpstream({ ...HTTP, prefix: 'gh_', approve: 'none' });
      expect(replaced).toMatchObject({ prefix: 'gh_', approve: 'none', created_at: T0, updated_at: T1 });
      expect(await registry.getUpstream('github')).toEqual(replaced);
      // The same content again still touches the row (how `upstream sync` wakes the serving processes).
      clock.set('2025-01-03T00:00:00.000Z');
      expect((await registry.putUpstream({ ...HTTP, prefix: 'gh_', approve: 'none' })).updated_at).toBe('2025-01-03T00:00:00.000Z');
      // A row as read back can be put again: a 64-character name's default prefix is 65
      // characters (refused when given, so approve, reject and sync of it failed for good).
      const long = await registry.putUpstream({ ...HTTP, name: 'n'.repeat(64) });
      expect((await registry.putUpstream({ ...HTTP, name: long.name, prefix: long.prefix })).prefix).toBe(`${'n'.repeat(64)}_`);
    });

    it('listUpstreams sorts by name in code-point order and hands out a fresh array; removeUpstream is idempotent; invalid input is VALIDATION_FAILED with its path', async () => {
      const registry = await open();
      for (const name of ['b', 'a', 'B', 'a-1']) await registry.putUpstream({ ...HTTP, name });
      const listed = await registry.listUpstreams();
      expect(listed.map((row) => row.name)).toEqual(['B', 'a', 'a-1', 'b']);
      listed.pop();
      expect(await registry.listUpstreams()).toHaveLength(4);
      expect(await registry.removeUpstream('a')).toBe(true);
      expect(await registry.removeUpstream('a')).toBe(false);
      expect(await registry.getUpstream('a')).toBeUndefined();
      expect((await registry.listUpstreams()).map((row) => row.name)).toEqual(['B', 'a-1', 'b']);
      await expectPlainTypeError(registry.getUpstream(7 as never));
      // Invalid upstreams are VALIDATION_FAILED naming the path, and store nothing.
      const cases: [input: unknown, path: string][] = [
        [{ ...HTTP, name: 'has space' }, 'name'],
        [{ ...HTTP, transport: { type: 'http', url: 'ftp://example.com', headers: {} } }, 'transport.url'],
        [{ ...HTTP, transport: { type: 'http', url: 'https://example.com', headers: { X: 1 } } }, 'transport.headers.X'],
        [{ ...STDIO, transport: { type: 'stdio', command: [], env: {}, cwd: null } }, 'transport.command'],
        [{ ...HTTP, transport: { type: 'ws', url: 'wss://example.com' } }, 'transport.type'],
        [{ ...HTTP, prefix: 'no spaces' }, 'prefix'],
        [{ ...HTTP, rejected: [{ tool: 'x' }] }, 'rejected[0].definition'],
      ];
      for (const [input, path] of cases) {
        const error = await expectCode(registry.putUpstream(input as UpstreamInput), 'VALIDATION_FAILED');
        expect(error.context.path).toBe(path);
      }
      expect((await registry.listUpstreams()).map((row) => row.name)).toEqual(['B', 'a-1', 'b']);
    });

    it('another instance over the same storage sees the rows', async () => {
      const registry = await open();
      const peer = await harness.peer(registry);
      try {
        await registry.putUpstream(HTTP);
        await registry.recordCalls([call('a'), call('b')]);
        expect((await peer.getUpstream('github'))?.prefix).toBe('github_');
        expect(await tools(peer)).toEqual(['b', 'a']);
        await peer.removeUpstream('github');
        await peer.recordCalls([call('c')]);
        expect(await registry.listUpstreams()).toEqual([]);
        expect(await tools(registry)).toEqual(['c', 'b', 'a']);
      } finally {
        if (peer !== registry) await peer.close();
      }
    });
  });

  describe('the audit log', () => {
    it('recordCalls appends rows with growing ids (at stored as UTC), listCalls returns them newest first, frozen; invalid input is VALIDATION_FAILED with its path', async () => {
      const registry = await open();
      await registry.recordCalls([call('a', { at: '2025-01-01T01:00:00+01:00', token: null, upstream: 'github', outcome: 'UPSTREAM_ERROR' }), call('b')]);
      await registry.recordCalls([]);
      await registry.recordCalls([call('c', { duration_ms: 0 })]);
      const rows = await registry.listCalls();
      expect(rows.map((row) => row.tool)).toEqual(['c', 'b', 'a']);
      expect(isDeepFrozen(rows[0])).toBe(true);
      const [c, b, a] = rows as [NonNullable<(typeof rows)[0]>, NonNullable<(typeof rows)[0]>, NonNullable<(typeof rows)[0]>];
      expect(c.id).toBeGreaterThan(b.id);
      expect(b.id).toBeGreaterThan(a.id);
      expect(a).toEqual({ ...call('a', { token: null, upstream: 'github', outcome: 'UPSTREAM_ERROR' }), at: '2025-01-01T00:00:00.000Z', id: a.id });
      expect(c.duration_ms).toBe(0);
      expect(b.duration_ms).toBe(12.5);
      // Invalid rows and filters are VALIDATION_FAILED naming the path; a bad batch records nothing.
      const badBatches: [rows: unknown[], path: string][] = [
        [[call('a'), { ...call('b'), duration_ms: -1 }], '[1].duration_ms'],
        [[{ ...call('a'), at: 'yesterday' }], '[0].at'],
        [[{ ...call('a'), tool: '' }], '[0].tool'],
        [[{ ...call('a'), arguments: {} }], '[0]'],
      ];
      for (const [batch, path] of badBatches) {
        const error = await expectCode(registry.recordCalls(batch as CallRecordInput[]), 'VALIDATION_FAILED');
        expect(error.context.path).toBe(path);
      }
      expect(await tools(registry)).toEqual(['c', 'b', 'a']);
      const filters: [query: unknown, path: string][] = [
        [{ limit: 0 }, 'limit'],
        [{ limit: 10_001 }, 'limit'],
        [{ limit: 1.5 }, 'limit'],
        [{ since: '2025-13-01' }, 'since'],
        [{ before: 0 }, 'before'],
        [{ tool: 3 }, 'tool'],
      ];
      for (const [query, path] of filters) {
        const error = await expectCode(registry.listCalls(query as never), 'VALIDATION_FAILED');
        expect(error.context.path).toBe(path);
      }
      await expectPlainTypeError(registry.recordCalls('a' as never));
    });

    it('listCalls filters by tool, token and since, limits, and pages with before', async () => {
      const registry = await open();
      await registry.recordCalls([
        call('a', { at: '2025-01-01T00:00:00.000Z', token: 'x' }),
        call('b', { at: '2025-01-01T00:00:01.000Z', token: 'y' }),
        call('a', { at: '2025-01-01T00:00:02.000Z', token: 'y' }),
        call('c', { at: '2025-01-01T00:00:03.000Z', token: null }),
        call('a', { at: '2025-01-01T00:00:04.000Z', token: 'x' }),
      ]);
      expect((await registry.listCalls({ tool: 'a' })).map((row) => row.at)).toEqual(['2025-01-01T00:00:04.000Z', '2025-01-01T00:00:02.000Z', '2025-01-01T00:00:00.000Z']);
      expect(await tools(registry, { token: 'y' })).toEqual(['a', 'b']);
      expect(await tools(registry, { since: '2025-01-01T01:00:02+01:00' })).toEqual(['a', 'c', 'a']);
      expect(await tools(registry, { tool: 'a', token: 'x', since: '2025-01-01T00:00:01Z' })).toEqual(['a']);
      const first = await registry.listCalls({ limit: 2 });
      expect(first.map((row) => row.tool)).toEqual(['a', 'c']);
      const second = await registry.listCalls({ limit: 2, before: (first[1] as { id: number }).id });
      expect(second.map((row) => row.tool)).toEqual(['a', 'b']);
      const third = await registry.listCalls({ limit: 2, before: (second[1] as { id: number }).id });
      expect(third.map((row) => row.tool)).toEqual(['a']);
      expect(await registry.listCalls({ limit: 2, before: (third[0] as { id: number }).id })).toEqual([]);
      expect(await tools(registry, { tool: 'zzz' })).toEqual([]);
    });


    it('retention keeps the newest maxRows rows and drops rows older than maxAgeDays', async () => {
      const registry = await open({ callRetention: { maxRows: 3 } });
      await registry.recordCalls([call('a'), call('b')]);
      await registry.recordCalls([call('c'), call('d')]);
      expect(await tools(registry)).toEqual(['d', 'c', 'b']);
      await registry.recordCalls([call('e'), call('f'), call('g'), call('h')]);
      expect(await tools(registry)).toEqual(['h', 'g', 'f']);
      const aged = await open({ callRetention: { maxAgeDays: 1 } });
      await aged.recordCalls([call('old', { at: '2024-12-30T00:00:00.000Z' }), call('recent', { at: '2024-12-31T12:00:00.000Z' })]);
      // The clock says 2025-01-01T00:00: 'old' is two days old, 'recent' half a day.
      expect(await tools(aged)).toEqual(['recent']);
      clock.set('2025-01-02T00:00:00.001Z');
      await aged.recordCalls([call('new', { at: '2025-01-02T00:00:00.000Z' })]);
      expect(await tools(aged)).toEqual(['new']);
    });
  });
}
