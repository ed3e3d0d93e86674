// Conformance, issue 11 ("What changed and when"): key order kept through every path,
// revisions and the change feed (changes, watch), spec history, conditional writes. Every
// store runs these unchanged, like the main suite.
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintOf } from '../../src/index.js';
import type { ChangeEvent, JsonObject, ToolRegistry, ToolSpecInput } from '../../src/index.js';
import { collectEvents, expectCode, expectPlainTypeError, isDeepFrozen, minimalSpec } from '../support/registry-helpers.js';
import { until } from '../support/waiting.js';
import type { StoreHarness } from './stores.js';
import { T0, useSuiteRegistries } from './suite-registries.js';

const T1 = '2025-02-01T12:30:00.000Z';
const T2 = '2025-03-01T08:00:00.000Z';
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A spec whose keys are far from sorted, at every depth. */
function unsortedSpec(toolName: string, version: string | null = '1') {
  return {
    output_schema: { type: 'object', properties: { z: { type: 'string' }, a: { type: 'number' } } },
    tool_name: toolName,
    input_schema: {
      type: 'object',
      required: ['query'],
      properties: { query: { type: 'string', minLength: 1 }, limit: { maximum: 50, type: 'integer' } },
      additionalProperties: false,
    },
    version,
  };
}

/** The same spec with every object's keys reversed (identical by identity). */
function reversedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reversedKeys) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) out[key] = reversedKeys((value as Record<string, unknown>)[key]);
  return out as T;
}

/** The spec as it must come back: the given keys in order, then the defaults left out. */
function asRegistered(spec: Record<string, unknown>) {
  const out: Record<string, unknown> = { ...spec };
  for (const [key, fallback] of [['tool_name', undefined], ['version', null], ['description', null], ['input_schema', undefined], ['output_schema', undefined], ['tags', []]] as const) {
    if (!(key in out)) out[key] = fallback;
  }
  return out;
}

/** Key order at every depth, as one text: JSON.stringify keeps insertion order. */
function textOf(value: unknown): string {
  return JSON.stringify(value);
}

/** By hand, from the definition (canonical JSON with the defaults, hashed), not with the library's own spec path. */
function fingerprintOfSpec(spec: ToolSpecInput): string {
  return fingerprintOf(canonicalJson({ version: null, description: null, tags: [], ...spec } as Record<string, unknown>));
}

function actions(events: readonly ChangeEvent[]) {
  return events.map((event) => [event.tool_name, event.action, event.version]);
}

export function defineChangesSuite(harness: StoreHarness): void {
  const { clock, open, restart, track } = useSuiteRegistries(harness);

  async function revisionOf(registry: ToolRegistry): Promise<number> {
    return (await registry.changes({ limit: 0 })).revision;
  }

  // ---------------------------------------------------------------------------------
  describe('key order: specs come back as registered', () => {
    it('register, get, listAll, exportSnapshot and history keep the given order at every depth, defaults after', async () => {
      let registry = await open();
      const spec = unsortedSpec('ordered');
      const expected = textOf(asRegistered(spec));
      expect(textOf((await registry.register(spec)).spec)).toBe(expected);
      for (let round = 0; round < 2; round++) {
        expect(textOf((await registry.get('ordered'))?.spec)).toBe(expected);
        expect(textOf((await registry.listAll())[0]?.spec)).toBe(expected);
        expect(textOf((await registry.exportSnapshot()).tools[0]?.spec)).toBe(expected);
        expect(textOf((await registry.history('ordered'))[0]?.spec)).toBe(expected);
        registry = await restart(registry);
      }
    });

    it('keeps the order through setEnabled', async () => {
      const registry = await open();
      const spec = unsortedSpec('flag');
      await registry.register(spec);
      expect(textOf((await registry.setEnabled('flag', false)).spec)).toBe(textOf(asRegistered(spec)));
      expect(textOf((await registry.get('flag'))?.spec)).toBe(textOf(asRegistered(spec)));
    });

    it('identity is unaffected: the fingerprint is of the canonical JSON whatever the order', async () => {
      const registry = await open();
      const spec = unsortedSpec('same');
      await registry.register(spec);
      const [entry] = await registry.history('same');
      expect(entry?.fingerprint).toBe(fingerprintOfSpec(spec));
      expect(entry?.fingerprint).toBe(fingerprintOfSpec(reversedKeys(spec)));
    });

    it('an identical re-register in another key order writes nothing and keeps the stored text', async () => {
      let registry = await open();
      const spec = unsortedSpec('same');
      const first = await registry.register(spec);
      const revision = await revisionOf(registry);
      clock.set(T1);
      const again = await registry.register(reversedKeys(spec));
      expect(textOf(again)).toBe(textOf(first));
      expect(await revisionOf(registry)).toBe(revision);
      registry = await restart(registry);
      expect(textOf(await registry.get('same'))).toBe(textOf(first));
      expect(textOf((await registry.registerMany([reversedKeys(spec)]))[0])).toBe(textOf(first));
      expect(await revisionOf(registry)).toBe(revision);
    });

    it('a new version in another key order replaces the text too', async () => {
      const registry = await open();
      await registry.register(unsortedSpec('tool', '1'));
      const next = reversedKeys(unsortedSpec('tool', '2'));
      await registry.register(next);
      expect(textOf((await registry.get('tool'))?.spec)).toBe(textOf(asRegistered(next)));
    });

    it('registerMany keeps each spec’s order', async () => {
      const registry = await open();
      const specs = [unsortedSpec('a'), reversedKeys(unsortedSpec('b'))];
      const registered = await registry.registerMany(specs);
      expect(registered.map((one) => textOf(one.spec))).toEqual(specs.map((spec) => textOf(asRegistered(spec))));
      const listed = await registry.listAll();
      expect(listed.map((one) => textOf(one.spec))).toEqual(specs.map((spec) => textOf(asRegistered(spec))));
    });

    it('after remove, a re-register of the same spec in another order comes back in the new order', async () => {
      let registry = await open();
      const spec = unsortedSpec('again');
      await registry.register(spec);
      await registry.remove('again');
      const reordered = reversedKeys(spec);
      expect(textOf((await registry.register(reordered)).spec)).toBe(textOf(asRegistered(reordered)));
      registry = await restart(registry);
      expect(textOf((await registry.get('again'))?.spec)).toBe(textOf(asRegistered(reordered)));
      expect((await registry.history('again')).map((entry) => textOf(entry.spec))).toEqual([textOf(asRegistered(reordered))]);
    });

    it('snapshot import keeps each entry’s order (merge and replace), and the export gives it back', async () => {
      let registry = await open();
      const one = unsortedSpec('one');
      const two = reversedKeys(unsortedSpec('two'));
      const snapshot = {
        tools: [
          { created_at: T0, spec: one, enabled: false },
          { spec: two, enabled: true, created_at: null },
        ],
      };
      await registry.importSnapshot(snapshot);
      registry = await restart(registry);
      const exported = await registry.exportSnapshot();
      expect(exported.tools.map((tool) => textOf(tool.spec))).toEqual([textOf(asRegistered(one)), textOf(asRegistered(two))]);
      // The registration's own fields stay in contract order.
      expect(Object.keys(exported.tools[0] ?? {})).toEqual(['spec', 'enabled', 'created_at']);
      const three = reversedKeys(unsortedSpec('three'));
      await registry.importSnapshot({ tools: [{ spec: three }] }, { mode: 'replace' });
      expect(textOf((await registry.get('three'))?.spec)).toBe(textOf(asRegistered(three)));
    });

    it('an import entry identical to the stored tool in another key order keeps the stored text, whatever else it changes', async () => {
      // Before the read (no restart): PostgreSQL's cache took the entry's text as the stored one.
      const registry = await open();
      const spec = unsortedSpec('kept');
      const first = await registry.register(spec);
      expect(await registry.importSnapshot({ tools: [{ spec: reversedKeys(spec), enabled: false, created_at: T0 }] })).toMatchObject({ updated: 1 });
      expect(textOf((await registry.get('kept'))?.spec)).toBe(textOf(first.spec));
      expect(textOf((await registry.listAll({ includeDisabled: true }))[0]?.spec)).toBe(textOf(first.spec));
    });

    it('keeps __proto__ and constructor keys in place', async () => {
      const registry = await open();
      const schema = JSON.parse('{"type":"object","__proto__":{"x":1},"constructor":2,"a":3}') as JsonObject;
      await registry.register(minimalSpec('proto', { input_schema: schema }));
      expect(Object.keys((await registry.get('proto'))?.spec.input_schema ?? {})).toEqual(['type', '__proto__', 'constructor', 'a']);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('revisions and changes()', () => {
    it('an empty store is at revision 0 with no events', async () => {
      const registry = await open();
      expect(await registry.changes()).toEqual({ revision: 0, events: [] });
    });

    it('logs added, updated, disabled, enabled and removed with consecutive revisions, versions and commit times', async () => {
      let registry = await open();
      await registry.register(minimalSpec('t', { version: '1' }));
      await registry.register(minimalSpec('t', { version: '2' }));
      await registry.setEnabled('t', false);
      await registry.setEnabled('t', true);
      await registry.remove('t');
      registry = await restart(registry);
      const page = await registry.changes();
      expect(page.revision).toBe(5);
      expect(page.events.map((event) => event.revision)).toEqual([1, 2, 3, 4, 5]);
      expect(actions(page.events)).toEqual([
        ['t', 'added', '1'],
        ['t', 'updated', '2'],
        ['t', 'disabled', '2'],
        ['t', 'enabled', '2'],
        ['t', 'removed', '2'],
      ]);
      for (const event of page.events) {
        expect(Object.keys(event)).toEqual(['revision', 'tool_name', 'action', 'version', 'at']);
        expect(event.at).toMatch(ISO_UTC);
      }
      // The page is deeply frozen, its list of events too (an object handed out, as an import report).
      expect(Object.isFrozen(page)).toBe(true);
      expect(Object.isFrozen(page.events)).toBe(true);
      expect(page.events.every((event) => isDeepFrozen(event))).toBe(true);
    });

    it('status() shows the current revision and the counts, as changes() does (every store has it)', async () => {
      const registry = await open();
      const status = (registry as ToolRegistry & { status?: () => Promise<{ revision: number; tools: number; enabled: number; disabled: number; specHistory: number; readonly: boolean }> }).status;
      expect(typeof status).toBe('function');
      const read = () => (status as NonNullable<typeof status>).call(registry);
      expect(await read()).toMatchObject({ revision: 0, tools: 0, enabled: 0, disabled: 0, specHistory: 0, readonly: false });
      await registry.registerMany([minimalSpec('a', { version: '1' }), minimalSpec('b')]);
      await registry.register(minimalSpec('a', { version: '2' }));
      await registry.setEnabled('b', false);
      const after = await read();
      expect(after).toMatchObject({ revision: 4, tools: 2, enabled: 1, disabled: 1, specHistory: 3, readonly: false });
      expect(after.revision).toBe(await revisionOf(registry));
      // Deeply: PostgreSQL's list of applied migrations was handed out mutable.
      expect(isDeepFrozen(after)).toBe(true);
      await registry.close();
      await expectCode(read(), 'REGISTRY_CLOSED');
    });

    it('writes that change nothing get no revision', async () => {
      const registry = await open();
      await registry.register(minimalSpec('t', { version: '1' }));
      await registry.register(minimalSpec('t', { version: '1' }));
      await registry.setEnabled('t', true);
      await registry.remove('missing');
      await expectCode(registry.register(minimalSpec('t', { version: '1', description: 'other' })), 'VERSION_CONFLICT');
      await expectCode(registry.registerMany([minimalSpec('u'), minimalSpec('t', { version: '1', description: 'x' })]), 'VERSION_CONFLICT');
      await registry.importSnapshot({ tools: [{ spec: minimalSpec('t', { version: '1' }), enabled: true, created_at: T0 }] });
      await registry.importSnapshot({ tools: [] }, { dryRun: true, mode: 'replace' });
      expect(await registry.changes()).toMatchObject({ revision: 1, events: [{ revision: 1, action: 'added' }] });
    });

    it('the events of one commit are contiguous, in the order of the batch', async () => {
      const registry = await open();
      await registry.register(minimalSpec('first'));
      await registry.registerMany([minimalSpec('c'), minimalSpec('a'), minimalSpec('b')]);
      await registry.register(minimalSpec('last'));
      const { events } = await registry.changes();
      expect(events.map((event) => [event.revision, event.tool_name])).toEqual([
        [1, 'first'],
        [2, 'c'],
        [3, 'a'],
        [4, 'b'],
        [5, 'last'],
      ]);
      // Commit times: from the system clock, in order (SQLite stamps each statement, so the
      // events of one commit may be a few milliseconds apart).
      const times = events.map((event) => Date.parse(event.at));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(Math.abs((times.at(-1) as number) - Date.now())).toBeLessThan(60_000);
    });

    it('a batch mixing new and changed tools logs them in the order of the batch', async () => {
      const registry = await open();
      await registry.registerMany([minimalSpec('m', { version: '1' }), minimalSpec('z', { version: '1' })]);
      await registry.registerMany([minimalSpec('k'), minimalSpec('z', { version: '2' }), minimalSpec('b'), minimalSpec('m', { version: '2' })]);
      const { events } = await registry.changes({ since: 2 });
      expect(events.map((event) => [event.revision, event.tool_name, event.action])).toEqual([
        [3, 'k', 'added'],
        [4, 'z', 'updated'],
        [5, 'b', 'added'],
        [6, 'm', 'updated'],
      ]);
    });

    it('an import logs its entries in snapshot order, then what it removed in name order', async () => {
      const registry = await open();
      await registry.registerMany([minimalSpec('d'), minimalSpec('keep', { version: '1' }), minimalSpec('a'), minimalSpec('bump', { version: '1' })]);
      // Re-registered after a removal, so it is not where it first was in any table.
      await registry.remove('d');
      await registry.register(minimalSpec('d'));
      const since = (await registry.changes({ limit: 0 })).revision;
      await registry.importSnapshot(
        {
          tools: [
            { spec: minimalSpec('new', { version: '3' }) },
            { spec: minimalSpec('keep', { version: '1' }), enabled: false, created_at: T0 },
            { spec: minimalSpec('bump', { version: '2' }), created_at: T0 },
            { spec: minimalSpec('added_too') },
          ],
        },
        { mode: 'replace' },
      );
      const { events } = await registry.changes({ since });
      expect(events.map((event) => [event.revision - since, event.tool_name, event.action])).toEqual([
        [1, 'new', 'added'],
        [2, 'keep', 'disabled'],
        [3, 'bump', 'updated'],
        [4, 'added_too', 'added'],
        [5, 'a', 'removed'],
        [6, 'd', 'removed'],
      ]);
    });

    it('an import logs what it added, updated and removed, and its report says the revision', async () => {
      const registry = await open();
      await registry.registerMany([minimalSpec('keep', { version: '1' }), minimalSpec('bump', { version: '1' }), minimalSpec('gone')]);
      const report = await registry.importSnapshot(
        {
          tools: [
            { spec: minimalSpec('keep', { version: '1' }), enabled: false, created_at: T0 },
            { spec: minimalSpec('bump', { version: '2' }), created_at: T0 },
            { spec: minimalSpec('new', { version: '3' }) },
          ],
        },
        { mode: 'replace' },
      );
      const page = await registry.changes({ since: 3 });
      expect(report.revision).toBe(page.revision);
      expect(page.events.map((event) => event.revision)).toEqual([4, 5, 6, 7]);
      expect(actions(page.events).sort()).toEqual([
        ['bump', 'updated', '2'],
        ['gone', 'removed', null],
        ['keep', 'disabled', '1'],
        ['new', 'added', '3'],
      ]);
      const dry = await registry.importSnapshot({ tools: [] }, { dryRun: true });
      expect(dry.revision).toBe(page.revision);
    });

    it('pages with since and limit', async () => {
      const registry = await open();
      for (const name of ['a', 'b', 'c', 'd', 'e']) await registry.register(minimalSpec(name));
      const page = await registry.changes({ since: 1, limit: 2 });
      expect(page.revision).toBe(5);
      expect(page.events.map((event) => event.tool_name)).toEqual(['b', 'c']);
      expect((await registry.changes({ since: 3 })).events.map((event) => event.tool_name)).toEqual(['d', 'e']);
      expect((await registry.changes({ since: 5 })).events).toEqual([]);
      expect((await registry.changes({ since: 99 })).events).toEqual([]);
      expect((await registry.changes({ limit: 0 })).events).toEqual([]);
      const again = await registry.changes({ since: 1, limit: 2 });
      expect(again).toEqual(page);
      expect(again.events).not.toBe(page.events);
    });

    it('bad since or limit is a plain TypeError', async () => {
      const registry = await open();
      for (const options of [{ since: -1 }, { since: 1.5 }, { since: '1' }, { limit: -1 }, { limit: Number.NaN }]) {
        await expectPlainTypeError(registry.changes(options as never));
      }
      await expectPlainTypeError(registry.changes(null as never));
    });

    it('keeps as many changes as there are tools when that is more than 10,000', async () => {
      let registry = await open();
      await registry.registerMany(Array.from({ length: 11_000 }, (_, index) => minimalSpec(`t${index}`)));
      registry = await restart(registry);
      const page = await registry.changes({ since: 0, limit: 1 });
      expect(page.events[0]?.revision).toBe(1);
      expect(page.revision).toBe(11_000);
    });

    it('CHANGES_EXPIRED with context.oldest_revision once the bounded log was trimmed', async () => {
      let registry = await open();
      // 12,000 changes over 6,000 tools: the log keeps the last 10,000 (more tools would keep one per tool).
      const specs = Array.from({ length: 6000 }, (_, index) => minimalSpec(`t${index}`));
      await registry.registerMany(specs);
      await registry.importSnapshot({ tools: specs.map((spec) => ({ spec, enabled: false, created_at: T0 })) });
      registry = await restart(registry);
      const error = await expectCode(registry.changes({ since: 0 }), 'CHANGES_EXPIRED');
      const oldest = error.context.oldest_revision as number;
      expect(oldest).toBe(12_000 - 10_000 + 1);
      await expectCode(registry.changes({ since: oldest - 2 }), 'CHANGES_EXPIRED');
      const page = await registry.changes({ since: oldest - 1, limit: 1 });
      expect(page.events[0]?.revision).toBe(oldest);
      expect(page.revision).toBe(12_000);
      const watching = registry.watch({ since: 0 })[Symbol.asyncIterator]();
      await expectCode(watching.next(), 'CHANGES_EXPIRED');
      // limit 0 asks for no events, only the revision: how a consumer reads it before resyncing.
      expect(await registry.changes({ limit: 0 })).toEqual({ revision: 12_000, events: [] });
      expect(await registry.changes({ since: 0, limit: 0 })).toEqual({ revision: 12_000, events: [] });
    });
  });

  // ---------------------------------------------------------------------------------
  describe('watch()', () => {
    it('delivers the retained events after since, then new commits, each once and in order', async () => {
      const registry = await open();
      await registry.register(minimalSpec('a'));
      await registry.register(minimalSpec('b'));
      const collecting = collectEvents(registry, 4, { since: 1 });
      await registry.setEnabled('a', false);
      await registry.registerMany([minimalSpec('c'), minimalSpec('d')]);
      const events = await collecting;
      expect(events.map((event) => [event.revision, event.tool_name, event.action])).toEqual([
        [2, 'b', 'added'],
        [3, 'a', 'disabled'],
        [4, 'c', 'added'],
        [5, 'd', 'added'],
      ]);
    });

    it('resumes from a revision and never repeats', async () => {
      const registry = await open();
      for (const name of ['a', 'b', 'c']) await registry.register(minimalSpec(name));
      const first = await collectEvents(registry, 2, { since: 0 });
      const rest = await collectEvents(registry, 1, { since: first.at(-1)?.revision ?? 0 });
      expect([...first, ...rest].map((event) => event.tool_name)).toEqual(['a', 'b', 'c']);
      expect([...first, ...rest]).toEqual((await registry.changes()).events);
    });

    it('without since, starts at the revision of the call', async () => {
      const registry = await open();
      await registry.register(minimalSpec('before'));
      const iterator = registry.watch()[Symbol.asyncIterator]();
      await registry.register(minimalSpec('after'));
      const next = await iterator.next();
      expect(next.value).toMatchObject({ tool_name: 'after', action: 'added', revision: 2 });
      await iterator.return?.();
    });

    it('ends when the signal aborts, also while waiting', async () => {
      const registry = await open();
      const controller = new AbortController();
      const seen: ChangeEvent[] = [];
      const done = (async () => {
        for await (const event of registry.watch({ signal: controller.signal })) seen.push(event);
      })();
      await registry.register(minimalSpec('one'));
      // The event delivered, then the watch waiting for the next one when the signal aborts (a fixed
      // 120 ms here lost the event on a loaded machine: PostgreSQL's notification came later).
      await until(() => seen.length === 1, 'the event delivered', { timeoutMs: 60_000 });
      controller.abort();
      await done;
      expect(seen.map((event) => event.tool_name)).toEqual(['one']);
      for await (const event of registry.watch({ since: 0, signal: AbortSignal.abort() })) seen.push(event);
      expect(seen).toHaveLength(1);
    });

    it('ends when the registry is closed', async () => {
      const registry = await open();
      const done = (async () => {
        const seen: ChangeEvent[] = [];
        for await (const event of registry.watch()) seen.push(event);
        return seen;
      })();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await registry.close();
      expect(await done).toEqual([]);
    });

    it('a cursor beyond the log (the log it came from was replaced, as by a restore) ends with CHANGES_EXPIRED, never a silent gap', async () => {
      const registry = await open();
      await registry.register(minimalSpec('a'));
      // Revision 3 was never reached here: following it by number would wait for revision 4 and deliver nothing before it.
      const error = await expectCode(registry.watch({ since: 3 })[Symbol.asyncIterator]().next(), 'CHANGES_EXPIRED');
      expect(error.context).toMatchObject({ since: 3, revision: 1, replaced: true });
      // changes() answers the same cursor with the revision, which tells the same.
      expect(await registry.changes({ since: 3 })).toEqual({ revision: 1, events: [] });
    });

    it('a write that fails and is undone is never delivered; the next commit is, once, with the next revision', async () => {
      const registry = await open();
      await registry.register(minimalSpec('kept', { version: '1' }));
      const iterator = registry.watch()[Symbol.asyncIterator]();
      const first = iterator.next();
      // One batch: a new tool, then a conflict that undoes it.
      const conflicting = { ...minimalSpec('kept', { version: '1' }), description: 'another spec, same version' };
      await expectCode(registry.registerMany([minimalSpec('ghost'), conflicting]), 'VERSION_CONFLICT');
      await registry.register(minimalSpec('real'));
      await registry.register(minimalSpec('after'));
      const second = await iterator.next();
      expect([(await first).value, second.value].map((event: ChangeEvent) => [event.revision, event.tool_name])).toEqual([
        [2, 'real'],
        [3, 'after'],
      ]);
      await iterator.return?.();
    });

    it('bad options are a plain TypeError at the call', async () => {
      const registry = await open();
      expect(() => registry.watch({ since: -1 })).toThrow(TypeError);
      expect(() => registry.watch({ signal: 'stop' as never })).toThrow(TypeError);
      expect(() => registry.watch(42 as never)).toThrow(TypeError);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('history()', () => {
    it('lists every distinct spec ever stored under the name, oldest first, across remove and re-register', async () => {
      let registry = await open();
      const v1 = minimalSpec('tool', { version: '1' });
      const v2 = minimalSpec('tool', { version: '2', description: 'two' });
      const v3 = minimalSpec('tool', { version: '3' });
      await registry.register(v1);
      clock.set(T1);
      await registry.register(v2);
      await registry.remove('tool');
      registry = await restart(registry);
      expect((await registry.history('tool')).map((entry) => entry.spec.version)).toEqual(['1', '2']);
      clock.set(T2);
      await registry.register(v1);
      await registry.register(v3);
      await registry.register(v2);
      registry = await restart(registry);
      const history = await registry.history('tool');
      expect(history.map((entry) => [entry.spec.version, entry.first_registered_at, entry.fingerprint])).toEqual([
        ['1', T0, fingerprintOfSpec(v1)],
        ['2', T1, fingerprintOfSpec(v2)],
        ['3', T2, fingerprintOfSpec(v3)],
      ]);
      expect(history[1]?.spec).toEqual({ ...v2, tags: [] });
      expect(Object.keys(history[0] ?? {})).toEqual(['spec', 'fingerprint', 'first_registered_at']);
      expect(isDeepFrozen(history)).toBe(false); // a fresh array...
      expect(history.every((entry) => isDeepFrozen(entry))).toBe(true); // ...of frozen entries
    });

    it('orders by first_registered_at, not by when a write landed, when instances have skewed clocks', async () => {
      const ahead = await open();
      const behind = await harness.peer(ahead);
      if (behind !== ahead) track(behind);
      // One clock read by both instances, set before each write: the one ahead (T2) writes
      // first, the one behind (T1) later; a third spec gets T0 from the first instance again.
      clock.set(T2);
      await ahead.register(minimalSpec('skewed', { version: '1' }));
      clock.set(T1);
      await behind.register(minimalSpec('skewed', { version: '2' }));
      clock.set(T0);
      await ahead.register(minimalSpec('skewed', { version: '3' }));
      for (const registry of [ahead, behind]) {
        expect((await registry.history('skewed')).map((entry) => [entry.spec.version, entry.first_registered_at])).toEqual([
          ['3', T0],
          ['2', T1],
          ['1', T2],
        ]);
      }
    });

    it('is [] for a name never registered, and exact (case-sensitive)', async () => {
      const registry = await open();
      await registry.register(minimalSpec('Tool'));
      expect(await registry.history('tool')).toEqual([]);
      expect(await registry.history('nothing')).toEqual([]);
      await expectPlainTypeError(registry.history(42 as never));
    });

    it('records imported specs too', async () => {
      const registry = await open();
      await registry.register(minimalSpec('imp', { version: '1' }));
      clock.set(T1);
      await registry.importSnapshot({ tools: [{ spec: minimalSpec('imp', { version: '2' }), created_at: T0 }] });
      expect((await registry.history('imp')).map((entry) => [entry.spec.version, entry.first_registered_at])).toEqual([
        ['1', T0],
        ['2', T1],
      ]);
    });
  });

  // ---------------------------------------------------------------------------------
  describe('conditional writes (expectedVersion)', () => {
    it('register with expectedVersion null creates only when the name is free', async () => {
      const registry = await open();
      await registry.register(minimalSpec('t', { version: '1' }), { expectedVersion: null });
      const revision = await revisionOf(registry);
      const error = await expectCode(registry.register(minimalSpec('t', { version: '2' }), { expectedVersion: null }), 'PRECONDITION_FAILED');
      expect(error.context).toMatchObject({ tool_name: 't', expected: null, actual: '1', exists: true });
      expect((await registry.get('t'))?.spec.version).toBe('1');
      expect(await revisionOf(registry)).toBe(revision);
    });

    it('register switches versions only if the expected one is live', async () => {
      let registry = await open();
      await registry.register(minimalSpec('t', { version: '1.4.0' }));
      await registry.register(minimalSpec('t', { version: '2.0.0' }), { expectedVersion: '1.4.0' });
      registry = await restart(registry);
      const error = await expectCode(
        registry.register(minimalSpec('t', { version: '3.0.0' }), { expectedVersion: '1.4.0' }),
        'PRECONDITION_FAILED',
      );
      expect(error.context).toMatchObject({ tool_name: 't', expected: '1.4.0', actual: '2.0.0', exists: true });
      expect((await registry.get('t'))?.spec.version).toBe('2.0.0');
      const absent = await expectCode(registry.register(minimalSpec('u'), { expectedVersion: '1' }), 'PRECONDITION_FAILED');
      expect(absent.context).toMatchObject({ tool_name: 'u', expected: '1', actual: null, exists: false });
      expect(await registry.has('u')).toBe(false);
    });

    it('an identical re-register is checked too', async () => {
      const registry = await open();
      const first = await registry.register(minimalSpec('t', { version: '1' }));
      expect(await registry.register(minimalSpec('t', { version: '1' }), { expectedVersion: '1' })).toEqual(first);
      await expectCode(registry.register(minimalSpec('t', { version: '1' }), { expectedVersion: '0' }), 'PRECONDITION_FAILED');
      await expectCode(registry.register(minimalSpec('t', { version: '1' }), { expectedVersion: null }), 'PRECONDITION_FAILED');
    });

    it('setEnabled only if the expected version is live', async () => {
      const registry = await open();
      await registry.register(minimalSpec('t', { version: '1' }));
      await expectCode(registry.setEnabled('t', false, { expectedVersion: '2' }), 'PRECONDITION_FAILED');
      expect((await registry.get('t'))?.enabled).toBe(true);
      expect((await registry.setEnabled('t', false, { expectedVersion: '1' })).enabled).toBe(false);
      await expectCode(registry.setEnabled('t', true, { expectedVersion: null }), 'PRECONDITION_FAILED');
      await expectCode(registry.setEnabled('missing', true, { expectedVersion: '1' }), 'PRECONDITION_FAILED');
      await expectCode(registry.setEnabled('missing', true, { expectedVersion: null }), 'TOOL_NOT_FOUND');
    });

    it('remove only if the expected version is live', async () => {
      const registry = await open();
      await registry.register(minimalSpec('t', { version: '1' }));
      await expectCode(registry.remove('t', { expectedVersion: '2' }), 'PRECONDITION_FAILED');
      await expectCode(registry.remove('t', { expectedVersion: null }), 'PRECONDITION_FAILED');
      expect(await registry.has('t')).toBe(true);
      expect(await registry.remove('t', { expectedVersion: '1' })).toBe(true);
      expect(await registry.remove('t', { expectedVersion: null })).toBe(false);
      await expectCode(registry.remove('t', { expectedVersion: '1' }), 'PRECONDITION_FAILED');
    });

    it('bad options are a plain TypeError and change nothing', async () => {
      const registry = await open();
      await expectPlainTypeError(registry.register(minimalSpec('t'), { expectedVersion: 1 } as never));
      await expectPlainTypeError(registry.register(minimalSpec('t'), 'x' as never));
      await expectPlainTypeError(registry.setEnabled('t', true, { expectedVersion: false } as never));
      await expectPlainTypeError(registry.remove('t', null as never));
      // registerMany and importSnapshot take no condition: one given is refused, never ignored.
      await expectPlainTypeError(registry.registerMany([minimalSpec('t')], { expectedVersion: null } as never));
      await expectPlainTypeError(registry.importSnapshot({ tools: [{ spec: minimalSpec('t') }] }, { expectedVersion: '1' } as never));
      expect(await registry.has('t')).toBe(false);
    });

    it('a misspelt option is a plain TypeError naming it, never ignored, and changes nothing', async () => {
      // Ignored, `expectedversion` made the write unconditional and `dry` made the import real.
      const registry = await open();
      await registry.register(minimalSpec('t', { version: '1' }));
      const typos: [string, () => Promise<unknown>][] = [
        ['expectedversion', () => registry.register(minimalSpec('t', { version: '2' }), { expectedversion: '9' } as never)],
        ['expected', () => registry.setEnabled('t', false, { expected: '9' } as never)],
        ['expectVersion', () => registry.remove('t', { expectVersion: '9' } as never)],
        ['expected_version', () => registry.deprecate('t', { message: 'old' }, { expected_version: '9' } as never)],
        ['allowDowngrades', () => registry.registerMany([minimalSpec('u')], { allowDowngrades: true } as never)],
        ['dry', () => registry.importSnapshot({ tools: [] }, { mode: 'replace', dry: true } as never)],
      ];
      for (const [option, write] of typos) expect((await expectPlainTypeError(write())).message).toContain(`"${option}"`);
      expect(await registry.exportSnapshot()).toEqual({ tools: [{ spec: minimalSpec('t', { version: '1', description: null, tags: [] }), enabled: true, created_at: T0 }] });
      // An option given as undefined is as good as left out.
      expect(await registry.remove('t', { expectedVersion: '1', other: undefined } as never)).toBe(true);
    });

    it('concurrent conditional registers from one expected version: exactly one wins', async () => {
      const registry = await open();
      await registry.register(minimalSpec('t', { version: '1' }));
      const results = await Promise.allSettled(
        ['2', '3', '4', '5'].map((version) => registry.register(minimalSpec('t', { version }), { expectedVersion: '1' })),
      );
      const won = results.filter((result) => result.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expect((result.reason as { code?: string }).code).toBe('PRECONDITION_FAILED');
      }
      const winner = (won[0] as PromiseFulfilledResult<{ spec: { version: string | null } }>).value.spec.version;
      expect((await registry.get('t'))?.spec.version).toBe(winner);
    });
  });
}
