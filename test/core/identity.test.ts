// jsonEquals / isStoredSpec answer rule 2 without building canonical JSON: they must agree
// with canonical equality exactly, and never call non-JSON input equal to a stored spec.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, jsonEquals } from '../../src/core/canonical.js';
import { isStoredSpec, materializeSpec, parseSpec } from '../../src/core/validation.js';
import { fullSpec, minimalSpec } from '../support/registry-helpers.js';

describe('jsonEquals', () => {
  it('agrees with canonical JSON equality on random JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const parsedB = JSON.parse(canonicalJson(b)) as unknown;
        expect(jsonEquals(a, parsedB)).toBe(canonicalJson(a) === canonicalJson(b));
        expect(jsonEquals(a, JSON.parse(canonicalJson(a)) as unknown)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with canonical equality on pairs that are equal half the time (the same value with keys shuffled at every depth)', () => {
    /** A copy of `value` with the keys of every object in an order drawn from `random`. */
    const shuffled = (value: unknown, random: () => number): unknown => {
      if (Array.isArray(value)) return value.map((item) => shuffled(item, random));
      if (value === null || typeof value !== 'object') return value;
      const entries = Object.entries(value).map(([key, item]) => [key, shuffled(item, random)] as const);
      for (let i = entries.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [entries[i], entries[j]] = [entries[j] as (typeof entries)[number], entries[i] as (typeof entries)[number]];
      }
      return Object.fromEntries(entries);
    };
    // Objects of two or more keys, with non-ASCII and astral text, -0 and 0.
    // Numbers beyond 2^53 - 1 are refused by the contracts (issue 13, item 3): replaced by 1 here.
    const exact = (value: unknown): unknown =>
      typeof value === 'number' && Math.abs(value) > Number.MAX_SAFE_INTEGER
        ? 1
        : Array.isArray(value)
          ? value.map(exact)
          : value !== null && typeof value === 'object'
            ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, exact(item)]))
            : value;
    const json = fc.jsonValue({ stringUnit: 'grapheme', maxDepth: 3 }).map(exact);
    const object = fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 4 }), json, { minKeys: 2, maxKeys: 6 });
    let equal = 0;
    let equalWithShuffledKeys = 0;
    fc.assert(
      fc.property(object, json, fc.boolean(), fc.integer(), (a, other, same, seed) => {
        let state = seed;
        const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) < 0 ? -state : state) / 2147483648;
        const b = same ? shuffled(a, random) : { ...a, extra: other };
        const identical = canonicalJson(a) === canonicalJson(b);
        if (identical) equal++;
        if (identical && JSON.stringify(a) !== JSON.stringify(b)) equalWithShuffledKeys++;
        // Against a stored value in canonical order and in the order it was given.
        expect(jsonEquals(b, JSON.parse(canonicalJson(a)) as unknown)).toBe(identical);
        expect(jsonEquals(b, JSON.parse(JSON.stringify(a)) as unknown)).toBe(identical);
        const stored = materializeSpec(parseSpec(minimalSpec('pair', { input_schema: a as never })).canonical);
        expect(isStoredSpec(minimalSpec('pair', { input_schema: b as never }), stored)).toBe(identical);
      }),
      { numRuns: 400 },
    );
    // The property is about equal values: make sure it saw many, and many in another key order.
    expect(equal).toBeGreaterThan(120);
    expect(equalWithShuffledKeys).toBeGreaterThan(60);
  });

  it('ignores key order and keeps array order', () => {
    expect(jsonEquals({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBe(true);
    expect(jsonEquals({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
  });

  it('treats -0 as 0, as canonical JSON does', () => {
    expect(canonicalJson(-0)).toBe(canonicalJson(0));
    expect(jsonEquals({ x: -0 }, { x: 0 })).toBe(true);
  });

  it.each([
    ['NaN', { x: Number.NaN }, { x: null }],
    ['undefined', { x: undefined }, {}],
    // eslint-disable-next-line no-sparse-arrays -- the hole is the point
    ['a hole', { x: [1, , 3] }, { x: [1, null, 3] }],
    ['a Date', { x: new Date(0) }, { x: '1970-01-01T00:00:00.000Z' }],
    ['a Map', { x: new Map() }, { x: {} }],
    ['a class instance', { x: new (class Point {})() }, { x: {} }],
    ['a symbol key', { x: 1, [Symbol('s')]: 2 }, { x: 1 }],
    ['an extra key', { x: 1, y: 2 }, { x: 1 }],
    ['a missing key', { x: 1 }, { x: 1, y: 2 }],
    ['a number for a string', { x: 1 }, { x: '1' }],
    ['an array for an object', { x: [] }, { x: {} }],
  ])('is false for %s', (_what, value, json) => {
    expect(jsonEquals(value, json)).toBe(false);
  });

  it('ends on a cycle in the value (the walk follows the finite JSON side)', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(jsonEquals(cyclic, { self: { self: {} } })).toBe(false);
  });
});

describe('isStoredSpec', () => {
  const stored = materializeSpec(parseSpec(fullSpec('search')).canonical);

  it('is true for the same spec in another key order, and with defaults left out or spelled out', () => {
    const reversed = Object.fromEntries(Object.entries(fullSpec('search')).reverse());
    expect(isStoredSpec(reversed, stored)).toBe(true);
    const minimal = materializeSpec(parseSpec(minimalSpec('m')).canonical);
    expect(isStoredSpec(minimalSpec('m'), minimal)).toBe(true);
    expect(isStoredSpec(minimalSpec('m', { version: null, description: null, tags: [] }), minimal)).toBe(true);
  });

  it.each([
    ['an unknown field', { ...fullSpec('search'), extra: 1 }],
    ['another version', fullSpec('search', '2.0.0')],
    ['a number version', { ...fullSpec('search'), version: 1 }],
    ['another name', fullSpec('Search')],
    ['tags in another order', { ...fullSpec('search'), tags: ['search', 'web'] }],
    ['a class instance as the spec', Object.assign(new (class Spec {})(), fullSpec('search'))],
    ['null', null],
    ['a string', 'search'],
  ])('is false for %s', (_what, input) => {
    expect(isStoredSpec(input, stored)).toBe(false);
  });
});
