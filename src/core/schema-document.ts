// One JSON Schema document as compareSchemas reads it (issue 38): where each `$ref` leads
// (RFC 3986 against the `$id` scopes it sits in, `$anchor`s, JSON Pointers), and a small
// three-valued validator (`true`, `false`, or `undefined` where it cannot tell) that follows
// ajv's semantics for the keywords it knows. The comparison uses it to judge finite schemas
// (`enum`, `const`, small integer ranges) value by value, and to prove `oneOf` branches disjoint.
import { canonicalJson, jsonEquals } from './canonical.js';
import { compilePattern, matchPattern } from './pattern-match.js';

export type Schema = boolean | Record<string, unknown>;
export type JsonType = 'array' | 'boolean' | 'integer' | 'null' | 'number' | 'object' | 'string';
export const ALL_TYPES: readonly JsonType[] = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'];

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asSchema(value: unknown): Schema {
  if (typeof value === 'boolean') return value;
  return isObject(value) ? value : true;
}

/** Keywords that say nothing about which values are valid. */
export const ANNOTATIONS: ReadonlySet<string> = new Set([
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

/** Keywords whose value holds one schema, a list of them, or a map of them (what `$id` scopes reach). */
const SCHEMA_ONE = ['additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems', 'additionalItems', 'items'];
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];

/** Keywords of 2019-09 and 2020-12 that draft-07 does not know. */
const NEWER_KEYWORDS: ReadonlySet<string> = new Set(['prefixItems', 'unevaluatedProperties', 'unevaluatedItems', 'dependentSchemas', 'dependentRequired', 'minContains', 'maxContains', '$dynamicRef', '$recursiveRef']);

/** The base URI of a document without `$id`: refs that leave it (another file) resolve nowhere. */
const DEFAULT_BASE = 'https://tool-registry.invalid/schema.json';

function withoutFragment(uri: string): string {
  const hash = uri.indexOf('#');
  return hash === -1 ? uri : uri.slice(0, hash);
}

/** A JSON type of a value, as `type` names it (an integral number: integer). */
export function typeOfValue(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

/** A JSON Pointer token (RFC 6901: `~` as `~0`, `/` as `~1`). */
export function token(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The most `validates` steps one document takes in one comparison before it cannot tell. */
const VALIDATION_LIMIT = 1_000_000;

/** Where a document is not a schema ajv compiles: the keyword's pointer and its value. */
export interface Malformed {
  readonly pointer: string;
  readonly value: unknown;
}

/** What the malformed walk returns for a well-formed part (a value no schema holds). */
const OK = Symbol('well-formed');

/**
 * The `$schema` values the runtime validates with (draft-07, 2019-09, 2020-12); it refuses others.
 * Each in the scheme its meta-schema's `$id` has: ajv looks the meta-schema up by that text, so
 * `http://json-schema.org/draft/2020-12/schema` is "no schema with key or ref" at run time.
 */
const SUPPORTED_DRAFTS: readonly RegExp[] = [
  /^http:\/\/json-schema\.org\/draft-07\/schema#?$/,
  /^https:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/,
  /^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/,
];

const TYPE_NAMES: ReadonlySet<unknown> = new Set(['array', 'boolean', 'integer', 'null', 'number', 'object', 'string']);

function uniqueStrings(list: readonly unknown[]): boolean {
  return list.every((name) => typeof name === 'string') && new Set(list).size === list.length;
}

/** An `enum` list as sets: its primitives, and the canonical JSON of its objects and arrays. */
interface EnumIndex {
  readonly primitives: Set<unknown>;
  readonly texts: Set<string>;
}

/** Canonical JSON of a value, or `undefined` when it is not JSON data. */
function jsonText(value: unknown): string | undefined {
  try {
    return canonicalJson(value);
  } catch {
    return undefined;
  }
}

/** Keywords whose subschemas apply to the very value their schema applies to (no descent into it). */
const SAME_VALUE: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas', 'dependencies']);

/** A subschema and where its schema holds it: `keyword`, and the index or name under it (`anyOf` 2, `properties` "a"). */
interface Subschema {
  readonly keyword: string;
  readonly key?: string | number;
  readonly schema: unknown;
}

/** The subschemas of `node`; under `$defs` and `definitions` too when `withDefs`. */
function subschemas(node: Record<string, unknown>, withDefs: boolean): Subschema[] {
  const out: Subschema[] = [];
  for (const keyword of SCHEMA_ONE) if (isObject(node[keyword])) out.push({ keyword, schema: node[keyword] });
  for (const keyword of SCHEMA_LIST) {
    const list = node[keyword];
    if (Array.isArray(list)) list.forEach((schema: unknown, key) => out.push({ keyword, key, schema }));
  }
  for (const keyword of SCHEMA_MAP) {
    const map = node[keyword];
    if (!isObject(map) || (!withDefs && (keyword === '$defs' || keyword === 'definitions'))) continue;
    for (const [key, schema] of Object.entries(map)) if (isObject(schema)) out.push({ keyword, key, schema });
  }
  return out;
}

let nextId = 1;
const ids = new WeakMap<object, number>();
/** A stable identity for a schema node (booleans are their own). */
export function nodeKey(node: Schema): string {
  if (typeof node === 'boolean') return String(node);
  let id = ids.get(node);
  if (id === undefined) {
    id = nextId++;
    ids.set(node, id);
  }
  return `#${id}`;
}

type Tri = boolean | undefined;

function and(a: Tri, b: Tri): Tri {
  if (a === false || b === false) return false;
  return a === undefined || b === undefined ? undefined : true;
}

/** A string's length in code points, as ajv counts it. */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

export class SchemaDocument {
  readonly #bases = new WeakMap<object, string>();
  readonly #resources = new Map<string, Schema>();
  readonly #anchors = new Map<string, Schema>();
  readonly #resolved = new Map<string, Schema | null>();
  readonly #pointers = new WeakMap<object, string>();
  readonly #origins = new WeakMap<object, object>();
  /** Which nodes hold a `$ref` (schema-compare.ts fills it). */
  readonly refFlags = new WeakMap<object, boolean>();
  /** Each `enum` list's values as a set, built at its first lookup (see `#inEnum`). */
  readonly #enums = new WeakMap<readonly unknown[], EnumIndex>();
  #anyRef: boolean | undefined;
  #malformed: Malformed | null | undefined;
  /** Steps of `validates` in the current comparison (`VALIDATION_LIMIT`; the comparison resets it). */
  validationSteps = 0;

  /**
   * Whether the values `validates` judges are inputs, which the runtime checks with ajv's
   * `useDefaults` (the comparison sets it): then a value ajv would fill a default into (an
   * object without a property that has one, a draft-07 tuple shorter than an entry that has
   * one) is not judged (`undefined`): what ajv decides then depends on the order it fills and
   * checks in, which this validator does not follow.
   */
  fillsDefaults = false;

  /** Whether `validates` ran out of steps in this comparison: every later answer is `undefined`. */
  get exhausted(): boolean {
    return this.validationSteps > VALIDATION_LIMIT;
  }

  /** Whether the document holds a reference anywhere (most tool schemas do not: then no node does). */
  get anyRef(): boolean {
    this.#anyRef ??= holdsRef(this.root);
    return this.#anyRef;
  }
  readonly rootBase: string;

  /**
   * The draft the runtime validates this document with (`$schema`; none: 2020-12). Draft-07
   * (and 04, 06) ignores the siblings of a `$ref` and the keywords 2019-09/2020-12 added;
   * 2019-09 has no `prefixItems`.
   */
  readonly draft: '07' | '2019' | '2020';

  /**
   * Whether a draft-07 `$ref`'s siblings are ignored, as the specification says (the
   * default), or applied beside it, as ajv (the runtime's validator) applies them. A
   * comparison of draft-07 documents with such siblings is made both ways (schema-compare.ts).
   */
  readonly ignoresRefSiblings: boolean;

  constructor(
    readonly root: Schema,
    refSiblings: 'ignore' | 'apply' = 'ignore',
  ) {
    const declared = isObject(root) && typeof root.$schema === 'string' ? root.$schema : '';
    this.draft = /json-schema\.org\/draft-0[4-7]\/schema/.test(declared) ? '07' : /json-schema\.org\/draft\/2019-09\/schema/.test(declared) ? '2019' : '2020';
    this.ignoresRefSiblings = this.draft === '07' && refSiblings === 'ignore';
    let base = DEFAULT_BASE;
    if (isObject(root) && typeof root.$id === 'string' && !root.$id.startsWith('#')) {
      try {
        base = new URL(root.$id, DEFAULT_BASE).href;
      } catch {
        // An $id that is not a URI reference: the default base.
      }
    }
    this.rootBase = base;
  }

  /** Indexes the document on first use: most comparisons never resolve a ref. */
  #indexed = false;
  #ensureIndexed(): void {
    if (this.#indexed) return;
    this.#indexed = true;
    this.#resources.set(withoutFragment(this.rootBase), this.root);
    this.#index(this.root, this.rootBase, '');
  }

  #index(node: unknown, base: string, pointer: string): void {
    if (!isObject(node)) return;
    if (!this.#pointers.has(node)) this.#pointers.set(node, pointer);
    if (typeof node.$id === 'string') {
      if (node.$id.startsWith('#')) this.#anchors.set(withoutFragment(base) + node.$id, node);
      else {
        try {
          base = new URL(node.$id, base).href;
          this.#resources.set(withoutFragment(base), node);
        } catch {
          // Not a URI reference: the scope stays the enclosing one.
        }
      }
    }
    for (const key of ['$anchor', '$dynamicAnchor']) {
      if (typeof node[key] === 'string') this.#anchors.set(`${withoutFragment(base)}#${node[key] as string}`, node);
    }
    if (!this.#bases.has(node)) this.#bases.set(node, base);
    for (const key of SCHEMA_ONE) if (isObject(node[key])) this.#index(node[key], base, `${pointer}/${token(key)}`);
    for (const key of SCHEMA_LIST) {
      if (Array.isArray(node[key])) (node[key] as unknown[]).forEach((item, i) => this.#index(item, base, `${pointer}/${key}/${i}`));
    }
    for (const key of SCHEMA_MAP) {
      if (isObject(node[key])) for (const [name, value] of Object.entries(node[key])) this.#index(value, base, `${pointer}/${token(key)}/${token(name)}`);
    }
  }

  /** The JSON Pointer of a node of this document (undefined for a node the comparison made). */
  pointerOf(node: Schema): string | undefined {
    this.#ensureIndexed();
    return typeof node === 'object' ? this.#pointers.get(node) : undefined;
  }

  /** Whether this document's draft does not know a keyword (it is an annotation there). */
  ignores(key: string): boolean {
    if (this.draft === '2020') return false;
    return key === 'prefixItems' || (this.draft === '07' && NEWER_KEYWORDS.has(key));
  }

  /**
   * The first keyword (depth first) whose value ajv (the runtime's validator) refuses when it
   * compiles the document in its draft, or a `$ref` that resolves nowhere in it; `null` when
   * there is none. Such a document validates nothing at run time (the runtime refuses the
   * tool), while the comparison would read the keyword as absent.
   */
  get malformed(): Malformed | null {
    if (this.#malformed === undefined) {
      const path: string[] = [];
      const value = this.#malformedIn(this.root, path);
      this.#malformed = value === OK ? this.#refLoop() : { pointer: path.map((key) => `/${token(key)}`).join(''), value };
    }
    return this.#malformed;
  }

  /**
   * A reference, reached from the root, that leads back to where it was met without descending
   * into the value (`A: {$ref: A}`, `anyOf: [S, {$ref: '#'}]`), or `null`. ajv cannot compile a
   * loop of bare refs (its stack overflows), and follows any other such loop for every value
   * that reaches it (`allErrors` tries every branch), until the stack overflows: the runtime
   * refuses those values, which the walk would judge by the other branches.
   */
  #refLoop(): Malformed | null {
    if (!this.anyRef) return null;
    this.#ensureIndexed();
    // The schemas a `$dynamicRef` or `$recursiveRef` may reach besides its static target, by anchor (found at the first such ref).
    let dynamic: Map<string, object[]> | undefined;
    const anchored = (name: string): object[] => {
      if (dynamic === undefined) {
        const found = new Map<string, object[]>();
        const visit = (node: unknown): void => {
          if (!isObject(node)) return;
          const names = [typeof node.$dynamicAnchor === 'string' ? `$dynamicAnchor:${node.$dynamicAnchor}` : undefined, node.$recursiveAnchor === true ? '$recursiveAnchor' : undefined];
          for (const key of names) if (key !== undefined) found.set(key, [...(found.get(key) ?? []), node]);
          for (const inner of subschemas(node, true)) visit(inner.schema);
        };
        visit(this.root);
        dynamic = found;
      }
      return dynamic.get(name) ?? [];
    };
    /** The schemas applied to the same value as `node` (no descent), each with the keyword that applies it. */
    const sameValue = (node: Record<string, unknown>): Subschema[] => {
      const out = subschemas(node, false).filter((inner) => SAME_VALUE.has(inner.keyword));
      for (const key of ['$ref', '$dynamicRef', '$recursiveRef']) {
        const ref = node[key];
        if (typeof ref !== 'string') continue;
        const target = this.resolve(ref, node);
        if (target !== undefined) out.push({ keyword: key, schema: target });
        if (key === '$dynamicRef' && ref.startsWith('#')) for (const schema of anchored(`$dynamicAnchor:${ref.slice(1)}`)) out.push({ keyword: key, schema });
        if (key === '$recursiveRef') for (const schema of anchored('$recursiveAnchor')) out.push({ keyword: key, schema });
      }
      return out;
    };
    // Depth first over every schema the root reaches, iteratively (a chain of 20,000 refs is a
    // spec's right); a loop is an edge of the same value back to a node on the current path.
    const state = new Map<object, 'open' | 'done'>();
    const reached = new Set<object>();
    const pending: object[] = [];
    const reach = (node: unknown): void => {
      if (isObject(node) && !reached.has(node)) {
        reached.add(node);
        pending.push(node);
      }
    };
    reach(this.root);
    while (pending.length > 0) {
      const start = pending.pop() as Record<string, unknown>;
      for (const inner of subschemas(start, false)) reach(inner.schema);
      for (const inner of sameValue(start)) reach(inner.schema);
      if (state.has(start)) continue;
      const path: { node: Record<string, unknown>; edges: Subschema[]; next: number }[] = [{ node: start, edges: sameValue(start), next: 0 }];
      state.set(start, 'open');
      while (path.length > 0) {
        const top = path[path.length - 1] as (typeof path)[number];
        const edge = top.edges[top.next++];
        if (edge === undefined) {
          state.set(top.node, 'done');
          path.pop();
          continue;
        }
        if (!isObject(edge.schema)) continue;
        const seen = state.get(edge.schema);
        if (seen === 'open') {
          const at = `${this.pointerOf(top.node) ?? ''}/${token(edge.keyword)}`;
          return { pointer: edge.key === undefined ? at : `${at}/${token(edge.key)}`, value: top.node[edge.keyword] };
        }
        if (seen === undefined) {
          state.set(edge.schema, 'open');
          path.push({ node: edge.schema, edges: sameValue(edge.schema), next: 0 });
        }
      }
    }
    return null;
  }

  /** The malformed value under `node` (its place left in `path`), or `OK`. */
  #malformedIn(node: unknown, path: string[]): unknown {
    if (typeof node === 'boolean') return OK;
    if (!isObject(node)) return node;
    const newest = this.draft === '2020';
    for (const key in node) {
      if (!newest && this.ignores(key)) continue;
      // The path grows only on the way down (and to name what is wrong): most keywords are leaves.
      const depth = path.length;
      const bad = this.#malformedKeyword(node, key, node[key], path);
      if (bad !== OK) {
        if (path.length === depth) path.push(key);
        return bad;
      }
    }
    return OK;
  }

  /** Down into a keyword's subschemas (one, a list, a map of them): its name joins `path`, and leaves it if all is well. */
  #malformedUnder(key: string, value: unknown, path: string[], kind: 'one' | 'list' | 'map'): unknown {
    path.push(key);
    let bad: unknown = OK;
    if (kind === 'one') bad = this.#malformedIn(value, path);
    else if (kind === 'list') {
      const items = value as unknown[];
      for (let i = 0; i < items.length && bad === OK; i++) {
        path.push(String(i));
        bad = this.#malformedIn(items[i], path);
        if (bad === OK) path.pop();
      }
    } else {
      const map = value as Record<string, unknown>;
      for (const name in map) {
        const inner = map[name];
        path.push(name);
        bad =
          key === 'patternProperties' && compilePattern(name) === null ? inner
          : key === 'dependencies' && Array.isArray(inner) ? (uniqueStrings(inner) ? OK : inner)
          : this.#malformedIn(inner, path);
        if (bad !== OK) break;
        path.pop();
      }
    }
    if (bad === OK) path.pop();
    return bad;
  }

  /** `OK`, or the malformed value (the keyword's own, or one under it, its place in `path`). */
  #malformedKeyword(node: Record<string, unknown>, key: string, value: unknown, path: string[]): unknown {
    const schema = typeof value === 'boolean' || isObject(value);
    switch (key) {
      case 'additionalProperties':
      case 'not':
      case 'if':
      case 'then':
      case 'else':
      case 'contains':
      case 'propertyNames':
      case 'additionalItems':
      case 'unevaluatedProperties':
      case 'unevaluatedItems':
      case 'contentSchema':
        return schema ? this.#malformedUnder(key, value, path, 'one') : value;
      case 'items':
        // The tuple form: draft-07 and 2019-09 only (ajv's 2020-12 refuses it).
        if (Array.isArray(value) && this.draft !== '2020') return value.length > 0 ? this.#malformedUnder(key, value, path, 'list') : value;
        return schema ? this.#malformedUnder(key, value, path, 'one') : value;
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
      case 'prefixItems':
        return Array.isArray(value) && value.length > 0 ? this.#malformedUnder(key, value, path, 'list') : value;
      case 'properties':
      case 'patternProperties':
      case '$defs':
      case 'definitions':
      case 'dependentSchemas':
      case 'dependencies': {
        return isObject(value) ? this.#malformedUnder(key, value, path, 'map') : value;
      }
      case 'type':
        return (typeof value === 'string' ? TYPE_NAMES.has(value) : Array.isArray(value) && value.length > 0 && value.every((t) => TYPE_NAMES.has(t)) && new Set(value).size === value.length) ? OK : value;
      case 'enum':
        return Array.isArray(value) && value.length > 0 ? OK : value;
      case 'multipleOf':
        return typeof value === 'number' && value > 0 ? OK : value;
      case 'maximum':
      case 'minimum':
      case 'exclusiveMaximum':
      case 'exclusiveMinimum':
        return typeof value === 'number' ? OK : value;
      case 'maxLength':
      case 'minLength':
      case 'maxItems':
      case 'minItems':
      case 'maxProperties':
      case 'minProperties':
      case 'minContains':
      case 'maxContains':
        return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? OK : value;
      case 'pattern':
        return typeof value === 'string' && compilePattern(value) !== null ? OK : value;
      case 'required':
        return Array.isArray(value) && uniqueStrings(value) ? OK : value;
      case 'dependentRequired':
        return isObject(value) && Object.values(value).every((names) => Array.isArray(names) && uniqueStrings(names)) ? OK : value;
      case 'uniqueItems':
      case 'deprecated':
      case 'readOnly':
      case 'writeOnly':
        return typeof value === 'boolean' ? OK : value;
      case 'examples':
        return Array.isArray(value) ? OK : value;
      case '$schema':
        // At the root, the drafts the runtime compiles (src/runtime/schema-validator.ts): any other it refuses.
        if (path.length === 0) return typeof value === 'string' && SUPPORTED_DRAFTS.some((draft) => draft.test(value)) ? OK : value;
        return typeof value === 'string' ? OK : value;
      case '$id':
        // 2019-09 and 2020-12: no fragment but an empty one (`#foo` is an `$anchor` now).
        return typeof value === 'string' && (this.draft === '07' || /^[^#]*#?$/.test(value)) ? OK : value;
      case '$anchor':
      case '$dynamicAnchor':
        // The meta-schemas' name rules: 2020-12 lets a name start with `_`, 2019-09 wants a letter.
        return typeof value === 'string' && (this.draft === '07' || (this.draft === '2020' ? /^[A-Za-z_][-A-Za-z0-9._]*$/ : /^[A-Za-z][-A-Za-z0-9.:_]*$/).test(value)) ? OK : value;
      case '$dynamicRef':
        // ajv follows only a fragment (`#name`).
        return typeof value === 'string' && value.startsWith('#') ? OK : value;
      case '$vocabulary':
        return isObject(value) && Object.values(value).every((on) => typeof on === 'boolean') ? OK : value;
      case 'format':
      case '$comment':
      case 'contentEncoding':
      case 'contentMediaType':
      case 'title':
      case 'description':
        return typeof value === 'string' ? OK : value;
      case '$ref':
        return typeof value === 'string' && this.resolve(value, node) !== undefined ? OK : value;
      default:
        return OK;
    }
  }

  /** The base URI a node's refs resolve against (a node made by the comparison: the one it was made from). */
  baseOf(node: object): string {
    this.#ensureIndexed();
    let at: object | undefined = node;
    for (let i = 0; at !== undefined && i < 100; i++) {
      const base = this.#bases.get(at);
      if (base !== undefined) return base;
      at = this.#origins.get(at);
    }
    return this.rootBase;
  }

  /** Records that a node made from `origin` resolves its refs as `origin` does. */
  adopt(node: object, origin: object): void {
    if (node !== origin) this.#origins.set(node, origin);
  }

  /** Where `ref`, written in `from`, leads in this document, or undefined (another document, or nowhere). */
  resolve(ref: string, from: object): Schema | undefined {
    const base = this.baseOf(from);
    const cacheKey = `${base}\u0000${ref}`;
    const cached = this.#resolved.get(cacheKey);
    if (cached !== undefined) return cached === null ? undefined : cached;
    const found = this.#lookup(ref, base);
    this.#resolved.set(cacheKey, found ?? null);
    return found;
  }

  #lookup(ref: string, base: string): Schema | undefined {
    let url: URL;
    try {
      url = new URL(ref, base);
    } catch {
      return undefined;
    }
    let fragment: string;
    try {
      fragment = decodeURIComponent(url.hash.slice(1));
    } catch {
      return undefined;
    }
    url.hash = '';
    const document = url.href;
    const resource = this.#resources.get(document);
    if (resource === undefined) return undefined;
    if (fragment === '') return resource;
    if (!fragment.startsWith('/')) return this.#anchors.get(`${document}#${fragment}`);
    let node: unknown = resource;
    for (const part of fragment.slice(1).split('/')) {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
      if (Array.isArray(node)) node = node[Number(key)];
      else if (isObject(node) && Object.hasOwn(node, key)) node = node[key];
      else return undefined;
    }
    return typeof node === 'boolean' || isObject(node) ? node : undefined;
  }

  /**
   * Whether `value` is valid under `schema` (a node of this document): `true` or `false` as ajv
   * (draft 2020-12) decides, `undefined` where a keyword is beyond this validator (`format`,
   * `unevaluated*`, `$dynamicRef`, keywords it does not know) or refs nest too deep.
   */
  validates(schema: Schema, value: unknown, depth = 0): Tri {
    if (typeof schema === 'boolean') return schema;
    // Refs under anyOf/oneOf/not can fan out (`A: {anyOf: [{$ref: A}, {$ref: A}]}` makes 2^64
    // steps of a depth bound alone): past the budget, it cannot tell.
    if (depth > 64 || ++this.validationSteps > VALIDATION_LIMIT) return undefined;
    if (this.fillsDefaults && fillsInto(schema, value)) return undefined;
    // Draft-07: a $ref's siblings are ignored (read as the specification says).
    if (this.ignoresRefSiblings && typeof schema.$ref === 'string') return this.#keyword(schema, '$ref', value, depth);
    let result: Tri = true;
    for (const key of Object.keys(schema)) {
      if (ANNOTATIONS.has(key) || key === '$defs' || key === 'definitions' || this.ignores(key)) continue;
      result = and(result, this.#keyword(schema, key, value, depth));
      if (result === false) return false;
    }
    return result;
  }

  /**
   * Whether `value` is one of `list`'s values, as `jsonEquals` says. A lookup in a set: every
   * value of one enum is checked against the other side's, so a scan per value made two
   * 100,000-value enums take minutes. Kept per document, as a caller may change an unfrozen list.
   */
  #inEnum(list: readonly unknown[], value: unknown): boolean {
    let index = this.#enums.get(list);
    if (index === undefined) {
      index = { primitives: new Set(), texts: new Set() };
      for (const entry of list) {
        if (typeof entry === 'string' || typeof entry === 'boolean' || entry === null || Number.isFinite(entry)) index.primitives.add(entry);
        else if (typeof entry === 'object') {
          const text = jsonText(entry);
          if (text !== undefined) index.texts.add(text);
        }
      }
      this.#enums.set(list, index);
    }
    // Only JSON primitives are in the set; its SameValueZero matches 0 and -0, as === does.
    if (typeof value !== 'object' || value === null) return index.primitives.has(value);
    const text = jsonText(value);
    return text === undefined ? list.some((v) => jsonEquals(v, value)) : index.texts.has(text);
  }

  #keyword(schema: Record<string, unknown>, key: string, value: unknown, depth: number): Tri {
    const k = schema[key];
    const type = typeOfValue(value);
    const num = typeof value === 'number';
    const str = typeof value === 'string';
    const arr = Array.isArray(value);
    const obj = isObject(value);
    const sub = (s: unknown, v: unknown): Tri => this.validates(asSchemaStrict(s), v, depth + 1);
    switch (key) {
      case '$ref': {
        if (typeof k !== 'string') return undefined;
        const target = this.resolve(k, schema);
        return target === undefined ? undefined : this.validates(target, value, depth + 1);
      }
      case 'type': {
        const types = typeof k === 'string' ? [k] : Array.isArray(k) ? k : undefined;
        if (types === undefined) return undefined;
        return types.includes(type) || (type === 'integer' && types.includes('number'));
      }
      case 'enum':
        return Array.isArray(k) ? this.#inEnum(k, value) : undefined;
      case 'const':
        return jsonEquals(k, value);
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum': {
        if (!num) return true;
        if (typeof k !== 'number') return undefined;
        const v = value as number;
        return key === 'minimum' ? v >= k : key === 'maximum' ? v <= k : key === 'exclusiveMinimum' ? v > k : v < k;
      }
      case 'multipleOf': {
        if (!num) return true;
        if (typeof k !== 'number' || k <= 0) return undefined;
        // ajv's test, exactly: the quotient equals its parseInt.
        const quotient = (value as number) / k;
        return quotient === Number.parseInt(String(quotient), 10);
      }
      case 'minLength':
      case 'maxLength':
        if (!str) return true;
        if (typeof k !== 'number') return undefined;
        return key === 'minLength' ? codePoints(value as string) >= k : codePoints(value as string) <= k;
      case 'pattern': {
        if (!str) return true;
        return typeof k === 'string' ? matchPattern(k, value as string) : undefined;
      }
      case 'minItems':
      case 'maxItems':
        if (!arr) return true;
        if (typeof k !== 'number') return undefined;
        return key === 'minItems' ? (value as unknown[]).length >= k : (value as unknown[]).length <= k;
      case 'uniqueItems': {
        if (!arr || k !== true) return k === true || k === false || !arr ? true : undefined;
        const items = value as unknown[];
        for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) if (jsonEquals(items[i], items[j])) return false;
        return true;
      }
      case 'prefixItems':
      case 'items': {
        if (!arr) return true;
        const items = value as unknown[];
        if (key === 'items' && Array.isArray(k)) {
          // Draft-07 tuples: additionalItems applies after them.
          let result: Tri = true;
          for (let i = 0; i < items.length; i++) {
            result = and(result, i < k.length ? sub(k[i], items[i]) : schema.additionalItems === undefined ? true : sub(schema.additionalItems, items[i]));
          }
          return result;
        }
        if (key === 'prefixItems') {
          if (!Array.isArray(k)) return undefined;
          let result: Tri = true;
          for (let i = 0; i < Math.min(k.length, items.length); i++) result = and(result, sub(k[i], items[i]));
          return result;
        }
        const start = Array.isArray(schema.prefixItems) && !this.ignores('prefixItems') ? schema.prefixItems.length : 0;
        let result: Tri = true;
        for (let i = start; i < items.length; i++) result = and(result, sub(k, items[i]));
        return result;
      }
      case 'additionalItems':
        return Array.isArray(schema.items) || !arr ? true : undefined;
      case 'contains':
      case 'minContains':
      case 'maxContains': {
        if (!arr) return true;
        // ajv 8 skips `contains` on an empty array beside typed `prefixItems` (or a tuple `items`): not modelled.
        if (Array.isArray(schema.prefixItems) && schema.prefixItems.length > 0 && !this.ignores('prefixItems')) return undefined;
        if (Array.isArray(schema.items) && schema.items.length > 0) return undefined;
        if (key !== 'contains') return true; // judged with `contains`
        let count = 0;
        let unknown = false;
        for (const item of value as unknown[]) {
          const r = sub(k, item);
          if (r === true) count++;
          else if (r === undefined) unknown = true;
        }
        const min = schema.minContains === undefined ? 1 : schema.minContains;
        const max = schema.maxContains;
        if (typeof min !== 'number' || (max !== undefined && typeof max !== 'number')) return undefined;
        if (unknown) return undefined;
        return count >= min && (max === undefined || count <= (max as number));
      }
      case 'properties':
      case 'patternProperties':
      case 'additionalProperties': {
        if (!obj) return true;
        const record = value as Record<string, unknown>;
        const properties = isObject(schema.properties) ? schema.properties : {};
        const patterns = isObject(schema.patternProperties) ? schema.patternProperties : {};
        let result: Tri = true;
        for (const [name, v] of Object.entries(record)) {
          if (key === 'properties') {
            if (Object.hasOwn(properties, name)) result = and(result, sub(properties[name], v));
            continue;
          }
          let matched = false;
          for (const [pattern, s] of Object.entries(patterns)) {
            const match = matchPattern(pattern, name);
            if (match === undefined) return undefined;
            if (!match) continue;
            matched = true;
            if (key === 'patternProperties') result = and(result, sub(s, v));
          }
          if (key === 'additionalProperties' && !matched && !Object.hasOwn(properties, name)) result = and(result, sub(k, v));
        }
        return result;
      }
      case 'required':
        if (!obj) return true;
        return Array.isArray(k) ? k.every((name) => typeof name === 'string' && Object.hasOwn(value as object, name)) : undefined;
      case 'minProperties':
      case 'maxProperties': {
        if (!obj) return true;
        if (typeof k !== 'number') return undefined;
        const count = Object.keys(value as object).length;
        return key === 'minProperties' ? count >= k : count <= k;
      }
      case 'propertyNames': {
        if (!obj) return true;
        let result: Tri = true;
        for (const name of Object.keys(value as object)) result = and(result, sub(k, name));
        return result;
      }
      case 'dependentRequired': {
        if (!obj || !isObject(k)) return obj ? undefined : true;
        for (const [name, needs] of Object.entries(k)) {
          if (!Object.hasOwn(value as object, name)) continue;
          if (!Array.isArray(needs)) return undefined;
          if (!needs.every((n) => typeof n === 'string' && Object.hasOwn(value as object, n))) return false;
        }
        return true;
      }
      case 'dependentSchemas': {
        if (!obj || !isObject(k)) return obj ? undefined : true;
        let result: Tri = true;
        for (const [name, s] of Object.entries(k)) if (Object.hasOwn(value as object, name)) result = and(result, sub(s, value));
        return result;
      }
      case 'allOf':
      case 'anyOf':
      case 'oneOf': {
        if (!Array.isArray(k)) return undefined;
        const results = k.map((s) => sub(s, value));
        if (key === 'allOf') return results.reduce<Tri>((acc, r) => and(acc, r), true);
        if (key === 'anyOf') return results.includes(true) ? true : results.includes(undefined) ? undefined : false;
        const matches = results.filter((r) => r === true).length;
        if (matches > 1) return false;
        if (results.includes(undefined)) return undefined;
        return matches === 1;
      }
      case 'not': {
        const r = sub(k, value);
        return r === undefined ? undefined : !r;
      }
      case 'if': {
        const condition = sub(k, value);
        if (condition === undefined) return schema.then === undefined && schema.else === undefined ? true : undefined;
        const branch = condition ? schema.then : schema.else;
        return branch === undefined ? true : sub(branch, value);
      }
      case 'then':
      case 'else':
        return true; // judged with `if`
      case 'unevaluatedProperties':
      case 'unevaluatedItems':
        return k === true || (key === 'unevaluatedProperties' ? !obj : !arr) ? true : undefined;
      case 'format':
        return str || num ? undefined : true;
      case 'dependencies':
        return obj ? undefined : true;
      default:
        // $dynamicRef, $recursiveRef, and keywords this validator does not know.
        return undefined;
    }
  }
}

/** Whether ajv's `useDefaults` would fill a default of `schema`'s own `properties` (or draft-07 tuple `items`) into `value`. */
function fillsInto(schema: Record<string, unknown>, value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return Array.isArray(schema.items) && schema.items.some((entry, i) => i >= value.length && isObject(entry) && entry.default !== undefined);
  const properties = schema.properties;
  if (!isObject(properties)) return false;
  for (const name of Object.keys(properties)) {
    const property = properties[name];
    if (isObject(property) && property.default !== undefined && !Object.hasOwn(value, name)) return true;
  }
  return false;
}

/**
 * Whether a `$ref` anywhere in `value` has a sibling that asserts something (draft-07 says
 * ignore it, ajv applies it).
 */
export function holdsRefWithSiblings(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(holdsRefWithSiblings);
  const record = value as Record<string, unknown>;
  if (typeof record.$ref === 'string' && Object.keys(record).some((key) => key !== '$ref' && key !== '$defs' && key !== 'definitions' && !ANNOTATIONS.has(key))) return true;
  return Object.values(record).some(holdsRefWithSiblings);
}

function holdsRef(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (const inner of value) if (holdsRef(inner)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key === '$ref' || key === '$dynamicRef' || key === '$recursiveRef') return true;
    const inner = record[key];
    if (typeof inner === 'object' && inner !== null && holdsRef(inner)) return true;
  }
  return false;
}

function asSchemaStrict(value: unknown): Schema {
  return typeof value === 'boolean' || isObject(value) ? value : true;
}
