// Generated JSON Schemas for the oracle tests: near the strict subsets of the providers, so
// that both sides of every rule (accepted and refused) come up often.
import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { JsonObject, JsonValue } from '../../src/index.js';

const names = fc.constantFrom('a', 'b', 'c', 'd');
/** A keyword some provider refuses, with a value of the right kind. */
const extraKeyword = fc.constantFrom<[string, JsonValue]>(
  ['description', 'd'], ['title', 't'], ['default', 'x'], ['default', null], ['examples', ['x']], ['$comment', 'c'],
  ['minimum', 1], ['maxLength', 3], ['pattern', '^a'], ['format', 'date-time'], ['format', 'uri'], ['format', 'regex'],
  ['minItems', 1], ['minItems', 2], ['maxItems', 4], ['uniqueItems', true], ['not', {}], ['if', {}],
  ['minProperties', 1], ['propertyNames', { type: 'string' }], ['patternProperties', {}], ['dependentRequired', {}],
  ['additionalItems', false], ['contentEncoding', 'base64'], ['$anchor', 'x'], ['$id', 'x'], ['nullable', true], ['deprecated', true],
);

/** Mostly true. */
const often = fc.integer({ min: 0, max: 9 }).map((n) => n > 1);
/** Mostly false. */
const rarely = often.map((value) => !value);

const goodLeaf: fc.Arbitrary<JsonValue> = fc.constantFrom<JsonValue>(
  { type: 'string' },
  { type: ['string', 'null'] },
  { type: 'integer', enum: [1, 2] },
  { enum: ['a', 'b'] },
  { type: 'string', format: 'date-time' },
  { type: 'number', description: 'n' },
  { anyOf: [{ type: 'string' }, { type: 'null' }] },
);

const leaf: fc.Arbitrary<JsonValue> = fc.oneof(
  { arbitrary: goodLeaf, weight: 12 },
  fc.constant<JsonValue>({ type: 'string' }),
  fc.constant<JsonValue>({ enum: [{ a: 1 }] }),
  fc.constant<JsonValue>({ enum: [] }),
  fc.constant<JsonValue>({ const: 'x' }),
  fc.constant<JsonValue>({ type: 'boolean' }),
  fc.constant<JsonValue>({ type: 'array' }),
  fc.constant<JsonValue>({ type: 'array', items: [{ type: 'string' }] }),
  fc.constant<JsonValue>({}),
  fc.constant<JsonValue>({ description: 'untyped' }),
  fc.constant<JsonValue>(true),
  fc.constant<JsonValue>(false),
  fc.constant<JsonValue>({ $ref: '#/$defs/d' }),
  fc.constant<JsonValue>({ $ref: '#/$defs/missing' }),
  fc.constant<JsonValue>({ $ref: '#/$defs/d', description: 'd' }),
  fc.constant<JsonValue>({ $ref: '#/$defs/d', type: 'string' }),
  fc.constant<JsonValue>({ $ref: 'https://example.com/s.json' }),
);

export const subschema: fc.Arbitrary<JsonValue> = fc.letrec<{ node: JsonValue; object: JsonObject }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: leaf, weight: 4 },
    fc.tuple(leaf, extraKeyword).map(([schema, [key, value]]) => (typeof schema === 'object' && schema !== null && !Array.isArray(schema) ? { ...schema, [key]: value } : schema)),
    { arbitrary: tie('object'), weight: 2 },
    tie('node').map((items) => ({ type: 'array', items })),
    fc.array(tie('node'), { minLength: 1, maxLength: 2 }).map((anyOf) => ({ anyOf })),
    fc.array(tie('node'), { minLength: 1, maxLength: 2 }).map((oneOf) => ({ oneOf })),
    fc.array(tie('node'), { minLength: 1, maxLength: 2 }).map((allOf) => ({ allOf })),
  ),
  object: objectOf(tie('node')),
})).node;

function objectOf(node: fc.Arbitrary<JsonValue>): fc.Arbitrary<JsonObject> {
  return fc
    .record({
      properties: fc.dictionary(names, node, { maxKeys: 3 }),
      requiredAll: often,
      extraRequired: rarely,
      additionalProperties: fc.constantFrom<JsonValue | undefined>(false, false, false, false, false, false, false, true, undefined, { type: 'string' }),
      typed: fc.constantFrom<JsonValue | undefined>('object', 'object', 'object', 'object', 'object', ['object', 'null'], undefined),
      withProperties: fc.boolean(),
    })
    .map(({ properties, requiredAll, extraRequired, additionalProperties, typed, withProperties }) => {
      const schema: JsonObject = {};
      if (typed !== undefined) schema.type = typed;
      const keys = Object.keys(properties);
      if (withProperties || keys.length > 0) schema.properties = properties;
      const required = requiredAll ? keys : keys.slice(1);
      if (extraRequired) required.push('zz');
      if (required.length > 0 || withProperties) schema.required = required;
      if (additionalProperties !== undefined) schema.additionalProperties = additionalProperties;
      return schema;
    });
}

/** A root input schema: an object (sometimes with `$defs` and extra root keywords). */
export const rootSchema: fc.Arbitrary<JsonObject> = fc
  .tuple(objectOf(subschema), fc.boolean(), fc.option(extraKeyword, { freq: 4 }), fc.boolean())
  .map(([schema, withDefs, extra, typed]) => {
    const root: JsonObject = { ...schema, type: 'object' };
    if (!typed) delete root.type;
    if (withDefs) root.$defs = { d: { type: 'string' } };
    if (extra !== null) root[extra[0]] = extra[1];
    return root;
  });

/** Both sides with `required` sorted and key order ignored: canonical text for comparing schemas. */
export function canonical(value: unknown): string {
  const sortKeys = (v: unknown, key?: string): unknown => {
    if (Array.isArray(v)) {
      const items = v.map((item) => sortKeys(item));
      return key === 'required' ? [...items].sort() : items;
    }
    if (typeof v !== 'object' || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k], k);
    return out;
  };
  return JSON.stringify(sortKeys(value));
}

/** What a provider's SDK does with a schema: `refused` (throws), `changed` (it would send something else) or `same`. */
export type SdkVerdict = 'refused' | 'changed' | 'same';

/**
 * The oracle tests of a strict mode: the named cases, then generated schemas (which reach both
 * verdicts); the lint reports an error exactly when the SDK refuses or changes a schema (rules
 * from the docs that the SDK does not check, `docsOnly`, may add errors). `accepted` checks
 * the export of a schema the lint accepts.
 */
export function strictOracleTests(options: {
  /** Named schemas (the SDK's own test cases): each must get an error exactly when the SDK refuses or changes it. */
  cases: Readonly<Record<string, JsonObject>>;
  errorsOf: (schema: JsonObject) => string[];
  verdict: (schema: JsonObject) => SdkVerdict;
  docsOnly: ReadonlySet<string>;
  minClean: number;
  accepted: (schema: JsonObject) => void;
}): void {
  const { cases, errorsOf, verdict, docsOnly, minClean, accepted } = options;
  for (const [name, schema] of Object.entries(cases)) {
    it(name, () => {
      const sdk = verdict(schema);
      const errors = errorsOf(schema);
      if (sdk === 'same') expect(errors).toEqual([]);
      else expect(errors.length, `the SDK ${sdk} it`).toBeGreaterThan(0);
    });
  }

  it('the generated schemas reach both verdicts often', () => {
    const sample = fc.sample(rootSchema, { numRuns: 1000, seed: 9 });
    const clean = sample.filter((schema) => errorsOf(schema).length === 0).length;
    expect(clean).toBeGreaterThan(minClean);
    expect(sample.length - clean).toBeGreaterThan(minClean);
  });

  it('property: lint clean <=> the SDK sends the schema unchanged (apart from rules from the docs)', () => {
    fc.assert(
      fc.property(rootSchema, (schema) => {
        const sdk = verdict(schema);
        const errors = errorsOf(schema);
        if (sdk === 'same') expect(errors.filter((rule) => !docsOnly.has(rule))).toEqual([]);
        else expect(errors.length, `the SDK ${sdk} it`).toBeGreaterThan(0);
        if (errors.length === 0) accepted(schema);
      }),
      { numRuns: 2000 },
    );
  });
}
