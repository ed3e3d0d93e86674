// OpenAI (Chat Completions and Responses function tools): every rule, and the exporter.
// Sources (docs/providers/openai.md): the function-calling guide (name pattern, 128 tools,
// 1,024-character descriptions) and the Structured Outputs guide (strict mode: the supported
// subset, formats, 5,000 properties, 10 levels of nesting, 1,000 enum values).
import type { JsonObject } from '../core/contracts.js';
import { checkBoolean, deferLoadingOf, exportWith } from './findings.js';
import { isDeeplyFrozen } from './items.js';
import type { ProviderRules } from './rule-set.js';
import { tooManyTools } from './rule-set.js';
import { copyJson, isObjectSchema, isSchemaObject, pointerTo, resolveLocalRef, rootComposition, rootTypeObject, subschemaSlots, walkSchema } from './schema.js';
import type { RuleHit, SchemaNode } from './schema.js';
import type { ExportItems, ObjectJsonSchema, OpenAIChatTool, OpenAIExportOptions, OpenAIResponsesTool, OpenAIToolSearchTool } from './types.js';

const WHO = 'OpenAI';
/** Function names: a-z, A-Z, 0-9, underscores and dashes, at most 64. */
export const OPENAI_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const OPENAI_MAX_DESCRIPTION = 1024;
export const OPENAI_MAX_TOOLS = 128;
export const OPENAI_STRICT_MAX_PROPERTIES = 5000;
export const OPENAI_STRICT_MAX_DEPTH = 10;
export const OPENAI_STRICT_MAX_ENUM_VALUES = 1000;
/** The string formats Structured Outputs supports. */
export const OPENAI_STRICT_FORMATS: readonly string[] = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid'];
/**
 * What the API refuses at the root of `parameters`, strict or not (`invalid_function_parameters`:
 * "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level").
 */
export const OPENAI_ROOT_REFUSED: readonly string[] = ['anyOf', 'oneOf', 'allOf', 'enum', 'const', 'not'];
/**
 * Keywords strict mode refuses (at the root, allOf and not are reported once, as root-composition):
 * openai-node's `JSON_SCHEMA_UNSUPPORTED_SCHEMA_KEYWORDS` plus `additionalItems`, which its
 * strict transform refuses on its own.
 */
export const OPENAI_STRICT_REFUSED: readonly string[] = [
  'allOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'dependencies', 'patternProperties',
  'propertyNames', 'uniqueItems', 'prefixItems', 'contains', 'minContains', 'maxContains', 'additionalItems',
  'unevaluatedProperties', 'unevaluatedItems', 'minProperties', 'maxProperties',
  '$anchor', '$dynamicAnchor', '$dynamicRef', '$recursiveAnchor', '$recursiveRef',
  'contentEncoding', 'contentMediaType', 'contentSchema',
];
/** What may sit beside a `$ref` (annotations and definition maps); anything else is refused. */
export const OPENAI_STRICT_REF_SIBLINGS: readonly string[] = ['$ref', '$defs', 'definitions', '$comment', 'default', 'description', 'examples', 'readOnly', 'title', 'writeOnly'];

/** Structural rules of openai-node's strict transform for one subschema (what it throws on). */
function strictShapeRules(root: JsonObject, node: SchemaNode): RuleHit[] {
  const hits: RuleHit[] = [];
  const { schema: sub, pointer } = node;
  const hit = (path: string, rule: string, message: string): void => {
    hits.push({ path, rule, severity: 'error', message: `OpenAI strict mode ${message}` });
  };
  for (const slot of subschemaSlots(sub, pointer)) {
    if (typeof slot.value === 'boolean' && slot.keyword !== 'additionalProperties' && slot.keyword !== 'additionalItems') {
      hit(slot.pointer, 'strict-boolean-schema', `needs a schema object here, not the boolean schema ${String(slot.value)}`);
    }
  }
  if (node.keyword !== null && sub.$id !== undefined) hit(pointerTo(pointer, '$id'), 'strict-nested-id', 'does not support "$id" below the root (a separate schema resource)');
  const ref = sub.$ref;
  if (ref !== undefined) {
    if (typeof ref !== 'string' || !ref.startsWith('#')) {
      hit(pointerTo(pointer, '$ref'), 'strict-external-ref', `supports only local "$ref"s (starting with #); got ${JSON.stringify(ref)}`);
    } else if (!isSchemaObject(resolveLocalRef(root, ref))) {
      hit(pointerTo(pointer, '$ref'), 'strict-unresolved-ref', `needs every "$ref" to point at a schema object in this schema; ${JSON.stringify(ref)} does not`);
    }
    for (const key of Object.keys(sub)) {
      if (!OPENAI_STRICT_REF_SIBLINGS.includes(key)) hit(pointerTo(pointer, key), 'strict-ref-siblings', `allows only annotations (description, title, default, ...) and definitions beside "$ref"; found ${JSON.stringify(key)}`);
    }
  }
  const required = sub.required;
  if (required !== undefined && (!Array.isArray(required) || required.some((name) => typeof name !== 'string'))) {
    hit(pointerTo(pointer, 'required'), 'strict-required-invalid', 'needs "required" to be an array of property names');
  } else if (Array.isArray(required) && isObjectSchema(sub)) {
    const properties = isSchemaObject(sub.properties) ? sub.properties : {};
    required.forEach((name, index) => {
      if (!Object.hasOwn(properties, name as string)) hit(pointerTo(pointer, 'required', index), 'strict-required-undeclared', `needs every name in "required" declared in "properties"; ${JSON.stringify(name)} is not`);
    });
  }
  if (Array.isArray(sub.items)) hit(pointerTo(pointer, 'items'), 'strict-tuple-items', 'takes one schema for every array item, not a list (tuple form)');
  // An object schema of its own with an anyOf beside it: the transform refuses it, or drops the outer type.
  if (node.keyword !== null && sub.anyOf !== undefined && isObjectSchema(sub)) {
    hit(pointerTo(pointer, 'anyOf'), 'strict-object-anyof', 'does not take "anyOf" beside an object schema\'s own type or keywords; put the object shapes in the anyOf branches only');
  }
  return hits;
}

function strictRules(schema: JsonObject): RuleHit[] {
  const hits: RuleHit[] = [];
  let properties = 0;
  let enumValues = 0;
  let tooDeep = false;
  walkSchema(schema, '/input_schema', (node) => {
    const { schema: sub, pointer } = node;
    for (const keyword of OPENAI_STRICT_REFUSED) {
      if (!(keyword in sub) || (node.keyword === null && OPENAI_ROOT_REFUSED.includes(keyword))) continue;
      hits.push({ path: pointerTo(pointer, keyword), rule: 'strict-unsupported-keyword', severity: 'error', message: `OpenAI strict mode does not support "${keyword}"` });
    }
    hits.push(...strictShapeRules(schema, node));
    if (typeof sub.format === 'string' && !OPENAI_STRICT_FORMATS.includes(sub.format)) {
      hits.push({ path: pointerTo(pointer, 'format'), rule: 'strict-format', severity: 'error', message: `OpenAI strict mode does not support format ${JSON.stringify(sub.format)}; supported: ${OPENAI_STRICT_FORMATS.join(', ')}` });
    }
    if (Array.isArray(sub.enum)) enumValues += sub.enum.length;
    if (!tooDeep && node.objectDepth > OPENAI_STRICT_MAX_DEPTH) {
      tooDeep = true;
      hits.push({ path: pointer, rule: 'strict-max-depth', severity: 'error', message: `OpenAI strict mode allows at most ${OPENAI_STRICT_MAX_DEPTH} levels of object nesting; this object is at level ${node.objectDepth}` });
    }
    if (!isObjectSchema(sub)) return;
    if (sub.additionalProperties !== false) {
      hits.push({ path: pointerTo(pointer, 'additionalProperties'), rule: 'strict-additional-properties', severity: 'error', message: 'OpenAI strict mode needs "additionalProperties": false on every object' });
    }
    const props = isSchemaObject(sub.properties) ? Object.keys(sub.properties) : [];
    properties += props.length;
    const required = Array.isArray(sub.required) ? sub.required : [];
    for (const name of props) {
      if (required.includes(name)) continue;
      hits.push({
        path: pointerTo(pointer, 'properties', name),
        rule: 'strict-required',
        severity: 'error',
        message: `OpenAI strict mode needs every property in "required"; make ${JSON.stringify(name)} required and nullable (type: [T, "null"]) to keep it optional`,
      });
    }
  });
  if (properties > OPENAI_STRICT_MAX_PROPERTIES) {
    hits.push({ path: '/input_schema', rule: 'strict-max-properties', severity: 'error', message: `OpenAI strict mode allows at most ${OPENAI_STRICT_MAX_PROPERTIES} object properties in a schema; this one has ${properties}` });
  }
  if (enumValues > OPENAI_STRICT_MAX_ENUM_VALUES) {
    hits.push({ path: '/input_schema', rule: 'strict-max-enum-values', severity: 'error', message: `OpenAI strict mode allows at most ${OPENAI_STRICT_MAX_ENUM_VALUES} enum values in a schema; this one has ${enumValues}` });
  }
  return hits;
}

/** `array-items` hits by deeply frozen schema object (a registry's or the runtime's), which never go stale. */
const arrayItemsHits = new WeakMap<JsonObject, readonly RuleHit[]>();

/** An array schema without `items`, anywhere (the API: "array schema missing items", strict or not). */
function arrayItemsRules(schema: JsonObject): readonly RuleHit[] {
  const known = arrayItemsHits.get(schema);
  if (known !== undefined) return known;
  const hits: RuleHit[] = [];
  walkSchema(schema, '/input_schema', ({ schema: sub, pointer }) => {
    const type = sub.type;
    if ((type === 'array' || (Array.isArray(type) && type.includes('array'))) && sub.items === undefined) {
      hits.push({ path: pointerTo(pointer, 'items'), rule: 'array-items', severity: 'error', message: `${WHO} needs "items" on every array schema (it answers "array schema missing items")` });
    }
  });
  // Deeply: a schema frozen at the top only (the caller's own) may change below, and its hits with it.
  if (isDeeplyFrozen(schema)) arrayItemsHits.set(schema, hits);
  return hits;
}

export const openaiRules: ProviderRules = {
  provider: 'openai',
  label: WHO,
  tool(spec, context) {
    const hits: RuleHit[] = [];
    if (!OPENAI_TOOL_NAME.test(spec.tool_name)) {
      hits.push({ path: '/tool_name', rule: 'name-pattern', severity: 'error', message: `OpenAI function names must match ^[a-zA-Z0-9_-]{1,64}$; got ${JSON.stringify(spec.tool_name)}` });
    }
    if (spec.description !== null && spec.description.length > OPENAI_MAX_DESCRIPTION) {
      hits.push({ path: '/description', rule: 'description-length', severity: 'error', message: `OpenAI accepts descriptions of at most ${OPENAI_MAX_DESCRIPTION} characters; this one has ${spec.description.length}` });
    }
    const root = rootTypeObject(spec.input_schema, 'input_schema', WHO);
    if (root !== undefined) hits.push(root);
    hits.push(...rootComposition(spec.input_schema, WHO, OPENAI_ROOT_REFUSED));
    hits.push(...arrayItemsRules(spec.input_schema));
    if (context.strict) hits.push(...strictRules(spec.input_schema));
    return hits;
  },
  request(specs) {
    return tooManyTools(specs.length, OPENAI_MAX_TOOLS, WHO);
  },
};

/**
 * The parameters as sent: a copy, plus `properties: {}` (meaning-preserving) on each object
 * without them in strict mode, and on the root otherwise (the API answers "object schema
 * missing properties" to a root without them, strict or not).
 */
function parametersOf(schema: JsonObject, strict: boolean): ObjectJsonSchema {
  const copy = copyJson(schema) as ObjectJsonSchema;
  if (strict) {
    walkSchema(copy, '', (node) => {
      if (isObjectSchema(node.schema) && !('properties' in node.schema)) node.schema.properties = {};
    });
  } else if (!('properties' in copy)) {
    copy.properties = {};
  }
  return copy;
}

/**
 * The tools as OpenAI function tools: Chat Completions `{ type: 'function', function: { name,
 * description, parameters, strict } }` (default) or Responses `{ type: 'function', name,
 * description, parameters, strict }`. `strict` is always a boolean; `description` is left out
 * when null. An object schema without `properties` gets `properties: {}`: every one in strict
 * mode, the root otherwise.
 * @throws PROVIDER_INCOMPATIBLE with every error finding in `context.findings`, unless `onIncompatible: 'skip'`
 */
export function toOpenAITools(items: ExportItems, options?: OpenAIExportOptions & { api?: 'chat' }): OpenAIChatTool[];
export function toOpenAITools(items: ExportItems, options: OpenAIExportOptions & { api: 'responses'; deferLoading?: false }): OpenAIResponsesTool[];
export function toOpenAITools(items: ExportItems, options: OpenAIExportOptions & { api: 'responses' }): (OpenAIResponsesTool | OpenAIToolSearchTool)[];
export function toOpenAITools(items: ExportItems, options?: OpenAIExportOptions): OpenAIChatTool[] | (OpenAIResponsesTool | OpenAIToolSearchTool)[];
export function toOpenAITools(items: ExportItems, options: OpenAIExportOptions = {}): OpenAIChatTool[] | (OpenAIResponsesTool | OpenAIToolSearchTool)[] {
  const api = options.api ?? 'chat';
  if (api !== 'chat' && api !== 'responses') throw new TypeError(`toOpenAITools: api must be 'chat' or 'responses', got ${JSON.stringify(api)}`);
  const strict = checkBoolean('toOpenAITools', 'strict', options.strict);
  const defer = deferLoadingOf('toOpenAITools', options.deferLoading, ['hosted', 'none'] as const, 'hosted');
  if (defer !== undefined && api !== 'responses') throw new TypeError("toOpenAITools: deferLoading needs api: 'responses' (tool search is a Responses API tool)");
  const tools = exportWith('toOpenAITools', items, options, openaiRules, { strict, revision: '2025-11-25' }, (spec) => {
    const parameters = parametersOf(spec.input_schema, strict);
    const named = spec.description === null ? { name: spec.tool_name } : { name: spec.tool_name, description: spec.description };
    if (api === 'responses') {
      const tool: OpenAIResponsesTool = { type: 'function', ...named, parameters, strict };
      if (defer !== undefined && !defer.keep.has(spec.tool_name)) tool.defer_loading = true;
      return tool;
    }
    return { type: 'function', function: { ...named, parameters, strict } } satisfies OpenAIChatTool;
  }) as OpenAIChatTool[] | OpenAIResponsesTool[];
  if (defer === undefined || defer.toolSearch === 'none') return tools;
  return [...(tools as OpenAIResponsesTool[]), { type: 'tool_search' }];
}
