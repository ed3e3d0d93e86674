// OpenAI strict mode against openai-node's own strict transform (`toStrictJsonSchema`, what
// its zod / Standard Schema helpers run before a request): the lint must report an error for
// every schema the transform refuses or has to change, and an accepted schema must be what the
// transform returns (up to the meaning-preserving normalisations listed below).
import { toStrictJsonSchema } from 'openai/lib/transform';
import { describe, expect } from 'vitest';
import { lintTools, toOpenAITools } from '../../src/index.js';
import type { JsonObject, JsonValue } from '../../src/index.js';
import { canonical, strictOracleTests } from './schema-arbitrary.js';
import type { SdkVerdict } from './schema-arbitrary.js';

/** Rules that come from the API docs and the issue, beyond what the SDK transform checks. */
const API_ONLY_RULES = new Set(['strict-format', 'root-composition', 'strict-max-properties', 'strict-max-depth', 'strict-max-enum-values']);

function errorsOf(schema: JsonObject): string[] {
  return lintTools([{ tool_name: 't', input_schema: schema, output_schema: {} }], { providers: ['openai'], strict: true })
    .filter((f) => f.severity === 'error')
    .map((f) => f.rule);
}

/** The transform's harmless normalisations, applied to both sides: no `default: null`, one-type lists as the type, no empty `properties` / `required`. */
function normalised(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(normalised);
  if (typeof value !== 'object' || value === null) return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === 'default' && item === null) continue;
    if (key === 'type' && Array.isArray(item) && item.length === 1) out[key] = item[0] as JsonValue;
    else if ((key === 'required' && Array.isArray(item) && item.length === 0) || (key === 'properties' && typeof item === 'object' && item !== null && Object.keys(item).length === 0)) continue;
    else out[key] = normalised(item);
  }
  return out;
}

/** What openai-node does with the schema: `refused`, `changed` (it would send something else) or `same`. */
function sdkVerdict(schema: JsonObject): SdkVerdict {
  let strict: unknown;
  try {
    strict = toStrictJsonSchema(structuredClone(schema) as never);
  } catch {
    return 'refused';
  }
  return canonical(normalised(strict as JsonValue)) === canonical(normalised(schema)) ? 'same' : 'changed';
}

describe('OpenAI strict: lintTools agrees with openai-node toStrictJsonSchema', () => {
  // Cases re-expressed from openai-node tests/lib/transform.test.ts (each verdict is the SDK's own, computed here).
  const cases: Record<string, JsonObject> = {
    'root schema is not an object': { type: 'string' },
    'additionalProperties: true': { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: true },
    'schema-valued additionalProperties': { type: 'object', properties: {}, additionalProperties: { type: 'string' } },
    'optional property without nullable': { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
    'required property missing from properties': { type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'b'], additionalProperties: false },
    'required is not an array of strings': { type: 'object', properties: {}, required: 'a' as never, additionalProperties: false },
    'array without items': { type: 'object', properties: { a: { type: 'array' } }, required: ['a'], additionalProperties: false },
    'union-typed array without items': { type: 'object', properties: { a: { type: ['array', 'null'] } }, required: ['a'], additionalProperties: false },
    'tuple-form items': { type: 'object', properties: { a: { type: 'array', items: [{ type: 'string' }] } }, required: ['a'], additionalProperties: false },
    additionalItems: { type: 'object', properties: { a: { type: 'array', items: { type: 'string' }, additionalItems: false } }, required: ['a'], additionalProperties: false },
    patternProperties: { type: 'object', properties: {}, patternProperties: { '^x': { type: 'string' } }, additionalProperties: false },
    uniqueItems: { type: 'object', properties: { a: { type: 'array', items: { type: 'string' }, uniqueItems: true } }, required: ['a'], additionalProperties: false },
    'draft-7 dependencies': { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], dependencies: { a: ['a'] }, additionalProperties: false },
    contentMediaType: { type: 'object', properties: { a: { type: 'string', contentMediaType: 'text/html' } }, required: ['a'], additionalProperties: false },
    $dynamicRef: { type: 'object', properties: { a: { $dynamicRef: '#x' } }, required: ['a'], additionalProperties: false },
    'boolean property schema': { type: 'object', properties: { a: true }, required: ['a'], additionalProperties: false },
    'boolean items': { type: 'object', properties: { a: { type: 'array', items: false } }, required: ['a'], additionalProperties: false },
    'unresolved local ref': { type: 'object', properties: { a: { $ref: '#/$defs/missing' } }, required: ['a'], additionalProperties: false, $defs: {} },
    'ref into a literal payload': { type: 'object', properties: { a: { $ref: '#/properties/b/default' }, b: { type: ['object', 'null'], properties: {}, additionalProperties: false, default: {} } }, required: ['a', 'b'], additionalProperties: false },
    'external ref': { type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } }, required: ['a'], additionalProperties: false },
    'ref with a validating sibling': { type: 'object', properties: { a: { $ref: '#/$defs/s', minLength: 1 } }, required: ['a'], additionalProperties: false, $defs: { s: { type: 'string' } } },
    'ref with annotation siblings': { type: 'object', properties: { a: { $ref: '#/$defs/s', description: 'd', $comment: 'c' } }, required: ['a'], additionalProperties: false, $defs: { s: { type: 'string' } } },
    'nested $id': { type: 'object', properties: { a: { $id: 'https://example.com/a', type: 'string' } }, required: ['a'], additionalProperties: false },
    'object constraints beside anyOf': { type: 'object', properties: { a: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'], additionalProperties: false, anyOf: [{ type: 'object', properties: {}, additionalProperties: false }] } }, required: ['a'], additionalProperties: false },
    'nullable optional property (made required by the SDK)': { type: 'object', properties: { a: { type: ['string', 'null'] } }, additionalProperties: false },
    'implicit object without additionalProperties': { type: 'object', properties: { a: { required: [] } }, required: ['a'], additionalProperties: false },
    'strict already': { type: 'object', properties: { a: { type: 'string' }, b: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, required: ['a', 'b'], additionalProperties: false },
    'local ref into $defs': { type: 'object', properties: { a: { $ref: '#/$defs/s' } }, required: ['a'], additionalProperties: false, $defs: { s: { type: 'string' } } },
  };

  strictOracleTests({
    cases,
    errorsOf,
    verdict: sdkVerdict,
    docsOnly: API_ONLY_RULES,
    minClean: 50,
    accepted: (schema) => {
      // What we export is what the SDK would send.
      const [exported] = toOpenAITools([{ tool_name: 't', input_schema: schema, output_schema: {} }], { strict: true });
      expect(canonical(normalised(exported?.function.parameters as JsonValue))).toBe(canonical(normalised(toStrictJsonSchema(structuredClone(schema) as never) as JsonValue)));
    },
  });
});
