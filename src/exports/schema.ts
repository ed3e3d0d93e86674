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

/** Keywords whose value is a map of name -> subschema. */
const MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
/** Keywords whose value is one subschema. */
const SINGLE_KEYWORDS = [
  'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'items', 'additionalItems',
  'contains', 'propertyNames', 'not', 'if', 'then', 'else',
];
/** Keywords whose value is a list of subschemas. */
const LIST_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items'];

/** Whether the schema describes objects: `type: "object"` (or a type list with it), or properties without a type. */
export function isObjectSchema(schema: SchemaObject): boolean {
  const type = schema.type;
  if (type === 'object') return true;
  if (Array.isArray(type)) return type.includes('object');
  return type === undefined && isSchemaObject(schema.properties);
}

/** Visits `root` and every subschema under it, depth first, in key order. */
export function walkSchema(root: unknown, rootPointer: string, visit: (node: SchemaNode) => void): void {
  if (!isSchemaObject(root)) return;
  const step = (node: SchemaNode): void => {
    visit(node);
    const { schema, pointer } = node;
    const depth = node.objectDepth;
    for (const keyword of MAP_KEYWORDS) {
      const map = schema[keyword];
      if (!isSchemaObject(map)) continue;
      for (const name of Object.keys(map)) {
        const child = map[name];
        if (!isSchemaObject(child)) continue;
        const inProperties = keyword === 'properties';
        step({
          schema: child,
          pointer: pointerTo(pointer, keyword, name),
          keyword,
          propertyName: inProperties ? name : null,
          parent: inProperties ? schema : null,
          objectDepth: depth + (isObjectSchema(child) ? 1 : 0),
        });
      }
    }
    for (const keyword of SINGLE_KEYWORDS) {
      const child = schema[keyword];
      if (!isSchemaObject(child)) continue;
      step({ schema: child, pointer: pointerTo(pointer, keyword), keyword, propertyName: null, parent: null, objectDepth: depth + (isObjectSchema(child) ? 1 : 0) });
    }
    for (const keyword of LIST_KEYWORDS) {
      const list = schema[keyword];
      if (!Array.isArray(list)) continue;
      list.forEach((child, index) => {
        if (!isSchemaObject(child)) return;
        step({ schema: child, pointer: pointerTo(pointer, keyword, index), keyword, propertyName: null, parent: null, objectDepth: depth + (isObjectSchema(child) ? 1 : 0) });
      });
    }
  };
  step({ schema: root, pointer: rootPointer, keyword: null, propertyName: null, parent: null, objectDepth: isObjectSchema(root) ? 1 : 0 });
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

/** `anyOf` / `oneOf` / `allOf` at the root of `input_schema`. */
export function rootComposition(schema: JsonObject, who: string): RuleHit[] {
  return ['anyOf', 'oneOf', 'allOf']
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
