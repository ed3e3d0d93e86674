// Anthropic strict tool use against @anthropic-ai/sdk's own transformJSONSchema (what its zod,
// Standard Schema and JSON Schema helpers send): the SDK keeps what strict mode supports and
// moves everything else into the description, or throws. The lint must report an error for
// every schema the SDK throws on or has to change. Three keywords the structured-outputs docs
// list as supported ("default property for all supported types", `pattern` regexes,
// "$ref, $def, and definitions") are taken although the SDK moves them; they are left out
// before asking the SDK.
import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import { describe, expect } from 'vitest';
import { lintTools, toAnthropicTools } from '../../src/index.js';
import type { JsonObject, JsonValue } from '../../src/index.js';
import { canonical, strictOracleTests } from './schema-arbitrary.js';
import type { SdkVerdict } from './schema-arbitrary.js';

/** Rules from the docs (and the issue) that the SDK transform does not check. */
const API_ONLY_RULES = new Set(['strict-recursive-schema', 'strict-external-ref', 'strict-allof-ref']);
const DOCS_SUPPORTED = new Set(['default', 'pattern', 'definitions']);

function errorsOf(schema: JsonObject): string[] {
  return lintTools([{ tool_name: 't', input_schema: schema, output_schema: {} }], { providers: ['anthropic'], strict: true })
    .filter((f) => f.severity === 'error' && f.tool_name !== null)
    .map((f) => f.rule);
}

/** The schema without the docs-supported keywords, and with the SDK's harmless rewrites: no `type` beside enum/const, no `$schema`, `properties: {}` on an object without. */
function normalised(value: JsonValue, dropDocsSupported: boolean): JsonValue {
  if (Array.isArray(value)) return value.map((item) => normalised(item, dropDocsSupported));
  if (typeof value !== 'object' || value === null) return value;
  const out: JsonObject = {};
  const literal = 'enum' in value || 'const' in value;
  for (const [key, item] of Object.entries(value)) {
    // Beside a `$ref` they are dropped like any other sibling (strict-ref-siblings): the SDK decides those.
    if (dropDocsSupported && DOCS_SUPPORTED.has(key) && !('$ref' in value)) continue;
    if (key === '$schema' || (key === 'type' && literal && !('$ref' in value))) continue;
    // The SDK handles type-specific keywords for one type only; a nullable type ([T, "null"]) is a union the API takes.
    if (dropDocsSupported && key === 'type' && Array.isArray(item) && item.length === 2 && item.includes('null')) {
      out.type = item.find((type) => type !== 'null') as JsonValue;
      continue;
    }
    out[key] = key === 'enum' || key === 'const' ? item : normalised(item, dropDocsSupported);
  }
  if (out.type === 'object' && !('properties' in out) && !('$ref' in value)) out.properties = {};
  return out;
}

function sdkVerdict(schema: JsonObject): SdkVerdict {
  const asked = normalised(schema, true) as JsonObject;
  let sent: unknown;
  try {
    sent = transformJSONSchema(structuredClone(asked) as never);
  } catch {
    return 'refused';
  }
  return canonical(normalised(sent as JsonValue, false)) === canonical(asked) ? 'same' : 'changed';
}

describe('Anthropic strict: lintTools agrees with @anthropic-ai/sdk transformJSONSchema', () => {
  // Cases re-expressed from the SDK's tests/helpers/transform-json-schema.test.ts (each verdict is the SDK's own).
  const base = (properties: JsonObject): JsonObject => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false });
  const cases: Record<string, JsonObject> = {
    'minimum and default on an integer': base({ bonus: { type: 'integer', default: 100000, minimum: 100000, title: 'Bonus', description: 'Annual bonus in USD' } }),
    'maximum and minimum': base({ count: { type: 'integer', maximum: 10, minimum: 1 } }),
    'minItems 1 is kept': base({ tags: { type: 'array', items: { type: 'string' }, minItems: 1 } }),
    'minItems 3 is moved': base({ tags: { type: 'array', items: { type: 'string' }, minItems: 3 } }),
    'nested object without additionalProperties': base({ user: { type: 'object', properties: { age: { type: 'integer' } }, required: ['age'] } }),
    'additionalProperties: true': { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: true },
    'supported string formats (uri included)': base({ email: { type: 'string', format: 'email' }, date: { type: 'string', format: 'date-time' }, website: { type: 'string', format: 'uri' } }),
    'unsupported string formats': base({ password: { type: 'string', format: 'password' }, custom: { type: 'string', format: 'custom-format' } }),
    'enum of objects': base({ choice: { enum: [{ a: 1 }, { b: 2 }] } }),
    'empty enum': base({ choice: { type: 'string', enum: [] } }),
    'const object': base({ fixed: { const: { a: 1 } } }),
    'oneOf (sent as anyOf)': base({ value: { oneOf: [{ type: 'string' }, { type: 'integer' }] } }),
    'untyped schema': base({ anything: {} }),
    'ref with a description beside it': { ...base({ p: { $ref: '#/$defs/P', description: 'the person' } }), $defs: { P: base({ name: { type: 'string' } }) } },
    'not and examples': base({ a: { type: 'string', not: { const: 'x' } }, b: { type: 'string', examples: ['x'] } }),
    'boolean property schema': base({ a: true }),
    'strict already': { ...base({ name: { type: 'string', description: 'n' }, unit: { type: ['string', 'null'], enum: ['C', 'F', null] }, p: { $ref: '#/$defs/P' } }), $defs: { P: base({ name: { type: 'string' } }) } },
    'docs-supported default and pattern': base({ code: { type: 'string', pattern: '^[A-Z]{3}$', default: 'ABC' } }),
  };

  strictOracleTests({
    cases,
    errorsOf,
    verdict: sdkVerdict,
    docsOnly: API_ONLY_RULES,
    minClean: 25,
    accepted: (schema) => {
      const [exported] = toAnthropicTools([{ tool_name: 't', input_schema: schema, output_schema: {} }], { strict: true });
      expect(exported?.input_schema).toEqual(schema);
    },
  });
});
