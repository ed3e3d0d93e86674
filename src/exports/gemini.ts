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

/** The type names of `parameters` (its Type enum, any case); "null" is not one of them: `nullable: true` says it. */
export const GEMINI_OPENAPI_TYPES: readonly string[] = ['string', 'number', 'integer', 'boolean', 'array', 'object'];

/**
 * `parameters`: every keyword outside the subset, type names outside its enum (and `null`),
 * type lists, enums that are not strings or not on a string, `anyOf` with siblings, subschemas
 * that are not objects, `properties` off an object, objects without properties, arrays without
 * `items`, and `required` names that are not properties. The first five follow what
 * @google/genai's processJsonSchema throws on or rewrites; the rest are the API's own answers
 * (docs/providers/gemini.md gives each source).
 */
function openApiRules(schema: JsonObject): RuleHit[] {
  const hits: RuleHit[] = [];
  const error = (path: string, rule: string, message: string): void => {
    hits.push({ path, rule, severity: 'error', message: `Gemini (parameters) ${message}` });
  };
  /** A subschema slot: anything but a schema object is refused (the SDK turns `true` into `{}` and a tuple into an object). */
  const visit = (value: JsonValue | undefined, pointer: string): void => {
    if (isSchemaObject(value)) check(value, pointer);
    else error(pointer, 'schema-not-object', `needs a schema object here; got ${JSON.stringify(value)}`);
  };
  const check = (sub: Record<string, JsonValue>, pointer: string): void => {
    for (const key of Object.keys(sub)) {
      if (!GEMINI_OPENAPI_KEYWORDS.includes(key)) {
        error(pointerTo(pointer, key), 'unsupported-keyword', `does not support ${JSON.stringify(key)}; use schema: 'json' (parametersJsonSchema) or drop it from the spec`);
      }
    }
    const type = typeof sub.type === 'string' ? sub.type.toLowerCase() : undefined;
    if (Array.isArray(sub.type)) {
      error(pointerTo(pointer, 'type'), 'type-list', 'takes one type per schema; use "nullable": true or anyOf instead of a type list');
    } else if (type === 'null') {
      error(pointerTo(pointer, 'type'), 'type-null', 'has no "null" type (the SDK throws on it alone and rewrites it in anyOf); use "nullable": true on the other type');
    } else if ('type' in sub && (type === undefined || !GEMINI_OPENAPI_TYPES.includes(type))) {
      error(pointerTo(pointer, 'type'), 'type-unknown', `takes the types ${GEMINI_OPENAPI_TYPES.join(', ')}; got ${JSON.stringify(sub.type)}`);
    }
    if (Array.isArray(sub.enum) && sub.enum.some((value) => typeof value !== 'string')) {
      error(pointerTo(pointer, 'enum'), 'enum-non-string', 'accepts string enum values only');
    }
    if ('enum' in sub && type !== 'string' && !Array.isArray(sub.type)) {
      error(pointerTo(pointer, 'enum'), 'enum-type', 'accepts "enum" only on "type": "string"');
    }
    if (Array.isArray(sub.anyOf)) {
      const siblings = Object.keys(sub).filter((key) => key !== 'anyOf');
      if (siblings.length > 0) error(pointerTo(pointer, 'anyOf'), 'anyof-siblings', `accepts "anyOf" only on its own; found beside it: ${siblings.join(', ')}`);
      sub.anyOf.forEach((child, index) => visit(child, pointerTo(pointer, 'anyOf', index)));
    }
    const properties = isSchemaObject(sub.properties) ? sub.properties : undefined;
    if ('properties' in sub && type !== 'object' && !Array.isArray(sub.type)) {
      error(pointerTo(pointer, 'properties'), 'properties-non-object', 'accepts "properties" only on "type": "object"');
    }
    if (type === 'object' && (properties === undefined || Object.keys(properties).length === 0)) {
      error(pointerTo(pointer, 'properties'), 'object-empty-properties', 'needs at least one property on every "type": "object" schema');
    }
    if (properties !== undefined) {
      for (const name of Object.keys(properties)) visit(properties[name], pointerTo(pointer, 'properties', name));
    }
    if (Array.isArray(sub.required)) {
      sub.required.forEach((name, index) => {
        if (typeof name !== 'string' || properties === undefined || !Object.hasOwn(properties, name)) {
          error(pointerTo(pointer, 'required', index), 'required-undefined', `lists ${JSON.stringify(name)} in "required" but not in "properties"`);
        }
      });
    }
    if (type === 'array' && !('items' in sub)) error(pointerTo(pointer, 'items'), 'array-without-items', 'needs "items" on every "type": "array" schema');
    if ('items' in sub) visit(sub.items, pointerTo(pointer, 'items'));
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
