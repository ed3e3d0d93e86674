import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it, vi } from 'vitest';
import { DuplicateToolError, NET_HTTP, READ_FS, ToolBox, ToolSet, createToolSet, defineTool } from '../../src/index.js';

const tool = (name: string, extra: Record<string, unknown> = {}) => defineTool({ name, input_schema: {}, handler: () => name, ...extra });

describe('ToolSet', () => {
  it('resolves exact, case-sensitive names to the very Tool objects given, else null', () => {
    const search = tool('search');
    const Search = tool('Search');
    const set = new ToolSet([search, Search]);
    expect(set.resolve('search')).toBe(search);
    expect(set.resolve('Search')).toBe(Search);
    expect(set.resolve('SEARCH')).toBeNull();
    expect(set.resolve('search ')).toBeNull();
    expect(set.resolve('')).toBeNull();
    expect(set.resolve('toString')).toBeNull();
  });

  it('lists names in code-point order, size, and tools() as fresh sorted arrays', () => {
    const names = ['b', 'a', 'Z', '_x', 'a.b', 'a-b', '1'];
    const tools = names.map((name) => tool(name));
    const set = createToolSet(tools);
    expect(set).toBeInstanceOf(ToolSet);
    const sorted = ['1', 'Z', '_x', 'a', 'a-b', 'a.b', 'b'];
    expect(set.list()).toEqual(sorted);
    expect(set.size).toBe(7);
    expect(set.tools().map((t) => t.name)).toEqual(sorted);
    expect(set.tools()).not.toBe(set.tools());
    expect(set.list()).not.toBe(set.list());
    set.list().pop();
    set.tools().pop();
    expect(set.size).toBe(7);
    expect(set.tools().every((t) => tools.includes(t))).toBe(true);
    expect([...set].map((t) => t.name)).toEqual(sorted);
  });

  it('is frozen and has no way to add or remove a tool', () => {
    const set = new ToolSet([tool('a')]);
    expect(Object.isFrozen(set)).toBe(true);
    for (const method of ['register', 'add', 'set', 'delete', 'remove', 'unregister', 'clear']) {
      expect((set as unknown as Record<string, unknown>)[method]).toBeUndefined();
    }
    expect(() => {
      (set as unknown as { extra: number }).extra = 1;
    }).toThrow(TypeError);
  });

  it('does not change when the input array changes', () => {
    const tools = [tool('a')];
    const set = new ToolSet(tools);
    tools.push(tool('b'));
    expect(set.list()).toEqual(['a']);
  });

  it('throws DUPLICATE_TOOL with context.tool_name for two tools of one name', () => {
    let error: unknown;
    try {
      new ToolSet([tool('a'), tool('dup'), tool('dup')]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DuplicateToolError);
    expect((error as DuplicateToolError).code).toBe('DUPLICATE_TOOL');
    expect((error as DuplicateToolError).context.tool_name).toBe('dup');
    const same = tool('same');
    expect(() => new ToolSet([same, same])).toThrow(DuplicateToolError);
  });

  it('takes only Tools made by defineTool (TypeError otherwise)', () => {
    const real = tool('a');
    expect(() => new ToolSet([{ ...real }] as never)).toThrow(TypeError);
    expect(() => new ToolSet('ab' as never)).toThrow(TypeError);
    expect(() => new ToolSet(null as never)).toThrow(TypeError);
    expect(() => new ToolSet(new Set([real])).size).not.toThrow();
  });

  it('rejects a non-string name in resolve with a TypeError', () => {
    expect(() => new ToolSet([]).resolve(1 as never)).toThrow(TypeError);
  });

  it('forPolicy returns a new set of only the allowed tools (the same objects)', () => {
    const read = tool('read', { permissions: { required: [READ_FS] } });
    const fetch = tool('fetch', { permissions: { required: [NET_HTTP] } });
    const plain = tool('plain');
    const set = new ToolSet([read, fetch, plain]);
    const allowed = set.forPolicy({ persona: 'reader', allowed_permissions: [READ_FS] });
    expect(allowed).not.toBe(set);
    expect(allowed.list()).toEqual(['plain', 'read']);
    expect(allowed.resolve('read')).toBe(read);
    expect(allowed.resolve('fetch')).toBeNull();
    expect(set.size).toBe(3);
    expect(set.forPolicy({ persona: 'one', allowed_tools: ['fetch'], allowed_permissions: [NET_HTTP] }).list()).toEqual(['fetch']);
    expect(set.excluded).toEqual([]);
  });

  it('never compiles a schema after defineTool: not in sets, boxes, forPolicy, forTurn, toToolSet or invoke', async () => {
    const typed = defineTool({ name: 'typed', input_schema: { type: 'object', properties: { n: { type: 'integer' } } }, output_schema: { type: 'integer' }, handler: ({ n }) => n });
    const old = defineTool({ name: 'old', input_schema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }, handler: () => 1 });
    const compile2020 = vi.spyOn(Ajv2020.prototype, 'compile');
    const compile07 = vi.spyOn(Ajv.prototype, 'compile');
    try {
      const set = new ToolSet([typed, old]);
      const box = set.forPolicy({ persona: 'p' }).forTurn();
      for (const target of [set, box, box.toToolSet()]) {
        expect(await target.invoke('typed', { n: 2 })).toMatchObject({ success: true, data: 2 });
        expect(await target.invoke('typed', { n: 'x' })).toMatchObject({ code: 'INVALID_ARGUMENTS' });
        expect(await target.invoke('old', {})).toMatchObject({ success: true });
      }
      expect(compile2020).not.toHaveBeenCalled();
      expect(compile07).not.toHaveBeenCalled();
      // The spies do see compiles: defining a tool compiles its schemas (one no other file of
      // this worker defined: compiled checks are shared by schema text).
      defineTool({ name: 'fresh', input_schema: { type: 'object', title: `fresh ${process.hrtime.bigint()}` }, handler: () => 1 });
      expect(compile2020).toHaveBeenCalled();
    } finally {
      compile2020.mockRestore();
      compile07.mockRestore();
    }
  });

  it('forTurn gives a fresh ToolBox with the same tools each time', () => {
    const a = tool('a');
    const b = tool('b');
    const set = new ToolSet([b, a]);
    const first = set.forTurn();
    const second = set.forTurn();
    expect(ToolBox.isToolBox(first)).toBe(true);
    expect(first).not.toBe(second);
    expect(first.all()).toEqual([a, b]);
    first.unregister('a');
    expect(second.has('a')).toBe(true);
    expect(set.resolve('a')).toBe(a);
  });
});
