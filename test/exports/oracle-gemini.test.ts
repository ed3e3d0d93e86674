// Gemini against @google/genai's own request building: `generateContent` runs `tTool` on every
// function declaration (processJsonSchema on `parameters`, which upper-cases types, flattens
// type lists, rewrites `{ type: "null" }` branches to `nullable`, drops `additionalProperties`,
// throws on `type: "null"` alone or on `type` beside `anyOf`, and sends a `parameters` with a
// root `$schema` as `parametersJsonSchema`; `parametersJsonSchema` is sent as given). The
// transport is replaced by a function that records the request body, so what is compared is
// exactly what the SDK would send. The `gemini-openapi` lint must report an error for every
// schema the SDK refuses or changes; an accepted schema must be sent as we export it.
import { GoogleGenAI } from '@google/genai';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lintTools, toGeminiTools } from '../../src/index.js';
import type { JsonObject, JsonValue, LintProvider } from '../../src/index.js';
import { canonical, rootSchema } from './schema-arbitrary.js';
import type { SdkVerdict } from './schema-arbitrary.js';

/** Rules from the API reference and the API's own error answers, beyond what the SDK checks (it passes these through). */
const API_ONLY_RULES = new Set([
  'unsupported-keyword', 'enum-non-string', 'enum-type', 'properties-non-object', 'object-empty-properties',
  'array-without-items', 'required-undefined', 'root-type-object',
]);

let sent: { tools?: { functionDeclarations: JsonObject[] }[] } = {};
const ai = new GoogleGenAI({ apiKey: 'test-key' });
beforeAll(() => {
  vi.stubGlobal('fetch', async (_url: unknown, init: { body: string }) => {
    sent = JSON.parse(init.body) as typeof sent;
    return new Response(JSON.stringify({ candidates: [] }), { status: 200, headers: { 'content-type': 'application/json' } });
  });
});
afterAll(() => {
  vi.unstubAllGlobals();
});

/** The declaration as the SDK sends it, or `undefined` when the SDK throws. */
async function sdkSends(declaration: JsonObject): Promise<JsonObject | undefined> {
  sent = {};
  try {
    await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi', config: { tools: [{ functionDeclarations: [structuredClone(declaration) as never] }] } });
  } catch {
    return undefined;
  }
  return sent.tools?.[0]?.functionDeclarations[0];
}

/** The one rewrite the API does not care about: type names in upper case (the REST reference's own examples use lower case). */
function upperTypes(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(upperTypes);
  if (typeof value !== 'object' || value === null) return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === 'type' && typeof item === 'string') out[key] = item.toUpperCase();
    else out[key] = key === 'enum' || key === 'default' || key === 'example' ? item : upperTypes(item);
  }
  return out;
}

/** The SDK leaves out a keyword whose value is null; the lint does not judge that quirk, so both sides drop them. */
function withoutNulls(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) if (item !== null) out[key] = key === 'enum' ? item : withoutNulls(item);
  return out;
}

const same = (a: JsonValue, b: JsonValue): boolean => canonical(upperTypes(withoutNulls(a))) === canonical(upperTypes(withoutNulls(b)));

/** What the SDK does with `parameters`: throws, sends something else (or moves it to parametersJsonSchema), or sends it as given. */
async function openApiVerdict(schema: JsonObject): Promise<SdkVerdict> {
  const declaration = await sdkSends({ name: 't', parameters: schema });
  if (declaration === undefined) return 'refused';
  if (!('parameters' in declaration)) return 'changed';
  return same(declaration.parameters as JsonValue, withoutNulls(schema)) ? 'same' : 'changed';
}

function errorsOf(schema: JsonObject, provider: LintProvider): string[] {
  return lintTools([{ tool_name: 't', input_schema: schema, output_schema: {} }], { providers: [provider] })
    .filter((f) => f.severity === 'error' && f.tool_name !== null)
    .map((f) => f.rule);
}

/** Generated schemas without the keywords `parameters` always refuses and with `type: "object"` beside `properties`, so that clean ones come up often. */
function lessStrict(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(lessStrict);
  if (typeof value !== 'object' || value === null) return value;
  const out: JsonObject = {};
  if ('properties' in value && !('type' in value)) out.type = 'object';
  for (const [key, item] of Object.entries(value)) if (key !== 'additionalProperties' && key !== '$defs') out[key] = key === 'properties' ? Object.fromEntries(Object.entries(item as JsonObject).map(([name, child]) => [name, lessStrict(child)])) : lessStrict(item);
  return out;
}
const geminiSchema = fc.tuple(rootSchema, fc.boolean()).map(([schema, strip]) => (strip ? (lessStrict(schema) as JsonObject) : schema));

async function agrees(schema: JsonObject): Promise<void> {
  // A tool that takes no parameters is exported without them: no schema reaches the SDK.
  const [exported] = toGeminiTools([{ tool_name: 't', input_schema: schema, output_schema: {} }], { schema: 'openapi', onIncompatible: 'skip' }).functionDeclarations;
  if (exported !== undefined && !('parameters' in exported)) return;
  const verdict = await openApiVerdict(schema);
  const errors = errorsOf(schema, 'gemini-openapi');
  if (verdict === 'same') expect(errors.filter((rule) => !API_ONLY_RULES.has(rule)), JSON.stringify(schema)).toEqual([]);
  else expect(errors.length, `the SDK ${verdict} ${JSON.stringify(schema)}`).toBeGreaterThan(0);
}

describe('Gemini parameters: lintTools agrees with @google/genai tTool / processJsonSchema', () => {
  const root = (property: JsonObject): JsonObject => ({ type: 'object', properties: { p: property }, required: ['p'] });
  // Cases re-expressed from js-genai test/unit/transformers_test.ts (tSchema, tTool); each verdict is the SDK's own, computed here.
  const cases: Record<string, JsonObject> = {
    'no change (title and default)': root({ type: 'string', title: 'title', default: 'default' }),
    'processes anyOf': root({ anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] }),
    'processes items': root({ type: 'array', items: { type: 'string' } }),
    'no-op on a conformed Schema': root({ type: 'string', pattern: '^[a-zA-Z]{1,10}$', format: 'date-time', minLength: 1, maxLength: 10 }),
    'integer with format and min/max': root({ type: 'integer', format: 'int64', minimum: 1, maximum: 10 }),
    'string enum': root({ type: 'string', enum: ['enumvalue1', 'enumvalue2'] }),
    'flattens an array of types': root({ type: ['string', 'number'] }),
    'primitive nullable as a type list': root({ type: ['string', 'null'] }),
    'removes additionalProperties': { type: 'object', properties: { p: { type: 'string' } }, additionalProperties: false },
    'unknown fields pass through (the API refuses them)': root({ type: 'string', unknownField: 'unknown' }),
    propertyOrdering: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, propertyOrdering: ['b', 'a'] },
    'throws on type null alone': root({ type: 'null' }),
    'nullable array through anyOf with null': root({ anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] }),
    'union of three with null': root({ anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] }),
    'union with additional fields': root({ anyOf: [{ type: 'string', pattern: '^[a-z]+$' }, { type: 'number' }] }),
    'union with an object': root({ anyOf: [{ type: 'string' }, { type: 'object', properties: { s: { type: 'string' } }, required: ['s'] }] }),
    'throws on type beside anyOf': root({ type: 'string', anyOf: [{ type: 'string' }] }),
    '$schema moves parameters to parametersJsonSchema': { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { p: { type: 'string' } } },
    'unknown type name becomes TYPE_UNSPECIFIED': root({ type: 'enum' }),
    'boolean subschema becomes {}': root(true as never),
    'tuple items are sent as an object': root({ type: 'array', items: [{ type: 'string' }] as never }),
  };
  for (const [name, schema] of Object.entries(cases)) {
    it(name, async () => {
      await agrees(schema);
    });
  }

  it('the generated schemas reach both verdicts often', () => {
    const sample = fc.sample(geminiSchema, { numRuns: 1000, seed: 9 });
    const clean = sample.filter((schema) => errorsOf(schema, 'gemini-openapi').length === 0).length;
    expect(clean).toBeGreaterThan(25);
    expect(sample.length - clean).toBeGreaterThan(25);
  });

  it('property: the SDK refuses or changes a schema => the lint has an error; clean => the SDK sends our export as it is', async () => {
    await fc.assert(
      fc.asyncProperty(geminiSchema, async (schema) => {
        await agrees(schema);
        const spec = { tool_name: 't', description: 'd', input_schema: schema, output_schema: {} };
        if (errorsOf(schema, 'gemini-openapi').length === 0) {
          const exported = toGeminiTools([spec], { schema: 'openapi' }).functionDeclarations[0] as unknown as JsonObject;
          const declaration = await sdkSends(exported);
          expect(declaration !== undefined && same(declaration, exported)).toBe(true);
        }
        if (errorsOf(schema, 'gemini').length === 0) {
          // parametersJsonSchema is sent exactly as given.
          const exported = toGeminiTools([spec]).functionDeclarations[0] as unknown as JsonObject;
          expect(await sdkSends(exported)).toEqual(exported);
        }
      }),
      { numRuns: 1500 },
    );
  });
});
