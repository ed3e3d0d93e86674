// Gemini (function declarations): every rule of both schema modes, and the exporter.
// Sources (docs/providers/gemini.md): the FunctionDeclaration reference (name rule,
// parametersJsonSchema vs parameters), the Schema object reference (the OpenAPI subset of
// `parameters`) and the function-calling guide (at most 512 declarations).
import type { JsonObject, JsonValue } from '../core/contracts.js';
import { exportWith } from './findings.js';
import type { ProviderRules } from './rule-set.js';
import { tooManyTools } from './rule-set.js';
import { copyJson, isSchemaObject, pointerTo, rootTypeObject, takesNoParameters, walkSchema } from './schema.js';
import type { RuleHit } from './schema.js';
import type { ExportItems, GeminiExportOptions, GeminiFunctionDeclaration, GeminiTools, ObjectJsonSchema } from './types.js';

/** A letter or underscore first, then letters, digits, `_ . : -`; at most 128 (64 recommended). */
export const GEMINI_TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;
export const GEMINI_NAME_LENGTH = 64;
export const GEMINI_MAX_DECLARATIONS = 512;
/** The keywords of Gemini's Schema object (the OpenAPI subset `parameters` accepts). */
export const GEMINI_OPENAPI_KEYWORDS: readonly string[] = [
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'maxItems', 'minItems', 'properties', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'example', 'anyOf', 'propertyOrdering',
  'default', 'items', 'minimum', 'maximum',
];

function nameRules(name: string): RuleHit[] {
  if (!GEMINI_TOOL_NAME.test(name)) {
    return [{ path: '/tool_name', rule: 'name-pattern', severity: 'error', message: `Gemini function names must start with a letter or an underscore and use only A-Z a-z 0-9 _ . : - (at most 128); got ${JSON.stringify(name)}` }];
  }
  if (name.length > GEMINI_NAME_LENGTH) {
    return [{ path: '/tool_name', rule: 'name-length', severity: 'warning', message: `Gemini documents function names of at most ${GEMINI_NAME_LENGTH} characters (some endpoints accept 128); this one has ${name.length}` }];
  }
  return [];
}

/** `parametersJsonSchema`: a `$ref` may only sit beside `$`-keywords, `description` and `default`. */
function refSiblingRules(schema: JsonObject): RuleHit[] {
  const hits: RuleHit[] = [];
  walkSchema(schema, '/input_schema', ({ schema: sub, pointer }) => {
    if (typeof sub.$ref !== 'string') return;
    for (const key of Object.keys(sub)) {
      if (key.startsWith('$') || key === 'description' || key === 'default') continue;
      hits.push({ path: pointerTo(pointer, key), rule: 'ref-siblings', severity: 'error', message: `Gemini (parametersJsonSchema) allows only $-keywords, description and default beside "$ref"; found ${JSON.stringify(key)}` });
    }
  });
  return hits;
}

/** `parameters`: every keyword outside the subset, non-string enums, anyOf with siblings, type lists. */
function openApiRules(schema: JsonObject): RuleHit[] {
  const hits: RuleHit[] = [];
  const check = (sub: Record<string, JsonValue>, pointer: string): void => {
    for (const key of Object.keys(sub)) {
      if (!GEMINI_OPENAPI_KEYWORDS.includes(key)) {
        hits.push({ path: pointerTo(pointer, key), rule: 'unsupported-keyword', severity: 'error', message: `Gemini (parameters) does not support ${JSON.stringify(key)}; use schema: 'json' (parametersJsonSchema) or drop it from the spec` });
      }
    }
    if (Array.isArray(sub.type)) {
      hits.push({ path: pointerTo(pointer, 'type'), rule: 'type-list', severity: 'error', message: 'Gemini (parameters) takes one type per schema; use "nullable": true or anyOf instead of a type list' });
    }
    if (Array.isArray(sub.enum) && sub.enum.some((value) => typeof value !== 'string')) {
      hits.push({ path: pointerTo(pointer, 'enum'), rule: 'enum-non-string', severity: 'error', message: 'Gemini (parameters) accepts string enum values only' });
    }
    if (Array.isArray(sub.anyOf)) {
      const siblings = Object.keys(sub).filter((key) => key !== 'anyOf');
      if (siblings.length > 0) {
        hits.push({ path: pointerTo(pointer, 'anyOf'), rule: 'anyof-siblings', severity: 'error', message: `Gemini (parameters) accepts "anyOf" only on its own; found beside it: ${siblings.join(', ')}` });
      }
      sub.anyOf.forEach((child, index) => {
        if (isSchemaObject(child)) check(child, pointerTo(pointer, 'anyOf', index));
      });
    }
    if (isSchemaObject(sub.properties)) {
      for (const name of Object.keys(sub.properties)) {
        const child = sub.properties[name];
        if (isSchemaObject(child)) check(child, pointerTo(pointer, 'properties', name));
      }
    }
    if (isSchemaObject(sub.items)) check(sub.items, pointerTo(pointer, 'items'));
  };
  // A tool that takes no parameters is exported without them: nothing of its schema is sent.
  if (!takesNoParameters(schema)) check(schema, '/input_schema');
  return hits;
}

function rulesFor(provider: 'gemini' | 'gemini-openapi'): ProviderRules {
  const label = provider === 'gemini' ? 'Gemini' : 'Gemini (parameters)';
  return {
    provider,
    label,
    tool(spec) {
      const hits = nameRules(spec.tool_name);
      const root = rootTypeObject(spec.input_schema, 'input_schema', label);
      if (root !== undefined) hits.push(root);
      hits.push(...(provider === 'gemini' ? refSiblingRules(spec.input_schema) : openApiRules(spec.input_schema)));
      return hits;
    },
    request(specs) {
      return tooManyTools(specs.length, GEMINI_MAX_DECLARATIONS, label, 'function declarations');
    },
  };
}

/** `parametersJsonSchema` (the JSON Schema mode the exporter uses by default). */
export const geminiRules = rulesFor('gemini');
/** `parameters` (the OpenAPI subset). */
export const geminiOpenApiRules = rulesFor('gemini-openapi');

/**
 * The tools as one Gemini `Tool` object: `{ functionDeclarations: [{ name, description?,
 * parametersJsonSchema? }] }`, or with `schema: 'openapi'` `parameters` instead. A tool that
 * takes no parameters (`type: "object"` with no or empty `properties`) has neither field.
 * @throws PROVIDER_INCOMPATIBLE with every error finding in `context.findings`, unless `onIncompatible: 'skip'`
 */
export function toGeminiTools(items: ExportItems, options: GeminiExportOptions = {}): GeminiTools {
  const schema = options.schema ?? 'json';
  if (schema !== 'json' && schema !== 'openapi') throw new TypeError(`toGeminiTools: schema must be 'json' or 'openapi', got ${JSON.stringify(schema)}`);
  const rules = schema === 'json' ? geminiRules : geminiOpenApiRules;
  const field = schema === 'json' ? 'parametersJsonSchema' : 'parameters';
  const functionDeclarations = exportWith('toGeminiTools', items, options, rules, { strict: false, revision: '2025-11-25' }, (spec) => {
    const declaration: GeminiFunctionDeclaration = spec.description === null ? { name: spec.tool_name } : { name: spec.tool_name, description: spec.description };
    if (!takesNoParameters(spec.input_schema)) declaration[field] = copyJson(spec.input_schema) as ObjectJsonSchema;
    return declaration;
  });
  return { functionDeclarations };
}
