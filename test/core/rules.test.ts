// decideRegistration and importPlan: the registration rule and the import plan, pure.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VersionConflictError, ToolRegistryError } from '../../src/core/errors.js';
import { decideRegistration, importPlan } from '../../src/core/rules.js';
import type { ToolRecord } from '../../src/core/rules.js';
import { parseSnapshot, parseSpec } from '../../src/core/validation.js';
import { registerManyWithActions, registerWithAction } from '../../src/core/base-tool-registry.js';
import type { RegistrationOptions, ToolRegistry } from '../../src/core/registry.js';
import { InMemoryToolRegistry } from '../../src/stores/memory/in-memory-tool-registry.js';
import type { ToolSpecInput } from '../../src/index.js';
import { fullSpec, minimalSpec } from '../support/registry-helpers.js';

const T0 = '2025-01-01T00:00:00.000Z';
const PY = '2025-01-31T12:00:00.123456+00:00';

function recordOf(spec: ToolSpecInput, enabled = true, created_at: string | null = T0): ToolRecord {
  const prepared = parseSpec(spec);
  return Object.freeze({ tool_name: prepared.tool_name, version: prepared.version, fingerprint: prepared.fingerprint, enabled, created_at, deprecation: null });
}

function storeOf(...records: ToolRecord[]): ReadonlyMap<string, ToolRecord> {
  return new Map(records.map((record) => [record.tool_name, record]));
}

function entries(...tools: { spec: ToolSpecInput; enabled?: boolean; created_at?: string | null }[]) {
  return parseSnapshot({ tools });
}

function conflictOf(action: () => unknown): VersionConflictError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(VersionConflictError);
    return error as VersionConflictError;
  }
  throw new Error('expected a VersionConflictError');
}

describe('decideRegistration', () => {
  it('rule 1: a new name is created', () => {
    expect(decideRegistration(undefined, parseSpec(fullSpec('a')))).toEqual({ action: 'create' });
  });

  it.each([true, false])('rule 2: the identical spec is kept (enabled %s)', (enabled) => {
    const current = recordOf(fullSpec('a'), enabled);
    expect(decideRegistration(current, parseSpec({ ...fullSpec('a') }))).toEqual({ action: 'keep' });
  });

  it('rule 2: key order and spelled-out defaults do not make a spec different', () => {
    const current = recordOf(minimalSpec('a', { input_schema: { x: 1, y: { p: 1, q: 2 } } }));
    const incoming = parseSpec({
      tags: [],
      description: null,
      version: null,
      output_schema: { type: 'object' },
      input_schema: { y: { q: 2, p: 1 }, x: 1 },
      tool_name: 'a',
    });
    expect(decideRegistration(current, incoming)).toEqual({ action: 'keep' });
  });

  it.each([
    ['1', '2'],
    ['2', '1'],
    [null, '1'],
    ['1', null],
    ['v1', 'V1'],
    ['1', '1.0'],
  ])('rule 3: version %j -> %j replaces, keeping enabled', (from, to) => {
    for (const enabled of [true, false]) {
      const current = recordOf(fullSpec('a', from), enabled);
      expect(decideRegistration(current, parseSpec(fullSpec('a', to)))).toEqual({ action: 'replace', enabled });
    }
  });

  it('rule 3 applies even when only the version differs', () => {
    const current = recordOf(fullSpec('a', '1'), false);
    expect(decideRegistration(current, parseSpec(fullSpec('a', '2')))).toEqual({ action: 'replace', enabled: false });
  });

  it('rule 4: same version, different spec throws with both fingerprints', () => {
    const current = recordOf(fullSpec('a', '1.0'));
    const incoming = parseSpec({ ...fullSpec('a', '1.0'), tags: ['other'] });
    const error = conflictOf(() => decideRegistration(current, incoming));
    expect(error).toBeInstanceOf(ToolRegistryError);
    expect(error.code).toBe('VERSION_CONFLICT');
    expect(error.context).toMatchObject({
      tool_name: 'a',
      version: '1.0',
      existing_fingerprint: current.fingerprint,
      incoming_fingerprint: incoming.fingerprint,
    });
    expect(error.context.path).toBeUndefined();
    expect(error.message).toContain('"1.0"');
    expect(error.message).toContain('"a"');
  });

  it('rule 4 with both unversioned says "unversioned"', () => {
    const current = recordOf(minimalSpec('a'));
    const error = conflictOf(() => decideRegistration(current, parseSpec(minimalSpec('a', { description: 'x' }))));
    expect(error.context.version).toBeNull();
    expect(error.message).toContain('unversioned');
  });

  it('rule 4 in a batch names the path it is given', () => {
    const current = recordOf(minimalSpec('a', { version: '1' }));
    const error = conflictOf(() => decideRegistration(current, parseSpec(minimalSpec('a', { version: '1', tags: ['t'] })), '[4]'));
    expect(error.context.path).toBe('[4]');
  });

  it('matches the rule table for any pair of versions and specs (property)', () => {
    const version = fc.constantFrom(null, '1', '2', 'V1', '');
    const description = fc.constantFrom(null, 'a', 'b');
    fc.assert(
      fc.property(version, description, fc.boolean(), version, description, (v1, d1, enabled, v2, d2) => {
        const current = recordOf(minimalSpec('t', { version: v1, description: d1 }), enabled);
        const incoming = parseSpec(minimalSpec('t', { version: v2, description: d2 }));
        if (v1 === v2 && d1 === d2) expect(decideRegistration(current, incoming)).toEqual({ action: 'keep' });
        else if (v1 !== v2) expect(decideRegistration(current, incoming)).toEqual({ action: 'replace', enabled });
        else expect(() => decideRegistration(current, incoming)).toThrow(VersionConflictError);
      }),
    );
  });
});

describe('importPlan', () => {
  it('adds every tool to an empty store; steps sorted by code point, with paths and versions', () => {
    const plan = importPlan(
      new Map(),
      entries({ spec: fullSpec('b', '1') }, { spec: fullSpec('B', null) }, { spec: fullSpec('_', '2') }),
      'merge',
    );
    expect(plan).toMatchObject({ added: 3, updated: 0, unchanged: 0, removed: 0, conflicts: 0, firstConflict: undefined });
    expect(plan.steps).toEqual([
      { tool_name: 'B', action: 'add', path: 'tools[1]', to_version: null },
      { tool_name: '_', action: 'add', path: 'tools[2]', to_version: '2' },
      { tool_name: 'b', action: 'add', path: 'tools[0]', to_version: '1' },
    ]);
  });

  it('is unchanged only when spec, enabled and created_at all match', () => {
    const current = storeOf(recordOf(fullSpec('a'), true, PY));
    expect(importPlan(current, entries({ spec: fullSpec('a'), enabled: true, created_at: PY }), 'merge').unchanged).toBe(1);
    expect(importPlan(current, entries({ spec: fullSpec('a'), enabled: false, created_at: PY }), 'merge').updated).toBe(1);
    expect(importPlan(current, entries({ spec: fullSpec('a'), enabled: true, created_at: T0 }), 'merge').updated).toBe(1);
    expect(importPlan(current, entries({ spec: fullSpec('a'), enabled: true }), 'merge').updated).toBe(1);
    expect(importPlan(current, entries({ spec: fullSpec('a', '2'), created_at: PY }), 'merge').updated).toBe(1);
  });

  it('merge: a same-version different spec is a conflict; the first in snapshot order is the error', () => {
    const current = storeOf(recordOf(fullSpec('z', '1')), recordOf(fullSpec('a', '1')), recordOf(minimalSpec('n')));
    const plan = importPlan(
      current,
      entries(
        { spec: { ...fullSpec('z', '1'), tags: [] } },
        { spec: { ...fullSpec('a', '1'), tags: [] } },
        { spec: minimalSpec('n', { description: 'x' }) },
      ),
      'merge',
    );
    expect(plan.conflicts).toBe(3);
    expect(plan.steps.map((step) => step.action)).toEqual(['conflict', 'conflict', 'conflict']);
    expect(plan.firstConflict).toBeInstanceOf(VersionConflictError);
    expect(plan.firstConflict?.context).toMatchObject({ tool_name: 'z', path: 'tools[0]', version: '1' });
  });

  it('merge leaves unnamed tools out of the plan; replace removes them', () => {
    const current = storeOf(recordOf(fullSpec('keep')), recordOf(fullSpec('other', '7')));
    const snapshot = entries({ spec: fullSpec('keep'), created_at: T0 });
    expect(importPlan(current, snapshot, 'merge').steps).toEqual([
      { tool_name: 'keep', action: 'unchanged', path: 'tools[0]', from_version: '1.0.0', to_version: '1.0.0' },
    ]);
    const replace = importPlan(current, snapshot, 'replace');
    expect(replace).toMatchObject({ unchanged: 1, removed: 1 });
    expect(replace.steps).toEqual([
      { tool_name: 'keep', action: 'unchanged', path: 'tools[0]', from_version: '1.0.0', to_version: '1.0.0' },
      { tool_name: 'other', action: 'remove', from_version: '7' },
    ]);
  });

  it('replace turns a conflict into an update (a restore)', () => {
    const current = storeOf(recordOf(fullSpec('a', '1')));
    const plan = importPlan(current, entries({ spec: { ...fullSpec('a', '1'), tags: [] } }), 'replace');
    expect(plan).toMatchObject({ updated: 1, conflicts: 0, firstConflict: undefined });
    expect(plan.steps[0]?.action).toBe('update');
  });

  it('counts every kind at once and does not touch its inputs', () => {
    const current = storeOf(
      recordOf(fullSpec('same'), true, PY),
      recordOf(fullSpec('bump', '1')),
      recordOf(fullSpec('gone')),
      recordOf(fullSpec('clash', '1')),
    );
    const snapshot = entries(
      { spec: fullSpec('same'), created_at: PY },
      { spec: fullSpec('bump', '2') },
      { spec: fullSpec('new') },
      { spec: { ...fullSpec('clash', '1'), description: 'x' } },
    );
    const copy = new Map(current);
    const merge = importPlan(current, snapshot, 'merge');
    expect(merge).toMatchObject({ added: 1, updated: 1, unchanged: 1, removed: 0, conflicts: 1 });
    const replace = importPlan(current, snapshot, 'replace');
    expect(replace).toMatchObject({ added: 1, updated: 2, unchanged: 1, removed: 1, conflicts: 0 });
    expect(replace.steps.map((step) => `${step.tool_name}:${step.action}`)).toEqual([
      'bump:update',
      'clash:update',
      'gone:remove',
      'new:add',
      'same:unchanged',
    ]);
    expect(current).toEqual(copy);
  });

  it('an empty snapshot: merge plans nothing, replace removes everything', () => {
    const current = storeOf(recordOf(fullSpec('a')), recordOf(fullSpec('b')));
    expect(importPlan(current, [], 'merge')).toMatchObject({ steps: [], added: 0, removed: 0 });
    expect(importPlan(current, [], 'replace')).toMatchObject({ removed: 2 });
  });
});

describe('registerManyWithActions over another implementation of ToolRegistry', () => {
  it('judges each action from a read before the write (the stores of this package decide it in the write)', async () => {
    const inner = new InMemoryToolRegistry();
    // Not one of ours: only the interface's get and registerMany.
    const foreign = { get: (name: string) => inner.get(name), registerMany: (specs: readonly ToolSpecInput[]) => inner.registerMany(specs) } as unknown as ToolRegistry;
    const actions = async (specs: ToolSpecInput[]) => (await registerManyWithActions(foreign, specs)).map((one) => one.action);
    expect(await actions([fullSpec('a', '1'), fullSpec('b', '1')])).toEqual(['added', 'added']);
    expect(await actions([fullSpec('a', '1'), fullSpec('b', '2'), fullSpec('c')])).toEqual(['unchanged', 'updated', 'added']);
    expect((await registerManyWithActions(foreign, [fullSpec('b', '3')]))[0]?.replacedVersion).toBe('2');
  });

  it('registerWithAction: exact from a conditional write (expectedVersion), else judged from a read before it', async () => {
    const inner = new InMemoryToolRegistry();
    const foreign = {
      get: (name: string) => inner.get(name),
      register: (spec: ToolSpecInput, options?: RegistrationOptions) => inner.register(spec, options),
    } as unknown as ToolRegistry;
    const outcome = async (spec: ToolSpecInput, options?: RegistrationOptions) => {
      const { action, replacedVersion } = await registerWithAction(foreign, spec, options);
      return replacedVersion === undefined ? action : `${action} from ${String(replacedVersion)}`;
    };
    expect(await outcome(fullSpec('a', '1'))).toBe('added');
    expect(await outcome(fullSpec('a', '1'))).toBe('unchanged');
    expect(await outcome(fullSpec('a', '2'))).toBe('updated from 1');
    expect(await outcome(fullSpec('b', '1'), { expectedVersion: null })).toBe('added');
    expect(await outcome(fullSpec('b', '2'), { expectedVersion: '1' })).toBe('updated from 1');
    expect(await outcome(fullSpec('b', '2'), { expectedVersion: '2' })).toBe('unchanged');
    await expect(registerWithAction(foreign, fullSpec('b', '3'), { expectedVersion: '1' })).rejects.toMatchObject({ code: 'PRECONDITION_FAILED' });
  });
});

describe('new InMemoryToolRegistry(options)', () => {
  it('refuses an option it does not know with a TypeError naming it (it was ignored, as a misspelt clock would be)', () => {
    expect(() => new InMemoryToolRegistry({ clok: () => new Date(0) } as never)).toThrow(/^new InMemoryToolRegistry\(\): unknown option "clok" \(the options are clock, callRetention\)$/);
    expect(new InMemoryToolRegistry({ clock: undefined })).toBeInstanceOf(InMemoryToolRegistry);
  });
});
