import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DuplicateToolError,
  NET_HTTP,
  SpecMismatchError,
  ToolBox,
  ToolSet,
  VersionConflictError,
  canonicalJson,
  defineTool,
  fingerprintOf,
  loadToolSet,
  openSqliteToolRegistry,
  publishTools,
} from '../../src/index.js';
import type { Tool, ToolRegistry } from '../../src/index.js';
import { runCli, useTempDir, useChildProcessTimeout } from '../cli/helpers.js';
import { selectedStores } from '../conformance/stores.js';

useChildProcessTimeout();

const search = (version = '1.0.0', description = 'search the web') =>
  defineTool({
    name: 'search',
    version,
    description,
    input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    permissions: { required: [NET_HTTP] },
    handler: ({ q }) => `results for ${String(q)}`,
  });
const calc = defineTool({ name: 'calc', version: '1', input_schema: { type: 'object', properties: { a: { type: 'number' } } }, handler: ({ a }) => a });
const notes = defineTool({ name: 'notes', input_schema: {}, handler: () => 'notes' });

describe.each(selectedStores())('bridge on the %s store', (_store, harness) => {
  const open = () => harness.open();
  afterAll(async () => harness.cleanup?.());

  async function withRegistry(work: (registry: ToolRegistry) => Promise<void>): Promise<void> {
    const registry = await open();
    try {
      await work(registry);
    } finally {
      await registry.close();
    }
  }

  it('publishTools registers every spec (all-or-nothing) and returns the registrations', () =>
    withRegistry(async (registry) => {
      const s = search();
      const registrations = await publishTools(registry, [s, calc]);
      // In name order, whatever the order given.
      expect(registrations.map((r) => r.spec.tool_name)).toEqual(['calc', 'search']);
      expect((await registry.get('search'))?.spec).toEqual(s.spec);
      expect((await registry.get('calc'))?.enabled).toBe(true);
      // Publishing again is a no-op; a ToolSet and a ToolBox are accepted too.
      await publishTools(registry, new ToolSet([s, calc]));
      await publishTools(registry, new ToolBox([calc]));
      expect((await registry.listAll()).length).toBe(2);
    }));

  it('publishTools: a spec changed without a version bump is VERSION_CONFLICT and nothing is written', () =>
    withRegistry(async (registry) => {
      await publishTools(registry, [search()]);
      const changed = search('1.0.0', 'a new description');
      await expect(publishTools(registry, [calc, changed])).rejects.toBeInstanceOf(VersionConflictError);
      await expect(publishTools(registry, [calc, changed])).rejects.toMatchObject({ code: 'VERSION_CONFLICT', context: { tool_name: 'search', path: '[1]' } });
      // context.path is the tool's index in what the caller gave, not in name order.
      await expect(publishTools(registry, [changed, calc])).rejects.toMatchObject({ code: 'VERSION_CONFLICT', context: { tool_name: 'search', path: '[0]' } });
      await expect(publishTools(registry, new ToolBox([changed, calc]))).rejects.toMatchObject({ context: { path: '[0]' } });
      expect(await registry.get('calc')).toBeUndefined();
      expect((await registry.get('search'))?.spec.description).toBe('search the web');
      // With a version bump the deploy goes through.
      await publishTools(registry, [calc, search('1.1.0', 'a new description')]);
      expect((await registry.get('search'))?.spec.version).toBe('1.1.0');
    }));

  it('publishTools refuses two tools of one name (DUPLICATE_TOOL)', () =>
    withRegistry(async (registry) => {
      await expect(publishTools(registry, [search(), search('2')])).rejects.toBeInstanceOf(DuplicateToolError);
      expect(await registry.listAll()).toEqual([]);
    }));

  it('loadToolSet keeps published, enabled, identical tools and reports the rest in excluded', () =>
    withRegistry(async (registry) => {
      const s = search();
      await publishTools(registry, [s, calc]);
      await registry.setEnabled('calc', false);
      const set = await loadToolSet(registry, [s, calc, notes]);
      expect(set).toBeInstanceOf(ToolSet);
      expect(set.list()).toEqual(['search']);
      expect(set.resolve('search')).toBe(s);
      expect(set.resolve('calc')).toBeNull();
      expect(set.resolve('notes')).toBeNull();
      expect(set.excluded).toEqual([
        { tool_name: 'calc', reason: 'disabled' },
        { tool_name: 'notes', reason: 'not_registered' },
      ]);
      expect(Object.isFrozen(set.excluded)).toBe(true);
      expect(await set.invoke('search', { q: 'x' })).toMatchObject({ success: true, data: 'results for x' });
      // An operator enables it again: the next load has it.
      await registry.setEnabled('calc', true);
      expect((await loadToolSet(registry, [s, calc, notes])).list()).toEqual(['calc', 'search']);
    }));

  it('loadToolSet compares canonically: key order does not matter', () =>
    withRegistry(async (registry) => {
      await registry.register({
        tags: [],
        output_schema: {},
        input_schema: { required: ['q'], properties: { q: { type: 'string' } }, type: 'object' },
        description: 'search the web',
        version: '1.0.0',
        tool_name: 'search',
      });
      expect((await loadToolSet(registry, [search()])).list()).toEqual(['search']);
    }));

  it('loadToolSet throws SPEC_MISMATCH with both fingerprints when the stored spec differs', () =>
    withRegistry(async (registry) => {
      await publishTools(registry, [search()]);
      const newer = search('2.0.0');
      let error: unknown;
      try {
        await loadToolSet(registry, [calc, newer]);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(SpecMismatchError);
      const mismatch = error as SpecMismatchError;
      expect(mismatch.code).toBe('SPEC_MISMATCH');
      expect(mismatch.context).toMatchObject({
        tool_name: 'search',
        code_fingerprint: fingerprintOf(canonicalJson(newer.spec)),
        registry_fingerprint: fingerprintOf(canonicalJson(search().spec)),
        code_version: '2.0.0',
        registry_version: '1.0.0',
      });
      // Also for a disabled tool: code and registry must agree.
      await registry.setEnabled('search', false);
      await expect(loadToolSet(registry, [newer])).rejects.toMatchObject({ code: 'SPEC_MISMATCH' });
    }));

  it('loadToolSet with a policy filters by it; excluded lists only what the registry left out', () =>
    withRegistry(async (registry) => {
      await publishTools(registry, [search(), calc]);
      const set = await loadToolSet(registry, [search(), calc, notes], { policy: { persona: 'offline' } });
      expect(set.list()).toEqual(['calc']);
      expect(set.excluded).toEqual([{ tool_name: 'notes', reason: 'not_registered' }]);
      await expect(loadToolSet(registry, [calc], { policy: { persona: '' } })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    }));

  it('loadToolSet with a policy does not list in excluded a tool the policy forbids, disabled or not registered (it would name it)', () =>
    withRegistry(async (registry) => {
      const shell = defineTool({ name: 'shell', input_schema: {}, permissions: { required: ['EXEC_SHELL'] }, handler: () => 'ran' });
      await publishTools(registry, [calc, shell]);
      await registry.setEnabled('calc', false);
      await registry.setEnabled('shell', false);
      const set = await loadToolSet(registry, [calc, shell, notes, search()], { policy: { persona: 'guest', allowed_permissions: [NET_HTTP] } });
      expect(set.excluded).toEqual([
        { tool_name: 'calc', reason: 'disabled' },
        { tool_name: 'notes', reason: 'not_registered' },
        { tool_name: 'search', reason: 'not_registered' },
      ]);
      // forPolicy on a loaded set drops the same: an allowlist hides by name.
      const all = await loadToolSet(registry, [calc, shell, notes]);
      expect(all.excluded.map((entry) => entry.tool_name)).toEqual(['calc', 'notes', 'shell']);
      expect(all.forPolicy({ persona: 'guest', allowed_permissions: ['EXEC_SHELL'], allowed_tools: ['calc', 'shell'] }).excluded.map((entry) => entry.tool_name)).toEqual(['calc', 'shell']);
      expect(all.forPolicy({ persona: 'guest' }).excluded.map((entry) => entry.tool_name)).toEqual(['calc', 'notes']);
    }));

  it('loadToolSet of nothing is an empty set', () =>
    withRegistry(async (registry) => {
      const set = await loadToolSet(registry, []);
      expect(set.size).toBe(0);
      expect(set.excluded).toEqual([]);
    }));

  it('loadToolSet reads the registry in one call (one consistent view for every tool), disabled tools included', () =>
    withRegistry(async (registry) => {
      await publishTools(registry, [search(), calc, notes]);
      await registry.setEnabled('calc', false);
      const calls: string[] = [];
      // The real store, with its method calls recorded.
      const recorded = new Proxy(registry, {
        get(target, key, receiver) {
          const value: unknown = Reflect.get(target, key, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls.push(`${String(key)}(${JSON.stringify(args)})`);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
      const set = await loadToolSet(recorded, [search(), calc, notes]);
      expect(calls).toEqual(['listAll([{"includeDisabled":true}])']);
      expect(set.list()).toEqual(['notes', 'search']);
      expect(set.excluded).toEqual([{ tool_name: 'calc', reason: 'disabled' }]);
    }));

  it('loadToolSet on a closed registry is REGISTRY_CLOSED, with tools or without', async () => {
    const registry = await open();
    await registry.close();
    await expect(loadToolSet(registry, [calc])).rejects.toMatchObject({ code: 'REGISTRY_CLOSED' });
    await expect(loadToolSet(registry, [])).rejects.toMatchObject({ code: 'REGISTRY_CLOSED' });
  });
});

describe('bridge misuse', () => {
  it('TypeError for a registry or tools of the wrong type', async () => {
    const tools: Tool[] = [calc];
    await expect(publishTools({} as never, tools)).rejects.toBeInstanceOf(TypeError);
    await expect(loadToolSet(null as never, tools)).rejects.toBeInstanceOf(TypeError);
  });
});

describe('loadToolSet after an operator ran `tool-registry disable`', () => {
  const temp = useTempDir();

  it('leaves the disabled tool out', async () => {
    const file = join(temp(), 'tools.db');
    const s = search();
    const registry = await openSqliteToolRegistry({ filename: file });
    try {
      await publishTools(registry, [s, calc]);
      expect((await loadToolSet(registry, [s, calc])).list()).toEqual(['calc', 'search']);
      const disabled = await runCli(['disable', 'search', '--db', file], { cwd: temp() });
      expect(disabled.code, disabled.stderr).toBe(0);
      const set = await loadToolSet(registry, [s, calc]);
      expect(set.resolve('search')).toBeNull();
      expect(set.list()).toEqual(['calc']);
      expect(set.excluded).toEqual([{ tool_name: 'search', reason: 'disabled' }]);
      expect(await set.invoke('search', { q: 'x' })).toMatchObject({ success: false, code: 'TOOL_NOT_FOUND' });
    } finally {
      await registry.close();
    }
  });
});
