// canonicalJson, fingerprintOfCanonical and compareCodePoints: the definitions of "identical spec"
// and "sorted" that every store relies on.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptedCanonicalJson, canonicalJson, compareCodePoints, deepFreeze, fingerprintOfCanonical } from '../../src/core/canonical.js';
import { findJsonProblems, MAX_EXACT_INTEGER, MAX_JSON_DEPTH } from '../../src/core/contracts.js';

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

/**
 * canonicalJson as it was before it was made faster (insertion sort, cached quoting): kept
 * here as the reference the fast one must match byte for byte, and fail where it failed.
 */
function referenceCanonicalJson(value: unknown): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes
  const needsEscape = /["\\\u0000-\u001f\ud800-\udfff]/;
  const quote = (text: string): string => (needsEscape.test(text) ? JSON.stringify(text) : `"${text}"`);
  const isPlain = (item: object): boolean => {
    const proto: unknown = Object.getPrototypeOf(item);
    return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(item).length === 0;
  };
  const walk = (item: unknown, depth: number): string | undefined => {
    switch (typeof item) {
      case 'string':
        return quote(item);
      case 'number':
        return Number.isFinite(item) ? JSON.stringify(item) : undefined;
      case 'boolean':
        return item ? 'true' : 'false';
      case 'object':
        break;
      default:
        return undefined;
    }
    if (item === null) return 'null';
    if (depth >= 1000) return undefined;
    let out: string;
    if (Array.isArray(item)) {
      out = '[';
      for (let i = 0; i < item.length; i++) {
        const part = i in item ? walk(item[i], depth + 1) : undefined;
        if (part === undefined) return undefined;
        out += (i === 0 ? '' : ',') + part;
      }
      return out + ']';
    }
    if (!isPlain(item)) return undefined;
    const record = item as Record<string, unknown>;
    const keys = Object.keys(record).sort(compareCodePoints);
    out = '{';
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const part = walk(record[key], depth + 1);
      if (part === undefined) return undefined;
      out += (i === 0 ? '' : ',') + quote(key) + ':' + part;
    }
    return out + '}';
  };
  const text = walk(value, 0);
  if (text === undefined) throw new TypeError('not JSON data');
  return text;
}

/** An object with exactly these own keys in this order (`__proto__` included, as data). */
function objectOf(entries: readonly (readonly [string, unknown])[], nullPrototype: boolean): Record<string, unknown> {
  const out = (nullPrototype ? Object.create(null) : {}) as Record<string, unknown>;
  for (const [key, item] of entries) Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
  return out;
}

class Point {
  x = 1;
}

/** Keys that share prefixes and straddle the surrogate/private-use boundary, escapes, array indexes. */
const key = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'B', '_', '0', '1', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\ue000', '\uffff', '😀', '😁', '\ud800', '\udfff') }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.string({ maxLength: 50 }),
  fc.constantFrom('__proto__', 'constructor', 'toJSON', 'toString', '10', '9', '-1', '01', '4294967295', 'type', 'properties'),
);
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(-0, 0, 1e21, 1e-7, 2 ** 53, 2 ** 53 + 2, -(2 ** 64), 5e-324, Number.MAX_VALUE, 0.1 + 0.2, 123456789.125),
);
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('a', '"', '\\', '\b', '\t', '\u2028', '😀', '\ud83d', '\ude00') }));
/** Values canonicalJson refuses wherever they stand. */
const notJson = fc.constantFrom<unknown>(
  undefined,
  NaN,
  Infinity,
  -Infinity,
  1n,
  Symbol('s'),
  () => 1,
  new Date(0),
  new Map(),
  new Point(),
  // eslint-disable-next-line no-sparse-arrays -- a hole is what is being refused
  [1, , 3],
  { [Symbol('k')]: 1 },
  new Number(1),
  new String('s'),
);
const { value: anyValue } = fc.letrec<{ value: unknown; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'medium', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    number,
    text,
    fc.array(tie('value'), { maxLength: 5 }),
    tie('object'),
    // Rarely: a value that is not JSON data.
    fc.oneof({ weight: 1, arbitrary: notJson }, { weight: 8, arbitrary: fc.constant(0) }),
  ),
  object: fc
    .tuple(fc.uniqueArray(fc.tuple(key, tie('value')), { maxLength: 8, selector: ([name]) => name }), fc.boolean())
    .map(([entries, nullPrototype]) => objectOf(entries, nullPrototype && entries.length % 3 === 0)),
}));

/** What canonicalJson gives, or the class of error it throws. */
function outcome(run: () => string): string {
  try {
    return `ok ${run()}`;
  } catch (error) {
    return `throws ${(error as Error).constructor.name}`;
  }
}

describe('canonicalJson matches the reference implementation byte for byte', () => {
  it('on deep JSON with unicode and astral keys, escapes, -0, large numbers and non-JSON values (property)', () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        expect(outcome(() => canonicalJson(value))).toBe(outcome(() => referenceCanonicalJson(value)));
      }),
      { numRuns: 3000 },
    );
  });

  it('on plain JSON values, which both write (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(referenceCanonicalJson(value));
      }),
      { numRuns: 1000 },
    );
  });

  it('on objects with many keys (sorted another way than small ones) and keys past the cached length', () => {
    const many = objectOf(
      Array.from({ length: 300 }, (_, i) => [[`k${(i * 7919) % 300}`, '😀', '\ue000', `${'x'.repeat(i)}\uffff`, '\ud83d'][i % 5] + String(i), i] as const),
      false,
    );
    expect(canonicalJson(many)).toBe(referenceCanonicalJson(many));
    const astralAmongCached = { type: 1, properties: 2, '😀': 3, '\uffff': 4, '\ue000x': 5 };
    expect(canonicalJson(astralAmongCached)).toBe(referenceCanonicalJson(astralAmongCached));
    expect(canonicalJson(astralAmongCached)).toBe('{"properties":2,"type":1,"\ue000x":5,"\uffff":4,"😀":3}');
  });

  it('refuses cycles and nesting past its limit with a TypeError, as the reference does', () => {
    const cycle: Record<string, unknown> = { a: [1] };
    (cycle.a as unknown[]).push(cycle);
    expect(() => canonicalJson(cycle)).toThrow(TypeError);
    expect(() => referenceCanonicalJson(cycle)).toThrow(TypeError);
    let deep: unknown = [];
    for (let i = 0; i < 999; i++) deep = [deep];
    expect(canonicalJson(deep)).toBe(referenceCanonicalJson(deep));
    expect(outcome(() => canonicalJson([deep]))).toBe(outcome(() => referenceCanonicalJson([deep])));
    expect(() => canonicalJson([deep])).toThrow(TypeError);
  });
});

describe('acceptedCanonicalJson: the schema check that also writes the canonical text', () => {
  const accepted = (value: unknown): string | undefined => acceptedCanonicalJson(value, MAX_JSON_DEPTH, MAX_EXACT_INTEGER);

  it('accepts exactly what the reporting walk finds no problem in, and then writes canonicalJson (property)', () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        const text = accepted(value);
        expect(text === undefined).toBe(findJsonProblems(value).length > 0);
        if (text !== undefined) expect(text).toBe(canonicalJson(value));
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses lone surrogates in values and keys, integers beyond 2^53 - 1, cycles and deep nesting', () => {
    const nested = (depth: number): unknown => {
      let value: unknown = {};
      for (let i = 0; i < depth; i++) value = [value];
      return value;
    };
    const cycle: Record<string, unknown> = {};
    cycle.self = { again: cycle };
    for (const bad of [{ a: 'x\ud800' }, { 'k\udfff': 1 }, { '😀': 1, 'k\ud83d': 2 }, { n: 2 ** 53 }, { n: -(2 ** 53) }, cycle, nested(MAX_JSON_DEPTH)]) {
      expect(accepted(bad)).toBeUndefined();
      expect(findJsonProblems(bad).length).toBeGreaterThan(0);
    }
    for (const good of [{ a: 'x😀' }, { '😀': MAX_EXACT_INTEGER, '\uffff': -MAX_EXACT_INTEGER }, nested(MAX_JSON_DEPTH - 1)]) {
      expect(accepted(good)).toBe(canonicalJson(good));
      expect(findJsonProblems(good)).toEqual([]);
    }
  });
});

describe('fingerprintOfCanonical', () => {
  it('is the SHA-256 hex of the text (known vectors)', () => {
    expect(fingerprintOfCanonical('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(fingerprintOfCanonical('{}')).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });

  it('hashes the UTF-8 bytes: different unicode text, different fingerprint', () => {
    expect(fingerprintOfCanonical('"é"')).not.toBe(fingerprintOfCanonical('"e"'));
    expect(fingerprintOfCanonical('"é"')).toMatch(/^[0-9a-f]{64}$/);
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
