// liveToolSet: loadToolSet kept current from the change feed, in this process (memory) and
// across processes (SQLite: the command and the sqlite3 shell write the same file).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, NET_HTTP, defineTool, liveToolSet, loadToolSet, openSqliteToolRegistry, publishTools } from '../../src/index.js';
import type { LiveToolSetChange, ToolSet } from '../../src/index.js';
import { runCliAsync, useChildProcessTimeout } from '../cli/helpers.js';
import { SQLITE3, NEEDS_SQLITE3, HAS_SQLITE3 } from '../support/sqlite3-shell.js';
import { until } from '../support/waiting.js';

useChildProcessTimeout();

const object = { type: 'object', properties: { q: { type: 'string' } } };
const search = defineTool({ name: 'search', version: '1', input_schema: object, permissions: { required: [NET_HTTP] }, handler: () => 'hits' });
const calc = defineTool({ name: 'calc', version: '1', input_schema: object, handler: () => 1 });
const notes = defineTool({ name: 'notes', version: '1', input_schema: object, handler: () => 'n' });
const tools = [search, calc, notes];

const view = (set: ToolSet) => ({ tools: set.list(), excluded: set.excluded.map((entry) => `${entry.tool_name}:${entry.reason}`) });

describe('liveToolSet (memory store)', () => {
  it('starts as loadToolSet would, then follows disable, enable, remove, re-publish and a foreign version', async () => {
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [search, calc]);
    const live = await liveToolSet(registry, tools);
    expect(view(live.current())).toEqual(view(await loadToolSet(registry, tools)));
    expect(Object.isFrozen(live.current())).toBe(true);
    const heard: LiveToolSetChange[] = [];
    live.subscribe((change) => heard.push(change));
    const next = async (count: number) => until(() => heard.length >= count, `change ${count}`);

    await registry.setEnabled('calc', false);
    await next(1);
    expect(view(live.current())).toEqual({ tools: ['search'], excluded: ['calc:disabled', 'notes:not_registered'] });
    expect(heard[0]?.previous.list()).toEqual(['calc', 'search']);
    expect(heard[0]?.current).toBe(live.current());
    expect(live.revision).toBeGreaterThanOrEqual(3);

    await registry.setEnabled('calc', true);
    await next(2);
    expect(live.current().list()).toEqual(['calc', 'search']);

    await publishTools(registry, [notes]);
    await next(3);
    expect(live.current().list()).toEqual(['calc', 'notes', 'search']);

    // Another deployment's spec under the same name: left out, the rest of the set stands.
    await registry.register({ ...calc.spec, version: '2', description: 'changed elsewhere' });
    await next(4);
    expect(view(live.current())).toEqual({ tools: ['notes', 'search'], excluded: ['calc:spec_mismatch'] });
    await expect(loadToolSet(registry, tools)).rejects.toMatchObject({ code: 'SPEC_MISMATCH' });
    expect(await live.current().invoke('calc', {})).toMatchObject({ success: false, code: 'TOOL_NOT_FOUND' });

    await registry.remove('notes');
    await next(5);
    expect(view(live.current())).toEqual({ tools: ['search'], excluded: ['calc:spec_mismatch', 'notes:not_registered'] });

    // A change to a tool it does not hold is not a change of the set.
    await registry.register({ tool_name: 'other', input_schema: { type: 'object' }, output_schema: {} });
    await registry.setEnabled('search', false);
    await next(6);
    expect(heard.length).toBe(6);
    expect(heard.map((change) => change.revision)).toEqual([...heard.map((change) => change.revision)].sort((a, b) => a - b));

    await live.close();
    await live.close();
    expect(live.closed).toBe(true);
    await registry.setEnabled('search', true);
    await registry.changes({ limit: 0 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard.length).toBe(6);
    expect(live.current().list()).toEqual([]);
    await registry.close();
  });

  it('a policy filters every derived set; an invalid one is refused at the call', async () => {
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    await expect(liveToolSet(registry, tools, { policy: { persona: '' } })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(liveToolSet(registry, tools, { onError: 'no' as never })).rejects.toThrow(TypeError);
    const live = await liveToolSet(registry, tools, { policy: { persona: 'reader', allowed_tools: ['calc', 'search'] } });
    expect(live.current().list()).toEqual(['calc']); // search needs NET_HTTP
    const changed = new Promise<LiveToolSetChange>((resolve) => live.subscribe(resolve));
    await registry.setEnabled('calc', false);
    expect((await changed).current.list()).toEqual([]);
    await live.close();
    await registry.close();
  });

  it('closing the registry ends it quietly, even with a derivation in flight', async () => {
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const errors: unknown[] = [];
    const live = await liveToolSet(registry, tools, { onError: (error) => errors.push(error) });
    await registry.setEnabled('calc', false);
    await registry.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errors).toEqual([]);
    await live.close();
  });

  it('a deprecated tool leaves the set at its sunset, with no commit to wake it, and comes back when undeprecated', async () => {
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [search, calc]);
    const sunset = new Date(Date.now() + 400).toISOString();
    await registry.deprecate('calc', { message: 'use search', replacement: 'search', sunset });
    const live = await liveToolSet(registry, tools);
    expect(live.current().list()).toEqual(['calc', 'search']);
    const heard: LiveToolSetChange[] = [];
    live.subscribe((change) => heard.push(change));
    // Nothing is committed after this point until the sunset has passed: only the timer can derive again.
    await until(() => heard.length >= 1, 'the sunset');
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(sunset));
    expect(view(live.current())).toEqual({ tools: ['search'], excluded: ['calc:sunset', 'notes:not_registered'] });
    expect(view(live.current())).toEqual(view(await loadToolSet(registry, tools)));
    await registry.undeprecate('calc');
    await until(() => heard.length >= 2, 'the undeprecation');
    expect(live.current().list()).toEqual(['calc', 'search']);
    await live.close();
  });

  it('latest() catches up at call time: a sunset passed on its clock, with no timer fired; a deprecation alone is a change', async () => {
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, [search, calc]);
    let now = Date.parse('2030-01-01T00:00:00Z');
    await registry.deprecate('calc', { message: 'use search', sunset: '2030-01-01T01:00:00Z' });
    const live = await liveToolSet(registry, tools, { clock: () => new Date(now) });
    const heard: LiveToolSetChange[] = [];
    live.subscribe((change) => heard.push(change));
    expect(await live.latest()).toBe(live.current());
    // A commit of a tool the set does not hold: the same set, at the registry's revision.
    await registry.register({ tool_name: 'other', input_schema: object, output_schema: {} });
    expect(await live.latest()).toBe(live.current());
    expect(live.revision).toBe((await registry.changes({ limit: 0 })).revision);
    // The sunset timer waits an hour of real time; the clock says it has passed.
    now += 2 * 3600_000;
    expect(view(await live.latest())).toEqual({ tools: ['search'], excluded: ['calc:sunset', 'notes:not_registered'] });
    expect(heard).toHaveLength(1);
    // Deprecating a tool changes no tool in or out: still a change, as listeners must say so.
    await registry.deprecate('search', { message: 'going away' });
    await until(() => heard.length >= 2, 'the deprecation heard');
    expect(live.current().deprecation('search')?.message).toBe('going away');
    expect(heard[1]?.previous.deprecation('search')).toBeNull();
    await live.close();
  });

  it('one commit that changes several tools is heard as one change', async () => {
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const heard: string[][] = [];
    live.subscribe(({ current }) => heard.push(current.list()));
    const snapshot = await registry.exportSnapshot();
    await registry.importSnapshot({ tools: snapshot.tools.map((entry) => ({ ...entry, enabled: entry.spec.tool_name === 'calc' })) });
    await until(() => heard.length > 0, 'the change');
    await registry.changes({ limit: 0 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toEqual([['calc']]);
    await live.close();
    await registry.close();
  });

  it("a throwing listener: the default warning names the listener, not the registry, and the others still hear", async () => {
    const registry = new InMemoryToolRegistry();
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      live.subscribe(() => {
        throw new Error('listener boom');
      });
      const heard: string[][] = [];
      live.subscribe(({ current }) => heard.push(current.list()));
      await registry.setEnabled('calc', false);
      await until(() => heard.length > 0 && warnings.length > 0, 'the change and the warning');
      expect(warnings).toEqual(['liveToolSet: a subscribe() listener threw (Error: listener boom); the set is current']);
    } finally {
      process.off('warning', onWarning);
      await live.close();
      await registry.close();
    }
  });
});

describe('liveToolSet (SQLite file, other processes)', () => {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-live-'));
  const db = join(folder, 'tools.db');
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it(`follows the command's disable and a hand edit in sqlite3${NEEDS_SQLITE3}`, async () => {
    const registry = await openSqliteToolRegistry({ filename: db });
    await publishTools(registry, tools);
    const live = await liveToolSet(registry, tools);
    const lists: string[][] = [];
    live.subscribe(({ current }) => lists.push(current.list()));

    const disabled = await runCliAsync(['disable', 'notes', '--db', db], { cwd: folder });
    expect(disabled.code).toBe(0);
    await until(() => lists.length >= 1, 'the disable from another process');
    expect(live.current().list()).toEqual(['calc', 'search']);

    if (HAS_SQLITE3) {
      const edit = spawnSync(SQLITE3, [db, "UPDATE tool_registrations SET enabled = 1 WHERE tool_name = 'notes';"], { encoding: 'utf8' });
      expect(edit.stderr).toBe('');
      await until(() => lists.length >= 2, 'the hand edit');
      expect(live.current().list()).toEqual(['calc', 'notes', 'search']);
    }
    await live.close();
    await registry.close();
  });
});
