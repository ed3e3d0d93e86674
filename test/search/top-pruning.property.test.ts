// Property: SearchIndex.top, which skips tools that cannot reach the page (MaxScore over per-term
// upper bounds), returns exactly what scoring every match and sorting gives — the same names,
// bit-identical scores, the same `more` — whatever the writes before it (an index built in one
// go or tool by tool; adds, replaces and removes leave the bounds stale or loose; sweeps
// renumber the slots), the query, the limit, the filter and the cursor.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SearchIndex, topHits } from '../../src/core/search/search-index.js';
import type { RankKey, RankSnapshot } from '../../src/core/search/search-index.js';

// Words of a few lengths; the first ones are drawn far more often, so some are in most tools
// (tiny idf, the terms pruning leaves out) and others in a few (the terms it walks).
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa'];
const word = fc.integer({ min: 0, max: 255 }).map((n) => WORDS[Math.floor(Math.sqrt(n))] as string);
const words = (max: number) => fc.array(word, { maxLength: max });
// Some descriptions repeat one word: a tool whose frequency of a term is above the term's bound so far.
const description = fc.oneof(
  { weight: 6, arbitrary: words(14) },
  { weight: 1, arbitrary: fc.tuple(word, fc.integer({ min: 2, max: 30 })).map(([one, times]) => Array.from({ length: times }, () => one)) },
);
const spec = fc.record({
  nameWords: words(2),
  description,
  tags: words(3),
  properties: fc.array(fc.tuple(word, words(4)), { maxLength: 3 }),
});
type SpecShape = fc.Arbitrary<{ nameWords: string[]; description: string[]; tags: string[]; properties: [string, string[]][] }>;

// Few names, so tools are replaced and removed often; a few specs shared between names give ties broken by name.
const NAMES = Array.from({ length: 40 }, (_, index) => `t${index.toString(36)}`);
// Tools a run may start with: with many, a write moves the average field lengths little, so the
// bounds are kept (raised write by write) rather than computed anew at every query; with none,
// the dead entries of replaced tools soon outnumber the live ones and sweeps renumber the slots.
const BASE = 150;
const name = fc.constantFrom(...NAMES);
const op = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), name, spec: spec as SpecShape, shared: fc.integer({ min: 0, max: 9 }), item: fc.nat(15) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), name }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('enable' as const), name, item: fc.nat(15) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('query' as const),
      terms: fc.array(word, { minLength: 1, maxLength: 5 }),
      limit: fc.integer({ min: 1, max: 12 }),
      // Items are 0-15: the filter lets through those whose bit is set in the mask.
      mask: fc.oneof(fc.constant(0xffff), fc.integer({ min: 0, max: 0xffff })),
      // A cursor: none, a hit of the full ranking, or a made-up (score, name) between hits.
      cursor: fc.oneof(fc.constant(undefined), fc.nat(30), fc.record({ rank: fc.nat(30), name: fc.constantFrom('', 't', 't5', 'u') })),
    }),
  },
);

function toolSpec(toolName: string, shape: { nameWords: string[]; description: string[]; tags: string[]; properties: [string, string[]][] }) {
  return {
    tool_name: [...shape.nameWords, toolName].join('_'),
    description: shape.description.join(' '),
    tags: shape.tags,
    input_schema: { type: 'object', properties: Object.fromEntries(shape.properties.map(([key, text]) => [key, { type: 'string', description: text.join(' ') }])) },
  };
}

const ranked = (page: readonly { name: string; score: number }[]) => page.map((hit) => [hit.name, hit.score] as const);

describe('SearchIndex.top prunes without changing a result', () => {
  it('equals topHits(match(...)) exactly: names, scores (===), more, with filters and cursors, after random writes', () => {
    // Specs shared by several names (the same text, so the same score: ties by name).
    const sharedSpecs = fc.sample(spec as SpecShape, { numRuns: 10, seed: 26 });
    const baseSpecs = fc.sample(spec as SpecShape, { numRuns: BASE, seed: 62 });
    let pruned = 0;
    fc.assert(
      fc.property(fc.constantFrom(0, 40, BASE), fc.boolean(), fc.array(op, { minLength: 20, maxLength: 500, size: 'max' }), (base, bulk, ops) => {
        const index = new SearchIndex<number>();
        const items = new Map<string, number>();
        // Issue 38: every write at its own revision; each query's snapshot is ranked again later.
        let revision = 0;
        const snapshots: { terms: string[]; snapshot: RankSnapshot }[] = [];
        // The base set one by one, or built in one go (as the first search builds the index).
        const tools = baseSpecs.slice(0, base).map((shape, at) => ({ name: `base${at}`, item: at % 16, spec: toolSpec(`base${at}`, shape) }));
        if (bulk) index.build(tools);
        else for (const tool of tools) index.set(tool.name, tool.item, tool.spec);
        for (const tool of tools) items.set(tool.name, tool.item);
        for (const step of ops) {
          if (step.kind === 'set') {
            const shape = step.shared < 3 ? (sharedSpecs[step.shared] as (typeof sharedSpecs)[number]) : step.spec;
            index.set(step.name, step.item, toolSpec(step.shared < 3 ? 'shared' : step.name, shape), undefined, ++revision);
            items.set(step.name, step.item);
          } else if (step.kind === 'delete') {
            index.delete(step.name, ++revision);
            items.delete(step.name);
          } else if (step.kind === 'enable') {
            // The item alone changes (as an enable does): nothing is re-indexed.
            if (items.has(step.name)) index.set(step.name, step.item, toolSpec(step.name, { nameWords: [], description: [], tags: [], properties: [] }), () => true);
            if (items.has(step.name)) items.set(step.name, step.item);
          } else {
            const accept = (item: number): boolean => ((step.mask >>> item) & 1) === 1;
            const all = topHits(index.match(step.terms, accept), 1000).page;
            let after: RankKey | undefined;
            if (typeof step.cursor === 'number') after = all[step.cursor];
            else if (step.cursor !== undefined) {
              const hit = all[step.cursor.rank];
              if (hit !== undefined) after = { score: hit.score, name: step.cursor.name };
            }
            const expected = topHits(index.match(step.terms, accept), step.limit, after);
            const actual = index.top(step.terms, step.limit, accept, after);
            expect(ranked(actual.page)).toStrictEqual(ranked(expected.page));
            for (let rank = 0; rank < actual.page.length; rank++) expect(Object.is(actual.page[rank]?.score, expected.page[rank]?.score)).toBe(true);
            expect(actual.page.map((hit) => hit.item)).toStrictEqual(expected.page.map((hit) => hit.item));
            expect(actual.more).toBe(expected.more);
            if (all.length > step.limit + 1) pruned++;
            // An earlier query's pages, ranked with its snapshot (the versions current then, its statistics).
            const terms = [...new Set(step.terms)];
            snapshots.push({ terms, snapshot: index.snapshot(terms, revision) });
            if (step.limit % 6 !== 0) continue;
            const earlier = snapshots[step.mask % snapshots.length] as (typeof snapshots)[number];
            const matched = index.match(earlier.terms, accept, earlier.snapshot);
            const from = typeof step.cursor === 'number' ? topHits(matched, step.cursor + 1).page[step.cursor] : undefined;
            const oldExpected = topHits(matched, step.limit, from);
            const oldActual = index.top(earlier.terms, step.limit, accept, from, earlier.snapshot);
            expect(ranked(oldActual.page)).toStrictEqual(ranked(oldExpected.page));
            expect(oldActual.page.map((hit) => hit.item)).toStrictEqual(oldExpected.page.map((hit) => hit.item));
            expect(oldActual.more).toBe(oldExpected.more);
          }
        }
        expect(index.size).toBe(items.size);
      }),
      // No shrinking: shrinking hundreds of writes takes minutes; the seed and path replay a failure.
      { numRuns: 150, endOnFailure: true },
    );
    // The property ran where pruning can skip tools (more matches than the page and one).
    expect(pruned).toBeGreaterThan(100);
  });

  // Cases the property reaches only by chance: tools that score above every bound computed so far.
  const only = (text: string) => ({ tool_name: 'x', description: text, tags: [], input_schema: {} });

  it('a tool added after the bounds were computed raises them (else the third of three would be skipped)', () => {
    const index = new SearchIndex<number>();
    // Every description 20 words long, so the average length (and so the reference) stays put.
    const words = (first: string, times: number) => Array.from({ length: 20 }, (_, at) => (at < times ? first : 'other')).join(' ');
    for (let at = 0; at < 50; at++) index.set(`base${at}`, 0, only(words('common', 1)));
    index.top(['common'], 1);
    const repeated = only(words('common', 20));
    for (const name of ['z1', 'z2', 'a0']) index.set(name, 0, repeated);
    expect(index.top(['common'], 1)).toEqual(topHits(index.match(['common']), 1));
    expect(index.top(['common'], 1).page[0]?.name).toBe('a0');
  });

  it('bounds follow the average lengths: longer tools elsewhere make every short tool score higher', () => {
    const index = new SearchIndex<number>();
    // Names from last to first in code-point order: the best name comes last in slot order.
    for (let at = 99; at >= 0; at--) index.set(`base${at.toString().padStart(2, '0')}`, 0, only('common word'));
    index.top(['common'], 1);
    // Longer descriptions raise the average (5%): a tool of the same length normalises less.
    for (let at = 0; at < 5; at++) index.set(`long${at}`, 0, only('filler other words here'));
    expect(index.top(['common'], 1)).toEqual(topHits(index.match(['common']), 1));
    expect(index.top(['common'], 1).page[0]?.name).toBe('base00');
  });
});

