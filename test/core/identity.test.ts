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
