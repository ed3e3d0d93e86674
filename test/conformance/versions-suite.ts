// Conformance, issue 27 ("Versions with meaning"): deprecation, the version policies and their
// codes, identical in every store: through restarts, another instance over the same storage,
// export and import, the change feed and history.
import { describe, expect, it } from 'vitest';
import type { ChangeEvent, JsonObject, ToolRegistry } from '../../src/index.js';
import { expectCode, isDeepFrozen, minimalSpec } from '../support/registry-helpers.js';
import type { StoreHarness } from './stores.js';
import { useSuiteRegistries } from './suite-registries.js';

const T1 = '2025-02-01T12:30:00.000Z';

/** A tool whose input takes `properties` (closed) and whose output is a string. */
function tool(name: string, version: string | null, properties: JsonObject = { q: { type: 'string' } }, required: string[] = []) {
  return {
    tool_name: name,
    version,
    input_schema: { type: 'object', properties, required, additionalProperties: false },
    output_schema: { type: 'string' },
  };
}

function actions(events: readonly ChangeEvent[]) {
  return events.map((event) => [event.tool_name, event.action, event.version, event.rollback === true]);
}

async function eventsAfter(registry: ToolRegistry, since: number) {
  return (await registry.changes({ since })).events;
}

async function revisionOf(registry: ToolRegistry): Promise<number> {
  return (await registry.changes({ limit: 0 })).revision;
}

export function defineVersionsSuite(harness: StoreHarness): void {
  const { clock, open, restart, track } = useSuiteRegistries(harness);

  describe('deprecation', () => {
    it('deprecate sets it (defaults applied), every read shows it, it survives a restart, and the feed says deprecated/undeprecated', async () => {
      let registry = await open();
      await registry.register(tool('search', '1.0.0'));
      const start = await revisionOf(registry);
      const deprecated = await registry.deprecate('search', { message: 'use find', replacement: 'find', sunset: '2026-12-31' });
      expect(deprecated.deprecation).toEqual({ message: 'use find', replacement: 'find', sunset: '2026-12-31' });
      expect(isDeepFrozen(deprecated)).toBe(true);
      const minimal = await registry.deprecate('search', { message: 'going away' });
      expect(minimal.deprecation).toEqual({ message: 'going away', replacement: null, sunset: null });
      registry = await restart(registry);
      expect((await registry.get('search'))?.deprecation).toEqual({ message: 'going away', replacement: null, sunset: null });
      expect((await registry.listAll())[0]?.deprecation?.message).toBe('going away');
      const lifted = await registry.undeprecate('search');
      expect(lifted.deprecation).toBeNull();
      expect((await registry.get('search'))?.deprecation).toBeNull();
      expect(actions(await eventsAfter(registry, start))).toEqual([
        ['search', 'deprecated', '1.0.0', false],
        ['search', 'deprecated', '1.0.0', false],
        ['search', 'undeprecated', '1.0.0', false],
      ]);
    });

    it('the same deprecation again, and undeprecate of a tool not deprecated, write nothing', async () => {
      const registry = await open();
      await registry.register(tool('t', '1'));
      await registry.undeprecate('t');
      await registry.deprecate('t', { message: 'm', sunset: '2030-01-01T00:00:00Z' });
      const revision = await revisionOf(registry);
      const again = await registry.deprecate('t', { message: 'm', replacement: null, sunset: '2030-01-01T00:00:00Z' });
      expect(again.deprecation).toEqual({ message: 'm', replacement: null, sunset: '2030-01-01T00:00:00Z' });
      expect(await revisionOf(registry)).toBe(revision);
    });

    it('a new version keeps the deprecation (as it keeps enabled); remove takes it away, with no undeprecated event', async () => {
      const registry = await open();
      await registry.register(tool('t', '1'));
      await registry.deprecate('t', { message: 'old' });
      clock.set(T1);
      const replaced = await registry.register(tool('t', '2'));
      expect(replaced.deprecation).toEqual({ message: 'old', replacement: null, sunset: null });
      expect((await registry.get('t'))?.deprecation?.message).toBe('old');
      const before = await revisionOf(registry);
      await registry.remove('t');
      expect(actions(await eventsAfter(registry, before))).toEqual([['t', 'removed', '2', false]]);
      expect((await registry.register(tool('t', '3'))).deprecation).toBeNull();
    });

    it('refuses what is not a deprecation, naming the field, and changes nothing', async () => {
      const registry = await open();
      await registry.register(tool('t', '1'));
      for (const [bad, path] of [
        [{ message: '' }, 'message'],
        [{ message: 'm', replacement: 'not a name!' }, 'replacement'],
        [{ message: 'm', sunset: 'next week' }, 'sunset'],
        [{ message: 'm', sunset: '2025-02-30' }, 'sunset'],
        [{ message: 'm', extra: 1 }, ''],
      ] as const) {
        const error = await expectCode(registry.deprecate('t', bad as never), 'VALIDATION_FAILED');
        expect(error.context.tool_name).toBe('t');
        expect(String(error.context.path)).toBe(path);
      }
      expect((await registry.get('t'))?.deprecation).toBeNull();
      await expectCode(registry.deprecate('nope', { message: 'm' }), 'TOOL_NOT_FOUND');
      await expectCode(registry.undeprecate('nope'), 'TOOL_NOT_FOUND');
      await expectCode(registry.deprecate('t', { message: 'm' }, { expectedVersion: '2' }), 'PRECONDITION_FAILED');
      expect((await registry.deprecate('t', { message: 'm' }, { expectedVersion: '1' })).deprecation?.message).toBe('m');
    });

    it('a snapshot writes a deprecation only when set; export and import keep it, and an import can lift it', async () => {
      const registry = await open();
      await registry.register(tool('plain', '1'));
      await registry.register(tool('old', '1'));
      await registry.deprecate('old', { message: 'use plain', replacement: 'plain', sunset: '2026-01-01' });
      const snapshot = await registry.exportSnapshot();
      expect(Object.keys(snapshot.tools[0] ?? {})).toEqual(['spec', 'enabled', 'created_at', 'deprecation']);
      expect(Object.keys(snapshot.tools[1] ?? {})).toEqual(['spec', 'enabled', 'created_at']);
      const copy = await open();
      const start = await revisionOf(copy);
      await copy.importSnapshot(JSON.parse(JSON.stringify(snapshot)));
      expect((await copy.get('old'))?.deprecation).toEqual({ message: 'use plain', replacement: 'plain', sunset: '2026-01-01' });
      expect((await copy.get('plain'))?.deprecation).toBeNull();
      expect(actions(await eventsAfter(copy, start))).toEqual([
        ['old', 'added', '1', false],
        ['old', 'deprecated', '1', false],
        ['plain', 'added', '1', false],
      ]);
      // The same snapshot again: unchanged. Without the deprecation: it is lifted (an update).
      expect((await copy.importSnapshot(snapshot)).unchanged).toBe(2);
      const lifted = { tools: snapshot.tools.map(({ spec, enabled, created_at }) => ({ spec, enabled, created_at })) };
      const report = await copy.importSnapshot(lifted);
      expect([report.updated, report.unchanged]).toEqual([1, 1]);
      expect((await copy.get('old'))?.deprecation).toBeNull();
      await expectCode(copy.importSnapshot({ tools: [{ spec: minimalSpec('x'), deprecation: { message: '' } }] }), 'SNAPSHOT_INVALID');
    });
  });

  describe('policies', () => {
    it('default any/none; setPolicy changes the ones given, persists, and binds another instance over the same storage', async () => {
      let registry = await open();
      expect(await registry.getPolicy()).toEqual({ versionOrder: 'any', compatibility: 'none' });
      expect(await registry.setPolicy({ versionOrder: 'semver' })).toEqual({ versionOrder: 'semver', compatibility: 'none' });
      expect(await registry.setPolicy({ compatibility: 'backward' })).toEqual({ versionOrder: 'semver', compatibility: 'backward' });
      registry = await restart(registry);
      expect(await registry.getPolicy()).toEqual({ versionOrder: 'semver', compatibility: 'backward' });
      await registry.register(tool('t', '1.0.0'));
      const peer = await harness.peer(registry);
      if (peer !== registry) track(peer);
      // The peer registers first (its cache, if any, is current), then the policy changes here.
      await peer.register(tool('u', '1.0.0'));
      await registry.setPolicy({ versionOrder: 'any', compatibility: 'none' });
      await registry.setPolicy({ versionOrder: 'semver' });
      await expectCode(peer.register(tool('u', '0.9.0')), 'VERSION_DOWNGRADE');
      expect(await peer.getPolicy()).toEqual({ versionOrder: 'semver', compatibility: 'none' });
    });

    it('refuses an unknown policy or value (VALIDATION_FAILED) and changes nothing; a non-object is a TypeError', async () => {
      const registry = await open();
      await registry.setPolicy({ compatibility: 'backward' });
      for (const bad of [{ versionOrder: 'calver' }, { compatibility: 'forward' }, { versionOrder: 'semver', compatibility: 'x' }, { strict: true }]) {
        await expectCode(registry.setPolicy(bad as never), 'VALIDATION_FAILED');
      }
      expect(await registry.getPolicy()).toEqual({ versionOrder: 'any', compatibility: 'backward' });
      await expect(registry.setPolicy('semver' as never)).rejects.toThrow(TypeError);
    });

    it("versionOrder 'semver': versions must be SemVer; a lower one is VERSION_DOWNGRADE unless allowDowngrade (a rollback event)", async () => {
      const registry = await open();
      await registry.register(tool('t', '1.2.0'));
      await registry.setPolicy({ versionOrder: 'semver' });
      for (const version of ['v1.3.0', '1.3', null, ' 1.3.0']) {
        const error = await expectCode(registry.register(tool('t', version)), 'VALIDATION_FAILED');
        expect(error.context.path).toBe('version');
      }
      const down = await expectCode(registry.register(tool('t', '1.1.9')), 'VERSION_DOWNGRADE');
      expect(down.context).toMatchObject({ tool_name: 't', version: '1.1.9', current_version: '1.2.0' });
      // Pre-releases sort below their release.
      await expectCode(registry.register(tool('t', '1.2.0-rc.1')), 'VERSION_DOWNGRADE');
      expect((await registry.get('t'))?.spec.version).toBe('1.2.0');
      const start = await revisionOf(registry);
      await registry.register(tool('t', '1.3.0+build.5'));
      await registry.register(tool('t', '1.1.0'), { allowDowngrade: true });
      expect(actions(await eventsAfter(registry, start))).toEqual([
        ['t', 'updated', '1.3.0+build.5', false],
        ['t', 'updated', '1.1.0', true],
      ]);
      const batch = await expectCode(registry.registerMany([tool('a', '1.0.0'), tool('t', '1.0.0')]), 'VERSION_DOWNGRADE');
      expect(batch.context.path).toBe('[1]');
      expect(await registry.has('a')).toBe(false);
      await registry.registerMany([tool('a', '1.0.0'), tool('t', '1.0.0')], { allowDowngrade: true });
      expect((await registry.get('t'))?.spec.version).toBe('1.0.0');
    });

    it("compatibility 'backward': an incompatible new version is COMPATIBILITY_FAILED with the differences; a compatible one passes", async () => {
      const registry = await open();
      await registry.register(tool('t', '1'));
      await registry.setPolicy({ compatibility: 'backward' });
      const error = await expectCode(registry.register(tool('t', '2', { q: { type: 'string' } }, ['q'])), 'COMPATIBILITY_FAILED');
      expect(error.context).toMatchObject({ tool_name: 't', version: '2', current_version: '1', policy: 'backward' });
      expect(error.context.differences).toEqual([{ type: 'required-added', path: '/input_schema/required', before: null, after: 'q', breaking: true }]);
      expect((await registry.get('t'))?.spec.version).toBe('1');
      // A new optional property of a closed object: every old input is still accepted.
      expect((await registry.register(tool('t', '2', { q: { type: 'string' }, n: { type: 'integer' } }))).spec.version).toBe('2');
      // A wider output breaks consumers.
      await expectCode(registry.register({ ...tool('t', '3', { q: { type: 'string' }, n: { type: 'integer' } }), output_schema: { type: ['string', 'null'] } }), 'COMPATIBILITY_FAILED');
      const batch = await expectCode(registry.registerMany([tool('new', '1'), tool('t', '4', {})]), 'COMPATIBILITY_FAILED');
      expect(batch.context.path).toBe('[1]');
      expect(await registry.has('new')).toBe(false);
    });

    it('allowIncompatible stores a version the compatibility policy refuses (an explicit override); versionOrder still applies', async () => {
      const registry = await open();
      await registry.register(tool('t', '1.0.0'));
      await registry.setPolicy({ compatibility: 'backward', versionOrder: 'semver' });
      const breaking = (version: string) => tool('t', version, { q: { type: 'string' } }, ['q']);
      await expectCode(registry.register(breaking('2.0.0')), 'COMPATIBILITY_FAILED');
      await expectCode(registry.register(breaking('0.9.0'), { allowIncompatible: true }), 'VERSION_DOWNGRADE');
      expect((await registry.register(breaking('2.0.0'), { allowIncompatible: true })).spec.version).toBe('2.0.0');
      await expectCode(registry.registerMany([tool('new', '1.0.0'), tool('t', '3.0.0', {})]), 'COMPATIBILITY_FAILED');
      expect((await registry.registerMany([tool('new', '1.0.0'), tool('t', '3.0.0', {})], { allowIncompatible: true })).map((r) => r.spec.version)).toEqual(['1.0.0', '3.0.0']);
      await expect(registry.register(breaking('4.0.0'), { allowIncompatible: 'yes' as never })).rejects.toThrow(TypeError);
    });

    it("compatibility 'semver-major': a breaking change passes only with a major bump", async () => {
      const registry = await open();
      await registry.register(tool('t', '1.4.0'));
      await registry.setPolicy({ compatibility: 'semver-major' });
      const breaking = (version: string) => tool('t', version, { q: { type: 'string' } }, ['q']);
      await expectCode(registry.register(breaking('1.5.0')), 'COMPATIBILITY_FAILED');
      await expectCode(registry.register(breaking('one')), 'VALIDATION_FAILED');
      expect((await registry.register(breaking('2.0.0'))).spec.version).toBe('2.0.0');
      // Compatible: any SemVer will do.
      expect((await registry.register({ ...breaking('2.0.1'), description: 'same schemas' })).spec.version).toBe('2.0.1');
    });

    it('a merge import obeys the compatibility policy (path tools[i]); a replace import (a restore) does not', async () => {
      const registry = await open();
      await registry.register(tool('t', '1'));
      const breaking = { tools: [{ spec: tool('t', '2', {}, []) }, { spec: tool('u', '1') }] };
      await registry.setPolicy({ compatibility: 'backward' });
      const incompatible = { tools: [{ spec: tool('x', '1') }, { spec: tool('t', '2', { q: { type: 'integer' } }) }] };
      const error = await expectCode(registry.importSnapshot(incompatible), 'COMPATIBILITY_FAILED');
      expect(error.context.path).toBe('tools[1]');
      expect(await registry.has('x')).toBe(false);
      // A dry run answers as the import would (it planned an update, and the import then failed).
      const dry = await expectCode(registry.importSnapshot(incompatible, { dryRun: true }), 'COMPATIBILITY_FAILED');
      expect(dry.context.path).toBe('tools[1]');
      expect((await registry.importSnapshot(incompatible, { mode: 'replace', dryRun: true })).updated).toBe(1);
      // Removing the only property of a closed object narrows ({q: 'a'} is refused): still refused.
      await expectCode(registry.importSnapshot(breaking), 'COMPATIBILITY_FAILED');
      const report = await registry.importSnapshot(breaking, { mode: 'replace' });
      expect(report.updated + report.added).toBe(2);
      expect((await registry.get('t'))?.spec.version).toBe('2');
    });
  });
}
