// parseSpec, parseSpecs, parseSnapshot, materializeSpec, makeRegistration: the one place
// input is validated and reduced to canonical JSON.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintOfCanonical } from '../../src/core/canonical.js';
import { ToolSpec } from '../../src/core/contracts.js';
import { DuplicateToolError, SnapshotInvalidError, ValidationError } from '../../src/core/errors.js';
import { makeRegistration, materializeSpec, parseSnapshot, parseSpec, parseSpecs, snapshotEntryJson } from '../../src/core/validation.js';
import { fullSpec, isDeepFrozen, minimalSpec } from '../support/registry-helpers.js';

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('fingerprintOf (public)', () => {
  it("is the fingerprint the registry stores, defaults applied, whatever the key order; a string is hashed as canonical text", async () => {
    const { InMemoryToolRegistry, fingerprintOf } = await import('../../src/index.js');
    const registry = new InMemoryToolRegistry();
    const spec = minimalSpec('fp');
    await registry.register(spec);
    const stored = (await registry.history('fp'))[0]?.fingerprint;
    expect(fingerprintOf(spec)).toBe(stored);
    expect(fingerprintOf(Object.fromEntries(Object.entries(spec).reverse()) as typeof spec)).toBe(stored);
    expect(fingerprintOf({ ...spec, version: null, description: null, tags: [] })).toBe(stored);
    // The canonical text of the complete spec hashes to the same; of the bare input, not.
    const complete = { version: null, description: null, tags: [], ...spec };
    expect(fingerprintOf(canonicalJson(complete))).toBe(stored);
    expect(fingerprintOf(canonicalJson(spec))).not.toBe(stored);
    expect(fingerprintOf('abc')).toBe(fingerprintOfCanonical('abc'));
    expect((thrown(() => fingerprintOf({ tool_name: 'bad name' } as never)) as ValidationError).code).toBe('VALIDATION_FAILED');
    expect((thrown(() => fingerprintOf(null as never)) as ValidationError).code).toBe('VALIDATION_FAILED');
  });
});

describe('parseSpec', () => {
  it('applies defaults and returns canonical JSON, its fingerprint, and the text as given (defaults after the given keys)', () => {
    const prepared = parseSpec({ output_schema: { b: 1, a: 2 }, input_schema: {}, tool_name: 't' });
    expect(prepared.tool_name).toBe('t');
    expect(prepared.version).toBeNull();
    expect(prepared.canonical).toBe(
      '{"description":null,"input_schema":{},"output_schema":{"a":2,"b":1},"tags":[],"tool_name":"t","version":null}',
    );
    expect(prepared.fingerprint).toBe(fingerprintOfCanonical(prepared.canonical));
    expect(prepared.json).toBe(
      '{"output_schema":{"b":1,"a":2},"input_schema":{},"tool_name":"t","version":null,"description":null,"tags":[]}',
    );
    const spec = materializeSpec(prepared.json);
    expect(Object.keys(spec)).toEqual(['output_schema', 'input_schema', 'tool_name', 'version', 'description', 'tags']);
    expect(Object.keys(spec.output_schema)).toEqual(['b', 'a']);
    expect(isDeepFrozen(spec)).toBe(true);
  });

  it('keeps the given order in snapshot entries too (built in the import\'s second pass, rechecked or not)', () => {
    const snapshot = { tools: [{ spec: { tags: ['x'], input_schema: { z: 1, a: 2 }, output_schema: {}, tool_name: 't' } }] };
    const [entry] = parseSnapshot(snapshot);
    if (entry === undefined) throw new Error('no entry');
    const json = '{"tags":["x"],"input_schema":{"z":1,"a":2},"output_schema":{},"tool_name":"t","version":null,"description":null}';
    expect(snapshotEntryJson(snapshot, 0, entry, false)).toBe(json);
    expect(snapshotEntryJson(snapshot, 0, entry, true)).toBe(json);
    expect(entry.fingerprint).toBe(fingerprintOfCanonical(canonicalJson(JSON.parse(json))));
  });

  it('builds the same text in the second pass as register does, defaults given as undefined included', () => {
    const specs = [
      { tool_name: 't', version: undefined, input_schema: { b: [1, { y: 1, x: 2 }] }, output_schema: {}, description: undefined },
      { description: 'd', tags: undefined, output_schema: { z: null }, tool_name: 't', input_schema: {}, version: '1' },
      fullSpec('t'),
    ];
    for (const spec of specs) {
      const snapshot = { tools: [{ spec }] };
      const [entry] = parseSnapshot(snapshot);
      if (entry === undefined) throw new Error('no entry');
      expect(snapshotEntryJson(snapshot, 0, entry, false)).toBe(parseSpec(spec).json);
      expect(entry.fingerprint).toBe(parseSpec(spec).fingerprint);
    }
  });

  it('refuses, in a rechecked second pass, an entry changed since the first (SNAPSHOT_INVALID at its path)', () => {
    const snapshot = { tools: [{ spec: fullSpec('a') }, { spec: fullSpec('b'), enabled: true }] };
    const entries = parseSnapshot(snapshot);
    const second = entries[1];
    if (second === undefined) throw new Error('no entry');
    snapshot.tools[1] = { spec: { ...fullSpec('b'), description: 'changed' }, enabled: true };
    const error = thrown(() => snapshotEntryJson(snapshot, 1, second, true)) as SnapshotInvalidError;
    expect(error.code).toBe('SNAPSHOT_INVALID');
    expect(error.context).toMatchObject({ path: 'tools[1]', tool_name: 'b' });
    snapshot.tools[1] = { spec: fullSpec('b'), enabled: false };
    expect((thrown(() => snapshotEntryJson(snapshot, 1, second, true)) as SnapshotInvalidError).code).toBe('SNAPSHOT_INVALID');
    snapshot.tools.length = 1;
    expect((thrown(() => snapshotEntryJson(snapshot, 1, second, true)) as SnapshotInvalidError).code).toBe('SNAPSHOT_INVALID');
  });

  it('gives key-reordered specs the same fingerprint and different specs different ones', () => {
    const a = parseSpec(minimalSpec('t', { input_schema: { x: { p: 1, q: [1, 2] }, y: 2 } }));
    const b = parseSpec(minimalSpec('t', { input_schema: { y: 2, x: { q: [1, 2], p: 1 } } }));
    const c = parseSpec(minimalSpec('t', { input_schema: { y: 2, x: { q: [2, 1], p: 1 } } }));
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(c.fingerprint).not.toBe(a.fingerprint);
  });

  it('shares nothing with the input', () => {
    const input = fullSpec('t');
    const spec = materializeSpec(parseSpec(input).canonical);
    expect(spec.input_schema).not.toBe(input.input_schema);
    expect(spec.tags).not.toBe(input.tags);
    expect(Object.isFrozen(input.input_schema)).toBe(false);
  });

  it('throws ValidationError with frozen issues and the tool name when it is a string', () => {
    const error = thrown(() => parseSpec({ ...fullSpec('t'), version: 1, tags: [''] })) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.context.tool_name).toBe('t');
    expect(error.context.issues).toBe(error.issues);
    expect(error.issues.map((issue) => issue.pathText)).toEqual(['version', 'tags[0]']);
    expect(error.issues.every((issue) => Object.isFrozen(issue) && Object.isFrozen(issue.path))).toBe(true);
    expect(error.message).toContain('"t"');
  });

  it('leaves tool_name out of the context when it is not a string', () => {
    const error = thrown(() => parseSpec({ tool_name: 5, input_schema: {}, output_schema: {} })) as ValidationError;
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.context.tool_name).toBeUndefined();
    expect(thrown(() => parseSpec(undefined))).toBeInstanceOf(ValidationError);
  });
});

describe('messages name the offending value (DESIGN: "Messages say what was wrong and with what value")', () => {
  // Audit of issue 12 / DESIGN.md: refinements (custom issues) left the value out of the message.
  it('a bad created_at in a snapshot, a lone surrogate and a NUL in the version', () => {
    const date = thrown(() => parseSnapshot({ tools: [{ spec: minimalSpec('s'), created_at: 'next tuesday' }] })) as SnapshotInvalidError;
    expect(date.code).toBe('SNAPSHOT_INVALID');
    expect(date.message).toContain('"next tuesday"');
    expect(date.issues[0]?.message).toContain('"next tuesday"');
    const surrogate = thrown(() => parseSpec({ ...minimalSpec('u'), description: 'bad \ud800' })) as ValidationError;
    expect(surrogate.code).toBe('VALIDATION_FAILED');
    expect(surrogate.message).toContain(JSON.stringify('bad \ud800'));
    const schemaSurrogate = thrown(() => parseSpec({ ...minimalSpec('u'), input_schema: { title: 'x \udc00' } })) as ValidationError;
    expect(schemaSurrogate.message).toContain(JSON.stringify('x \udc00'));
    const nul = thrown(() => parseSpec({ ...minimalSpec('n'), version: '1\u0000' })) as ValidationError;
    expect(nul.code).toBe('VALIDATION_FAILED');
    expect(nul.message).toContain(JSON.stringify('1\u0000'));
  });
});

describe('parseSpecs', () => {
  it('prepares a batch in order; [] is fine', () => {
    expect(parseSpecs([])).toEqual([]);
    expect(parseSpecs([fullSpec('b'), fullSpec('a')]).map((one) => one.tool_name)).toEqual(['b', 'a']);
  });

  it('reports every bad spec in one error, paths prefixed with the index', () => {
    const error = thrown(() =>
      parseSpecs([fullSpec('ok'), { ...fullSpec('x'), version: 1 }, { ...fullSpec('y'), tags: 'z' }]),
    ) as ValidationError;
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.issues.map((issue) => issue.pathText)).toEqual(['[1].version', '[2].tags']);
    expect(error.context).toMatchObject({ path: '[1].version', tool_name: 'x' });
  });

  it('reports a hole in a sparse batch (regression: Array#map skipped it)', () => {
    // eslint-disable-next-line no-sparse-arrays
    const error = thrown(() => parseSpecs([fullSpec('a'), , fullSpec('c')])) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.issues.map((issue) => issue.pathText)).toEqual(['[1]']);
  });

  it('a name given twice is DUPLICATE_TOOL with both paths', () => {
    const error = thrown(() => parseSpecs([fullSpec('a'), fullSpec('b'), fullSpec('a', '2')])) as DuplicateToolError;
    expect(error).toBeInstanceOf(DuplicateToolError);
    expect(error.context).toMatchObject({ tool_name: 'a', path: '[2]', first_path: '[0]' });
  });
});

describe('parseSnapshot', () => {
  it('returns one entry per tool with its path and the defaults applied', () => {
    const result = parseSnapshot({
      tools: [{ spec: fullSpec('b') }, { spec: minimalSpec('a'), enabled: false, created_at: '2025-01-31T12:00:00+00:00' }],
    });
    expect(result.map(({ tool_name, enabled, created_at, path }) => ({ tool_name, enabled, created_at, path }))).toEqual([
      { tool_name: 'b', enabled: true, created_at: null, path: 'tools[0]' },
      { tool_name: 'a', enabled: false, created_at: '2025-01-31T12:00:00+00:00', path: 'tools[1]' },
    ]);
    expect(result[0]?.fingerprint).toBe(fingerprintOfCanonical(canonicalJson({ ...fullSpec('b') })));
    // The canonical text is not kept: an import holds every entry until it writes.
    expect(result[0]).not.toHaveProperty('canonical');
  });

  it('a bad entry is SNAPSHOT_INVALID with the first path and the entry tool name', () => {
    const error = thrown(() =>
      parseSnapshot({ tools: [{ spec: fullSpec('a') }, { spec: { ...fullSpec('b'), version: 2 } }] }),
    ) as SnapshotInvalidError;
    expect(error).toBeInstanceOf(SnapshotInvalidError);
    expect(error.context).toMatchObject({ path: 'tools[1].spec.version', tool_name: 'b' });
    expect(error.issues[0]?.path).toEqual(['tools', 1, 'spec', 'version']);
  });

  it.each([
    ['null', null, ''],
    ['tools not an array', { tools: 3 }, 'tools'],
    ['an entry that is null', { tools: [null] }, 'tools[0]'],
    ['an extra key', { tools: [], extra: true }, ''],
  ])('SNAPSHOT_INVALID for %s, path %j, no tool name', (_label, input, path) => {
    const error = thrown(() => parseSnapshot(input)) as SnapshotInvalidError;
    expect(error.code).toBe('SNAPSHOT_INVALID');
    expect(error.context.path).toBe(path);
    expect(error.context.tool_name).toBeUndefined();
  });

  it('a name given twice is DUPLICATE_TOOL naming both places', () => {
    const error = thrown(() =>
      parseSnapshot({ tools: [{ spec: fullSpec('a') }, { spec: fullSpec('b') }, { spec: fullSpec('b', '2') }] }),
    ) as DuplicateToolError;
    expect(error.code).toBe('DUPLICATE_TOOL');
    expect(error.context).toMatchObject({ tool_name: 'b', path: 'tools[2]', first_path: 'tools[1]' });
  });
});

describe('the frozen spec parseSpec builds', () => {
  it('is materializeSpec(json): -0 as 0, __proto__ as an own key, the registered key order, shared objects copied apart', () => {
    const shared = { type: 'string' };
    const input = JSON.parse('{"output_schema":{"__proto__":{"x":-0},"b":[-0,1.5e-7,{"10":1,"9":2,"a":3}]},"tool_name":"t","input_schema":{}}') as Record<string, unknown>;
    (input.input_schema as Record<string, unknown>).p = shared;
    (input.input_schema as Record<string, unknown>).q = shared;
    const prepared = parseSpec(input);
    const expected = materializeSpec(prepared.json);
    expect(sameJsonData(prepared.spec, expected)).toBe(true);
    expect(Object.keys(prepared.spec)).toEqual(['output_schema', 'tool_name', 'input_schema', 'version', 'description', 'tags']);
    expect(Object.is((prepared.spec.output_schema.b as number[])[0], 0)).toBe(true);
    expect(Object.getPrototypeOf(prepared.spec.output_schema)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(prepared.spec.output_schema, '__proto__')).toBe(true);
    const schema = prepared.spec.input_schema as Record<string, unknown>;
    expect(schema.p).not.toBe(shared);
    expect(schema.p).not.toBe(schema.q);
    expect(isDeepFrozen(prepared.spec)).toBe(true);
    expect(Object.isFrozen(shared)).toBe(false);
  });
});

/** How the registered text was built before its fast path: the caller's keys in order, then the defaults. */
function referenceRegisteredJson(input: Record<string, unknown>): string {
  const spec = ToolSpec.parse(input);
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(input)) ordered[key] = spec[key as keyof ToolSpec];
  for (const key of ['tool_name', 'version', 'description', 'input_schema', 'output_schema', 'tags'] as const) if (!(key in ordered)) ordered[key] = spec[key];
  return JSON.stringify(ordered);
}

/** Equal as materializeSpec builds it: same keys in the same order at every depth, numbers by Object.is (so -0 is not 0). */
function sameJsonData(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b) || Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const keys = Object.keys(a);
  if (keys.join('\u0000') !== Object.keys(b).join('\u0000')) return false;
  return keys.every((key) => sameJsonData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

/** A JSON value the contracts accept: integers beyond 2^53 - 1 made small (-0 is kept). */
function acceptedJson(value: unknown): unknown {
  if (typeof value === 'number') return Math.abs(value) > Number.MAX_SAFE_INTEGER ? 1 : value;
  if (Array.isArray(value)) return value.map(acceptedJson);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, acceptedJson(item)]));
}

describe('the prepared texts (property)', () => {
  const text = fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\u2028', '😀', '\uffff') }));
  const schema = fc.dictionary(fc.string({ unit: fc.constantFrom('a', 'B', '1', '_', '"', '\ue000', '😀') }), fc.jsonValue({ maxDepth: 3 }).map(acceptedJson), { maxKeys: 6 });
  // Any subset of the fields, in any order, with optional ones given or left out.
  const spec = fc
    .record(
      {
        tool_name: fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/),
        // A version may hold anything but U+0000 (the contract refuses it there only).
        version: fc.option(text.map((value) => value.replaceAll('\u0000', ''))),
        description: fc.option(text),
        input_schema: schema,
        output_schema: schema,
        tags: fc.array(text.filter((tag) => tag.length > 0), { maxLength: 3 }),
      },
      { requiredKeys: ['tool_name', 'input_schema', 'output_schema'] },
    )
    .chain((fields) => fc.shuffledSubarray(Object.keys(fields), { minLength: Object.keys(fields).length }).map((order) => ({ fields, order })))
    .map(({ fields, order }) => Object.fromEntries(order.map((key) => [key, fields[key as keyof typeof fields]])));

  it('canonical is canonicalJson of the parsed spec, json the caller\'s order then the defaults, in parseSpec and an import\'s two passes alike', () => {
    fc.assert(
      fc.property(spec, (input) => {
        const prepared = parseSpec(input);
        expect(prepared.canonical).toBe(canonicalJson(ToolSpec.parse(input)));
        expect(prepared.fingerprint).toBe(fingerprintOfCanonical(prepared.canonical));
        expect(prepared.json).toBe(referenceRegisteredJson(input));
        expect(sameJsonData(prepared.spec, materializeSpec(prepared.json))).toBe(true);
        expect(isDeepFrozen(prepared.spec)).toBe(true);
        const snapshot = { tools: [{ spec: input }] };
        const [entry] = parseSnapshot(snapshot);
        if (entry === undefined) throw new Error('no entry');
        expect(entry.fingerprint).toBe(prepared.fingerprint);
        expect(snapshotEntryJson(snapshot, 0, entry, false)).toBe(prepared.json);
        expect(snapshotEntryJson(snapshot, 0, entry, true)).toBe(prepared.json);
      }),
      { numRuns: 500 },
    );
  });
});

describe('materializeSpec and makeRegistration', () => {
  it('builds a deeply frozen spec in the stored text\'s key order, keeping __proto__ as data', () => {
    const spec = materializeSpec(
      '{"description":null,"input_schema":{"__proto__":{"x":1}},"output_schema":{},"tags":["a"],"tool_name":"t","version":"1"}',
    );
    expect(Object.keys(spec)).toEqual(['description', 'input_schema', 'output_schema', 'tags', 'tool_name', 'version']);
    expect(Object.keys(spec.input_schema)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(spec.input_schema)).toBe(Object.prototype);
    expect(isDeepFrozen(spec)).toBe(true);
  });

  it('makes a frozen registration in field order', () => {
    const spec = materializeSpec(parseSpec(fullSpec('t')).canonical);
    const registration = makeRegistration(spec, false, null, null);
    expect(Object.keys(registration)).toEqual(['spec', 'enabled', 'created_at', 'deprecation']);
    expect(registration).toEqual({ spec, enabled: false, created_at: null, deprecation: null });
    expect(isDeepFrozen(registration)).toBe(true);
  });
});
