// Every lint rule: a spec that breaks it, and one that does not. Assertions are on rule ids,
// paths and severities, never on message text.
import { describe, expect, it } from 'vitest';
import { ProviderIncompatibleError, lintTools, toAnthropicTools } from '../../src/index.js';
import type { JsonObject, LintFinding, LintProvider, ToolSpecInput } from '../../src/index.js';
import { mcpRules } from '../../src/exports/mcp.js';
import type { ToolSpec } from '../../src/index.js';
import { cleanSchema, many, nested, tool } from './helpers.js';

interface Case {
  readonly provider: LintProvider;
  readonly rule: string;
  readonly strict?: boolean;
  /** What breaks the rule, and the finding's path (`null` for a request-level finding). */
  readonly bad: ToolSpecInput[];
  readonly path: string;
  readonly severity?: 'error' | 'warning';
  /** The nearest thing that does not. */
  readonly good: ToolSpecInput[];
}

const one = (schema: JsonObject, extra: Partial<ToolSpecInput> = {}): ToolSpecInput[] => [tool('a', schema, extra)];
const prop = (schema: JsonObject): JsonObject => cleanSchema({ properties: { q: schema } });
const withProps = (count: number, optional = false): JsonObject => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'string' }])),
  required: optional ? [] : Array.from({ length: count }, (_, i) => `p${i}`),
  additionalProperties: false,
});
const unions = (count: number): JsonObject => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`u${i}`, { type: ['string', 'null'] }])),
  required: Array.from({ length: count }, (_, i) => `u${i}`),
  additionalProperties: false,
});

const cases: Case[] = [
  // MCP
  { provider: 'mcp', rule: 'name-edge-character', bad: [tool('-a')], path: '/tool_name', severity: 'warning', good: [tool('a-b')] },
  { provider: 'mcp', rule: 'name-edge-character', bad: [tool('a.')], path: '/tool_name', severity: 'warning', good: [tool('a.b')] },
  { provider: 'mcp', rule: 'root-type-object', bad: one({ type: 'string' }), path: '/input_schema/type', good: one({ type: 'object' }) },
  { provider: 'mcp', rule: 'root-type-object', bad: one({ properties: {} }), path: '/input_schema/type', good: one({ type: 'object', properties: {} }) },
  { provider: 'mcp', rule: 'output-root-type-object', bad: one(cleanSchema(), { output_schema: { type: 'array' } }), path: '/output_schema/type', good: one(cleanSchema(), { output_schema: { type: 'object' } }) },
  { provider: 'mcp', rule: 'duplicate-name', bad: [tool('a'), tool('a')], path: '/tool_name', good: [tool('a'), tool('A')] },
  // OpenAI
  { provider: 'openai', rule: 'name-pattern', bad: [tool('service.doSomething')], path: '/tool_name', good: [tool('service_doSomething')] },
  { provider: 'openai', rule: 'name-pattern', bad: [tool('x'.repeat(65))], path: '/tool_name', good: [tool('x'.repeat(64))] },
  { provider: 'openai', rule: 'description-length', bad: one(cleanSchema(), { description: 'd'.repeat(1025) }), path: '/description', good: one(cleanSchema(), { description: 'd'.repeat(1024) }) },
  { provider: 'openai', rule: 'root-type-object', bad: one({ anyOf: [{ type: 'object' }] }), path: '/input_schema/type', good: one({ type: 'object' }) },
  { provider: 'openai', rule: 'root-composition', strict: true, bad: one(cleanSchema({ anyOf: [cleanSchema()] })), path: '/input_schema/anyOf', good: one(cleanSchema()) },
  { provider: 'openai', rule: 'root-composition', strict: true, bad: one(cleanSchema({ oneOf: [cleanSchema()] })), path: '/input_schema/oneOf', good: one(cleanSchema()) },
  // Not only strict: the API answers "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level".
  ...(['anyOf', 'oneOf', 'allOf', 'enum', 'const', 'not'] as const).map((keyword): Case => {
    const values: Record<string, JsonValueLike> = { enum: [{}], const: {}, not: { required: ['q'] } };
    const good = { type: 'object', properties: { q: { [keyword]: values[keyword] ?? [{ type: 'string' }] } } };
    return { provider: 'openai', rule: 'root-composition', bad: one({ type: 'object', properties: { q: { type: 'string' } }, [keyword]: values[keyword] ?? [{ required: ['q'] }] }), path: `/input_schema/${keyword}`, good: one(good) };
  }),
  // Not only strict: the API answers "array schema missing items" (a type list with "array" too).
  { provider: 'openai', rule: 'array-items', bad: one({ type: 'object', properties: { q: { type: 'array' } } }), path: '/input_schema/properties/q/items', good: one({ type: 'object', properties: { q: { type: 'array', items: { type: 'string' } } } }) },
  { provider: 'openai', rule: 'array-items', strict: true, bad: one(prop({ type: ['array', 'null'] })), path: '/input_schema/properties/q/items', good: one(prop({ type: ['array', 'null'], items: { type: 'string' } })) },
  { provider: 'openai', rule: 'strict-additional-properties', strict: true, bad: one(prop({ type: 'object', properties: {}, required: [] })), path: '/input_schema/properties/q/additionalProperties', good: one(prop({ type: 'object', properties: {}, required: [], additionalProperties: false })) },
  { provider: 'openai', rule: 'strict-required', strict: true, bad: one(cleanSchema({ required: [] })), path: '/input_schema/properties/q', good: one(prop({ type: ['string', 'null'] })) },
  ...['allOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'patternProperties', 'propertyNames', 'uniqueItems', 'prefixItems', 'contains', 'unevaluatedProperties', 'unevaluatedItems', 'minProperties', 'maxProperties'].map(
    (keyword): Case => {
      const values: Record<string, JsonValueLike> = { dependentRequired: { q: [] }, dependentSchemas: {}, patternProperties: {}, uniqueItems: true, prefixItems: [], minProperties: 1, maxProperties: 2, unevaluatedProperties: false, unevaluatedItems: false };
      return { provider: 'openai', rule: 'strict-unsupported-keyword', strict: true, bad: one(prop({ type: 'string', [keyword]: values[keyword] ?? {} })), path: `/input_schema/properties/q/${keyword}`, good: one(prop({ type: 'string' })) };
    },
  ),
  { provider: 'openai', rule: 'strict-external-ref', strict: true, bad: one(prop({ $ref: 'https://example.com/s.json' })), path: '/input_schema/properties/q/$ref', good: one(cleanSchema({ properties: { q: { $ref: '#/$defs/s' } }, $defs: { s: { type: 'string' } } })) },
  { provider: 'openai', rule: 'strict-format', strict: true, bad: one(prop({ type: 'string', format: 'uri' })), path: '/input_schema/properties/q/format', good: one(prop({ type: 'string', format: 'date-time' })) },
  { provider: 'openai', rule: 'strict-max-properties', strict: true, bad: one(withProps(5001)), path: '/input_schema', good: one(withProps(5000)) },
  { provider: 'openai', rule: 'strict-max-depth', strict: true, bad: one(nested(11)), path: '/input_schema' + '/properties/inner'.repeat(10), good: one(nested(10)) },
  { provider: 'openai', rule: 'strict-max-enum-values', strict: true, bad: one(cleanSchema({ properties: { q: { type: 'string', enum: Array.from({ length: 600 }, (_, i) => `a${i}`) }, r: { type: 'string', enum: Array.from({ length: 401 }, (_, i) => `b${i}`) } }, required: ['q', 'r'] })), path: '/input_schema', good: one(prop({ type: 'string', enum: Array.from({ length: 1000 }, (_, i) => `a${i}`) })) },
  { provider: 'openai', rule: 'max-tools', bad: many(129), path: '', good: many(128) },
  { provider: 'openai', rule: 'duplicate-name', bad: [tool('a'), tool('b'), tool('a')], path: '/tool_name', good: [tool('a'), tool('b')] },
  // Anthropic
  { provider: 'anthropic', rule: 'name-pattern', bad: [tool('service.doSomething')], path: '/tool_name', good: [tool('service-doSomething')] },
  { provider: 'anthropic', rule: 'root-type-object', bad: one({}), path: '/input_schema/type', good: one({ type: 'object' }) },
  { provider: 'anthropic', rule: 'root-composition', bad: one({ type: 'object', anyOf: [cleanSchema()] }), path: '/input_schema/anyOf', good: one(cleanSchema()) },
  { provider: 'anthropic', rule: 'root-composition', bad: one({ type: 'object', allOf: [cleanSchema()] }), path: '/input_schema/allOf', good: one(cleanSchema({ properties: { q: { allOf: [{ type: 'string' }] } } })) },
  // The API: "tools.N.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'" (the top level only).
  { provider: 'anthropic', rule: 'property-key-pattern', bad: one({ type: 'object', properties: { 'filter[id]': { type: 'string' } } }), path: '/input_schema/properties/filter[id]', good: one({ type: 'object', properties: { 'filter.id': { type: 'string' }, nested: { type: 'object', properties: { 'filter[id]': { type: 'string' } } } } }) },
  { provider: 'anthropic', rule: 'property-key-pattern', bad: one({ type: 'object', properties: { 'Account Number': { type: 'string' }, ['k'.repeat(65)]: { type: 'string' } } }), path: '/input_schema/properties/Account Number', good: one({ type: 'object', properties: { Account_Number: { type: 'string' }, ['k'.repeat(64)]: { type: 'string' } } }) },
  // The API: "tools.N.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12" (anthropics/claude-code#586).
  { provider: 'anthropic', rule: 'schema-invalid', bad: one(prop({ type: 'strin' })), path: '/input_schema/properties/q/type', good: one(prop({ type: ['string', 'null'] })) },
  { provider: 'anthropic', rule: 'schema-invalid', bad: one(cleanSchema({ required: true })), path: '/input_schema/required', good: one(cleanSchema({ required: [] })) },
  { provider: 'anthropic', rule: 'schema-invalid', bad: one({ type: 'object', properties: [] }), path: '/input_schema/properties', good: one({ type: 'object', properties: {} }) },
  { provider: 'anthropic', rule: 'schema-invalid', bad: one(prop({ type: 'string', minLength: -1 })), path: '/input_schema/properties/q/minLength', good: one(prop({ type: 'string', minLength: 0 })) },
  { provider: 'anthropic', rule: 'schema-invalid', bad: one(prop({ enum: 5 })), path: '/input_schema/properties/q/enum', good: one(prop({ enum: [5] })) },
  { provider: 'anthropic', rule: 'schema-invalid', bad: one(cleanSchema({ $defs: { s: { anyOf: [{ type: 'string' }, { not: { pattern: 5 } }] } } })), path: '/input_schema/$defs/s/anyOf/1/not/pattern', good: one(cleanSchema({ $defs: { s: { anyOf: [{ type: 'string' }, { not: { pattern: '^a' } }] } } })) },
  // Draft-07 tuple `items` is refused even under a draft-07 `$schema`: Anthropic validates every input_schema as 2020-12 (docs/providers/anthropic.md).
  {
    provider: 'anthropic', rule: 'schema-invalid',
    bad: one({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { q: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false } } }),
    path: '/input_schema/properties/q/items',
    good: one({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { q: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false } } }),
  },
  {
    provider: 'anthropic', rule: 'schema-invalid',
    bad: one(cleanSchema({ properties: { q: { $ref: '#/$defs/s' } }, $defs: { s: { type: 'string', maxLength: '3' } } })),
    path: '/input_schema/$defs/s/maxLength',
    good: one(cleanSchema({
      properties: { q: { $ref: '#/$defs/s' }, r: { type: 'object', properties: { kind: { const: 'a' } }, if: { required: ['kind'] }, then: { required: ['x'] }, else: false, dependentRequired: { kind: ['x'] }, unevaluatedProperties: false } },
      $defs: { s: { type: 'string', maxLength: 3, format: 'not-a-known-format' } },
      definitions: { legacy: { type: 'integer' } },
    })),
  },
  { provider: 'anthropic', rule: 'strict-additional-properties', strict: true, bad: one(cleanSchema({ additionalProperties: true })), path: '/input_schema/additionalProperties', good: one(cleanSchema()) },
  ...['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'maxItems', 'uniqueItems', 'contains'].map(
    (keyword): Case => ({ provider: 'anthropic', rule: 'strict-unsupported-keyword', strict: true, bad: one(prop({ type: 'number', [keyword]: keyword === 'uniqueItems' ? true : keyword === 'contains' ? {} : 2 })), path: `/input_schema/properties/q/${keyword}`, good: one(prop({ type: 'number' })) }),
  ),
  { provider: 'anthropic', rule: 'strict-unsupported-keyword', strict: true, bad: one(prop({ type: 'array', items: { type: 'string' }, minItems: 2 })), path: '/input_schema/properties/q/minItems', good: one(prop({ type: 'array', items: { type: 'string' }, minItems: 1 })) },
  { provider: 'anthropic', rule: 'strict-external-ref', strict: true, bad: one(prop({ $ref: 'other.json#/a' })), path: '/input_schema/properties/q/$ref', good: one(cleanSchema({ properties: { q: { $ref: '#/$defs/s' } }, $defs: { s: { type: 'string' } } })) },
  {
    provider: 'anthropic', rule: 'strict-recursive-schema', strict: true,
    bad: one(cleanSchema({ properties: { q: { $ref: '#/$defs/node' } }, $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } }, required: ['next'], additionalProperties: false } } })),
    path: '/input_schema/$defs/node/properties/next/$ref',
    good: one(cleanSchema({ properties: { q: { $ref: '#/$defs/leaf' } }, $defs: { leaf: { type: 'string' } } })),
  },
  { provider: 'anthropic', rule: 'strict-recursive-schema', strict: true, bad: one(cleanSchema({ properties: { q: { $ref: '#' } } })), path: '/input_schema/properties/q/$ref', good: one(cleanSchema()) },
  { provider: 'anthropic', rule: 'strict-max-tools', strict: true, bad: many(21), path: '', good: many(20) },
  { provider: 'anthropic', rule: 'strict-max-optional-parameters', strict: true, bad: [tool('a', withProps(13, true)), tool('b', withProps(12, true))], path: '', good: [tool('a', withProps(12, true)), tool('b', withProps(12, true))] },
  { provider: 'anthropic', rule: 'strict-max-union-parameters', strict: true, bad: [tool('a', unions(9)), tool('b', unions(8))], path: '', good: [tool('a', unions(8)), tool('b', unions(8))] },
  // Gemini (parametersJsonSchema)
  { provider: 'gemini', rule: 'name-pattern', bad: [tool('1tool')], path: '/tool_name', good: [tool('_tool.v1')] },
  { provider: 'gemini', rule: 'name-pattern', bad: [tool('-tool')], path: '/tool_name', good: [tool('tool-')] },
  { provider: 'gemini', rule: 'name-length', bad: [tool('g'.repeat(65))], path: '/tool_name', severity: 'warning', good: [tool('g'.repeat(64))] },
  { provider: 'gemini', rule: 'root-type-object', bad: one({ type: 'array' }), path: '/input_schema/type', good: one({ type: 'object' }) },
  { provider: 'gemini', rule: 'ref-siblings', bad: one(cleanSchema({ properties: { q: { $ref: '#/$defs/s', type: 'string' } }, $defs: { s: { type: 'string' } } })), path: '/input_schema/properties/q/type', good: one(cleanSchema({ properties: { q: { $ref: '#/$defs/s', description: 'd', default: 'x', $comment: 'c' } }, $defs: { s: { type: 'string' } } })) },
  { provider: 'gemini', rule: 'max-tools', bad: many(513), path: '', good: many(512) },
  { provider: 'gemini', rule: 'duplicate-name', bad: [tool('a'), tool('a')], path: '/tool_name', good: [tool('a')] },
  // Gemini (parameters, the OpenAPI subset)
  ...(['additionalProperties', '$ref', '$defs', 'const', 'exclusiveMinimum', 'multipleOf', '$schema'] as const).map((keyword): Case => {
    const values: Record<string, JsonValueLike> = { additionalProperties: false, $ref: '#/x', $defs: {}, const: 'x', exclusiveMinimum: 1, multipleOf: 2, $schema: 'https://json-schema.org/draft/2020-12/schema' };
    const good = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    return { provider: 'gemini-openapi', rule: 'unsupported-keyword', bad: one({ ...good, [keyword]: values[keyword] as JsonValueLike }), path: `/input_schema/${keyword.replace('/', '~1')}`, good: one(good) };
  }),
  { provider: 'gemini-openapi', rule: 'unsupported-keyword', bad: one({ type: 'object', properties: { q: { type: 'object', properties: { r: { type: 'string' } }, additionalProperties: false } } }), path: '/input_schema/properties/q/additionalProperties', good: one({ type: 'object', properties: { q: { type: 'object', properties: { r: { type: 'string' } } } } }) },
  { provider: 'gemini-openapi', rule: 'enum-non-string', bad: one({ type: 'object', properties: { n: { type: 'integer', enum: [1, 2] } } }), path: '/input_schema/properties/n/enum', good: one({ type: 'object', properties: { n: { type: 'string', enum: ['1', '2'] } } }) },
  { provider: 'gemini-openapi', rule: 'anyof-siblings', bad: one({ type: 'object', properties: { n: { anyOf: [{ type: 'string' }, { type: 'integer' }], description: 'd' } } }), path: '/input_schema/properties/n/anyOf', good: one({ type: 'object', properties: { n: { anyOf: [{ type: 'string' }, { type: 'integer' }] } } }) },
  { provider: 'gemini-openapi', rule: 'type-list', bad: one({ type: 'object', properties: { n: { type: ['string', 'null'] } } }), path: '/input_schema/properties/n/type', good: one({ type: 'object', properties: { n: { type: 'string', nullable: true } } }) },
  { provider: 'gemini-openapi', rule: 'type-null', bad: one({ type: 'object', properties: { n: { type: 'null' } } }), path: '/input_schema/properties/n/type', good: one({ type: 'object', properties: { n: { type: 'string', nullable: true } } }) },
  { provider: 'gemini-openapi', rule: 'type-null', bad: one({ type: 'object', properties: { n: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }), path: '/input_schema/properties/n/anyOf/1/type', good: one({ type: 'object', properties: { n: { anyOf: [{ type: 'string' }, { type: 'integer' }] } } }) },
  { provider: 'gemini-openapi', rule: 'type-unknown', bad: one({ type: 'object', properties: { n: { type: 'enum' } } }), path: '/input_schema/properties/n/type', good: one({ type: 'object', properties: { n: { type: 'STRING' } } }) },
  { provider: 'gemini-openapi', rule: 'enum-type', bad: one({ type: 'object', properties: { n: { enum: ['a', 'b'] } } }), path: '/input_schema/properties/n/enum', good: one({ type: 'object', properties: { n: { type: 'string', enum: ['a', 'b'] } } }) },
  { provider: 'gemini-openapi', rule: 'enum-type', bad: one({ type: 'object', properties: { n: { type: 'integer', enum: ['1', '2'] } } }), path: '/input_schema/properties/n/enum', good: one({ type: 'object', properties: { n: { type: 'integer' } } }) },
  { provider: 'gemini-openapi', rule: 'schema-not-object', bad: one({ type: 'object', properties: { n: true } }), path: '/input_schema/properties/n', good: one({ type: 'object', properties: { n: { type: 'boolean' } } }) },
  { provider: 'gemini-openapi', rule: 'schema-not-object', bad: one({ type: 'object', properties: { n: { type: 'array', items: [{ type: 'string' }] } } }), path: '/input_schema/properties/n/items', good: one({ type: 'object', properties: { n: { type: 'array', items: { type: 'string' } } } }) },
  { provider: 'gemini-openapi', rule: 'properties-non-object', bad: one({ type: 'object', properties: { n: { properties: { m: { type: 'string' } } } } }), path: '/input_schema/properties/n/properties', good: one({ type: 'object', properties: { n: { type: 'object', properties: { m: { type: 'string' } } } } }) },
  { provider: 'gemini-openapi', rule: 'object-empty-properties', bad: one({ type: 'object', properties: { n: { type: 'object' } } }), path: '/input_schema/properties/n/properties', good: one({ type: 'object', properties: { n: { type: 'object', properties: { m: { type: 'string' } } } } }) },
  { provider: 'gemini-openapi', rule: 'object-empty-properties', bad: one({ type: 'object', description: 'takes nothing' }), path: '/input_schema/properties', good: one({ type: 'object' }) },
  { provider: 'gemini-openapi', rule: 'array-without-items', bad: one({ type: 'object', properties: { n: { type: 'array' } } }), path: '/input_schema/properties/n/items', good: one({ type: 'object', properties: { n: { type: 'array', items: { type: 'string' } } } }) },
  { provider: 'gemini-openapi', rule: 'required-undefined', bad: one({ type: 'object', properties: { n: { type: 'string' } }, required: ['n', 'm'] }), path: '/input_schema/required/1', good: one({ type: 'object', properties: { n: { type: 'string' } }, required: ['n'] }) },
  { provider: 'gemini-openapi', rule: 'name-pattern', bad: [tool('.x')], path: '/tool_name', good: [tool('x')] },
  { provider: 'gemini-openapi', rule: 'max-tools', bad: many(513, () => ({ type: 'object', properties: { q: { type: 'string' } } })), path: '', good: many(512, () => ({ type: 'object', properties: { q: { type: 'string' } } })) },
];

type JsonValueLike = JsonObject[string];

function hits(found: readonly LintFinding[], rule: string): LintFinding[] {
  return found.filter((finding) => finding.rule === rule);
}

describe.each(cases.map((c, index) => [`${c.provider} ${c.rule}${c.strict === true ? ' (strict)' : ''} #${index}`, c] as const))('%s', (_label, c) => {
  it('is reported for a spec that breaks it, with its path and severity', () => {
    const found = hits(lintTools(c.bad, { providers: [c.provider], strict: c.strict ?? false }), c.rule);
    expect(found.length).toBeGreaterThan(0);
    const first = found[0] as LintFinding;
    expect(first.path).toBe(c.path);
    expect(first.provider).toBe(c.provider);
    expect(first.severity).toBe(c.severity ?? 'error');
    if (c.path === '') expect(first.tool_name).toBeNull();
    else expect(c.bad.map((spec) => spec.tool_name)).toContain(first.tool_name);
  });
  it('is not reported for a spec that keeps it', () => {
    expect(hits(lintTools(c.good, { providers: [c.provider], strict: c.strict ?? false }), c.rule)).toEqual([]);
  });
});

describe('rules that need strict mode', () => {
  it('OpenAI strict rules stay quiet without strict', () => {
    const found = lintTools(one(prop({ type: 'string', format: 'uri', uniqueItems: true })), { providers: ['openai'] });
    expect(found).toEqual([]);
  });
  it('Anthropic strict rules stay quiet without strict', () => {
    expect(lintTools(many(30, () => withProps(3, true)), { providers: ['anthropic'] })).toEqual([]);
  });
  it('the root allOf (or not) under OpenAI strict is one root-composition finding, not also an unsupported keyword', () => {
    const found = lintTools(one(cleanSchema({ allOf: [cleanSchema()], not: { required: ['q'] } })), { providers: ['openai'], strict: true });
    expect(found.filter((f) => f.path === '/input_schema/allOf' || f.path === '/input_schema/not').map((f) => f.rule)).toEqual(['root-composition', 'root-composition']);
  });
  it('an array without items under OpenAI strict is one array-items finding', () => {
    const found = lintTools(one(prop({ type: 'array' })), { providers: ['openai'], strict: true });
    expect(found.map((f) => [f.rule, f.path])).toEqual([['array-items', '/input_schema/properties/q/items']]);
  });
});

describe('Anthropic schema-invalid', () => {
  const broken = cleanSchema({ required: true, properties: { q: { type: 'strin' }, r: { type: 'array', items: [{ type: 'string' }] } } });
  it('reports every invalid place of a schema, once each', () => {
    const found = lintTools(one(broken), { providers: ['anthropic'] });
    expect(found.map((f) => [f.rule, f.path])).toEqual([
      ['schema-invalid', '/input_schema/properties/q/type'],
      ['schema-invalid', '/input_schema/properties/r/items'],
      ['schema-invalid', '/input_schema/required'],
    ]);
  });
  it('toAnthropicTools refuses the tool with PROVIDER_INCOMPATIBLE, and skip leaves it out', () => {
    const specs = [tool('bad', broken), tool('fine')];
    let error: unknown;
    try {
      toAnthropicTools(specs);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderIncompatibleError);
    expect(((error as ProviderIncompatibleError).context.findings as LintFinding[]).map((f) => [f.tool_name, f.rule])).toEqual(Array.from({ length: 3 }, () => ['bad', 'schema-invalid']));
    expect(toAnthropicTools(specs, { onIncompatible: 'skip' }).map((exported) => exported.name)).toEqual(['fine']);
  });
});

describe('MCP', () => {
  it('name-pattern: the rule exists even though the ToolSpec contract already refuses such names', () => {
    const bad = { tool_name: 'a b', version: null, description: null, input_schema: { type: 'object' }, output_schema: {}, tags: [] } as ToolSpec;
    const context = { strict: false, revision: '2025-11-25' } as const;
    expect(mcpRules.tool(bad, context).map((hit) => [hit.rule, hit.path, hit.severity])).toEqual([['name-pattern', '/tool_name', 'error']]);
    expect(mcpRules.tool({ ...bad, tool_name: 'a_b' }, context)).toEqual([]);
  });
  it('schema-dialect-revision: a $schema is a warning for 2025-06-18 only', () => {
    const specs = one(cleanSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema' }));
    const old = lintTools(specs, { providers: ['mcp'], revision: '2025-06-18' });
    expect(old.map((f) => [f.rule, f.path, f.severity])).toEqual([['schema-dialect-revision', '/input_schema/$schema', 'warning']]);
    expect(lintTools(specs, { providers: ['mcp'] })).toEqual([]);
    expect(lintTools(one(cleanSchema()), { providers: ['mcp'], revision: '2025-06-18' })).toEqual([]);
  });
  it('an empty output_schema is not checked (it is left out of the export)', () => {
    expect(lintTools(one(cleanSchema(), { output_schema: {} }), { providers: ['mcp'] })).toEqual([]);
  });
});

describe('paths are JSON Pointers', () => {
  it('escapes ~ and / in property names', () => {
    const found = lintTools(one(cleanSchema({ properties: { 'a/b~c': { type: 'string', format: 'uri' } }, required: ['a/b~c'] })), { providers: ['openai'], strict: true });
    expect(found.map((f) => f.path)).toEqual(['/input_schema/properties/a~1b~0c/format']);
  });
});
