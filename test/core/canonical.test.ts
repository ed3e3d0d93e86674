// canonicalJson, fingerprintOf and compareCodePoints: the definitions of "identical spec"
// and "sorted" that every store relies on.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, compareCodePoints, deepFreeze, fingerprintOf } from '../../src/core/canonical.js';

/** The same JSON value with every object's keys inserted in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) {
    Object.defineProperty(out, key, { value: reverseKeys((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Reference order: compare arrays of code points. */
function byCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) as number);
  const y = Array.from(b, (c) => c.codePointAt(0) as number);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
  return x.length - y.length;
}

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps arrays in order, without whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }, 1], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1},1]},"b":1}',
    );
  });

  it('gives {a:1,b:2} and {b:2,a:1} the same text', () => {
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });

  it('sorts keys by code point: upper case, then _, then lower case; BMP before astral', () => {
    expect(canonicalJson({ b: 1, _: 2, B: 3, a: 4 })).toBe('{"B":3,"_":2,"a":4,"b":1}');
    // UTF-16 code units would put the astral '😀' (D83D...) before U+FFFF.
    expect(canonicalJson({ '😀': 1, '\uffff': 2 })).toBe('{"\uffff":2,"😀":1}');
  });

  it('writes primitives and escapes strings as JSON.stringify does', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson(-1.5e-7)).toBe(JSON.stringify(-1.5e-7));
    expect(canonicalJson('a"b\\c\n\u0001')).toBe(JSON.stringify('a"b\\c\n\u0001'));
    expect(canonicalJson({ 'k"ey\n': 'v' })).toBe('{"k\\"ey\\n":"v"}');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
  });

  it('keeps an own __proto__ key as data', () => {
    const value = JSON.parse('{"z":1,"__proto__":{"x":1}}') as unknown;
    expect(canonicalJson(value)).toBe('{"__proto__":{"x":1},"z":1}');
  });

  it('does not depend on key insertion order (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(reverseKeys(value))).toBe(canonicalJson(value));
      }),
    );
  });

  it('is valid JSON that reads back to the same canonical text (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});

describe('fingerprintOf', () => {
  it('is the SHA-256 hex of the text (known vectors)', () => {
    expect(fingerprintOf('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(fingerprintOf('{}')).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });

  it('hashes the UTF-8 bytes: different unicode text, different fingerprint', () => {
    expect(fingerprintOf('"é"')).not.toBe(fingerprintOf('"e"'));
    expect(fingerprintOf('"é"')).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('compareCodePoints', () => {
  it('orders names as Python and SQLite BINARY do, not as localeCompare', () => {
    const names = ['a', 'B', '_', '0', '.', '-'];
    expect([...names].sort(compareCodePoints)).toEqual(['-', '.', '0', 'B', '_', 'a']);
    expect([...names].sort((x, y) => x.localeCompare(y))).not.toEqual(['-', '.', '0', 'B', '_', 'a']);
  });

  it('puts a prefix first and returns 0 only for equal strings', () => {
    expect(compareCodePoints('ab', 'abc')).toBeLessThan(0);
    expect(compareCodePoints('abc', 'ab')).toBeGreaterThan(0);
    expect(compareCodePoints('', 'a')).toBeLessThan(0);
    expect(compareCodePoints('same', 'same')).toBe(0);
  });

  it('puts astral code points after the whole BMP', () => {
    expect(compareCodePoints('\uffff', '😀')).toBeLessThan(0);
    expect(compareCodePoints('😀', '\ue000')).toBeGreaterThan(0);
    expect(compareCodePoints('😀', '😁')).toBeLessThan(0);
  });

  // Any code point, or a small alphabet (BMP, private use, astral) so strings share prefixes.
  const text = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string({ unit: fc.constantFrom('a', 'B', '_', '\ue000', '\uffff', '😀', '😁') }),
  );

  it('agrees in sign with a code-point array comparison (property)', () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(Math.sign(compareCodePoints(a, b))).toBe(Math.sign(byCodePoints(a, b)));
        expect(Math.sign(compareCodePoints(b, a)) + Math.sign(compareCodePoints(a, b))).toBe(0);
      }),
    );
  });
});

describe('deepFreeze', () => {
  it('freezes a fresh value and everything under it, and returns it', () => {
    const value = { a: { b: [1, { c: 2 }] }, d: 'x' };
    expect(deepFreeze(value)).toBe(value);
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a.b)).toBe(true);
    expect(Object.isFrozen(value.a.b[1])).toBe(true);
  });

  it('leaves primitives alone', () => {
    expect(deepFreeze(null)).toBeNull();
    expect(deepFreeze('x')).toBe('x');
  });
});
