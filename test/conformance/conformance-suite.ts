// The conformance suite: every store must pass every case unchanged (DESIGN.md "Data
// contracts", "The registry interface", "Registration rules", "Snapshot import", "Errors").
// It is a function of a harness that opens fresh registries; no store skips a test.
// `restart` is called wherever data must survive, so a persistent store proves it does.
import { describe, expect, it } from 'vitest';
import {
  DuplicateToolError,
  SnapshotInvalidError,
  ToolNotFoundError,
  ToolRegistryError,
  ToolRegistrySnapshot,
  ValidationError,
  VersionConflictError,
  canonicalJson,
  fingerprintOf,
  registerManyWithActions,
  registerWithAction,
} from '../../src/index.js';
import type { ImportReport, ToolRegistration, ToolRegistry, ToolSpecInput } from '../../src/index.js';
import {
  FINGERPRINT,
  callEveryMethod,
  expectCode,
  expectPlainTypeError,
  fullSpec,
  isDeepFrozen,
  minimalSpec,
  toolNamedBy,
} from '../support/registry-helpers.js';
import type { RegistryMethod } from '../support/registry-helpers.js';
import type { StoreHarness } from './stores.js';
import { T0, useSuiteRegistries } from './suite-registries.js';

const T1 = '2025-02-01T12:30:00.000Z';
const T2 = '2025-03-01T08:00:00.000Z';
/** A created_at as Python's isoformat() writes it: microseconds and a numeric offset. */
const PY_TIME = '2024-05-01T10:00:00.123456+02:00';

/** The fingerprint of a spec as given (defaults applied), computed independently of any store. */
function fingerprintOfSpec(spec: ToolSpecInput): string {
  return fingerprintOf(
    canonicalJson({ version: null, description: null, tags: [], ...spec } as Record<string, unknown>),
  );
}

/** A snapshot entry as a plain object (what a caller or a file would hand to importSnapshot). */
function entry(spec: ToolSpecInput, enabled = true, created_at: string | null = PY_TIME) {
  return { spec, enabled, created_at };
}

/** What a registry must export after importing `snapshot` by `replace` (defaults applied). */
function normalized(snapshot: unknown): ToolRegistrySnapshot {
  return ToolRegistrySnapshot.parse(snapshot);
}

/** The versions a set of (replaced, new) pairs passes through from `first`, each pair used once; [] when they form no chain. */
function replacementChain(links: readonly (readonly [string, string])[], first: string): string[] {
  const next = new Map(links);
  const chain = [first];
  for (let at = next.get(first); at !== undefined; at = next.get(at)) chain.push(at);
  return chain.length === links.length + 1 ? chain : [];
}

const NAMES_IN_CODE_POINT_ORDER = ['-', '.', '0', 'B', '_', 'a'];

export function defineConformanceSuite(harness: StoreHarness): void {
  const { clock, open, restart, track } = useSuiteRegistries(harness);

  /**
   * `registry` and `count - 1` others over the same storage (own connections and caches where
   * the store has them), for the concurrency cases.
   */
  async function peers(registry: ToolRegistry, count: number): Promise<ToolRegistry[]> {
    const all = [registry];
    for (let i = 1; i < count; i++) {
      const peer = await harness.peer(registry);
      if (peer !== registry) track(peer);
      all.push(peer);
    }
    return all;
  }

  /** Everything the registry shows, for before/after comparisons. */
  async function state(registry: ToolRegistry) {
    return {
      snapshot: await registry.exportSnapshot(),
      enabled: await registry.listAll(),
      all: await registry.listAll({ includeDisabled: true }),
    };
  }

  /** Asserts the registry still shows `before` after a restart, and returns the reopened registry. */
  async function expectSurvivesRestart(registry: ToolRegistry): Promise<ToolRegistry> {
    const before = await state(registry);
    const names = before.all.map((registration) => registration.spec.tool_name);
    const gets = await Promise.all(names.map((name) => registry.get(name)));
    const reopened = await restart(registry);
    expect(await state(reopened)).toEqual(before);
    expect(await Promise.all(names.map((name) => reopened.get(name)))).toEqual(gets);
    return reopened;
  }

  // ---------------------------------------------------------------------------------
  describe('register, rule 1: a new name', () => {
    it('stores the spec enabled, with created_at from the clock', async () => {
      const registry = await open();
      const registration = await registry.register(fullSpec('search'));
      expect(registration).toEqual({ spec: fullSpec('search'), enabled: true, created_at: T0, deprecation: null });
      expect(await registry.get('search')).toEqual(registration);
      await expectSurvivesRestart(registry);
    });

    it('gives a minimal spec version null, description null and tags []', async () => {
      const registry = await open();
      const registration = await registry.register(minimalSpec('minimal'));
      expect(registration.spec).toStrictEqual({
        tool_name: 'minimal',
        version: null,
        description: null,
        input_schema: { type: 'object' },
        output_schema: { type: 'object' },
        tags: [],
      });
      expect((await (await restart(registry)).get('minimal'))?.spec).toStrictEqual(registration.spec);
    });

    it('keeps every field of a full spec', async () => {
      const registry = await open();
      await registry.register(fullSpec('full', '2.1.0-beta'));
      const reopened = await restart(registry);
      expect((await reopened.get('full'))?.spec).toStrictEqual(fullSpec('full', '2.1.0-beta'));
    });

    it('keeps tags in the given order, duplicates included', async () => {
      const registry = await open();
      await registry.register(minimalSpec('tagged', { tags: ['z', 'a', 'z', 'm', 'a'] }));
      expect((await (await restart(registry)).get('tagged'))?.spec.tags).toEqual(['z', 'a', 'z', 'm', 'a']);
    });

    it('accepts a name of exactly 128 characters', async () => {
      const registry = await open();
      const name = 'n'.repeat(127) + 'X';
      expect((await registry.register(minimalSpec(name))).spec.tool_name).toBe(name);
      expect(await (await restart(registry)).has(name)).toBe(true);
    });

    it('accepts names made of _ - . and digits', async () => {
      const registry = await open();
      const names = ['a_b-c.d', '_', '-', '.', '0', 'v1.2.3', '--x..y__'];
      for (const name of names) await registry.register(minimalSpec(name));
      const listed = (await (await restart(registry)).listAll()).map((r) => r.spec.tool_name);
      expect(listed).toEqual([...names].sort());
    });

    it('accepts a schema object with a null prototype and hands back a plain object', async () => {
      const registry = await open();
      const schema = Object.assign(Object.create(null) as Record<string, unknown>, { type: 'object' });
      const registration = await registry.register(minimalSpec('nullproto', { input_schema: schema as never }));
      expect(registration.spec.input_schema).toStrictEqual({ type: 'object' });
      expect(Object.getPrototypeOf(registration.spec.input_schema)).toBe(Object.prototype);
    });

    it('accepts JSON edge values (empty key, unicode, -0 as 0, deep arrays) and round-trips them', async () => {
      let registry = await open();
      const schema = { '': 'empty key', 'ключ': '✓ 😀', nested: [[[1.5, -2e-7, true, null, 'x', -0]]], zero: -0 };
      const stored = { '': 'empty key', 'ключ': '✓ 😀', nested: [[[1.5, -2e-7, true, null, 'x', 0]]], zero: 0 };
      expect(Object.is(schema.zero, -0)).toBe(true);
      await registry.register(minimalSpec('edges', { input_schema: schema }));
      registry = await restart(registry);
      const back = (await registry.get('edges'))?.spec.input_schema as typeof schema;
      // -0 is 0 in JSON's canonical form (RFC 8785): stored and returned as 0, by every store.
      expect(back).toStrictEqual(stored);
      expect(Object.is(back.zero, 0)).toBe(true);
      expect(Object.is(back.nested[0]?.[0]?.[5], 0)).toBe(true);
      // And 0 is the same spec as -0: rule 2, nothing written.
      clock.set(T1);
      expect((await registry.register(minimalSpec('edges', { input_schema: stored }))).created_at).toBe(T0);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('register, rule 2: the identical spec', () => {
    it('returns the existing registration unchanged, created_at included', async () => {
      const registry = await open();
      const first = await registry.register(fullSpec('search'));
      clock.set(T1);
      const again = await registry.register(fullSpec('search'));
      expect(again).toEqual(first);
      expect(again.created_at).toBe(T0);
      expect(await registry.get('search')).toEqual(first);
    });

    it('keeps a disabled tool disabled', async () => {
      let registry = await open();
      await registry.register(fullSpec('search'));
      await registry.setEnabled('search', false);
      registry = await restart(registry);
      clock.set(T1);
      const again = await registry.register(fullSpec('search'));
      expect(again).toEqual({ spec: fullSpec('search'), enabled: false, created_at: T0, deprecation: null });
      expect(await registry.listAll()).toEqual([]);
    });

    it('treats schemas that differ only in key order as identical', async () => {
      const registry = await open();
      await registry.register(minimalSpec('ordered', { version: '1', input_schema: { a: 1, b: 2, c: { x: 1, y: [1, 2] } } }));
      clock.set(T1);
      const again = await registry.register(
        minimalSpec('ordered', { version: '1', input_schema: { c: { y: [1, 2], x: 1 }, b: 2, a: 1 } }),
      );
      expect(again.created_at).toBe(T0);
      expect(again.spec.input_schema).toEqual({ a: 1, b: 2, c: { x: 1, y: [1, 2] } });
    });

    it('refuses a stored spec with something non-JSON or unknown added, instead of answering it as identical', async () => {
      const registry = await open();
      const stored = await registry.register(fullSpec('search'));
      const spoiled: unknown[] = [
        { ...fullSpec('search'), extra: 1 },
        { ...fullSpec('search'), input_schema: { ...fullSpec('search').input_schema, x: Number.NaN } },
        { ...fullSpec('search'), input_schema: { ...fullSpec('search').input_schema, x: undefined } },
        { ...fullSpec('search'), input_schema: { ...fullSpec('search').input_schema, x: new Date(0) } },
        { ...fullSpec('search'), tags: [...fullSpec('search').tags, ''] },
        { ...fullSpec('search'), version: 1 },
      ];
      for (const input of spoiled) await expectCode(registry.register(input as ToolSpecInput), 'VALIDATION_FAILED');
      expect(await registry.get('search')).toEqual(stored);
    });

    it('treats spelled-out defaults as identical to left-out ones', async () => {
      const registry = await open();
      await registry.register(minimalSpec('defaults'));
      clock.set(T1);
      const again = await registry.register(minimalSpec('defaults', { version: null, description: null, tags: [] }));
      expect(again.created_at).toBe(T0);
    });

    it('writes nothing: the export is the same before and after, also after a restart', async () => {
      let registry = await open();
      await registry.register(fullSpec('a'));
      await registry.register(fullSpec('b'));
      registry = await restart(registry);
      const before = await registry.exportSnapshot();
      clock.set(T2);
      await registry.register(fullSpec('a'));
      expect(await registry.exportSnapshot()).toEqual(before);
      expect(await (await restart(registry)).exportSnapshot()).toEqual(before);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('register, rule 3: another version replaces', () => {
    it('replaces v1 by v2 with a new created_at', async () => {
      let registry = await open();
      await registry.register(fullSpec('search', '1'));
      clock.set(T1);
      const replaced = await registry.register(fullSpec('search', '2'));
      expect(replaced).toEqual({ spec: fullSpec('search', '2'), enabled: true, created_at: T1, deprecation: null });
      registry = await expectSurvivesRestart(registry);
      expect(await registry.listAll()).toEqual([replaced]);
    });

    it('replaces with a LOWER version too', async () => {
      const registry = await open();
      await registry.register(fullSpec('search', '2.0.0'));
      clock.set(T1);
      const replaced = await registry.register(fullSpec('search', '1.0.0'));
      expect(replaced.spec.version).toBe('1.0.0');
      expect(replaced.created_at).toBe(T1);
      expect((await (await restart(registry)).get('search'))?.spec.version).toBe('1.0.0');
    });

    it('replaces unversioned (null) by "1"', async () => {
      const registry = await open();
      await registry.register(fullSpec('search', null));
      clock.set(T1);
      const replaced = await registry.register(fullSpec('search', '1'));
      expect(replaced).toEqual({ spec: fullSpec('search', '1'), enabled: true, created_at: T1, deprecation: null });
    });

    it('replaces "1" by unversioned (null)', async () => {
      const registry = await open();
      await registry.register(fullSpec('search', '1'));
      clock.set(T1);
      const replaced = await registry.register(fullSpec('search', null));
      expect(replaced).toEqual({ spec: fullSpec('search', null), enabled: true, created_at: T1, deprecation: null });
    });

    it('treats versions that differ only in case as different versions', async () => {
      const registry = await open();
      await registry.register(minimalSpec('cased', { version: 'v1' }));
      clock.set(T1);
      const replaced = await registry.register(minimalSpec('cased', { version: 'V1', description: 'changed' }));
      expect(replaced.spec.version).toBe('V1');
      expect(replaced.created_at).toBe(T1);
    });

    it('keeps a disabled tool disabled after a redeploy with a new version (the seed behaviour)', async () => {
      let registry = await open();
      await registry.register(fullSpec('search', '1'));
      await registry.setEnabled('search', false);
      clock.set(T1);
      const replaced = await registry.register(fullSpec('search', '2'));
      expect(replaced).toEqual({ spec: fullSpec('search', '2'), enabled: false, created_at: T1, deprecation: null });
      registry = await expectSurvivesRestart(registry);
      expect(await registry.get('search')).toEqual(replaced);
      expect(await registry.listAll()).toEqual([]);
      expect(await registry.listAll({ includeDisabled: true })).toEqual([replaced]);
    });

    it('keeps a re-enabled tool enabled after a redeploy', async () => {
      const registry = await open();
      await registry.register(fullSpec('search', '1'));
      await registry.setEnabled('search', false);
      await registry.setEnabled('search', true);
      const replaced = await registry.register(fullSpec('search', '2'));
      expect(replaced.enabled).toBe(true);
    });

    it('keeps the new spec after a restart, so registering it again is rule 2', async () => {
      let registry = await open();
      await registry.register(fullSpec('search', '1'));
      clock.set(T1);
      await registry.register(fullSpec('search', '2'));
      registry = await restart(registry);
      clock.set(T2);
      expect((await registry.register(fullSpec('search', '2'))).created_at).toBe(T1);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('register, rule 4: same version, different spec', () => {
    it('throws VERSION_CONFLICT with the tool, the version and both fingerprints', async () => {
      const registry = await open();
      const stored = fullSpec('search', '1.0.0');
      const incoming = { ...fullSpec('search', '1.0.0'), input_schema: { type: 'object' } };
      await registry.register(stored);
      const error = await expectCode(registry.register(incoming), 'VERSION_CONFLICT');
      expect(error).toBeInstanceOf(VersionConflictError);
      expect(error).toBeInstanceOf(ToolRegistryError);
      expect(error).toBeInstanceOf(Error);
      expect(error.context.tool_name).toBe('search');
      expect(error.context.version).toBe('1.0.0');
      expect(error.context.existing_fingerprint).toMatch(FINGERPRINT);
      expect(error.context.incoming_fingerprint).toMatch(FINGERPRINT);
      expect(error.context.existing_fingerprint).toBe(fingerprintOfSpec(stored));
      expect(error.context.incoming_fingerprint).toBe(fingerprintOfSpec(incoming));
      expect(error.message).toContain('search');
      expect(error.message).toContain('1.0.0');
    });

    it('changes nothing: the stored state is the same before and after, also after a restart', async () => {
      let registry = await open();
      await registry.register(fullSpec('search', '1'));
      await registry.setEnabled('search', false);
      await registry.register(fullSpec('other', '1'));
      const before = await state(registry);
      clock.set(T1);
      await expectCode(registry.register({ ...fullSpec('search', '1'), description: 'new text' }), 'VERSION_CONFLICT');
      expect(await state(registry)).toEqual(before);
      registry = await restart(registry);
      expect(await state(registry)).toEqual(before);
    });

    it('treats two differing unversioned specs as a conflict that says "unversioned"', async () => {
      const registry = await open();
      await registry.register(minimalSpec('plain'));
      const error = await expectCode(
        registry.register(minimalSpec('plain', { output_schema: { type: 'string' } })),
        'VERSION_CONFLICT',
      );
      expect(error.context.version).toBeNull();
      expect(error.context.tool_name).toBe('plain');
      expect(error.message).toContain('unversioned');
      expect(error.message).toContain('plain');
      expect((await registry.get('plain'))?.spec.output_schema).toEqual({ type: 'object' });
    });

    it('treats a different tag order as a different spec', async () => {
      const registry = await open();
      await registry.register(minimalSpec('tags', { version: '1', tags: ['a', 'b'] }));
      await expectCode(registry.register(minimalSpec('tags', { version: '1', tags: ['b', 'a'] })), 'VERSION_CONFLICT');
      expect((await registry.get('tags'))?.spec.tags).toEqual(['a', 'b']);
    });

    it('treats a changed description alone as a different spec', async () => {
      const registry = await open();
      await registry.register(minimalSpec('described', { version: '1', description: 'old' }));
      await expectCode(registry.register(minimalSpec('described', { version: '1', description: null })), 'VERSION_CONFLICT');
    });

    it('still conflicts after a restart (the fingerprint is stored)', async () => {
      let registry = await open();
      await registry.register(fullSpec('search', '1'));
      registry = await restart(registry);
      await expectCode(registry.register({ ...fullSpec('search', '1'), tags: [] }), 'VERSION_CONFLICT');
    });
  });

  // ---------------------------------------------------------------------------------
  describe('get and has', () => {
    it('get of an unknown name is undefined and has is false', async () => {
      const registry = await open();
      expect(await registry.get('nope')).toBeUndefined();
      expect(await registry.has('nope')).toBe(false);
    });

    it('get and has are exact and case-sensitive', async () => {
      let registry = await open();
      await registry.register(minimalSpec('Search'));
      registry = await restart(registry);
      expect(await registry.get('search')).toBeUndefined();
      expect(await registry.get('SEARCH')).toBeUndefined();
      expect(await registry.get('Search ')).toBeUndefined();
      expect(await registry.get('Sear')).toBeUndefined();
      expect(await registry.has('search')).toBe(false);
      expect(await registry.has('Search')).toBe(true);
      expect((await registry.get('Search'))?.spec.tool_name).toBe('Search');
    });

    it('keeps names that differ only in case apart', async () => {
      let registry = await open();
      await registry.register(minimalSpec('tool', { description: 'lower' }));
      await registry.register(minimalSpec('TOOL', { description: 'upper' }));
      registry = await restart(registry);
      expect((await registry.get('tool'))?.spec.description).toBe('lower');
      expect((await registry.get('TOOL'))?.spec.description).toBe('upper');
      expect(await registry.listAll()).toHaveLength(2);
    });

    it('has is true for a disabled tool and false after remove', async () => {
      const registry = await open();
      await registry.register(minimalSpec('x'));
      await registry.setEnabled('x', false);
      expect(await registry.has('x')).toBe(true);
      expect((await registry.get('x'))?.enabled).toBe(false);
      await registry.remove('x');
      expect(await registry.has('x')).toBe(false);
    });

    it('an invalid name is simply not there (no error)', async () => {
      const registry = await open();
      expect(await registry.get('not a valid name/ü')).toBeUndefined();
      expect(await registry.has('')).toBe(false);
    });

    for (const method of ['get', 'has', 'setEnabled', 'remove'] as const) {
      it(`${method}(42) is a plain TypeError without a code`, async () => {
        const registry = await open();
        await registry.register(minimalSpec('present'));
        await expectPlainTypeError(() =>
          method === 'setEnabled' ? registry.setEnabled(42 as never, false) : registry[method](42 as never),
        );
        expect(await registry.has('present')).toBe(true);
      });
    }
  });

  // ---------------------------------------------------------------------------------
  describe('listAll', () => {
    it('is [] on an empty store', async () => {
      const registry = await open();
      expect(await registry.listAll()).toEqual([]);
      expect(await registry.listAll({ includeDisabled: true })).toEqual([]);
    });

    it('sorts by code point, not by locale', async () => {
      let registry = await open();
      for (const name of ['a', 'B', '_', '0', '.', '-']) await registry.register(minimalSpec(name));
      registry = await restart(registry);
      const names = (await registry.listAll()).map((r) => r.spec.tool_name);
      expect(names).toEqual(NAMES_IN_CODE_POINT_ORDER);
      expect(names).not.toEqual([...names].sort((x, y) => x.localeCompare(y)));
      const exported = (await registry.exportSnapshot()).tools.map((r) => r.spec.tool_name);
      expect(exported).toEqual(NAMES_IN_CODE_POINT_ORDER);
    });

    it('sorts upper case before lower case and prefixes first', async () => {
      const registry = await open();
      for (const name of ['ab', 'a', 'Z', 'aB', 'A', 'a.b', 'a-b']) await registry.register(minimalSpec(name));
      const names = (await registry.listAll()).map((r) => r.spec.tool_name);
      expect(names).toEqual(['A', 'Z', 'a', 'a-b', 'a.b', 'aB', 'ab']);
    });

    it('hides disabled tools unless includeDisabled is true', async () => {
      let registry = await open();
      for (const name of ['a', 'b', 'c']) await registry.register(minimalSpec(name));
      await registry.setEnabled('b', false);
      registry = await restart(registry);
      expect((await registry.listAll()).map((r) => r.spec.tool_name)).toEqual(['a', 'c']);
      expect((await registry.listAll({})).map((r) => r.spec.tool_name)).toEqual(['a', 'c']);
      expect((await registry.listAll({ includeDisabled: false })).map((r) => r.spec.tool_name)).toEqual(['a', 'c']);
      const all = await registry.listAll({ includeDisabled: true });
      expect(all.map((r) => [r.spec.tool_name, r.enabled])).toEqual([
        ['a', true],
        ['b', false],
        ['c', true],
      ]);
    });

    it('returns a fresh array each call; mutating it does not touch the store', async () => {
      const registry = await open();
      await registry.register(minimalSpec('a'));
      await registry.register(minimalSpec('b'));
      const first = await registry.listAll();
      const second = await registry.listAll();
      expect(first).not.toBe(second);
      first.pop();
      first.push(first[0] as ToolRegistration);
      first.reverse();
      const all = await registry.listAll({ includeDisabled: true });
      all.length = 0;
      expect((await registry.listAll()).map((r) => r.spec.tool_name)).toEqual(['a', 'b']);
      expect((await registry.listAll({ includeDisabled: true })).map((r) => r.spec.tool_name)).toEqual(['a', 'b']);
    });

    it('lists the same registrations get returns', async () => {
      const registry = await open();
      await registry.register(fullSpec('x', '1'));
      clock.set(T1);
      await registry.register(fullSpec('y', null));
      const listed = await registry.listAll();
      expect(listed).toEqual([await registry.get('x'), await registry.get('y')]);
      expect(listed.map((r) => r.created_at)).toEqual([T0, T1]);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('setEnabled', () => {
    it('disables and re-enables, keeping spec and created_at', async () => {
      let registry = await open();
      await registry.register(fullSpec('search'));
      clock.set(T1);
      const off = await registry.setEnabled('search', false);
      expect(off).toEqual({ spec: fullSpec('search'), enabled: false, created_at: T0, deprecation: null });
      registry = await expectSurvivesRestart(registry);
      expect(await registry.get('search')).toEqual(off);
      const on = await registry.setEnabled('search', true);
      expect(on).toEqual({ spec: fullSpec('search'), enabled: true, created_at: T0, deprecation: null });
      registry = await expectSurvivesRestart(registry);
      expect(await registry.get('search')).toEqual(on);
    });

    it('fails with TOOL_NOT_FOUND naming an unknown tool', async () => {
      const registry = await open();
      await registry.register(minimalSpec('known'));
      const error = await expectCode(registry.setEnabled('Known', false), 'TOOL_NOT_FOUND');
      expect(error).toBeInstanceOf(ToolNotFoundError);
      expect(error.context.tool_name).toBe('Known');
      expect(error.message).toContain('Known');
      expect(await registry.has('Known')).toBe(false);
      expect((await registry.get('known'))?.enabled).toBe(true);
    });

    it('to the current state returns an equal registration and writes nothing', async () => {
      const registry = await open();
      const registered = await registry.register(fullSpec('search'));
      clock.set(T1);
      expect(await registry.setEnabled('search', true)).toEqual(registered);
      await registry.setEnabled('search', false);
      const before = await registry.exportSnapshot();
      expect(await registry.setEnabled('search', false)).toEqual({ ...registered, enabled: false });
      expect(await registry.exportSnapshot()).toEqual(before);
    });

    it('touches only the named tool', async () => {
      const registry = await open();
      await registry.register(minimalSpec('a'));
      await registry.register(minimalSpec('b'));
      await registry.setEnabled('a', false);
      expect((await registry.listAll({ includeDisabled: true })).map((r) => r.enabled)).toEqual([false, true]);
    });

    it('rejects a non-boolean flag with a plain TypeError and changes nothing', async () => {
      const registry = await open();
      await registry.register(minimalSpec('a'));
      await expectPlainTypeError(() => registry.setEnabled('a', 'false' as never));
      expect((await registry.get('a'))?.enabled).toBe(true);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('remove', () => {
    it('returns true, then false the second time', async () => {
      let registry = await open();
      await registry.register(minimalSpec('gone'));
      expect(await registry.remove('gone')).toBe(true);
      registry = await restart(registry);
      expect(await registry.remove('gone')).toBe(false);
      expect(await registry.get('gone')).toBeUndefined();
    });

    it('of an unknown name is false and touches nothing', async () => {
      const registry = await open();
      await registry.register(minimalSpec('kept'));
      const before = await registry.exportSnapshot();
      expect(await registry.remove('KEPT')).toBe(false);
      expect(await registry.exportSnapshot()).toEqual(before);
    });

    it('removes only the named tool', async () => {
      let registry = await open();
      for (const name of ['a', 'b', 'c']) await registry.register(minimalSpec(name));
      await registry.remove('b');
      registry = await expectSurvivesRestart(registry);
      expect((await registry.listAll()).map((r) => r.spec.tool_name)).toEqual(['a', 'c']);
    });

    it('forgets the tool: registering it again is rule 1 (enabled, new created_at, any spec)', async () => {
      const registry = await open();
      await registry.register(fullSpec('search', '1'));
      await registry.setEnabled('search', false);
      await registry.remove('search');
      clock.set(T1);
      const again = await registry.register({ ...fullSpec('search', '1'), tags: ['other'] });
      expect(again).toEqual({ spec: { ...fullSpec('search', '1'), tags: ['other'] }, enabled: true, created_at: T1, deprecation: null });
    });
  });

  // ---------------------------------------------------------------------------------
  describe('isolation and freezing', () => {
    it('two registries from two open() calls share nothing', async () => {
      const one = await open();
      const two = await open();
      await one.register(minimalSpec('only_in_one'));
      await two.register(minimalSpec('only_in_two', { version: '9' }));
      await two.register(minimalSpec('shared', { version: '2' }));
      await one.register(minimalSpec('shared', { version: '1' }));
      await two.setEnabled('shared', false);
      expect((await one.listAll()).map((r) => r.spec.tool_name)).toEqual(['only_in_one', 'shared']);
      expect((await two.listAll({ includeDisabled: true })).map((r) => r.spec.tool_name)).toEqual([
        'only_in_two',
        'shared',
      ]);
      expect((await one.get('shared'))?.spec.version).toBe('1');
      expect((await one.get('shared'))?.enabled).toBe(true);
      await one.close();
      expect(await two.has('shared')).toBe(true);
    });

    it('a caller mutating its input after register does not change what is stored', async () => {
      const registry = await open();
      const input = fullSpec('search');
      await registry.register(input);
      input.tool_name = 'hijacked';
      input.version = '666';
      input.tags.push('evil');
      input.input_schema.properties.query.type = 'number';
      (input.output_schema as Record<string, unknown>).extra = true;
      const reopened = await restart(registry);
      expect((await reopened.get('search'))?.spec).toStrictEqual(fullSpec('search'));
      expect(await reopened.has('hijacked')).toBe(false);
    });

    it('returned objects do not share structure with the caller input', async () => {
      const registry = await open();
      const input = fullSpec('search');
      const registration = await registry.register(input);
      expect(registration.spec).not.toBe(input);
      expect(registration.spec.input_schema).not.toBe(input.input_schema);
      expect(registration.spec.tags).not.toBe(input.tags);
      expect(Object.isFrozen(input)).toBe(false);
      expect(Object.isFrozen(input.input_schema)).toBe(false);
    });

    const sources: Record<string, (registry: ToolRegistry) => Promise<unknown>> = {
      'register (rule 1)': (registry) => registry.register(fullSpec('fresh')),
      'register (rule 2)': (registry) => registry.register(fullSpec('search')),
      'register (rule 3)': (registry) => registry.register(fullSpec('search', '9')),
      get: (registry) => registry.get('search'),
      'listAll()': (registry) => registry.listAll(),
      'listAll({ includeDisabled })': (registry) => registry.listAll({ includeDisabled: true }),
      setEnabled: (registry) => registry.setEnabled('search', false),
      exportSnapshot: (registry) => registry.exportSnapshot(),
      'importSnapshot report': (registry) => registry.importSnapshot({ tools: [] }, { dryRun: true }),
    };
    for (const [source, call] of Object.entries(sources)) {
      it(`what ${source} returns is deeply frozen`, async () => {
        let registry = await open();
        await registry.register(fullSpec('search'));
        await registry.importSnapshot({ tools: [entry(fullSpec('imported'), false)] });
        registry = await restart(registry);
        const value = await call(registry);
        const items = Array.isArray(value) ? value : [value];
        expect(items.length).toBeGreaterThan(0);
        for (const item of items) {
          expect(item).toBeTypeOf('object');
          expect(isDeepFrozen(item)).toBe(true);
        }
      });
    }

    it('a frozen registration cannot be changed, and trying leaves the store alone', async () => {
      const registry = await open();
      const registration = await registry.register(fullSpec('search'));
      expect(() => {
        (registration as { enabled: boolean }).enabled = false;
      }).toThrow(TypeError);
      expect(() => {
        (registration.spec.tags as string[]).push('x');
      }).toThrow(TypeError);
      expect(() => {
        (registration.spec.input_schema as Record<string, unknown>).type = 'string';
      }).toThrow(TypeError);
      expect(await registry.get('search')).toEqual({ spec: fullSpec('search'), enabled: true, created_at: T0, deprecation: null });
    });
  });

  // ---------------------------------------------------------------------------------
  describe('__proto__ and constructor inside a schema are ordinary data', () => {
    const text =
      '{"type":"object","properties":{"__proto__":{"type":"string","polluted":true},' +
      '"constructor":{"prototype":{"polluted":true}}},"__proto__":{"polluted":"yes"}}';

    it('round-trip exactly through register, get, listAll and export', async () => {
      let registry = await open();
      const input = JSON.parse(text) as Record<string, unknown>;
      expect(Object.keys(input)).toContain('__proto__');
      await registry.register(minimalSpec('proto', { input_schema: input as never }));
      registry = await restart(registry);
      const stored = (await registry.get('proto'))?.spec.input_schema as Record<string, unknown>;
      expect(Object.keys(stored).sort()).toEqual(['__proto__', 'properties', 'type']);
      expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(stored, '__proto__')?.value).toEqual({ polluted: 'yes' });
      expect(canonicalJson(stored)).toBe(canonicalJson(JSON.parse(text)));
      const listed = (await registry.listAll())[0]?.spec.input_schema;
      const exported = (await registry.exportSnapshot()).tools[0]?.spec.input_schema;
      expect(canonicalJson(listed)).toBe(canonicalJson(input));
      expect(canonicalJson(exported)).toBe(canonicalJson(input));
      // toEqual, not toStrictEqual: vitest's strict type check reads an own `constructor` key as the class.
      expect(JSON.parse(JSON.stringify(exported))).toEqual(JSON.parse(text));
    });

    it('never change any prototype', async () => {
      const registry = await open();
      const prototypeKeys = Object.getOwnPropertyNames(Object.prototype);
      await registry.register(minimalSpec('proto', { input_schema: JSON.parse(text) as never }));
      await registry.importSnapshot({ tools: [entry(minimalSpec('proto2', { output_schema: JSON.parse(text) as never }))] });
      await registry.get('proto');
      await registry.listAll();
      await registry.exportSnapshot();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeKeys);
      expect((Object.prototype as Record<string, unknown>).type).toBeUndefined();
      const stored = (await registry.get('proto'))?.spec.input_schema as Record<string, unknown>;
      expect(stored.polluted).toBeUndefined();
      expect(Object.getPrototypeOf(stored.properties)).toBe(Object.prototype);
    });

    it('an own __proto__ key makes a different spec (a conflict at the same version)', async () => {
      const registry = await open();
      await registry.register(minimalSpec('proto', { version: '1', input_schema: { type: 'object' } }));
      const withProto = JSON.parse('{"type":"object","__proto__":{}}') as never;
      await expectCode(registry.register(minimalSpec('proto', { version: '1', input_schema: withProto })), 'VERSION_CONFLICT');
    });

    it('round-trip through a snapshot import and export', async () => {
      let registry = await open();
      const snapshot = JSON.parse(
        `{"tools":[{"spec":{"tool_name":"p","version":"1","description":null,"input_schema":${text},` +
          `"output_schema":{"constructor":1},"tags":[]},"enabled":true,"created_at":null}]}`,
      ) as unknown;
      await registry.importSnapshot(snapshot);
      registry = await restart(registry);
      const exported = await registry.exportSnapshot();
      expect(canonicalJson(exported)).toBe(canonicalJson(snapshot));
      expect((await registry.importSnapshot(snapshot)).unchanged).toBe(1);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('validation: bad input is VALIDATION_FAILED and stores nothing', () => {
    class Point {
      x = 1;
    }
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic.self = cyclic;
    const withSymbolKey = { type: 'object', [Symbol('secret')]: 1 };
    // eslint-disable-next-line no-sparse-arrays
    const sparse = ['a', , 'b'];
    const bad = (extra: Record<string, unknown>): unknown => ({ ...minimalSpec('bad'), ...extra });
    const badInput = (value: unknown): unknown => bad({ input_schema: { type: 'object', properties: { x: value } } });

    const cases: [label: string, input: unknown, path: string][] = [
      ['tool_name missing', { input_schema: {}, output_schema: {} }, 'tool_name'],
      ['tool_name empty', minimalSpec(''), 'tool_name'],
      ['tool_name of 129 characters', minimalSpec('n'.repeat(129)), 'tool_name'],
      ['tool_name with a space', minimalSpec('my tool'), 'tool_name'],
      ['tool_name with a slash', minimalSpec('a/b'), 'tool_name'],
      ['tool_name with unicode', minimalSpec('café'), 'tool_name'],
      ['tool_name with a trailing newline', minimalSpec('bad\n'), 'tool_name'],
      ['tool_name a number', bad({ tool_name: 42 }), 'tool_name'],
      ['version a number', bad({ version: 1 }), 'version'],
      ['description a number', bad({ description: 3 }), 'description'],
      ['a tag that is empty', bad({ tags: ['ok', ''] }), 'tags[1]'],
      ['a tag that is a number', bad({ tags: [7] }), 'tags[0]'],
      ['a tag that is null', bad({ tags: ['a', 'b', null] }), 'tags[2]'],
      ['tags not an array', bad({ tags: 'web' }), 'tags'],
      ['an unknown top-level field', bad({ enabled: true }), ''],
      ['input_schema an array', bad({ input_schema: [] }), 'input_schema'],
      ['input_schema null', bad({ input_schema: null }), 'input_schema'],
      ['input_schema a string', bad({ input_schema: '{}' }), 'input_schema'],
      ['input_schema missing', { tool_name: 'bad', output_schema: {} }, 'input_schema'],
      ['output_schema missing', { tool_name: 'bad', input_schema: {} }, 'output_schema'],
      ['NaN', badInput(NaN), 'input_schema.properties.x'],
      ['Infinity', badInput(Infinity), 'input_schema.properties.x'],
      ['-Infinity', bad({ output_schema: { min: -Infinity } }), 'output_schema.min'],
      ['undefined inside an object', badInput(undefined), 'input_schema.properties.x'],
      ['undefined inside an array', bad({ input_schema: { required: ['a', undefined] } }), 'input_schema.required[1]'],
      ['a function', badInput(() => 1), 'input_schema.properties.x'],
      ['a symbol', badInput(Symbol('s')), 'input_schema.properties.x'],
      ['a BigInt', badInput(10n), 'input_schema.properties.x'],
      ['a Date', badInput(new Date(0)), 'input_schema.properties.x'],
      ['a Map', badInput(new Map([['a', 1]])), 'input_schema.properties.x'],
      ['a class instance', badInput(new Point()), 'input_schema.properties.x'],
      ['a boxed string', badInput(new String('s')), 'input_schema.properties.x'],
      ['a cycle', bad({ input_schema: { properties: cyclic } }), 'input_schema.properties.self'],
      ['a sparse array hole', bad({ input_schema: { enum: sparse } }), 'input_schema.enum[1]'],
      ['a symbol key', bad({ input_schema: withSymbolKey }), 'input_schema'],
      // Issue 13, item 2: strings that are not well formed.
      ['version with a lone high surrogate', bad({ version: '1.0\uD800' }), 'version'],
      ['description with a lone low surrogate', bad({ description: 'x\uDC00y' }), 'description'],
      ['a tag with a lone surrogate', bad({ tags: ['ok', '\uD83D'] }), 'tags[1]'],
      ['a schema string with a lone surrogate', badInput('\uD800'), 'input_schema.properties.x'],
      ['a schema string in an array with a reversed pair', bad({ input_schema: { enum: ['ok', '\uDE00\uD83D'] } }), 'input_schema.enum[1]'],
      // U+0000 in the version: every store keeps it in a text column, which PostgreSQL's cannot hold.
      ['version with U+0000', bad({ version: '1.0\u0000' }), 'version'],
      // Issue 13, item 3: integers beyond 2^53 - 1 (2 ** 64 is what JSON.parse makes of 18446744073709551615), either sign.
      ['an integer beyond 2^53 - 1', badInput(2 ** 64), 'input_schema.properties.x'],
      ['an integer below -(2^53 - 1)', badInput(-9007199254740992), 'input_schema.properties.x'],
      ['1e308', bad({ output_schema: { maximum: 1e308 } }), 'output_schema.maximum'],
      ['spec null', null, ''],
      ['spec a string', 'x', ''],
      ['spec a number', 42, ''],
      ['spec an array', [minimalSpec('bad')], ''],
    ];

    it.each(cases)('%s', async (_label, input, path) => {
      let registry = await open();
      await registry.register(fullSpec('existing'));
      const before = await state(registry);
      const error = await expectCode(registry.register(input as never), 'VALIDATION_FAILED');
      expect(error).toBeInstanceOf(ValidationError);
      const issues = (error as ValidationError).issues;
      expect(issues.length).toBeGreaterThan(0);
      expect(issues.map((issue) => issue.pathText)).toContain(path);
      const issue = issues.find((candidate) => candidate.pathText === path);
      expect(issue?.path.join('.')).toBe(
        path.replace(/\[(\d+)\]/g, '.$1').replace(/^\./, ''),
      );
      expect(await state(registry)).toEqual(before);
      expect(await registry.has('bad')).toBe(false);
      registry = await restart(registry);
      expect(await state(registry)).toEqual(before);
    });

    it('a schema key with a lone surrogate is VALIDATION_FAILED naming that key, and nothing is stored', async () => {
      const registry = await open();
      const error = await expectCode(registry.register(minimalSpec('bad', { input_schema: { properties: { 'k\uDFFF': {} } } })), 'VALIDATION_FAILED');
      expect((error as ValidationError).issues.map((issue) => issue.path)).toContainEqual(['input_schema', 'properties', 'k\uDFFF']);
      expect(await registry.has('bad')).toBe(false);
    });

    it('accepts well-formed non-ASCII and astral text everywhere strings go', async () => {
      let registry = await open();
      const spec = minimalSpec('astral', {
        version: '1.0-ß\u{1F600}',
        description: 'Привет \u{1D11E} 中文 \u{10FFFF}',
        tags: ['😀', 'é', '\u{1F1EB}\u{1F1F7}'],
        input_schema: { '\u{1F600}': ['\u{1F4A9}', 'ü'] },
      });
      await registry.register(spec);
      registry = await restart(registry);
      expect((await registry.get('astral'))?.spec).toEqual({ ...spec });
    });

    it('keeps U+0000 everywhere but the version: description, tags, schema keys and values, across a restart', async () => {
      let registry = await open();
      const spec = minimalSpec('nul', {
        description: 'a\u0000b',
        tags: ['\u0000', 't\u0000'],
        input_schema: { 'k\u0000': { const: 'a\u0000b' } },
        output_schema: { enum: ['\u0000'] },
      });
      await registry.register(spec);
      registry = await restart(registry);
      expect((await registry.get('nul'))?.spec).toEqual({ ...spec, version: null });
      expect((await registry.exportSnapshot()).tools.map((tool) => tool.spec.tags)).toEqual([['\u0000', 't\u0000']]);
    });

    it('reports every bad field, not only the first', async () => {
      const registry = await open();
      const error = await expectCode(
        registry.register({ tool_name: 'bad tool', version: 2, input_schema: { x: NaN }, output_schema: null } as never),
        'VALIDATION_FAILED',
      );
      const paths = (error as ValidationError).issues.map((issue) => issue.pathText);
      expect(paths).toEqual(expect.arrayContaining(['tool_name', 'version', 'input_schema.x', 'output_schema']));
    });

    it('names the tool in context when tool_name is a string', async () => {
      const registry = await open();
      const error = await expectCode(registry.register(bad({ version: 1 }) as never), 'VALIDATION_FAILED');
      expect(error.context.tool_name).toBe('bad');
    });

    it('a bad spec under an existing name neither replaces nor conflicts', async () => {
      const registry = await open();
      await registry.register(fullSpec('search', '1'));
      const before = await state(registry);
      await expectCode(registry.register({ ...fullSpec('search', '2'), tags: [''] }), 'VALIDATION_FAILED');
      await expectCode(registry.register({ ...fullSpec('search', '1'), input_schema: { x: NaN } }), 'VALIDATION_FAILED');
      expect(await state(registry)).toEqual(before);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('data fidelity, odd names, concurrency and misuse', () => {
    it('keeps numbers exactly (no reformatting or precision loss)', async () => {
      let registry = await open();
      const schema = { tiny: 5e-324, frac: 0.30000000000000004, max: 9007199254740991, min: -9007199254740991, neg: -123.456e10, int: 10, big: 1.5e15 };
      await registry.register(minimalSpec('numbers', { input_schema: schema }));
      registry = await restart(registry);
      expect((await registry.get('numbers'))?.spec.input_schema).toStrictEqual(schema);
      await registry.register(minimalSpec('numbers', { input_schema: { ...schema } }));
      expect((await registry.get('numbers'))?.created_at).toBe(T0);
    });

    it('keeps unicode and control characters in text fields exactly', async () => {
      let registry = await open();
      const spec = minimalSpec('texts', {
        description: 'naïve ☃ 😀 "quoted" \\ back\u0000nul\nline',
        tags: ['ünï', '😀', ' spaced ', '\t'],
        input_schema: { 'k\u0000ey': 'v\u2028' },
      });
      await registry.register(spec);
      registry = await restart(registry);
      expect((await registry.get('texts'))?.spec).toEqual({ ...spec, version: null });
    });

    it('matches names exactly, never as patterns (_ is not a wildcard)', async () => {
      const registry = await open();
      await registry.register(minimalSpec('abc'));
      await registry.register(minimalSpec('a.c'));
      expect(await registry.get('a_c')).toBeUndefined();
      expect(await registry.has('a_c')).toBe(false);
      expect(await registry.has('_bc')).toBe(false);
      expect(await registry.remove('a_c')).toBe(false);
      await expectCode(registry.setEnabled('a_c', false), 'TOOL_NOT_FOUND');
      expect(await registry.remove('a.c')).toBe(true);
      expect((await registry.listAll()).map((r) => r.spec.tool_name)).toEqual(['abc']);
    });

    it('keeps an imported created_at verbatim through setEnabled and rule 2', async () => {
      let registry = await open();
      await registry.importSnapshot({ tools: [entry(fullSpec('a'), false, PY_TIME), entry(fullSpec('b'), true, null)] });
      clock.set(T2);
      expect((await registry.setEnabled('a', true)).created_at).toBe(PY_TIME);
      expect((await registry.register(fullSpec('b'))).created_at).toBeNull();
      registry = await restart(registry);
      expect(await registry.get('a')).toEqual({ spec: fullSpec('a'), enabled: true, created_at: PY_TIME, deprecation: null });
      expect((await registry.get('b'))?.created_at).toBeNull();
      expect((await registry.register(fullSpec('a', '2'))).created_at).toBe(T2);
    });

    // The concurrency cases spread their calls over registries with their own connections and
    // caches (harness.peer), each having read the tool before: the rule must be decided on
    // what is stored when the write takes the lock, not on what a cache or an earlier read saw.
    it('concurrent registers of one name and version with different specs: exactly one wins', async () => {
      const registry = await open();
      const all = await peers(registry, 4);
      for (const peer of all) expect(await peer.get('race')).toBeUndefined();
      const attempts = Array.from({ length: 8 }, (_, i) =>
        (all[i % all.length] as ToolRegistry).register(minimalSpec('race', { version: '1', description: `d${i}` })),
      );
      const results = await Promise.allSettled(attempts);
      const won = results.filter((result) => result.status === 'fulfilled');
      const lost = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost.map((result) => (result.reason as ToolRegistryError).code)).toEqual(Array(7).fill('VERSION_CONFLICT'));
      for (const peer of all) expect(await peer.get('race')).toEqual((won[0] as PromiseFulfilledResult<ToolRegistration>).value);
    });

    it('concurrent redeploys with a new version from several registries: every one lands, and all agree after', async () => {
      const registry = await open();
      await registry.register(minimalSpec('deployed', { version: '1' }));
      const all = await peers(registry, 3);
      for (const peer of all) expect((await peer.get('deployed'))?.spec.version).toBe('1');
      await registry.setEnabled('deployed', false);
      const results = await Promise.allSettled(
        all.map((peer, i) => peer.register(minimalSpec('deployed', { version: `2.${i}` }))),
      );
      expect(results.every((result) => result.status === 'fulfilled')).toBe(true);
      const final = await registry.get('deployed');
      // Each redeploy kept the operator's disable, whatever the order they landed in.
      expect(final?.enabled).toBe(false);
      for (const peer of all) expect(await peer.get('deployed')).toEqual(final);
    });

    it('concurrent identical registers all return the same registration', async () => {
      const registry = await open();
      const all = await peers(registry, 4);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (all[i % all.length] as ToolRegistry).register(fullSpec('same'))));
      for (const result of results) expect(result).toEqual({ spec: fullSpec('same'), enabled: true, created_at: T0, deprecation: null });
      expect(await registry.listAll()).toHaveLength(1);
    });

    it('concurrent writes to different tools all land', async () => {
      let registry = await open();
      const group = await peers(registry, 4);
      const on = (i: number): ToolRegistry => group[i % group.length] as ToolRegistry;
      await Promise.all(Array.from({ length: 20 }, (_, i) => on(i).register(minimalSpec(`t${String(i).padStart(2, '0')}`))));
      for (const peer of group) await peer.listAll();
      await Promise.all([on(1).setEnabled('t03', false), on(2).remove('t07'), on(3).register(minimalSpec('t00', { version: '2' }))]);
      for (const peer of group) expect(await peer.listAll({ includeDisabled: true })).toEqual(await registry.listAll({ includeDisabled: true }));
      registry = await expectSurvivesRestart(registry);
      const all = await registry.listAll({ includeDisabled: true });
      expect(all).toHaveLength(19);
      expect(all.find((r) => r.spec.tool_name === 't03')?.enabled).toBe(false);
      expect(all.find((r) => r.spec.tool_name === 't00')?.spec.version).toBe('2');
    });

    it('listAll with options that are not an object or a non-boolean flag is a plain TypeError', async () => {
      const registry = await open();
      await expectPlainTypeError(() => registry.listAll(null as never));
      await expectPlainTypeError(() => registry.listAll({ includeDisabled: 'yes' as never }));
    });

    it('importSnapshot with options that are not an object or a non-boolean dryRun is a plain TypeError', async () => {
      const registry = await open();
      await registry.register(minimalSpec('kept'));
      const before = await state(registry);
      await expectPlainTypeError(() => registry.importSnapshot({ tools: [] }, 'replace' as never));
      await expectPlainTypeError(() => registry.importSnapshot({ tools: [] }, { mode: 'replace', dryRun: 'no' as never }));
      expect(await state(registry)).toEqual(before);
    });
  });

  // ---------------------------------------------------------------------------------
  describe("the registry's clock (issue 13, item 9)", () => {
    async function openWithClock(now: () => unknown): Promise<ToolRegistry> {
      const registry = await harness.open({ clock: now as () => Date });
      track(registry);
      return registry;
    }

    it('a clock that returns something other than a Date is a plain TypeError, and nothing is stored', async () => {
      for (const value of [Date.now(), '2025-01-01T00:00:00Z', undefined]) {
        const registry = await openWithClock(() => value);
        await expectPlainTypeError(() => registry.register(minimalSpec('timed')));
        await expectPlainTypeError(() => registry.registerMany([minimalSpec('timed')]));
        expect(await registry.has('timed')).toBe(false);
      }
    });

    it.each([
      ['an invalid Date', new Date(Number.NaN)],
      ['year 10000', new Date('+010000-01-01T00:00:00.000Z')],
      ['year -1', new Date('-000001-01-01T00:00:00.000Z')],
    ])('a clock that returns %s is VALIDATION_FAILED at created_at, never a raw RangeError, and nothing is stored', async (_what, date) => {
      const registry = await openWithClock(() => new Date(date.getTime()));
      const error = await expectCode(registry.register(minimalSpec('timed')), 'VALIDATION_FAILED');
      expect(error.context).toMatchObject({ path: 'created_at', tool_name: 'timed' });
      expect((error as ValidationError).issues.map((issue) => issue.pathText)).toEqual(['created_at']);
      const batch = await expectCode(registry.registerMany([minimalSpec('timed')]), 'VALIDATION_FAILED');
      expect(batch.context.tool_name).toBe('timed');
      const imported = await expectCode(registry.importSnapshot({ tools: [{ spec: minimalSpec('timed'), created_at: null }] }), 'VALIDATION_FAILED');
      expect(imported.context.tool_name).toBe('timed');
      expect(await registry.has('timed')).toBe(false);
    });

    it('each write reads the clock once, so a clock that steps on each reading gives every store the same created_at', async () => {
      // PostgreSQL decides a write on its cache first and, when its one-statement attempt does
      // not apply (a rollback, a spec already in the history), decides again under its locks.
      const registry = await open();
      clock.stepEach(1000);
      const at = (reading: number): string => new Date(Date.parse(T0) + reading * 1000).toISOString();
      await registry.register(minimalSpec('stepped', { version: '1.0.0' }));
      await registry.remove('stepped');
      expect((await registry.register(minimalSpec('stepped', { version: '1.0.0' }))).created_at).toBe(at(2));
      await registry.setPolicy({ versionOrder: 'semver' });
      expect((await registry.register(minimalSpec('stepped', { version: '0.9.0' }), { allowDowngrade: true })).created_at).toBe(at(3));
      expect((await registry.registerMany([minimalSpec('stepped', { version: '1.0.0' })], { allowDowngrade: true }))[0]?.created_at).toBe(at(4));
      // No reading in between: the next write's time is the fifth.
      expect((await registry.register(minimalSpec('fifth', { version: '1.0.0' }))).created_at).toBe(at(5));
    });

    it('the first and the last instants of years 0000 and 9999 are stored as plain ISO text that imports back', async () => {
      for (const instant of ['0000-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
        const registry = await openWithClock(() => new Date(instant));
        expect((await registry.register(minimalSpec('edge'))).created_at).toBe(instant);
        const snapshot = JSON.parse(JSON.stringify(await registry.exportSnapshot())) as unknown;
        const other = await openWithClock(() => new Date(T0));
        expect(await other.importSnapshot(snapshot)).toMatchObject({ added: 1 });
        expect((await other.get('edge'))?.created_at).toBe(instant);
      }
    });
  });

  // ---------------------------------------------------------------------------------
  describe('registerMany (a batch, all-or-nothing)', () => {
    it('applies each rule per spec and returns the registrations in the given order', async () => {
      let registry = await open();
      await registry.register(fullSpec('same', '1'));
      await registry.register(fullSpec('bumped', '1'));
      await registry.setEnabled('bumped', false);
      clock.set(T1);
      const result = await registry.registerMany([fullSpec('zeta'), fullSpec('same', '1'), fullSpec('bumped', '2')]);
      expect(result).toEqual([
        { spec: fullSpec('zeta'), enabled: true, created_at: T1, deprecation: null },
        { spec: fullSpec('same', '1'), enabled: true, created_at: T0, deprecation: null },
        { spec: fullSpec('bumped', '2'), enabled: false, created_at: T1, deprecation: null },
      ]);
      expect(result.every((registration) => isDeepFrozen(registration))).toBe(true);
      registry = await expectSurvivesRestart(registry);
      expect((await registry.listAll({ includeDisabled: true })).map((r) => r.spec.tool_name)).toEqual([
        'bumped',
        'same',
        'zeta',
      ]);
    });

    it('registerManyWithActions says what the call did to each tool; of concurrent batches (or registerWithAction calls) from several registries adding one tool, one says added', async () => {
      const registry = await open();
      await registry.register(fullSpec('same', '1'));
      await registry.register(fullSpec('bumped', '1'));
      const actions = async (specs: ToolSpecInput[], on: ToolRegistry = registry) => (await registerManyWithActions(on, specs)).map((one) => `${one.registration.spec.tool_name} ${one.action}`);
      expect(await actions([fullSpec('zeta'), fullSpec('same', '1'), fullSpec('bumped', '2')])).toEqual(['zeta added', 'same unchanged', 'bumped updated']);
      expect((await registerManyWithActions(registry, [fullSpec('zeta')])).every((one) => isDeepFrozen(one))).toBe(true);
      // Only identical specs: answered from a read, nothing written.
      expect(await actions([fullSpec('bumped', '2'), fullSpec('zeta')])).toEqual(['bumped unchanged', 'zeta unchanged']);
      const all = await peers(registry, 3);
      // Each batch adds a tool of its own too, so every one of them writes.
      const raced = await Promise.all(Array.from({ length: 6 }, (_, i) => actions([fullSpec('shared'), fullSpec(`own${i}`)], all[i % all.length])));
      expect(raced.map(([shared]) => shared).sort()).toEqual(['shared added', ...Array(5).fill('shared unchanged')]);
      expect(raced.map(([, own]) => own)).toEqual(Array.from({ length: 6 }, (_, i) => `own${i} added`));
      // An update names the version it replaced, read in the write's atomic step: racing
      // batches that each replace one tool form a chain from the first version to the last.
      await registry.register(fullSpec('chain', '0'));
      const chain = await Promise.all(Array.from({ length: 4 }, (_, i) => registerManyWithActions(all[i % all.length] as ToolRegistry, [fullSpec('chain', `${i + 1}`)])));
      const links = chain.map(([one]) => [one?.action, one?.replacedVersion, one?.registration.spec.version]);
      expect(links.every(([action]) => action === 'updated')).toBe(true);
      expect(replacementChain(links.map(([, from, to]) => [from as string, to as string]), '0')).toEqual((await registry.history('chain')).map((one) => one.spec.version));
      // registerWithAction (register) racing the same way, on the same registries.
      const single = await Promise.all(Array.from({ length: 6 }, (_, i) => registerWithAction(all[i % all.length] as ToolRegistry, fullSpec('single'))));
      expect(single.map((one) => one.action).sort()).toEqual(['added', ...Array(5).fill('unchanged')]);
      await registry.register(fullSpec('chained', '0'));
      const chained = await Promise.all(Array.from({ length: 4 }, (_, i) => registerWithAction(all[i % all.length] as ToolRegistry, fullSpec('chained', `${i + 1}`))));
      expect(chained.every((one) => one.action === 'updated')).toBe(true);
      const singleLinks = chained.map((one): [string, string] => [one.replacedVersion as string, one.registration.spec.version as string]);
      expect(replacementChain(singleLinks, '0')).toEqual((await registry.history('chained')).map((one) => one.spec.version));
    });

    it('registerWithAction says what register did (the version it replaced too), also with expectedVersion', async () => {
      const registry = await open();
      const outcome = async (spec: ToolSpecInput, options?: { expectedVersion?: string | null }, on: ToolRegistry = registry) => {
        const { action, replacedVersion, registration } = await registerWithAction(on, spec, options);
        expect(registration).toEqual(await registry.get(spec.tool_name));
        return replacedVersion === undefined ? action : `${action} from ${String(replacedVersion)}`;
      };
      expect(await outcome(fullSpec('t', '1'))).toBe('added');
      expect(await outcome(fullSpec('t', '1'))).toBe('unchanged');
      expect(await outcome(fullSpec('t', '2'))).toBe('updated from 1');
      expect(await outcome(fullSpec('t', '2'), { expectedVersion: '2' })).toBe('unchanged');
      expect(await outcome(fullSpec('t', '3'), { expectedVersion: '2' })).toBe('updated from 2');
      expect(await outcome(fullSpec('u', null), { expectedVersion: null })).toBe('added');
      expect(await outcome(fullSpec('u', '1'))).toBe('updated from null');
      await expectCode(registerWithAction(registry, fullSpec('t', '4'), { expectedVersion: '2' }), 'PRECONDITION_FAILED');
      await expectCode(registerWithAction(registry, { ...fullSpec('t', '3'), description: 'other' }), 'VERSION_CONFLICT');
      expect(Object.isFrozen(await registerWithAction(registry, fullSpec('t', '3')))).toBe(true);
    });

    it('an empty batch returns [] and writes nothing', async () => {
      const registry = await open();
      await registry.register(minimalSpec('a'));
      const before = await state(registry);
      expect(await registry.registerMany([])).toEqual([]);
      expect(await state(registry)).toEqual(before);
    });

    it('one conflict (the last spec) changes nothing and names its index', async () => {
      let registry = await open();
      await registry.register(fullSpec('search', '1'));
      await registry.register(fullSpec('old', '1'));
      const before = await state(registry);
      clock.set(T1);
      const error = await expectCode(
        registry.registerMany([fullSpec('new'), fullSpec('old', '2'), { ...fullSpec('search', '1'), tags: [] }]),
        'VERSION_CONFLICT',
      );
      expect(error.context.tool_name).toBe('search');
      expect(error.context.path).toBe('[2]');
      expect(await state(registry)).toEqual(before);
      registry = await restart(registry);
      expect(await state(registry)).toEqual(before);
    });

    it('one invalid spec is VALIDATION_FAILED with an indexed path, and nothing is stored', async () => {
      const registry = await open();
      const error = await expectCode(
        registry.registerMany([fullSpec('ok'), { ...fullSpec('bad'), version: 3 } as never]),
        'VALIDATION_FAILED',
      );
      expect((error as ValidationError).issues.map((issue) => issue.pathText)).toContain('[1].version');
      expect(await registry.listAll({ includeDisabled: true })).toEqual([]);
    });

    it('a hole in the batch is VALIDATION_FAILED, and nothing is stored', async () => {
      const registry = await open();
      // eslint-disable-next-line no-sparse-arrays
      const batch = [fullSpec('one'), , fullSpec('three')] as never;
      const error = await expectCode(registry.registerMany(batch), 'VALIDATION_FAILED');
      expect((error as ValidationError).issues.map((issue) => issue.pathText)).toContain('[1]');
      expect(await registry.listAll({ includeDisabled: true })).toEqual([]);
    });

    it('a name given twice is DUPLICATE_TOOL, and nothing is stored', async () => {
      const registry = await open();
      const error = await expectCode(
        registry.registerMany([fullSpec('a'), fullSpec('b'), fullSpec('a', '2')]),
        'DUPLICATE_TOOL',
      );
      expect(error.context.tool_name).toBe('a');
      expect(await registry.listAll({ includeDisabled: true })).toEqual([]);
    });

    it('a non-array is a plain TypeError', async () => {
      const registry = await open();
      await expectPlainTypeError(() => registry.registerMany(fullSpec('a') as never));
      expect(await registry.has('a')).toBe(false);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('a closed registry', () => {
    it('close() twice is fine', async () => {
      const registry = await open();
      await registry.close();
      await expect(registry.close()).resolves.toBeUndefined();
    });

    for (const method of Object.keys(callEveryMethod) as RegistryMethod[]) {
      it(`${method}() after close rejects with REGISTRY_CLOSED`, async () => {
        const registry = await open();
        await registry.register(minimalSpec('present'));
        await callEveryMethod[method](registry); // the call itself is valid while open
        await registry.register(minimalSpec('present'));
        await registry.close();
        const error = await expectCode(callEveryMethod[method](registry), 'REGISTRY_CLOSED');
        expect(error.context.method).toBe(method);
        expect(error.context.tool_name).toBe(toolNamedBy[method]);
      });
    }

    it('calls made before close() complete; only calls made after it are refused', async () => {
      // PostgreSQL refused a register still reading its cache (REGISTRY_CLOSED) and cut writes
      // off with the pool (STORAGE_BUSY); the other stores complete them.
      const registry = await open();
      await registry.register(minimalSpec('present'));
      const made = Promise.all([
        registry.register(minimalSpec('added')),
        registry.setEnabled('present', false),
        registry.importSnapshot({ tools: [{ spec: minimalSpec('imported') }] }),
        registry.get('present'),
        registry.search('present', { includeDisabled: true }),
      ]);
      await registry.close();
      const [added, disabled, imported, , found] = await made;
      expect(found.results.map((one) => one.registration.spec.tool_name)).toContain('present');
      expect(added.spec.tool_name).toBe('added');
      expect(disabled.enabled).toBe(false);
      expect(imported).toMatchObject({ added: 1 });
      await expectCode(registry.register(minimalSpec('late')), 'REGISTRY_CLOSED');
      const reopened = await harness.restart(registry);
      if (reopened === registry) return; // nothing outlives the memory store's instance
      track(reopened);
      expect((await reopened.listAll({ includeDisabled: true })).map((one) => [one.spec.tool_name, one.enabled])).toEqual([
        ['added', true],
        ['imported', true],
        ['present', false],
      ]);
    });

    it('Symbol.asyncDispose closes the registry', async () => {
      const registry = await open();
      expect(typeof registry[Symbol.asyncDispose]).toBe('function');
      await registry.register(minimalSpec('present'));
      await registry[Symbol.asyncDispose]();
      await expectCode(registry.get('present'), 'REGISTRY_CLOSED');
      await registry[Symbol.asyncDispose]();
      await registry.close();
    });

    it('closing one registry leaves another open', async () => {
      const one = await open();
      const two = await open();
      await one.close();
      await two.register(minimalSpec('still_open'));
      expect(await two.has('still_open')).toBe(true);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('exportSnapshot', () => {
    it('of an empty store is exactly { tools: [] }', async () => {
      const registry = await open();
      expect(await registry.exportSnapshot()).toStrictEqual({ tools: [] });
    });

    it('has exactly the contract shape and field order', async () => {
      const registry = await open();
      await registry.register(fullSpec('search'));
      const snapshot = await registry.exportSnapshot();
      expect(Object.keys(snapshot)).toEqual(['tools']);
      const [only] = snapshot.tools;
      expect(Object.keys(only ?? {})).toEqual(['spec', 'enabled', 'created_at']);
      expect(Object.keys(only?.spec ?? {})).toEqual([
        'tool_name',
        'version',
        'description',
        'input_schema',
        'output_schema',
        'tags',
      ]);
    });

    it('lists every tool, disabled ones too, sorted by code point', async () => {
      let registry = await open();
      for (const name of ['a', 'B', '_', '0', '.', '-']) await registry.register(minimalSpec(name));
      await registry.setEnabled('B', false);
      await registry.setEnabled('-', false);
      registry = await restart(registry);
      const tools = (await registry.exportSnapshot()).tools;
      expect(tools.map((r) => r.spec.tool_name)).toEqual(NAMES_IN_CODE_POINT_ORDER);
      expect(tools.filter((r) => !r.enabled).map((r) => r.spec.tool_name)).toEqual(['-', 'B']);
    });

    it('is deeply frozen and a fresh object each call', async () => {
      const registry = await open();
      await registry.register(fullSpec('search'));
      const first = await registry.exportSnapshot();
      const second = await registry.exportSnapshot();
      expect(isDeepFrozen(first)).toBe(true);
      expect(first.tools).not.toBe(second.tools);
      expect(first).toEqual(second);
    });

    it('survives a JSON round trip and imports back as all unchanged', async () => {
      let registry = await open();
      await registry.register(fullSpec('a', '1'));
      await registry.register(minimalSpec('b'));
      await registry.setEnabled('b', false);
      await registry.importSnapshot({ tools: [entry(fullSpec('c', null), true, PY_TIME)] });
      const exported = await registry.exportSnapshot();
      const copy = JSON.parse(JSON.stringify(exported)) as unknown;
      expect(copy).toStrictEqual(JSON.parse(JSON.stringify(exported)));
      expect(copy).toEqual(exported);
      registry = await restart(registry);
      const report = await registry.importSnapshot(copy);
      expect(report).toEqual({ added: 0, updated: 0, unchanged: 3, removed: 0, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      const replaced = await registry.importSnapshot(copy, { mode: 'replace' });
      expect(replaced).toEqual({ added: 0, updated: 0, unchanged: 3, removed: 0, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      expect(await registry.exportSnapshot()).toEqual(exported);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('importSnapshot, merge', () => {
    it('adds tools with exactly the snapshot enabled and created_at (verbatim)', async () => {
      let registry = await open();
      const report = await registry.importSnapshot({
        tools: [entry(fullSpec('a'), true, PY_TIME), entry(fullSpec('b'), false, '2025-01-31T12:00:00.5-05:30')],
      });
      expect(report).toEqual({ added: 2, updated: 0, unchanged: 0, removed: 0, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      registry = await expectSurvivesRestart(registry);
      expect(await registry.get('a')).toEqual({ spec: fullSpec('a'), enabled: true, created_at: PY_TIME, deprecation: null });
      expect(await registry.get('b')).toEqual({
        spec: fullSpec('b'),
        enabled: false,
        created_at: '2025-01-31T12:00:00.5-05:30',
        deprecation: null,
      });
    });

    it('accepts created_at null and keeps it null', async () => {
      let registry = await open();
      await registry.importSnapshot({ tools: [entry(fullSpec('a'), true, null)] });
      registry = await restart(registry);
      expect((await registry.get('a'))?.created_at).toBeNull();
    });

    it('applies the defaults: enabled true and created_at null when left out', async () => {
      const registry = await open();
      await registry.importSnapshot({ tools: [{ spec: minimalSpec('a') }] });
      expect(await registry.get('a')).toEqual({
        spec: { ...minimalSpec('a'), version: null, description: null, tags: [] },
        enabled: true,
        created_at: null,
        deprecation: null,
      });
    });

    it('is the default mode and leaves tools the snapshot does not name alone', async () => {
      let registry = await open();
      await registry.register(fullSpec('kept', '1'));
      await registry.setEnabled('kept', false);
      const kept = await registry.get('kept');
      await registry.importSnapshot({ tools: [entry(fullSpec('new'))] });
      registry = await restart(registry);
      expect(await registry.get('kept')).toEqual(kept);
      expect((await registry.listAll({ includeDisabled: true })).map((r) => r.spec.tool_name)).toEqual(['kept', 'new']);
    });

    it('makes a named tool exactly the snapshot entry: spec, enabled and created_at', async () => {
      let registry = await open();
      await registry.register(fullSpec('search', '1'));
      await registry.setEnabled('search', false);
      const report = await registry.importSnapshot({ tools: [entry(fullSpec('search', '2'), true, PY_TIME)] }, {
        mode: 'merge',
      });
      expect(report).toEqual({ added: 0, updated: 1, unchanged: 0, removed: 0, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      registry = await restart(registry);
      expect(await registry.get('search')).toEqual({ spec: fullSpec('search', '2'), enabled: true, created_at: PY_TIME, deprecation: null });
    });

    it('updates enabled alone when only enabled differs', async () => {
      const registry = await open();
      await registry.importSnapshot({ tools: [entry(fullSpec('a'), true, PY_TIME)] });
      const report = await registry.importSnapshot({ tools: [entry(fullSpec('a'), false, PY_TIME)] });
      expect(report.updated).toBe(1);
      expect((await registry.get('a'))?.enabled).toBe(false);
    });

    it('updates created_at alone when only created_at differs', async () => {
      const registry = await open();
      await registry.register(fullSpec('a'));
      const report = await registry.importSnapshot({ tools: [entry(fullSpec('a'), true, PY_TIME)] });
      expect(report).toMatchObject({ added: 0, updated: 1, unchanged: 0 });
      expect((await registry.get('a'))?.created_at).toBe(PY_TIME);
    });

    it('counts added, updated, unchanged and removed exactly', async () => {
      const registry = await open();
      await registry.importSnapshot({
        tools: [entry(fullSpec('same')), entry(fullSpec('bump', '1')), entry(fullSpec('flag', '1'), true)],
      });
      const report = await registry.importSnapshot({
        tools: [
          entry(fullSpec('same')),
          entry(fullSpec('bump', '2')),
          entry(fullSpec('flag', '1'), false),
          entry(fullSpec('new1')),
          entry(fullSpec('new2')),
        ],
      });
      expect(report).toEqual({ added: 2, updated: 2, unchanged: 1, removed: 0, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      expect(report.plan).toBeUndefined();
    });

    it('a same-version different-spec entry is VERSION_CONFLICT naming the path and tool', async () => {
      const registry = await open();
      await registry.register(fullSpec('search', '1'));
      const error = await expectCode(
        registry.importSnapshot({ tools: [entry(fullSpec('a')), entry({ ...fullSpec('search', '1'), tags: ['x'] })] }),
        'VERSION_CONFLICT',
      );
      expect(error).toBeInstanceOf(VersionConflictError);
      expect(error.context.path).toBe('tools[1]');
      expect(error.context.tool_name).toBe('search');
      expect(error.context.version).toBe('1');
      expect(error.context.existing_fingerprint).toBe(fingerprintOfSpec(fullSpec('search', '1')));
      expect(error.context.incoming_fingerprint).toMatch(FINGERPRINT);
    });

    it('changes NOTHING when only the LAST entry conflicts, though earlier ones would add and update', async () => {
      let registry = await open();
      await registry.register(fullSpec('upd', '1'));
      await registry.register(fullSpec('same', '1'));
      await registry.register(minimalSpec('zz_conflict'));
      registry = await restart(registry);
      const before = await state(registry);
      clock.set(T2);
      const error = await expectCode(
        registry.importSnapshot({
          tools: [
            entry(fullSpec('added')),
            entry(fullSpec('upd', '2'), false),
            entry(fullSpec('same', '1')),
            entry(minimalSpec('zz_conflict', { description: 'different' })),
          ],
        }),
        'VERSION_CONFLICT',
      );
      expect(error.context.path).toBe('tools[3]');
      expect(error.context.tool_name).toBe('zz_conflict');
      expect(error.message).toContain('unversioned');
      expect(await state(registry)).toEqual(before);
      expect(await registry.has('added')).toBe(false);
      registry = await restart(registry);
      expect(await state(registry)).toEqual(before);
    });

    it('replace also counts a tool whose created_at alone differs as updated', async () => {
      let registry = await open();
      await registry.register(fullSpec('a'));
      const report = await registry.importSnapshot({ tools: [entry(fullSpec('a'), true, PY_TIME)] }, { mode: 'replace' });
      expect(report).toEqual({ added: 0, updated: 1, unchanged: 0, removed: 0, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      registry = await restart(registry);
      expect((await registry.get('a'))?.created_at).toBe(PY_TIME);
    });

    it('an entry identical to the stored tool is unchanged and writes nothing', async () => {
      const registry = await open();
      await registry.importSnapshot({ tools: [entry(fullSpec('a'), false, PY_TIME)] });
      const before = await registry.exportSnapshot();
      const report = await registry.importSnapshot({ tools: [entry(fullSpec('a'), false, PY_TIME)] });
      expect(report).toEqual({ added: 0, updated: 0, unchanged: 1, removed: 0, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      expect(await registry.exportSnapshot()).toEqual(before);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('importSnapshot, replace', () => {
    it('makes the registry equal to the snapshot and counts what it removed', async () => {
      let registry = await open();
      for (const name of ['gone1', 'gone2', 'kept', 'bumped']) await registry.register(fullSpec(name, '1'));
      const snapshot = {
        tools: [
          entry(fullSpec('kept', '1'), true, T0),
          entry(fullSpec('bumped', '2'), false, PY_TIME),
          entry(minimalSpec('fresh'), true, null),
        ],
      };
      const report = await registry.importSnapshot(snapshot, { mode: 'replace' });
      expect(report).toEqual({ added: 1, updated: 1, unchanged: 1, removed: 2, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      registry = await expectSurvivesRestart(registry);
      // The contract's output is frozen: sort a copy.
      const tools = [...normalized(snapshot).tools].sort((x, y) => (x.spec.tool_name < y.spec.tool_name ? -1 : 1));
      expect(await registry.exportSnapshot()).toEqual({ tools });
    });

    it('allows conflicts: a restore overwrites a same-version different spec', async () => {
      let registry = await open();
      await registry.register(fullSpec('search', '1'));
      const restored = { ...fullSpec('search', '1'), description: 'restored' };
      const report = await registry.importSnapshot({ tools: [entry(restored, false, PY_TIME)] }, { mode: 'replace' });
      expect(report).toMatchObject({ updated: 1, conflicts: 0 });
      registry = await restart(registry);
      expect(await registry.get('search')).toEqual({ spec: restored, enabled: false, created_at: PY_TIME, deprecation: null });
    });

    it('with an empty snapshot removes everything', async () => {
      let registry = await open();
      for (const name of ['a', 'b', 'c']) await registry.register(minimalSpec(name));
      await registry.setEnabled('b', false);
      const report = await registry.importSnapshot({ tools: [] }, { mode: 'replace' });
      expect(report).toEqual({ added: 0, updated: 0, unchanged: 0, removed: 3, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      registry = await restart(registry);
      expect(await registry.exportSnapshot()).toStrictEqual({ tools: [] });
    });

    it('changes nothing when the snapshot is invalid', async () => {
      const registry = await open();
      await registry.register(minimalSpec('a'));
      const before = await state(registry);
      await expectCode(
        registry.importSnapshot({ tools: [entry(minimalSpec('b')), { spec: { tool_name: 'c' } }] }, { mode: 'replace' }),
        'SNAPSHOT_INVALID',
      );
      expect(await state(registry)).toEqual(before);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('importSnapshot, dry run', () => {
    /** A store with: same (identical), bump (v1), flag (enabled), lonely (not in the snapshot). */
    async function seeded(): Promise<{ registry: ToolRegistry; snapshot: unknown }> {
      const registry = await open();
      await registry.importSnapshot({
        tools: [entry(fullSpec('same')), entry(fullSpec('bump', '1')), entry(fullSpec('flag')), entry(fullSpec('lonely'))],
      });
      const snapshot = {
        tools: [
          entry(fullSpec('new', '3')),
          entry(fullSpec('flag'), false),
          entry(fullSpec('same')),
          entry(fullSpec('bump', '2')),
        ],
      };
      return { registry, snapshot };
    }

    it('merge: returns the report with a per-tool plan sorted by name, and writes nothing', async () => {
      const seed = await seeded();
      const snapshot = seed.snapshot;
      let registry = seed.registry;
      const before = await state(registry);
      const report = await registry.importSnapshot(snapshot, { dryRun: true });
      expect(report).toEqual({
        added: 1,
        updated: 2,
        unchanged: 1,
        removed: 0,
        conflicts: 0,
        dryRun: true,
        revision: expect.any(Number),
        plan: [
          { tool_name: 'bump', action: 'update', path: 'tools[3]', from_version: '1', to_version: '2' },
          { tool_name: 'flag', action: 'update', path: 'tools[1]', from_version: '1.0.0', to_version: '1.0.0' },
          { tool_name: 'new', action: 'add', path: 'tools[0]', to_version: '3' },
          { tool_name: 'same', action: 'unchanged', path: 'tools[2]', from_version: '1.0.0', to_version: '1.0.0' },
        ],
      });
      expect(await state(registry)).toEqual(before);
      registry = await restart(registry);
      expect(await state(registry)).toEqual(before);
    });

    it('replace: the plan includes remove steps, and nothing is written', async () => {
      const { registry, snapshot } = await seeded();
      const before = await state(registry);
      const report = await registry.importSnapshot(snapshot, { mode: 'replace', dryRun: true });
      expect(report).toMatchObject({ added: 1, updated: 2, unchanged: 1, removed: 1, conflicts: 0, dryRun: true });
      expect(report.plan?.map((step) => [step.tool_name, step.action])).toEqual([
        ['bump', 'update'],
        ['flag', 'update'],
        ['lonely', 'remove'],
        ['new', 'add'],
        ['same', 'unchanged'],
      ]);
      expect(report.plan?.find((step) => step.action === 'remove')).toEqual({
        tool_name: 'lonely',
        action: 'remove',
        from_version: '1.0.0',
      });
      expect(await state(registry)).toEqual(before);
    });

    it('with a conflict: no throw, the plan says conflict, nothing is written', async () => {
      const { registry } = await seeded();
      const before = await state(registry);
      const report: ImportReport = await registry.importSnapshot(
        { tools: [entry(fullSpec('added')), entry({ ...fullSpec('bump', '1'), tags: [] })] },
        { mode: 'merge', dryRun: true },
      );
      expect(report).toMatchObject({ added: 1, updated: 0, unchanged: 0, removed: 0, conflicts: 1, dryRun: true });
      expect(report.plan).toEqual([
        { tool_name: 'added', action: 'add', path: 'tools[0]', to_version: '1.0.0' },
        { tool_name: 'bump', action: 'conflict', path: 'tools[1]', from_version: '1', to_version: '1' },
      ]);
      expect(await state(registry)).toEqual(before);
    });

    it('agrees with the real import that follows', async () => {
      const { registry, snapshot } = await seeded();
      const dry = await registry.importSnapshot(snapshot, { mode: 'replace', dryRun: true });
      const real = await registry.importSnapshot(snapshot, { mode: 'replace' });
      const { plan: _plan, dryRun: _dryRun, revision, ...counts } = dry;
      expect(real).toEqual({ ...counts, dryRun: false, revision: expect.any(Number) });
      expect(real.revision).toBeGreaterThan(revision);
    });

    it('still validates: an invalid snapshot is SNAPSHOT_INVALID', async () => {
      const registry = await open();
      await expectCode(registry.importSnapshot({ tools: [{}] }, { dryRun: true }), 'SNAPSHOT_INVALID');
    });
  });

  // ---------------------------------------------------------------------------------
  describe('importSnapshot, bad snapshots change nothing', () => {
    async function withState(): Promise<{ registry: ToolRegistry; before: Awaited<ReturnType<typeof state>> }> {
      const registry = await open();
      await registry.register(fullSpec('a', '1'));
      await registry.register(minimalSpec('b'));
      await registry.setEnabled('b', false);
      return { registry, before: await state(registry) };
    }

    it('a name given twice is DUPLICATE_TOOL, in both modes', async () => {
      const start = await withState();
      const before = start.before;
      let registry = start.registry;
      const snapshot = { tools: [entry(fullSpec('x')), entry(fullSpec('dup', '1')), entry(fullSpec('dup', '2'))] };
      for (const mode of ['merge', 'replace'] as const) {
        const error = await expectCode(registry.importSnapshot(snapshot, { mode }), 'DUPLICATE_TOOL');
        expect(error).toBeInstanceOf(DuplicateToolError);
        expect(error.context.tool_name).toBe('dup');
        expect(error.context.path).toBe('tools[2]');
      }
      expect(await state(registry)).toEqual(before);
      registry = await restart(registry);
      expect(await state(registry)).toEqual(before);
    });

    it('an invalid entry is SNAPSHOT_INVALID naming its path (tools[1].spec.version)', async () => {
      const start = await withState();
      const before = start.before;
      let registry = start.registry;
      const error = await expectCode(
        registry.importSnapshot({
          tools: [entry(fullSpec('x')), entry({ ...fullSpec('y'), version: 2 } as never), entry(fullSpec('z'))],
        }),
        'SNAPSHOT_INVALID',
      );
      expect(error).toBeInstanceOf(SnapshotInvalidError);
      expect(error.context.path).toBe('tools[1].spec.version');
      expect((error as SnapshotInvalidError).issues[0]?.pathText).toBe('tools[1].spec.version');
      expect((error as SnapshotInvalidError).issues[0]?.path).toEqual(['tools', 1, 'spec', 'version']);
      expect(await state(registry)).toEqual(before);
      registry = await restart(registry);
      expect(await state(registry)).toEqual(before);
    });

    const invalid: [label: string, snapshot: unknown, path: string][] = [
      ['null', null, ''],
      ['a string', 'x', ''],
      ['a number', 42, ''],
      ['an array of registrations', [entry(fullSpec('x'))], ''],
      ['tools missing', {}, 'tools'],
      ['tools not an array', { tools: { a: 1 } }, 'tools'],
      ['an extra top-level key', { tools: [], version: 2 }, ''],
      ['an entry that is not an object', { tools: [entry(fullSpec('x')), 'y'] }, 'tools[1]'],
      ['an entry without spec', { tools: [{ enabled: true }] }, 'tools[0].spec'],
      ['an unknown field in an entry', { tools: [{ ...entry(fullSpec('x')), revision: 1 }] }, 'tools[0]'],
      ['enabled not a boolean', { tools: [entry(fullSpec('x'), 'yes' as never)] }, 'tools[0].enabled'],
      ['created_at without an offset', { tools: [entry(fullSpec('x'), true, '2025-01-31T12:00:00')] }, 'tools[0].created_at'],
      ['created_at not a date', { tools: [entry(fullSpec('x'), true, 'yesterday')] }, 'tools[0].created_at'],
      ['a bad tool_name', { tools: [entry(minimalSpec('a b'))] }, 'tools[0].spec.tool_name'],
      ['NaN in a schema', { tools: [entry(minimalSpec('n', { input_schema: { x: NaN } }))] }, 'tools[0].spec.input_schema.x'],
      // Issue 13, item 2: strings that are not well formed, wherever they are.
      ['a version with a lone surrogate', { tools: [entry(minimalSpec('s', { version: '1.0\uD800' }))] }, 'tools[0].spec.version'],
      ['a description with a lone surrogate', { tools: [entry(minimalSpec('s', { description: '\uDC00' }))] }, 'tools[0].spec.description'],
      ['a tag with a lone surrogate', { tools: [entry(minimalSpec('s', { tags: ['ok', 'x\uD83D'] }))] }, 'tools[0].spec.tags[1]'],
      ['a schema string with a lone surrogate', { tools: [entry(minimalSpec('s', { output_schema: { title: 'a\uDFFFb' } }))] }, 'tools[0].spec.output_schema.title'],
      ['a version with U+0000', { tools: [entry(minimalSpec('s', { version: '\u0000' }))] }, 'tools[0].spec.version'],
      // Issue 13, item 3 (integers beyond 2^53 - 1) is a rule for new specs only: an import is
      // a restore and takes back every finite number a store holds (the case below).
      ['Infinity in a schema', { tools: [entry(minimalSpec('s', { input_schema: { maximum: Infinity } }))] }, 'tools[0].spec.input_schema.maximum'],
    ];

    // Issue 28, item 8: the first releases stored numbers beyond ±(2^53 - 1) in schemas; later
    // ones refused them, so such a store's own export could not be imported back.
    it('takes back numbers beyond ±(2^53 - 1) that a store holds (a restore), while register still refuses them in a new spec', async () => {
      let registry = await open();
      const big = minimalSpec('big', {
        version: '1',
        input_schema: { type: 'object', properties: { n: { type: 'integer', maximum: 1e21, minimum: -(2 ** 64) } } },
        output_schema: { type: 'number', maximum: Number.MAX_VALUE, multipleOf: 2 ** 53 },
      });
      await expectCode(registry.register(big), 'VALIDATION_FAILED');
      for (const mode of ['merge', 'replace'] as const) {
        const report = await registry.importSnapshot({ tools: [entry(big)] }, { mode });
        expect(report.conflicts).toBe(0);
      }
      registry = await restart(registry);
      const exported = await registry.exportSnapshot();
      expect(exported.tools[0]?.spec.input_schema).toEqual(big.input_schema);
      expect(exported.tools[0]?.spec.output_schema).toEqual(big.output_schema);
      // What the export writes, an import takes back: as objects, and as the JSON text a file holds.
      const again = await open();
      expect((await again.importSnapshot(exported, { mode: 'replace' })).added).toBe(1);
      expect((await again.importSnapshot(JSON.parse(JSON.stringify(exported)), { mode: 'replace' })).unchanged).toBe(1);
      expect(await again.exportSnapshot()).toEqual(exported);
      // The identical spec re-registered (a service redeploying it) is answered from the store.
      // (A snapshot leaves out a deprecation that is not set; a registration says null.)
      expect(await registry.register(big)).toEqual({ ...exported.tools[0], deprecation: null });
      // A new version with the same numbers is a new spec: refused as before.
      await expectCode(registry.register({ ...big, version: '2' }), 'VALIDATION_FAILED');
    });

    it.each(invalid)('SNAPSHOT_INVALID for %s', async (_label, snapshot, path) => {
      const start = await withState();
      const before = start.before;
      let registry = start.registry;
      for (const mode of ['merge', 'replace'] as const) {
        const error = await expectCode(registry.importSnapshot(snapshot, { mode }), 'SNAPSHOT_INVALID');
        const issues = (error as SnapshotInvalidError).issues;
        expect(issues.length).toBeGreaterThan(0);
        expect(issues.map((issue) => issue.pathText)).toContain(path);
      }
      expect(await state(registry)).toEqual(before);
      registry = await restart(registry);
      expect(await state(registry)).toEqual(before);
    });

    it('an unknown mode is a plain TypeError and changes nothing', async () => {
      const { registry, before } = await withState();
      await expectPlainTypeError(() => registry.importSnapshot({ tools: [] }, { mode: 'overwrite' as never }));
      await expectPlainTypeError(() => registry.importSnapshot({ tools: [] }, { mode: 'Replace' as never }));
      expect(await state(registry)).toEqual(before);
    });
  });

  // ---------------------------------------------------------------------------------
  // Issue 12: an import is validated whole, then written a chunk (1,000 entries) at a time
  // in the one transaction. A snapshot of several chunks must still be all-or-nothing.
  describe('importSnapshot larger than a write chunk', () => {
    const SIZE = 2500;
    const nameAt = (index: number): string => `chunk_${String(index).padStart(4, '0')}`;
    /** `SIZE` entries; the last one replaced by `last` when given. */
    function bigSnapshot(last?: unknown): { tools: unknown[] } {
      const tools: unknown[] = Array.from({ length: SIZE }, (_, index) => entry(fullSpec(nameAt(index), '1')));
      if (last !== undefined) tools[SIZE - 1] = last;
      return { tools };
    }
    async function withState() {
      const registry = await open();
      await registry.register(fullSpec('a', '1'));
      await registry.register(minimalSpec('b'));
      await registry.setEnabled('b', false);
      return { registry, before: { ...(await state(registry)), revision: (await registry.changes({ limit: 0 })).revision, history: await registry.history('a') } };
    }
    async function after(registry: ToolRegistry) {
      return { ...(await state(registry)), revision: (await registry.changes({ limit: 0 })).revision, history: await registry.history('a') };
    }

    const failures: [label: string, last: unknown, modes: readonly ('merge' | 'replace')[], code: string, path: string][] = [
      ['a conflict', entry({ ...fullSpec('a', '1'), description: 'changed' }), ['merge'], 'VERSION_CONFLICT', `tools[${SIZE - 1}]`],
      ['an invalid entry', entry({ ...fullSpec(nameAt(SIZE - 1)), version: 2 } as never), ['merge', 'replace'], 'SNAPSHOT_INVALID', `tools[${SIZE - 1}].spec.version`],
      ['a name given twice', entry(fullSpec(nameAt(0), '2')), ['merge', 'replace'], 'DUPLICATE_TOOL', `tools[${SIZE - 1}]`],
    ];
    it.each(failures)('%s in the last chunk leaves the store untouched', async (_label, last, modes, code, path) => {
      const start = await withState();
      let registry = start.registry;
      for (const mode of modes) {
        const error = await expectCode(registry.importSnapshot(bigSnapshot(last), { mode }), code as never);
        expect(error.context.path).toBe(path);
        expect(await after(registry)).toEqual(start.before);
      }
      expect(await registry.has(nameAt(0))).toBe(false);
      registry = await restart(registry);
      expect(await after(registry)).toEqual(start.before);
    });

    it('a replace of several chunks writes every entry with its own text and key order', async () => {
      const { registry, before } = await withState();
      const reordered = { output_schema: { z: 1, a: 2 }, tags: ['t'], input_schema: { type: 'object' }, tool_name: nameAt(SIZE - 1), version: '1' };
      const snapshot = bigSnapshot(entry(reordered, false, T1));
      const report = await registry.importSnapshot(snapshot, { mode: 'replace' });
      expect(report).toMatchObject({ added: SIZE, updated: 0, unchanged: 0, removed: 2, conflicts: 0 });
      expect(report.revision).toBe(before.revision + SIZE + 2);
      expect(await registry.exportSnapshot()).toEqual(normalized(snapshot));
      const last = await registry.get(nameAt(SIZE - 1));
      expect(Object.keys(last?.spec ?? {})).toEqual(['output_schema', 'tags', 'input_schema', 'tool_name', 'version', 'description']);
      expect(Object.keys(last?.spec.output_schema ?? {})).toEqual(['z', 'a']);
      expect(last).toMatchObject({ enabled: false, created_at: T1 });
      for (const index of [0, 999, 1000, 2001]) {
        const [history] = await registry.history(nameAt(index));
        expect(history?.fingerprint).toBe(fingerprintOfSpec(fullSpec(nameAt(index), '1')));
        expect(history?.spec).toEqual(normalized({ tools: [entry(fullSpec(nameAt(index), '1'))] }).tools[0]?.spec);
      }
    });

    it('a snapshot changed while the import runs never stores a text its fingerprint does not match', async () => {
      // The clock is read once, as the first entry is written; it then queues a change to an
      // entry of the third chunk. A store that writes synchronously has written everything
      // before the change runs; one that awaits between chunks must see it and import nothing.
      const changed = 2400;
      const snapshot = bigSnapshot();
      let armed = false;
      const registry = await harness.open({
        clock: () => {
          if (armed) {
            armed = false;
            queueMicrotask(() => {
              snapshot.tools[changed] = entry({ ...fullSpec(nameAt(changed), '1'), description: 'changed meanwhile' });
            });
          }
          return new Date(T0);
        },
      });
      track(registry);
      armed = true;
      const outcome = await registry.importSnapshot(snapshot).then(
        (report) => report,
        (error: unknown) => error,
      );
      if (outcome instanceof ToolRegistryError) {
        expect(outcome.code).toBe('SNAPSHOT_INVALID');
        expect(outcome.context.path).toBe(`tools[${changed}]`);
        expect(await registry.exportSnapshot()).toEqual({ tools: [] });
        return;
      }
      expect(outcome).toMatchObject({ added: SIZE });
      const [history] = await registry.history(nameAt(changed));
      expect(history?.spec.description).toBe(fullSpec(nameAt(changed), '1').description);
      expect(history?.fingerprint).toBe(fingerprintOfSpec(history?.spec as ToolSpecInput));
    });
  });

  // ---------------------------------------------------------------------------------
  describe('snapshots written by the Python seed (Pydantic field names)', () => {
    const pythonText = JSON.stringify(
      {
        tools: [
          {
            spec: {
              tool_name: 'get_weather',
              version: '1.2.0',
              description: null,
              input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
              output_schema: { type: 'object', properties: { temp_c: { type: 'number' } } },
              tags: [],
            },
            enabled: true,
            created_at: '2025-01-31T12:00:00.123456+00:00',
          },
          {
            spec: {
              tool_name: 'Search',
              version: null,
              description: 'Web search',
              input_schema: { type: 'object' },
              output_schema: { type: 'array' },
              tags: ['web', 'web'],
            },
            enabled: false,
            created_at: '2025-01-30T08:15:42.000001+00:00',
          },
        ],
      },
      null,
      2,
    );

    it('imports unchanged and exports identically', async () => {
      let registry = await open();
      const snapshot = JSON.parse(pythonText) as { tools: unknown[] };
      const report = await registry.importSnapshot(snapshot);
      expect(report).toEqual({ added: 2, updated: 0, unchanged: 0, removed: 0, conflicts: 0, dryRun: false, revision: expect.any(Number) });
      registry = await expectSurvivesRestart(registry);
      const exported = await registry.exportSnapshot();
      // Sorted by code point, 'Search' comes first; everything else byte-identical.
      expect(JSON.parse(JSON.stringify(exported))).toStrictEqual({ tools: [snapshot.tools[1], snapshot.tools[0]] });
      expect(exported.tools.map((r) => r.created_at)).toEqual([
        '2025-01-30T08:15:42.000001+00:00',
        '2025-01-31T12:00:00.123456+00:00',
      ]);
      expect((await registry.importSnapshot(JSON.parse(pythonText))).unchanged).toBe(2);
    });

    it('re-registering the same spec after the import is rule 2 (created_at kept verbatim)', async () => {
      const registry = await open();
      await registry.importSnapshot(JSON.parse(pythonText));
      clock.set(T2);
      const again = await registry.register({
        tool_name: 'get_weather',
        version: '1.2.0',
        input_schema: { required: ['city'], properties: { city: { type: 'string' } }, type: 'object' },
        output_schema: { properties: { temp_c: { type: 'number' } }, type: 'object' },
      });
      expect(again.created_at).toBe('2025-01-31T12:00:00.123456+00:00');
      const redeployed = await registry.register({ ...minimalSpec('Search'), version: '2' });
      expect(redeployed).toMatchObject({ enabled: false, created_at: T2 });
    });
  });
}
