// The per-call argument copy, generic and specialised to a repeated key list: every call
// gets its own objects, defaults land on the copy, the caller's object is never changed,
// and anything that is not plain JSON falls back to structuredClone.
import { describe, expect, it } from 'vitest';
import { ToolSet, defineTool } from '../../src/index.js';
import { ArgsCopier } from '../../src/runtime/copy-args.js';

// Enough calls with one key list for the copier to be generated and then used many times.
const REPEAT = 6;

describe('ArgsCopier', () => {
  it('copies the same keys again and again into fresh objects, nested arrays and objects included', () => {
    const copier = new ArgsCopier();
    const copies: Record<string, unknown>[] = [];
    for (let i = 0; i < REPEAT; i++) {
      const args = { q: `q${i}`, rows: [[1, 2], [{ n: i }]], filter: { lang: 'en', tags: ['a'] }, exact: true, none: null };
      const copy = copier.copy(args) as Record<string, unknown>;
      expect(copy).toEqual(args);
      expect(copy).not.toBe(args);
      expect(copy.rows).not.toBe(args.rows);
      expect((copy.rows as unknown[][])[0]).not.toBe(args.rows[0]);
      expect((copy.rows as unknown[][])[1]![0]).not.toBe(args.rows[1]![0]);
      expect(copy.filter).not.toBe(args.filter);
      expect((copy.filter as { tags: unknown }).tags).not.toBe(args.filter.tags);
      expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
      copies.push(copy);
    }
    expect(new Set(copies).size).toBe(REPEAT);
  });

  it('follows the keys when they change: added, missing, reordered, numeric', () => {
    const copier = new ArgsCopier();
    for (let i = 0; i < REPEAT; i++) copier.copy({ a: 1, b: 2 });
    const shapes: Record<string, unknown>[] = [{ a: 1, b: 2, c: 3 }, { a: 1 }, { b: 2, a: 1 }, { 2: 'x', 1: 'y', a: 1 }, {}, { a: 1, b: 2 }];
    for (const shape of shapes) {
      const copy = copier.copy(shape) as Record<string, unknown>;
      expect(copy).toEqual(shape);
      expect(Object.keys(copy)).toEqual(Object.keys(shape));
    }
  });

  it('falls back to structuredClone for values that are not plain JSON, also after specialising', () => {
    const copier = new ArgsCopier();
    for (let i = 0; i < REPEAT; i++) copier.copy({ when: 'now', map: 1 });
    const date = new Date(0);
    const map = new Map([['k', [1]]]);
    const copy = copier.copy({ when: date, map }) as { when: Date; map: Map<string, number[]> };
    expect(copy.when).toBeInstanceOf(Date);
    expect(copy.when).not.toBe(date);
    expect(copy.when.getTime()).toBe(0);
    expect(copy.map).not.toBe(map);
    expect(copy.map.get('k')).toEqual([1]);
    expect(copy.map.get('k')).not.toBe(map.get('k'));
    expect(() => copier.copy({ when: () => 1, map: 1 })).toThrow();
    expect(() => copier.copy({ when: Symbol('s'), map: 1 })).toThrow();
    // A BigInt is not JSON but structuredClone copies it, as the generic copy always did.
    expect(copier.copy({ when: 1n, map: 1 })).toEqual({ when: 1n, map: 1 });
    expect(() => copier.copy({ when: [() => 1], map: 1 })).toThrow();
  });

  it('never specialises a __proto__ key: it stays data and no prototype changes', () => {
    const copier = new ArgsCopier();
    for (let i = 0; i < REPEAT; i++) {
      const args = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
      const copy = copier.copy(args) as Record<string, unknown>;
      expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
      expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).toEqual({ polluted: true });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('copies keys that are not identifiers (quotes, backslashes, line separators) as they are', () => {
    const copier = new ArgsCopier();
    const key = 'a"b\\c\u2028d\'e`${x}';
    for (let i = 0; i < REPEAT; i++) {
      const copy = copier.copy({ [key]: i, 'x-y': [i] }) as Record<string, unknown>;
      expect(copy).toEqual({ [key]: i, 'x-y': [i] });
    }
  });

  it('stays correct when every call brings other keys (no more copiers are generated past the limit)', () => {
    const copier = new ArgsCopier();
    for (let i = 0; i < 100; i++) {
      const args = { [`k${i}`]: i, shared: { i } };
      for (let j = 0; j < 3; j++) {
        const copy = copier.copy(args) as Record<string, unknown>;
        expect(copy).toEqual(args);
        expect(copy.shared).not.toBe(args.shared);
      }
    }
  });
});

describe('invoke with repeated calls (the specialised copy)', () => {
  it('applies defaults to each call\'s own copy and never to the caller\'s object', async () => {
    const received: Record<string, unknown>[] = [];
    const tool = defineTool({
      name: 'search',
      input_schema: {
        type: 'object',
        properties: { q: { type: 'string' }, limit: { type: 'integer', default: 10 }, filter: { type: 'object', properties: { lang: { type: 'string', default: 'en' } } } },
        required: ['q'],
      },
      handler: (args: Record<string, unknown>) => {
        received.push(args);
        return args.limit;
      },
    });
    const set = new ToolSet([tool]);
    const args = { q: 'otters', filter: {} };
    for (let i = 0; i < REPEAT; i++) expect(await set.invoke('search', args)).toMatchObject({ success: true, data: 10 });
    expect(args).toEqual({ q: 'otters', filter: {} });
    expect(received.every((copy) => copy !== args && copy.filter !== args.filter)).toBe(true);
    expect(received.map((copy) => copy.filter)).toEqual(Array.from({ length: REPEAT }, () => ({ lang: 'en' })));
    expect(new Set(received).size).toBe(REPEAT);
    expect(new Set(received.map((copy) => copy.filter)).size).toBe(REPEAT);
    // A function among the same keys is still refused as not data.
    expect(await set.invoke('search', { q: 'x', filter: () => 1 })).toMatchObject({ success: false, code: 'INVALID_ARGUMENTS' });
  });
});
