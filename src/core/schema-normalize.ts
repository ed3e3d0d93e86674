// Normal forms for compareSchemas (issue 38): a schema rewritten into an equivalent one (it
// accepts exactly the same values, ajv as the judge) so that two ways of writing one thing
// compare equal: type arrays and anyOf/oneOf of types, one-branch combinators, nested allOf,
// integer bounds, multipleOf 1 on integers, keywords that are no-ops. Shallow: a node's
// subschemas are normalized when the walk reaches them. docs/versions.md lists the rules.
import { canonicalJson } from './canonical.js';
import { ALL_TYPES, ANNOTATIONS, asSchema, isObject } from './schema-document.js';
import type { JsonType, Schema, SchemaDocument } from './schema-document.js';

/** The JSON types a keyword constrains: it says nothing about values of other types. */
export const KEYWORD_TYPES: Readonly<Record<string, readonly JsonType[]>> = {
  minimum: ['number', 'integer'],
  maximum: ['number', 'integer'],
  exclusiveMinimum: ['number', 'integer'],
  exclusiveMaximum: ['number', 'integer'],
  multipleOf: ['number', 'integer'],
  minLength: ['string'],
  maxLength: ['string'],
  pattern: ['string'],
  // ajv-formats also has number formats (int32, double...).
  format: ['string', 'number', 'integer'],
  items: ['array'],
  prefixItems: ['array'],
  additionalItems: ['array'],
  contains: ['array'],
  minContains: ['array'],
  maxContains: ['array'],
  minItems: ['array'],
  maxItems: ['array'],
  uniqueItems: ['array'],
  unevaluatedItems: ['array'],
  properties: ['object'],
  patternProperties: ['object'],
  additionalProperties: ['object'],
  required: ['object'],
  propertyNames: ['object'],
  minProperties: ['object'],
  maxProperties: ['object'],
  dependentRequired: ['object'],
  dependentSchemas: ['object'],
  dependencies: ['object'],
  unevaluatedProperties: ['object'],
};

/** Keywords that read one another: two schemas holding keywords of one group are not merged. */
const GROUPS: readonly (readonly string[])[] = [
  ['properties', 'patternProperties', 'additionalProperties'],
  ['prefixItems', 'items', 'additionalItems'],
  ['contains', 'minContains', 'maxContains'],
  ['if', 'then', 'else'],
];
const LOWER = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']);
const UPPER = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']);
/** Keywords that give a node an identity of its own (a scope, an anchor): never merged away. */
const SCOPES = ['$id', '$anchor', '$dynamicAnchor', '$defs', 'definitions'];
/** In-place applicators: what makes `unevaluated*` read more than its own node. */
const IN_PLACE = ['allOf', 'anyOf', 'oneOf', 'if', 'then', 'else', 'dependentSchemas', 'dependencies', '$ref', '$dynamicRef', '$recursiveRef'];

/** The types a schema's `type` keyword admits (all when absent; `number` includes `integer`). */
export function typeSet(schema: Schema): Set<JsonType> {
  if (schema === false) return new Set();
  if (schema === true) return new Set(ALL_TYPES);
  const declared = schema.type;
  let types: Set<JsonType>;
  if (typeof declared === 'string') types = new Set([declared as JsonType]);
  else if (Array.isArray(declared)) types = new Set(declared.filter((t): t is JsonType => typeof t === 'string') as JsonType[]);
  else types = new Set(ALL_TYPES);
  if (types.has('number')) types.add('integer');
  return types;
}

export function intersects(a: Set<JsonType>, b: Iterable<JsonType>): boolean {
  for (const t of b) if (a.has(t)) return true;
  return false;
}

/** A `type` value for a set of types, or undefined when it admits every type. */
function typeValue(types: Set<JsonType>): string | string[] | undefined {
  const list = ALL_TYPES.filter((t) => types.has(t) && !(t === 'integer' && types.has('number')));
  if (list.length === 6 && !list.includes('integer')) return undefined;
  return list.length === 1 ? list[0] : list;
}

/** A schema with no assertion (annotations only): it accepts everything. */
export function isEmptySchema(schema: Schema): boolean {
  return schema === true || (typeof schema === 'object' && Object.keys(schema).every((k) => ANNOTATIONS.has(k) || k === '$defs' || k === 'definitions'));
}

export function hasUnevaluated(schema: Record<string, unknown>): boolean {
  return (schema.unevaluatedProperties !== undefined && schema.unevaluatedProperties !== true) || (schema.unevaluatedItems !== undefined && schema.unevaluatedItems !== true);
}

function same(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null && canonicalJson(a) === canonicalJson(b));
}

/**
 * Whether `branch` can be folded into `target` (their conjunction written as one object). Not
 * a `$ref` where the document ignores a `$ref`'s siblings (draft-07 read as written): beside
 * the target's keywords it would make them ignored.
 */
function canMerge(target: Record<string, unknown>, branch: Schema, doc: SchemaDocument): branch is Record<string, unknown> {
  if (typeof branch !== 'object') return false;
  if (doc.ignoresRefSiblings && typeof branch.$ref === 'string') return false;
  if (SCOPES.some((k) => k in branch) || hasUnevaluated(target) || hasUnevaluated(branch)) return false;
  for (const group of GROUPS) if (group.some((k) => k in target) && group.some((k) => k in branch)) return false;
  for (const key of Object.keys(branch)) {
    if (ANNOTATIONS.has(key) || !(key in target) || same(target[key], branch[key])) continue;
    if (key === 'type' || key === 'required' || key === 'allOf' || LOWER.has(key) || UPPER.has(key)) {
      if ((LOWER.has(key) || UPPER.has(key)) && (typeof target[key] !== 'number' || typeof branch[key] !== 'number')) return false;
      continue;
    }
    return false;
  }
  return true;
}

function merge(target: Record<string, unknown>, branch: Record<string, unknown>): Record<string, unknown> {
  const out = { ...target };
  for (const [key, value] of Object.entries(branch)) {
    if (ANNOTATIONS.has(key)) continue;
    if (!(key in out) || same(out[key], value)) out[key] = value;
    else if (key === 'type') {
      const b = typeSet(branch);
      const both = new Set<JsonType>([...typeSet(out)].filter((t) => b.has(t)));
      const type = typeValue(both);
      if (both.size === 0) out.type = [];
      else if (type === undefined) delete out.type;
      else out.type = type;
    } else if (key === 'required') out.required = [...new Set([...(out.required as unknown[]), ...(value as unknown[])])];
    else if (key === 'allOf') out.allOf = [...(out.allOf as unknown[]), ...(value as unknown[])];
    else if (LOWER.has(key)) out[key] = Math.max(out[key] as number, value as number);
    else if (UPPER.has(key)) out[key] = Math.min(out[key] as number, value as number);
  }
  return out;
}

/**
 * anyOf/oneOf branches that each constrain only their own, pairwise disjoint types
 * (`[{type:'string', maxLength:3}, {type:'null'}]`), as one schema (`{type:['null','string'], maxLength:3}`).
 */
function mergeTypeBranches(branches: readonly Schema[]): Record<string, unknown> | undefined {
  const types: Set<JsonType>[] = [];
  for (const branch of branches) {
    if (typeof branch !== 'object' || branch.type === undefined || SCOPES.some((k) => k in branch)) return undefined;
    for (const key of Object.keys(branch)) if (key !== 'type' && !ANNOTATIONS.has(key) && KEYWORD_TYPES[key] === undefined) return undefined;
    types.push(typeSet(branch));
  }
  for (let i = 0; i < types.length; i++) for (let j = i + 1; j < types.length; j++) if (intersects(types[i] as Set<JsonType>, types[j] as Set<JsonType>)) return undefined;
  const out: Record<string, unknown> = {};
  const union = new Set<JsonType>();
  for (let i = 0; i < branches.length; i++) {
    const branch = branches[i] as Record<string, unknown>;
    for (const t of types[i] as Set<JsonType>) union.add(t);
    for (const [key, value] of Object.entries(branch)) {
      if (key === 'type' || ANNOTATIONS.has(key)) continue;
      const family = KEYWORD_TYPES[key] as readonly JsonType[];
      if (!intersects(types[i] as Set<JsonType>, family)) continue; // a no-op in its branch
      if (types.some((other, j) => j !== i && intersects(other, family))) return undefined;
      out[key] = value;
    }
  }
  const type = typeValue(union);
  if (type !== undefined) out.type = type;
  return out;
}

/** `unevaluatedProperties`/`unevaluatedItems` where nothing in place evaluates for them: `additionalProperties`/`items`. */
function renameUnevaluated(schema: Record<string, unknown>): Record<string, unknown> {
  if (IN_PLACE.some((k) => k in schema)) return schema;
  let out = schema;
  if (schema.unevaluatedProperties !== undefined) {
    out = { ...out };
    if (out.additionalProperties === undefined) out.additionalProperties = out.unevaluatedProperties;
    delete out.unevaluatedProperties;
  }
  if (schema.unevaluatedItems !== undefined && schema.contains === undefined && !Array.isArray(schema.items)) {
    out = out === schema ? { ...out } : out;
    if (out.items === undefined) out.items = out.unevaluatedItems;
    delete out.unevaluatedItems;
  }
  return out;
}

const caches = new WeakMap<SchemaDocument, WeakMap<object, Schema>>();

/** The normal form of one node of `doc` (the same object when nothing changes). */
export function normalize(schema: Schema, doc: SchemaDocument): Schema {
  if (typeof schema === 'boolean') return schema;
  let cache = caches.get(doc);
  if (cache === undefined) caches.set(doc, (cache = new WeakMap()));
  const cached = cache.get(schema);
  if (cached !== undefined) return cached;
  const result = normalizeNode(schema, doc);
  cache.set(schema, result);
  if (typeof result === 'object') {
    cache.set(result, result);
    if (result !== schema) doc.adopt(result, schema);
  }
  return result;
}

function normalizeNode(schema: Record<string, unknown>, doc: SchemaDocument): Schema {
  let out = schema;
  const edit = (): Record<string, unknown> => (out === schema ? (out = { ...schema }) : out);
  if (doc.draft !== '2020') {
    // Keywords the document's draft does not know are annotations there; draft-07 ignores a $ref's siblings.
    const refOnly = doc.ignoresRefSiblings && typeof out.$ref === 'string';
    for (const key of Object.keys(out)) {
      if (doc.ignores(key) || (refOnly && key !== '$ref' && !ANNOTATIONS.has(key) && key !== '$defs' && key !== 'definitions')) delete edit()[key];
    }
    if (refOnly) return out;
  }
  if (hasUnevaluated(out)) {
    out = renameUnevaluated(out);
    // Still read by unevaluated*: every annotation of this node counts, leave it as written.
    if (hasUnevaluated(out)) return out;
  }
  if (out.not !== undefined) {
    const not = asSchema(out.not);
    if (not === false) delete edit().not;
    else if (isEmptySchema(not)) return false;
  }
  if (Array.isArray(out.allOf)) {
    const branches: Schema[] = [];
    const add = (branch: Schema): boolean => {
      const n = normalize(branch, doc);
      if (isEmptySchema(n)) return true;
      if (n === false) return false;
      if (typeof n === 'object' && Array.isArray(n.allOf) && Object.keys(n).every((k) => k === 'allOf' || (ANNOTATIONS.has(k) && !SCOPES.includes(k)))) {
        return n.allOf.every((inner) => add(asSchema(inner)));
      }
      branches.push(n);
      return true;
    };
    if (!out.allOf.every((branch) => add(asSchema(branch)))) return false;
    delete edit().allOf;
    const kept: Schema[] = [];
    for (const branch of branches) {
      if (canMerge(out, branch, doc)) out = merge(out, branch);
      else kept.push(branch);
    }
    if (kept.length > 0) out.allOf = kept;
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (!Array.isArray(out[key])) continue;
    let branches = (out[key] as unknown[]).map((b) => normalize(asSchema(b), doc)).filter((b) => b !== false);
    if (branches.length === 0) return false;
    if (key === 'anyOf') {
      if (branches.some(isEmptySchema)) {
        delete edit().anyOf;
        continue;
      }
      const seen = new Set<string>();
      branches = branches.filter((b) => {
        const text = canonicalJson(b);
        if (seen.has(text)) return false;
        seen.add(text);
        return true;
      });
    }
    const single = branches.length === 1 ? (branches[0] as Schema) : mergeTypeBranches(branches);
    if (single !== undefined) {
      delete edit()[key];
      if (single === true || isEmptySchema(single)) continue;
      if (canMerge(out, single, doc)) out = merge(out, single);
      else out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), single];
      continue;
    }
    if (branches.length !== (out[key] as unknown[]).length || branches.some((b, i) => b !== (out[key] as unknown[])[i])) edit()[key] = branches;
  }
  if (out.type !== undefined) {
    if (typeof out.type !== 'string' && !Array.isArray(out.type)) return out;
    let types = typeSet(out);
    if (types.size === 0) return false;
    // A number that is a multiple of an integer is an integer.
    if (types.has('number') && typeof out.multipleOf === 'number' && Number.isInteger(out.multipleOf) && out.multipleOf > 0) {
      types = new Set([...types].filter((t) => t !== 'number'));
    }
    const value = typeValue(types);
    if (!same(value, out.type)) {
      if (value === undefined) delete edit().type;
      else edit().type = value;
    }
    for (const key of Object.keys(out)) {
      const family = KEYWORD_TYPES[key];
      if (family !== undefined && !intersects(types, family)) delete edit()[key];
    }
    if (types.has('integer') && !types.has('number')) {
      if (out.multipleOf === 1) delete edit().multipleOf;
      const lower = [typeof out.minimum === 'number' ? Math.ceil(out.minimum) : undefined, typeof out.exclusiveMinimum === 'number' ? Math.floor(out.exclusiveMinimum) + 1 : undefined];
      const upper = [typeof out.maximum === 'number' ? Math.floor(out.maximum) : undefined, typeof out.exclusiveMaximum === 'number' ? Math.ceil(out.exclusiveMaximum) - 1 : undefined];
      // Only where the arithmetic is exact: beyond 2^53, floor(2^53) + 1 is 2^53 again.
      const lo = lower.filter((v) => v !== undefined && Number.isSafeInteger(v)) as number[];
      const hi = upper.filter((v) => v !== undefined && Number.isSafeInteger(v)) as number[];
      if (lo.length < lower.filter((v) => v !== undefined).length) lo.length = 0;
      if (hi.length < upper.filter((v) => v !== undefined).length) hi.length = 0;
      if (lo.length > 0 && (out.exclusiveMinimum !== undefined || out.minimum !== Math.max(...lo))) {
        edit().minimum = Math.max(...lo);
        delete out.exclusiveMinimum;
      }
      if (hi.length > 0 && (out.exclusiveMaximum !== undefined || out.maximum !== Math.min(...hi))) {
        edit().maximum = Math.min(...hi);
        delete out.exclusiveMaximum;
      }
    }
  }
  // Of a closed and an open lower (upper) bound on numbers, the tighter one says it all.
  if (typeof out.minimum === 'number' && typeof out.exclusiveMinimum === 'number') delete edit()[out.exclusiveMinimum >= out.minimum ? 'minimum' : 'exclusiveMinimum'];
  if (typeof out.maximum === 'number' && typeof out.exclusiveMaximum === 'number') delete edit()[out.exclusiveMaximum <= out.maximum ? 'maximum' : 'exclusiveMaximum'];
  // Keywords that assert nothing.
  for (const key of Object.keys(out)) {
    const test = NO_OPS[key];
    if (test !== undefined && test(out[key], out)) delete edit()[key];
  }
  return out;
}

const emptyObject = (v: unknown): boolean => isObject(v) && Object.keys(v).length === 0;
const acceptsAll = (v: unknown): boolean => v === true || (isObject(v) && isEmptySchema(v));
/** Keywords that, with these values (and their neighbours), assert nothing. */
const NO_OPS: Readonly<Record<string, (value: unknown, schema: Record<string, unknown>) => boolean>> = {
  minLength: (v) => v === 0,
  minItems: (v) => v === 0,
  minProperties: (v) => v === 0,
  required: (v) => Array.isArray(v) && v.length === 0,
  properties: emptyObject,
  patternProperties: emptyObject,
  dependentRequired: emptyObject,
  dependentSchemas: emptyObject,
  uniqueItems: (v) => v === false,
  pattern: (v) => v === '' || v === '.*',
  additionalProperties: acceptsAll,
  propertyNames: acceptsAll,
  items: (v, s) => !Array.isArray(s.items) && acceptsAll(v),
  minContains: (_, s) => s.contains === undefined,
  maxContains: (_, s) => s.contains === undefined,
  then: (_, s) => s.if === undefined,
  else: (_, s) => s.if === undefined,
  if: (_, s) => s.then === undefined && s.else === undefined,
};
