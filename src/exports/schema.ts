// Small shared helpers over JSON Schemas: JSON Pointers, a walk over every subschema, a
// JSON copy that keeps key order, and the root checks every provider shares.
import type { JsonObject, JsonValue } from '../core/contracts.js';

/** One token of a JSON Pointer (RFC 6901): `~` becomes `~0`, `/` becomes `~1`. */
export function pointerToken(token: string | number): string {
  const text = String(token);
  return text.includes('~') || text.includes('/') ? text.replace(/~/g, '~0').replace(/\//g, '~1') : text;
}

/** `pointerTo('/input_schema', 'properties', 'a/b')` -> `/input_schema/properties/a~1b`. */
export function pointerTo(base: string, ...tokens: (string | number)[]): string {
  let out = base;
  for (const token of tokens) out += `/${pointerToken(token)}`;
  return out;
}

/** A schema object (boolean schemas and non-objects are not walked). */
export type SchemaObject = Record<string, JsonValue>;

export function isSchemaObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where the walk is: the subschema, its pointer, and how it was reached. */
export interface SchemaNode {
  readonly schema: SchemaObject;
  readonly pointer: string;
  /** The keyword that holds this subschema (`properties`, `items`, `anyOf`, ...); `null` at the root. */
  readonly keyword: string | null;
  /** The property name when reached through `properties`. */
  readonly propertyName: string | null;
  /** The object schema whose `properties` hold this one. */
  readonly parent: SchemaObject | null;
  /** How many object schemas are on the path from the root to here, this one included. */
  readonly objectDepth: number;
}

/** Keywords whose value is a map of name -> subschema (`dependencies` values may also be name lists). */
const MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];
/** Keywords whose value is one subschema. */
const SINGLE_KEYWORDS = [
  'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'items', 'additionalItems',
  'contains', 'propertyNames', 'not', 'if', 'then', 'else', 'contentSchema',
];
/** Keywords whose value is a list of subschemas. */
const LIST_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'];
/** Keywords that make an untyped schema an object schema (openai-node's `hasObjectShape`). */
const OBJECT_KEYWORDS = ['additionalProperties', 'dependencies', 'maxProperties', 'minProperties', 'patternProperties', 'properties', 'propertyNames', 'required'];

/**
 * Whether the schema describes objects: `type: "object"` (or a type list with it), or no
 * `type` and an object keyword (`properties`, `required`, `additionalProperties`, ...), as
 * openai-node's strict transform decides it.
 */
export function isObjectSchema(schema: SchemaObject): boolean {
  const type = schema.type;
  if (type === 'object') return true;
  if (Array.isArray(type)) return type.includes('object');
  return type === undefined && OBJECT_KEYWORDS.some((keyword) => keyword in schema);
}

/** One place a subschema can sit: its value (an object, or a boolean schema), pointer and keyword. */
export interface SchemaSlot {
  readonly value: JsonValue;
  readonly pointer: string;
  readonly keyword: string;
  /** The property name when the slot is in `properties`. */
  readonly name: string | null;
}

/** The subschema slots directly under `schema`, in keyword order; boolean schemas included, other non-objects not. */
export function subschemaSlots(schema: SchemaObject, pointer: string): SchemaSlot[] {
  const slots: SchemaSlot[] = [];
  const isSchema = (value: JsonValue | undefined): value is JsonValue => typeof value === 'boolean' || isSchemaObject(value);
  for (const keyword of MAP_KEYWORDS) {
    const map = schema[keyword];
    if (!isSchemaObject(map)) continue;
    for (const name of Object.keys(map)) {
      const value = map[name];
      if (isSchema(value)) slots.push({ value, pointer: pointerTo(pointer, keyword, name), keyword, name: keyword === 'properties' ? name : null });
    }
  }
  for (const keyword of SINGLE_KEYWORDS) {
    const value = schema[keyword];
    if (isSchema(value)) slots.push({ value, pointer: pointerTo(pointer, keyword), keyword, name: null });
  }
  for (const keyword of LIST_KEYWORDS) {
    const list = schema[keyword];
    if (!Array.isArray(list)) continue;
    list.forEach((value, index) => {
      if (isSchema(value)) slots.push({ value, pointer: pointerTo(pointer, keyword, index), keyword, name: null });
    });
  }
  return slots;
}

/** Visits `root` and every subschema object under it, depth first, in key order. */
export function walkSchema(root: unknown, rootPointer: string, visit: (node: SchemaNode) => void): void {
  if (!isSchemaObject(root)) return;
  const step = (node: SchemaNode): void => {
    visit(node);
    for (const slot of subschemaSlots(node.schema, node.pointer)) {
      if (!isSchemaObject(slot.value)) continue;
      const inProperties = slot.name !== null;
      step({
        schema: slot.value,
        pointer: slot.pointer,
        keyword: slot.keyword,
        propertyName: slot.name,
        parent: inProperties ? node.schema : null,
        objectDepth: node.objectDepth + (isObjectSchema(slot.value) ? 1 : 0),
      });
    }
  };
  step({ schema: root, pointer: rootPointer, keyword: null, propertyName: null, parent: null, objectDepth: isObjectSchema(root) ? 1 : 0 });
}

/** The reference tokens of a local `$ref` (`#/$defs/a~1b` -> `['$defs', 'a/b']`); undefined when it is not local or not a JSON Pointer. */
function localRefTokens(ref: string): string[] | undefined {
  if (!ref.startsWith('#')) return undefined;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens: string[] = [];
  for (const token of pointer.slice(1).split('/')) {
    if (/~(?:[^01]|$)/.test(token)) return undefined;
    tokens.push(token.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  return tokens;
}

/**
 * The subschema a local `$ref` points at, following only places that hold schemas (a ref
 * into an `enum` or `default` value resolves to nothing), as openai-node resolves it.
 */
export function resolveLocalRef(root: SchemaObject, ref: string): JsonValue | undefined {
  const tokens = localRefTokens(ref);
  if (tokens === undefined) return undefined;
  let here: JsonValue = root;
  for (let i = 0; i < tokens.length; ) {
    if (!isSchemaObject(here)) return undefined;
    const keyword = tokens[i] as string;
    const value: JsonValue | undefined = Object.hasOwn(here, keyword) ? here[keyword] : undefined;
    i += 1;
    if (value === undefined) return undefined;
    if (SINGLE_KEYWORDS.includes(keyword) && !Array.isArray(value)) {
      here = value;
    } else if (LIST_KEYWORDS.includes(keyword) && Array.isArray(value)) {
      const index = tokens[i];
      if (index === undefined || !/^(?:0|[1-9]\d*)$/.test(index) || Number(index) >= value.length) return undefined;
      here = value[Number(index)] as JsonValue;
      i += 1;
    } else if (MAP_KEYWORDS.includes(keyword) && isSchemaObject(value)) {
      const name = tokens[i];
      if (name === undefined || !Object.hasOwn(value, name)) return undefined;
      here = value[name] as JsonValue;
      i += 1;
    } else {
      return undefined;
    }
  }
  return typeof here === 'boolean' || isSchemaObject(here) ? here : undefined;
}

/** A deep copy of JSON data with every object's key order kept (plain, mutable, unshared). */
export function copyJson<T extends JsonValue>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array<JsonValue>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyJson(value[i] as JsonValue);
    return out as T;
  }
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const item = (value as JsonObject)[key] as JsonValue;
    // defineProperty keeps a key named __proto__ as data, as JSON.parse does.
    if (key === '__proto__') Object.defineProperty(out, key, { value: copyJson(item), enumerable: true, writable: true, configurable: true });
    else out[key] = copyJson(item);
  }
  return out as T;
}

/** What a root-level check reports; the provider and tool are added by the lint. */
export interface RuleHit {
  readonly path: string;
  readonly rule: string;
  readonly severity: 'error' | 'warning';
  readonly message: string;
}

/** Every provider wants `type: "object"` at the root of the parameters schema. */
export function rootTypeObject(schema: JsonObject, field: 'input_schema' | 'output_schema', who: string): RuleHit | undefined {
  if (schema.type === 'object') return undefined;
  const got = schema.type === undefined ? 'no type' : `type ${JSON.stringify(schema.type)}`;
  return {
    path: `/${field}/type`,
    rule: field === 'input_schema' ? 'root-type-object' : 'output-root-type-object',
    severity: 'error',
    message: `${who} needs "type": "object" at the root of ${field}; it has ${got}`,
  };
}

/** `anyOf` / `oneOf` / `allOf` (or the given keywords) at the root of `input_schema`. */
export function rootComposition(schema: JsonObject, who: string, keywords: readonly string[] = ['anyOf', 'oneOf', 'allOf']): RuleHit[] {
  return keywords
    .filter((keyword) => keyword in schema)
    .map((keyword) => ({
      path: `/input_schema/${keyword}`,
      rule: 'root-composition',
      severity: 'error' as const,
      message: `${who} rejects "${keyword}" at the root of input_schema; describe the parameters as one object`,
    }));
}

/**
 * Whether a tool takes no parameters: `type: "object"` with nothing but an empty
 * `properties`, an empty `required` or `additionalProperties: false` beside it. Leaving such
 * a schema out loses nothing; any other keyword (a description included) keeps it.
 */
export function takesNoParameters(schema: JsonObject): boolean {
  for (const key of Object.keys(schema)) {
    const value = schema[key];
    if (key === 'type') continue;
    if (key === 'properties' && isSchemaObject(value) && Object.keys(value).length === 0) continue;
    if (key === 'required' && Array.isArray(value) && value.length === 0) continue;
    if (key === 'additionalProperties' && value === false) continue;
    return false;
  }
  return schema.type === 'object';
}
