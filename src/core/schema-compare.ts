// Schema comparison (issue 27): does a new JSON Schema accept every value the old one
// accepted? A walk over both schemas side by side, keyword by keyword, that names each
// difference with the way it moves the set of accepted values (narrower, wider, both, or
// unknown). Conservative on purpose: it never calls a change compatible that lets a value
// the old schema accepted fail the new one (test/core/schema-compare.property.test.ts checks
// this with ajv), but it may call breaking a change that a closer look would allow.
import { canonicalJson, jsonEquals } from './canonical.js';

/** Every kind of difference `compareSchemas` reports (docs/versions.md describes each). */
export type SchemaDifferenceType =
  | 'schema-changed'
  | 'type-added'
  | 'type-removed'
  | 'property-added'
  | 'property-removed'
  | 'required-added'
  | 'required-removed'
  | 'additional-properties-changed'
  | 'enum-added'
  | 'enum-removed'
  | 'enum-value-added'
  | 'enum-value-removed'
  | 'const-added'
  | 'const-removed'
  | 'const-changed'
  | 'bound-tightened'
  | 'bound-loosened'
  | 'multiple-of-changed'
  | 'pattern-added'
  | 'pattern-removed'
  | 'pattern-changed'
  | 'format-added'
  | 'format-removed'
  | 'format-changed'
  | 'unique-items-added'
  | 'unique-items-removed'
  | 'items-changed'
  | 'branch-added'
  | 'branch-removed'
  | 'not-changed'
  | 'ref-unresolved'
  | 'keyword-changed'
  | 'annotation-changed';

/** The fixed list of difference types, in the order docs/versions.md lists them. */
export const SCHEMA_DIFFERENCE_TYPES: readonly SchemaDifferenceType[] = Object.freeze([
  'schema-changed',
  'type-added',
  'type-removed',
  'property-added',
  'property-removed',
  'required-added',
  'required-removed',
  'additional-properties-changed',
  'enum-added',
  'enum-removed',
  'enum-value-added',
  'enum-value-removed',
  'const-added',
  'const-removed',
  'const-changed',
  'bound-tightened',
  'bound-loosened',
  'multiple-of-changed',
  'pattern-added',
  'pattern-removed',
  'pattern-changed',
  'format-added',
  'format-removed',
  'format-changed',
  'unique-items-added',
  'unique-items-removed',
  'items-changed',
  'branch-added',
  'branch-removed',
  'not-changed',
  'ref-unresolved',
  'keyword-changed',
  'annotation-changed',
]);

/** One difference between two schemas. */
export interface SchemaDifference {
  readonly type: SchemaDifferenceType;
  /** JSON Pointer (RFC 6901) to where the difference is, in the new schema (`/properties/age/maximum`). */
  readonly path: string;
  /** The keyword's value (or the subschema) before; `null` when it was absent. */
  readonly before: unknown;
  /** The value after; `null` when it is absent. */
  readonly after: unknown;
  /**
   * `true`: some value that was accepted is refused now (for an output schema: some value is
   * allowed now that was not); `false`: it breaks no one; `'undecidable'`: it cannot be
   * decided from the schemas (a changed `pattern`), and counts as breaking.
   */
  readonly breaking: boolean | 'undecidable';
}

/** What `compareSchemas` answers. */
export interface SchemaComparison {
  /** `true` when no difference is breaking (`true` or `'undecidable'`). */
  readonly compatible: boolean;
  readonly differences: readonly SchemaDifference[];
}

/** How a difference moves the set of accepted values. */
type Effect = 'narrows' | 'widens' | 'both' | 'none' | 'undecidable';

/** Which change breaks: inputs must not narrow (callers), outputs must not widen (consumers). */
type Role = 'input' | 'output';

interface Raw {
  readonly type: SchemaDifferenceType;
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly effect: Effect;
}

const ALL_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'] as const;
type JsonType = (typeof ALL_TYPES)[number];

/** Keywords that say nothing about which values are valid. */
const ANNOTATIONS: ReadonlySet<string> = new Set([
  'title',
  'description',
  'default',
  'examples',
  'example',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$schema',
  '$id',
  '$anchor',
  '$dynamicAnchor',
  '$vocabulary',
  'contentMediaType',
  'contentEncoding',
  'contentSchema',
]);

/** Keywords this walk understands (everything else that changes is `keyword-changed`, undecidable). */
const HANDLED: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'multipleOf',
  'pattern',
  'format',
  'uniqueItems',
  'items',
  'prefixItems',
  'additionalItems',
  'contains',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  '$ref',
  '$defs',
  'definitions',
  // Compared with the object and array keywords (as undecidable when they change).
  'patternProperties',
  'propertyNames',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
  'unevaluatedProperties',
  'minContains',
  'maxContains',
  'unevaluatedItems',
]);

/** Lower bounds: a larger value narrows. Upper bounds: a smaller value narrows. */
const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'] as const;
const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'] as const;
/** The type each bound constrains (it says nothing about values of other types). */
const BOUND_TYPES: Readonly<Record<string, readonly JsonType[]>> = {
  minimum: ['number', 'integer'],
  maximum: ['number', 'integer'],
  exclusiveMinimum: ['number', 'integer'],
  exclusiveMaximum: ['number', 'integer'],
  multipleOf: ['number', 'integer'],
  minLength: ['string'],
  maxLength: ['string'],
  pattern: ['string'],
  format: ['string'],
  minItems: ['array'],
  maxItems: ['array'],
  uniqueItems: ['array'],
  minProperties: ['object'],
  maxProperties: ['object'],
};

type Schema = boolean | Record<string, unknown>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asSchema(value: unknown): Schema {
  if (typeof value === 'boolean') return value;
  return isObject(value) ? value : true;
}

/** A JSON Pointer token (RFC 6901: `~` as `~0`, `/` as `~1`). */
function token(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Equal as JSON (key order ignored), or both absent. A walk, not two canonical texts: it stops at the first difference. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return jsonEquals(a, b);
}

function combine(a: Effect, b: Effect): Effect {
  if (a === b || b === 'none') return a;
  if (a === 'none') return b;
  if (a === 'undecidable' || b === 'undecidable') return 'undecidable';
  return 'both';
}

/** The JSON type of a value, as a schema's `type` names it (an integral number: integer). */
function typeOfValue(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

/** A resolver of local `$ref`s (`#`, `#/…` JSON Pointers) against one schema document. */
class Document {
  constructor(readonly root: Schema) {}

  /** The schema a local ref points at (with its pointer), or undefined when it cannot be resolved here. */
  resolve(ref: string): { schema: Schema; pointer: string } | undefined {
    if (ref === '#') return { schema: this.root, pointer: '' };
    if (!ref.startsWith('#/')) return undefined;
    let node: unknown = this.root;
    for (const part of ref.slice(2).split('/')) {
      let key: string;
      try {
        key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        return undefined;
      }
      if (Array.isArray(node)) node = node[Number(key)];
      else if (isObject(node)) node = node[key];
      else return undefined;
      if (node === undefined) return undefined;
    }
    if (typeof node !== 'boolean' && !isObject(node)) return undefined;
    return { schema: node, pointer: ref.slice(1) };
  }
}

/** The types a schema admits (from `type`, else from its `enum`/`const` values, else all). */
function typesOf(schema: Schema): Set<JsonType> {
  if (schema === false) return new Set();
  if (schema === true) return new Set(ALL_TYPES);
  const declared = schema.type;
  let types: Set<JsonType>;
  if (typeof declared === 'string') types = new Set([declared as JsonType]);
  else if (Array.isArray(declared)) types = new Set(declared.filter((t): t is JsonType => typeof t === 'string') as JsonType[]);
  else types = new Set(ALL_TYPES);
  // 'number' includes the integers.
  if (types.has('number')) types.add('integer');
  if ('const' in schema) return intersect(types, new Set([typeOfValue(schema.const)]));
  if (Array.isArray(schema.enum)) return intersect(types, new Set(schema.enum.map(typeOfValue)));
  return types;
}

function intersect(a: Set<JsonType>, b: Set<JsonType>): Set<JsonType> {
  const out = new Set<JsonType>();
  for (const t of b) {
    if (a.has(t) || (t === 'integer' && a.has('number'))) out.add(t);
    // A number constant 2.5 under type integer: none; an integer under number: integer.
  }
  return out;
}

function admits(types: Set<JsonType>, any: readonly JsonType[]): boolean {
  return any.some((t) => types.has(t));
}

/** The walk over two schemas; `seen` stops a pair of recursive `$ref`s from looping. */
class Comparer {
  readonly out: Raw[] = [];
  readonly #seen = new Set<string>();

  constructor(
    readonly before: Document,
    readonly after: Document,
  ) {}

  report(type: SchemaDifferenceType, path: string, before: unknown, after: unknown, effect: Effect): void {
    this.out.push({ type, path, before: before === undefined ? null : before, after: after === undefined ? null : after, effect });
  }

  /** The combined effect of comparing two subschemas, without reporting their differences. */
  relate(a: Schema, b: Schema, path: string): Effect {
    const inner = new Comparer(this.before, this.after);
    for (const key of this.#seen) inner.#seen.add(key);
    inner.compare(a, b, path);
    let effect: Effect = 'none';
    for (const one of inner.out) effect = combine(effect, one.effect);
    return effect;
  }

  compare(a: Schema, b: Schema, path: string): void {
    if (a === b) return;
    // Local $refs are followed on each side (also between textually equal schemas: their
    // $defs may differ); a pair of targets is compared once, so recursive schemas end.
    const refA = typeof a === 'object' && a.$ref !== undefined;
    const refB = typeof b === 'object' && b.$ref !== undefined;
    if (refA || refB) {
      const resolvedA = this.#follow(a, 'before');
      const resolvedB = this.#follow(b, 'after');
      if (resolvedA === undefined || resolvedB === undefined) {
        if (!same(a, b) || this.before.root !== this.after.root) this.report('ref-unresolved', path, a, b, 'undecidable');
        return;
      }
      const key = `${resolvedA.key}\u0000${resolvedB.key}`;
      if (this.#seen.has(key)) return;
      this.#seen.add(key);
      this.compare(resolvedA.schema, resolvedB.schema, resolvedB.pointer ?? path);
      return;
    }
    if (same(a, b)) return;
    if (typeof a === 'boolean' || typeof b === 'boolean') {
      this.#compareBoolean(a, b, path);
      return;
    }
    this.#compareObjects(a, b, path);
  }

  /**
   * A schema with its `$ref` resolved: the target, merged with the ref's siblings (as allOf:
   * only when there are none is it exact; siblings beside a ref are compared as allOf branches).
   */
  #follow(schema: Schema, side: 'before' | 'after'): { schema: Schema; pointer: string | undefined; key: string } | undefined {
    if (typeof schema === 'boolean' || schema.$ref === undefined) return { schema, pointer: undefined, key: canonicalJson(schema) };
    const ref = schema.$ref;
    if (typeof ref !== 'string') return undefined;
    const target = (side === 'before' ? this.before : this.after).resolve(ref);
    if (target === undefined) return undefined;
    const { $ref: _ref, ...siblings } = schema;
    const assertions = Object.keys(siblings).filter((key) => !ANNOTATIONS.has(key) && key !== '$defs' && key !== 'definitions');
    if (assertions.length === 0) return { schema: target.schema, pointer: target.pointer, key: ref };
    const rest: Record<string, unknown> = {};
    for (const key of assertions) rest[key] = siblings[key];
    return { schema: { allOf: [target.schema, rest] }, pointer: target.pointer, key: `${ref}\u0000${canonicalJson(rest)}` };
  }

  #compareBoolean(a: Schema, b: Schema, path: string): void {
    // true and {} accept everything; false accepts nothing.
    const empty = (s: Schema): boolean => s === true || (typeof s === 'object' && Object.keys(s).every((k) => ANNOTATIONS.has(k)));
    if (a === false) {
      if (b !== false) this.report('schema-changed', path, a, b, 'widens');
      return;
    }
    if (b === false) {
      this.report('schema-changed', path, a, b, 'narrows');
      return;
    }
    if (empty(a) && empty(b)) return;
    if (empty(b)) {
      this.report('schema-changed', path, a, b, 'widens');
      return;
    }
    // a accepts everything, b has assertions: compare as objects ({} against b).
    this.#compareObjects(a === true ? {} : (a as Record<string, unknown>), b === true ? {} : (b as Record<string, unknown>), path);
  }

  #compareObjects(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    const typesA = typesOf(a);
    const typesB = typesOf(b);
    this.#compareTypes(a, b, typesA, typesB, path);
    // Only the types both admit matter for keywords that constrain one type.
    const both = intersect(typesA, typesB);
    this.#compareEnum(a, b, path);
    if (admits(both, ['object'])) this.#compareObjectKeywords(a, b, path);
    if (admits(both, ['array'])) this.#compareArrayKeywords(a, b, path);
    for (const key of [...LOWER_BOUNDS, ...UPPER_BOUNDS]) {
      if (admits(both, BOUND_TYPES[key] as JsonType[])) this.#compareBound(key, a[key], b[key], path);
    }
    if (admits(both, ['number', 'integer'])) this.#compareMultipleOf(a.multipleOf, b.multipleOf, path);
    if (admits(both, ['string'])) {
      this.#compareAddedRemoved('pattern', a.pattern, b.pattern, path);
      this.#compareAddedRemoved('format', a.format, b.format, path);
    }
    if (admits(both, ['array']) && (a.uniqueItems === true) !== (b.uniqueItems === true)) {
      const added = b.uniqueItems === true;
      this.report(added ? 'unique-items-added' : 'unique-items-removed', `${path}/uniqueItems`, a.uniqueItems, b.uniqueItems, added ? 'narrows' : 'widens');
    }
    this.#compareBranches('allOf', a.allOf, b.allOf, path);
    this.#compareBranches('anyOf', a.anyOf, b.anyOf, path);
    this.#compareBranches('oneOf', a.oneOf, b.oneOf, path);
    this.#compareNot(a.not, b.not, path);
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (HANDLED.has(key) || same(a[key], b[key])) continue;
      const where = `${path}/${token(key)}`;
      if (ANNOTATIONS.has(key)) this.report('annotation-changed', where, a[key], b[key], 'none');
      else this.report('keyword-changed', where, a[key], b[key], 'undecidable');
    }
  }

  #compareTypes(a: Record<string, unknown>, b: Record<string, unknown>, typesA: Set<JsonType>, typesB: Set<JsonType>, path: string): void {
    const removed = [...typesA].filter((t) => !typesB.has(t) && !(t === 'integer' && typesB.has('number')));
    const added = [...typesB].filter((t) => !typesA.has(t) && !(t === 'integer' && typesA.has('number')));
    // Reported where `type` is (its value as written), once per direction.
    const where = `${path}/type`;
    if (removed.length > 0) this.report('type-removed', where, a.type, b.type, 'narrows');
    // A type the enum or const rules out anyway is not added for real: the enum difference says it.
    if (added.length > 0 && !('const' in b) && !Array.isArray(b.enum)) this.report('type-added', where, a.type, b.type, 'widens');
  }

  #compareEnum(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    const valuesOf = (s: Record<string, unknown>): unknown[] | undefined => ('const' in s ? [s.const] : Array.isArray(s.enum) ? s.enum : undefined);
    const before = valuesOf(a);
    const after = valuesOf(b);
    if (before === undefined && after === undefined) return;
    const constKeyword = 'const' in a || 'const' in b;
    if (before === undefined) {
      this.report(constKeyword ? 'const-added' : 'enum-added', `${path}/${'const' in b ? 'const' : 'enum'}`, null, 'const' in b ? b.const : b.enum, 'narrows');
      return;
    }
    if (after === undefined) {
      this.report(constKeyword ? 'const-removed' : 'enum-removed', `${path}/${'const' in a ? 'const' : 'enum'}`, 'const' in a ? a.const : a.enum, null, 'widens');
      return;
    }
    const keys = (values: unknown[]): Set<string> => new Set(values.map((v) => canonicalJson(v)));
    const keysA = keys(before);
    const keysB = keys(after);
    const lost = before.filter((v) => !keysB.has(canonicalJson(v)));
    const gained = after.filter((v) => !keysA.has(canonicalJson(v)));
    if (lost.length === 0 && gained.length === 0) return;
    if ('const' in a && 'const' in b) {
      this.report('const-changed', `${path}/const`, a.const, b.const, 'both');
      return;
    }
    const where = `${path}/${'enum' in b ? 'enum' : 'const'}`;
    for (const value of lost) this.report('enum-value-removed', where, value, null, 'narrows');
    for (const value of gained) this.report('enum-value-added', where, null, value, 'widens');
  }

  #compareBound(key: string, a: unknown, b: unknown, path: string): void {
    if (a === b) return;
    const where = `${path}/${key}`;
    const lower = (LOWER_BOUNDS as readonly string[]).includes(key);
    if (typeof a !== 'number' && a !== undefined) return this.report('keyword-changed', where, a, b, 'undecidable');
    if (typeof b !== 'number' && b !== undefined) return this.report('keyword-changed', where, a, b, 'undecidable');
    let tighter: boolean;
    if (a === undefined) tighter = true;
    else if (b === undefined) tighter = false;
    else tighter = lower ? (b as number) > a : (b as number) < a;
    this.report(tighter ? 'bound-tightened' : 'bound-loosened', where, a, b, tighter ? 'narrows' : 'widens');
  }

  #compareMultipleOf(a: unknown, b: unknown, path: string): void {
    if (a === b) return;
    const where = `${path}/multipleOf`;
    if (b === undefined) return this.report('multiple-of-changed', where, a, b, 'widens');
    if (a === undefined || typeof a !== 'number' || typeof b !== 'number' || b <= 0 || a <= 0) {
      return this.report('multiple-of-changed', where, a, b, a === undefined ? 'narrows' : 'undecidable');
    }
    // Every multiple of a is a multiple of b exactly when a is a multiple of b.
    const ratio = a / b;
    const divides = Math.abs(ratio - Math.round(ratio)) < 1e-9;
    this.report('multiple-of-changed', where, a, b, divides ? (Math.round(ratio) === 1 ? 'none' : 'widens') : 'narrows');
  }

  #compareAddedRemoved(key: 'pattern' | 'format', a: unknown, b: unknown, path: string): void {
    if (a === b) return;
    const where = `${path}/${key}`;
    if (a === undefined) this.report(`${key}-added` as const, where, a, b, 'narrows');
    else if (b === undefined) this.report(`${key}-removed` as const, where, a, b, 'widens');
    else this.report(`${key}-changed` as const, where, a, b, 'undecidable');
  }

  #compareObjectKeywords(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    const propsA = isObject(a.properties) ? a.properties : {};
    const propsB = isObject(b.properties) ? b.properties : {};
    const hasPatterns = a.patternProperties !== undefined || b.patternProperties !== undefined;
    const restA = a.additionalProperties === undefined ? true : asSchema(a.additionalProperties);
    const restB = b.additionalProperties === undefined ? true : asSchema(b.additionalProperties);
    for (const name of new Set([...Object.keys(propsA), ...Object.keys(propsB)])) {
      const where = `${path}/properties/${token(name)}`;
      const inA = Object.hasOwn(propsA, name);
      const inB = Object.hasOwn(propsB, name);
      if (inA && inB) {
        this.compare(asSchema(propsA[name]), asSchema(propsB[name]), where);
        continue;
      }
      // The schema a value under this name met before (after): the property's, or what
      // additionalProperties says of names not listed. patternProperties may also apply: undecidable.
      const effect = hasPatterns ? 'undecidable' : this.relate(inA ? asSchema(propsA[name]) : restA, inB ? asSchema(propsB[name]) : restB, where);
      if (inB) this.report('property-added', where, null, propsB[name], effect);
      else this.report('property-removed', where, propsA[name], null, effect);
    }
    if (!same(a.additionalProperties, b.additionalProperties)) {
      const effect = this.relate(restA, restB, `${path}/additionalProperties`);
      this.report('additional-properties-changed', `${path}/additionalProperties`, a.additionalProperties, b.additionalProperties, effect);
    }
    const requiredA = new Set(Array.isArray(a.required) ? (a.required as unknown[]).map(String) : []);
    const requiredB = new Set(Array.isArray(b.required) ? (b.required as unknown[]).map(String) : []);
    for (const name of requiredB) if (!requiredA.has(name)) this.report('required-added', `${path}/required`, null, name, 'narrows');
    for (const name of requiredA) if (!requiredB.has(name)) this.report('required-removed', `${path}/required`, name, null, 'widens');
    for (const key of ['patternProperties', 'propertyNames', 'dependentRequired', 'dependentSchemas', 'dependencies', 'unevaluatedProperties']) {
      if (!same(a[key], b[key])) this.report('keyword-changed', `${path}/${key}`, a[key], b[key], 'undecidable');
    }
  }

  /**
   * Arrays: the schema of item i is `prefixItems[i]` (draft 2020-12) or `items[i]` (draft-07's
   * tuple form), else the rest: `items` (2020-12, or draft-07's single schema) or
   * `additionalItems` (draft-07 after a tuple).
   */
  #compareArrayKeywords(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    const shape = (s: Record<string, unknown>): { prefix: unknown[]; rest: Schema; prefixKey: string; restKey: string } => {
      if (Array.isArray(s.prefixItems)) return { prefix: s.prefixItems, rest: s.items === undefined ? true : asSchema(s.items), prefixKey: 'prefixItems', restKey: 'items' };
      if (Array.isArray(s.items)) {
        return { prefix: s.items, rest: s.additionalItems === undefined ? true : asSchema(s.additionalItems), prefixKey: 'items', restKey: 'additionalItems' };
      }
      return { prefix: [], rest: s.items === undefined ? true : asSchema(s.items), prefixKey: 'prefixItems', restKey: 'items' };
    };
    const shapeA = shape(a);
    const shapeB = shape(b);
    const length = Math.max(shapeA.prefix.length, shapeB.prefix.length);
    for (let i = 0; i < length; i++) {
      const itemA = i < shapeA.prefix.length ? asSchema(shapeA.prefix[i]) : shapeA.rest;
      const itemB = i < shapeB.prefix.length ? asSchema(shapeB.prefix[i]) : shapeB.rest;
      this.#compareItems(itemA, itemB, `${path}/${shapeB.prefix.length > i ? shapeB.prefixKey : shapeB.restKey}${shapeB.prefix.length > i ? `/${i}` : ''}`);
    }
    this.#compareItems(shapeA.rest, shapeB.rest, `${path}/${shapeB.restKey}`);
    if (!same(a.contains, b.contains)) {
      if (a.contains === undefined) this.report('keyword-changed', `${path}/contains`, null, b.contains, 'narrows');
      else if (b.contains === undefined) this.report('keyword-changed', `${path}/contains`, a.contains, null, 'widens');
      else {
        // Every array with an item the old `contains` accepts has one the new accepts when the new accepts more.
        const effect = this.relate(asSchema(a.contains), asSchema(b.contains), `${path}/contains`);
        this.report('keyword-changed', `${path}/contains`, a.contains, b.contains, effect === 'widens' || effect === 'none' ? effect : effect === 'narrows' ? 'narrows' : 'undecidable');
      }
    }
    for (const key of ['minContains', 'maxContains', 'unevaluatedItems']) {
      if (!same(a[key], b[key])) this.report('keyword-changed', `${path}/${key}`, a[key], b[key], 'undecidable');
    }
  }

  #compareItems(a: Schema, b: Schema, path: string): void {
    if (same(a, b)) return;
    // From "any item" to a schema (or back): one difference for the items as a whole.
    if (a === true || b === true) this.report('items-changed', path, a === true ? null : a, b === true ? null : b, this.relate(a, b, path));
    else this.compare(a, b, path);
  }

  #compareBranches(key: 'allOf' | 'anyOf' | 'oneOf', a: unknown, b: unknown, path: string): void {
    if (same(a, b)) return;
    const listA = Array.isArray(a) ? a.map(asSchema) : [];
    const listB = Array.isArray(b) ? b.map(asSchema) : [];
    const where = `${path}/${key}`;
    if (a === undefined) {
      // A new combinator constrains (an anyOf with a branch that accepts anything does not).
      this.report('branch-added', where, null, b, key === 'anyOf' && listB.some((x) => x === true) ? 'none' : 'narrows');
      return;
    }
    if (b === undefined) {
      this.report('branch-removed', where, a, null, 'widens');
      return;
    }
    // oneOf is anyOf when no value can match two branches; otherwise a wider branch may
    // overlap another (a value matching two fails) and a narrower one may end an overlap:
    // any change is undecidable.
    const anyOf = key === 'anyOf' || (key === 'oneOf' && pairwiseDisjoint(listA) && pairwiseDisjoint(listB));
    // Identical branches match wherever they are; the rest are compared by position.
    const keysA = listA.map((x) => canonicalJson(x));
    const keysB = listB.map((x) => canonicalJson(x));
    const unmatchedA = listA.map((_, i) => i).filter((i) => !keysB.includes(keysA[i] as string));
    const unmatchedB = listB.map((_, j) => j).filter((j) => !keysA.includes(keysB[j] as string));
    const pairs = Math.min(unmatchedA.length, unmatchedB.length);
    for (let p = 0; p < pairs; p++) {
      const i = unmatchedA[p] as number;
      const j = unmatchedB[p] as number;
      if (key === 'oneOf' && !anyOf) this.report('keyword-changed', `${where}/${j}`, listA[i], listB[j], 'undecidable');
      else this.compare(listA[i] as Schema, listB[j] as Schema, `${where}/${j}`);
    }
    for (const i of unmatchedA.slice(pairs)) {
      let effect: Effect;
      if (key === 'allOf') effect = 'widens';
      else if (!anyOf) effect = 'undecidable';
      else {
        // One alternative fewer narrows, unless a remaining branch accepts all it accepted.
        const covered = listB.some((other, j) => {
          const relation = this.relate(listA[i] as Schema, other, `${where}/${j}`);
          return relation === 'none' || relation === 'widens';
        });
        effect = covered ? 'none' : 'narrows';
      }
      this.report('branch-removed', `${where}/${i}`, listA[i], null, effect);
    }
    for (const j of unmatchedB.slice(pairs)) {
      const effect: Effect = key === 'allOf' ? 'narrows' : anyOf ? 'widens' : 'undecidable';
      this.report('branch-added', `${where}/${j}`, null, listB[j], effect);
    }
  }

  #compareNot(a: unknown, b: unknown, path: string): void {
    if (same(a, b)) return;
    const where = `${path}/not`;
    if (a === undefined) return this.report('not-changed', where, null, b, 'narrows');
    if (b === undefined) return this.report('not-changed', where, a, null, 'widens');
    // not A accepts all that not B... reversed: the new `not` must refuse less.
    const effect = this.relate(asSchema(a), asSchema(b), where);
    const flipped: Effect = effect === 'narrows' ? 'widens' : effect === 'widens' ? 'narrows' : effect;
    this.report('not-changed', where, a, b, flipped);
  }
}

/** Whether no two of the schemas can match one value. */
function pairwiseDisjoint(list: readonly Schema[]): boolean {
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) if (!disjointSchemas(list[i] as Schema, list[j] as Schema)) return false;
  }
  return true;
}

/** Whether no value can match both schemas: different types, or different constants under a required name. */
function disjointSchemas(a: Schema, b: Schema): boolean {
  if (a === false || b === false) return true;
  if (a === true || b === true) return false;
  if (intersect(typesOf(a), typesOf(b)).size === 0) return true;
  const propsA = isObject(a.properties) ? a.properties : {};
  const propsB = isObject(b.properties) ? b.properties : {};
  const requiredA = Array.isArray(a.required) ? a.required : [];
  const requiredB = Array.isArray(b.required) ? b.required : [];
  for (const name of Object.keys(propsA)) {
    if (!requiredA.includes(name) || !requiredB.includes(name) || !Object.hasOwn(propsB, name)) continue;
    const valuesOf = (s: unknown): string[] | undefined =>
      isObject(s) ? ('const' in s ? [canonicalJson(s.const)] : Array.isArray(s.enum) ? s.enum.map((v) => canonicalJson(v)) : undefined) : undefined;
    const va = valuesOf(propsA[name]);
    const vb = valuesOf(propsB[name]);
    if (va !== undefined && vb !== undefined && !va.some((v) => vb.includes(v))) return true;
  }
  return false;
}

function checkSchemaArgument(method: string, name: string, value: unknown): Schema {
  if (typeof value === 'boolean' || isObject(value)) return value;
  throw new TypeError(`${method}(): ${name} must be a JSON Schema (an object or a boolean), got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
}

function breakingOf(effect: Effect, role: Role): boolean | 'undecidable' {
  if (effect === 'undecidable') return 'undecidable';
  if (effect === 'both') return true;
  return role === 'input' ? effect === 'narrows' : effect === 'widens';
}

/** The raw differences of two schemas, with a prefix on every path. */
function differencesOf(before: Schema, after: Schema, role: Role, prefix: string): SchemaDifference[] {
  const comparer = new Comparer(new Document(before), new Document(after));
  comparer.compare(before, after, '');
  return comparer.out.map((raw) =>
    Object.freeze({
      type: raw.type,
      path: prefix + raw.path,
      // Copies: the caller's schemas are neither frozen nor shared.
      before: freezeDeep(structuredClone(raw.before)),
      after: freezeDeep(structuredClone(raw.after)),
      breaking: breakingOf(raw.effect, role),
    }),
  );
}

function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) freezeDeep(inner);
  }
  return value;
}

function comparison(differences: SchemaDifference[]): SchemaComparison {
  return Object.freeze({ compatible: differences.every((d) => d.breaking === false), differences: Object.freeze(differences) });
}

/**
 * Does `after` accept every value `before` accepted? Compares two JSON Schemas (draft
 * 2020-12 or draft-07, as tools use them: types, properties and `required`,
 * `additionalProperties`, `enum`/`const`, numeric and string bounds, `items`/`prefixItems`,
 * `allOf`/`anyOf`/`oneOf`/`not`, local `$ref`s, nested to any depth) and lists every
 * difference with a JSON Pointer into `after`. A property added to an open object (no
 * `additionalProperties: false`) narrows: the old schema let any value through under that
 * name. What the schemas cannot decide (a changed `pattern`, a keyword this walk does not
 * know) is `'undecidable'` and makes the pair incompatible. Annotations (`description`,
 * `title`, `default`, `examples`…) are reported and never break. The values given are not
 * changed; the answer is deeply frozen.
 * @throws TypeError when a schema is not an object or a boolean
 */
export function compareSchemas(before: unknown, after: unknown): SchemaComparison {
  const a = checkSchemaArgument('compareSchemas', 'before', before);
  const b = checkSchemaArgument('compareSchemas', 'after', after);
  return comparison(differencesOf(a, b, 'input', ''));
}

/** The two schemas of a spec, as `compareToolSchemas` reads them. */
export interface ToolSchemas {
  readonly input_schema: unknown;
  readonly output_schema: unknown;
}

/**
 * Whether a new version of a tool keeps its callers and consumers working: every input the
 * old `input_schema` accepted is still accepted, and every output the new `output_schema`
 * allows was allowed before (an output difference breaks when it widens). Paths start with
 * `/input_schema` or `/output_schema`.
 * @throws TypeError when a schema is not an object or a boolean
 */
export function compareToolSchemas(before: ToolSchemas, after: ToolSchemas): SchemaComparison {
  const inputBefore = checkSchemaArgument('compareToolSchemas', 'before.input_schema', before?.input_schema);
  const inputAfter = checkSchemaArgument('compareToolSchemas', 'after.input_schema', after?.input_schema);
  const outputBefore = checkSchemaArgument('compareToolSchemas', 'before.output_schema', before.output_schema);
  const outputAfter = checkSchemaArgument('compareToolSchemas', 'after.output_schema', after.output_schema);
  return comparison([
    ...differencesOf(inputBefore, inputAfter, 'input', '/input_schema'),
    ...differencesOf(outputBefore, outputAfter, 'output', '/output_schema'),
  ]);
}
