// planImport, the public import rule over plain data: the plan a dry run of importSnapshot
// reports, without a registry. The in-memory store is the oracle.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, planImport } from '../../src/index.js';
import type { ImportMode, ToolRegistrationInput, ToolRegistrySnapshotInput } from '../../src/index.js';
import { fullSpec } from '../support/registry-helpers.js';

const T0 = '2025-01-01T00:00:00.000Z';
const PY = '2025-01-31T12:00:00.123456+00:00';

async function registryOf(tools: ToolRegistrationInput[]): Promise<InMemoryToolRegistry> {
  const registry = new InMemoryToolRegistry();
  await registry.importSnapshot({ tools });
  return registry;
}

const current: ToolRegistrationInput[] = [
  { spec: fullSpec('a', '1'), enabled: true, created_at: T0 },
  { spec: fullSpec('b', '1'), enabled: false, created_at: T0 },
  { spec: fullSpec('c', '2'), enabled: true, created_at: T0 },
  { spec: fullSpec('gone', '1'), enabled: true, created_at: T0 },
];
const snapshot: ToolRegistrySnapshotInput = {
  tools: [
    { spec: fullSpec('d', '1'), created_at: PY },
    { spec: { ...fullSpec('c', '2'), description: 'other text, same version' }, created_at: T0 },
    { spec: fullSpec('b', '2'), enabled: false, created_at: T0 },
    { spec: fullSpec('a', '1'), enabled: true, created_at: T0 },
  ],
};

describe('planImport', () => {
  it('says per tool add, update, unchanged, remove or conflict, sorted by name', () => {
    expect(planImport(current, snapshot)).toEqual([
      { tool_name: 'a', action: 'unchanged', path: 'tools[3]', from_version: '1', to_version: '1' },
      { tool_name: 'b', action: 'update', path: 'tools[2]', from_version: '1', to_version: '2' },
      { tool_name: 'c', action: 'conflict', path: 'tools[1]', from_version: '2', to_version: '2' },
      { tool_name: 'd', action: 'add', path: 'tools[0]', to_version: '1' },
    ]);
    expect(planImport(current, snapshot, { mode: 'replace' }).map((step) => [step.tool_name, step.action])).toEqual([
      ['a', 'unchanged'],
      ['b', 'update'],
      ['c', 'update'],
      ['d', 'add'],
      ['gone', 'remove'],
    ]);
  });

  it("is the plan of importSnapshot's dry run, from listAll or exportSnapshot, in both modes", async () => {
    const registry = await registryOf(current);
    const registrations = await registry.listAll({ includeDisabled: true });
    const exported = await registry.exportSnapshot();
    for (const mode of ['merge', 'replace'] as const) {
      const { plan } = await registry.importSnapshot(snapshot, { mode, dryRun: true });
      expect(planImport(registrations, snapshot, { mode })).toEqual(plan);
      expect(planImport(exported, snapshot, { mode })).toEqual(plan);
    }
  });

  it('agrees with the dry run on random registries and snapshots', async () => {
    const tool = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      version: fc.constantFrom(null, '1', '2'),
      description: fc.constantFrom('x', 'y'),
      enabled: fc.boolean(),
      created_at: fc.constantFrom(null, T0, PY),
    });
    const tools = fc.uniqueArray(tool, { selector: (one) => one.name, maxLength: 5 }).map((list) =>
      list.map((one) => ({ spec: { ...fullSpec(one.name, one.version), description: one.description }, enabled: one.enabled, created_at: one.created_at })),
    );
    await fc.assert(
      fc.asyncProperty(tools, tools, async (before, incoming) => {
        const registry = await registryOf(before);
        const { plan } = await registry.importSnapshot({ tools: incoming }, { mode: 'replace', dryRun: true });
        expect(planImport(before, { tools: incoming }, { mode: 'replace' })).toEqual(plan);
        const merged = await registry.importSnapshot({ tools: incoming }, { dryRun: true });
        expect(planImport(before, { tools: incoming })).toEqual(merged.plan);
      }),
      { numRuns: 200 },
    );
  });

  it('returns frozen steps and changes nothing it was given', () => {
    const given = structuredClone(snapshot);
    const steps = planImport(current, given);
    expect(Object.isFrozen(steps)).toBe(true);
    expect(steps.every((step) => Object.isFrozen(step))).toBe(true);
    expect(given).toEqual(snapshot);
  });

  it('refuses an invalid snapshot or current state as importSnapshot does, and a bad mode', () => {
    const codeOf = (action: () => unknown) => {
      try {
        action();
      } catch (error) {
        return (error as { code?: string }).code ?? (error as Error).name;
      }
      return 'no error';
    };
    expect(codeOf(() => planImport(current, { tools: [{ spec: { tool_name: 'bad name' } }] } as never))).toBe('SNAPSHOT_INVALID');
    expect(codeOf(() => planImport(current, { tools: [{ spec: fullSpec('x') }, { spec: fullSpec('x') }] }))).toBe('DUPLICATE_TOOL');
    expect(codeOf(() => planImport([{ spec: { tool_name: 'a' } }] as ToolRegistrationInput[], snapshot))).toBe('SNAPSHOT_INVALID');
    expect(codeOf(() => planImport(current, snapshot, { mode: 'upsert' as ImportMode }))).toBe('TypeError');
    expect(codeOf(() => planImport(current, snapshot, null as unknown as { mode: ImportMode }))).toBe('TypeError');
  });
});
