// Schema comparison (issues 27 and 38): does a new JSON Schema accept every value the old one
// accepted (and the reverse, for outputs)? Both schemas are normalized (schema-normalize.ts),
// then walked side by side, keyword by keyword; each difference carries its effect on both
// directions, and a direction holds only when every difference proves it does. Sound by
// construction: `$ref`s are followed on their own side wherever they are reached, `not` swaps
// the directions, `enum`/`const` and small ranges are judged value by value, and whatever the
// walk cannot prove is undecidable. test/versions/schema-compare.property.test.ts and
// bench/compat-fuzz.mjs check it against ajv on generated pairs.
import { canonicalJson, jsonEquals } from './canonical.js';
import { MAX_JSON_DEPTH } from './contracts.js';
import { PatternBudget, compilePattern, matchPattern, prefetchPattern, withinBudget } from './pattern-match.js';
import { ANNOTATIONS, SchemaDocument, asSchema, holdsRefWithSiblings, isObject, nodeKey, token } from './schema-document.js';
import type { JsonType, Schema } from './schema-document.js';
import { KEYWORD_TYPES, hasUnevaluated, intersects, isEmptySchema, normalize, typeSet } from './schema-normalize.js';

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
  /**
   * Only on the entry that stands for the values of an `enum-value-added`/`enum-value-removed`
   * place not named one by one (past the first 100 of that type, place and `breaking`, or past
   * 1,000 named in the whole schema): how many they are. Its `before` and `after` are `null`;
   * its `breaking` is theirs.
   */
  readonly omitted?: number;
}

/** What `compareSchemas` answers. */
export interface SchemaComparison {
  /** `true` when no difference is breaking (`true` or `'undecidable'`). */
  readonly compatible: boolean;
  readonly differences: readonly SchemaDifference[];
}

/**
 * How a difference bears on each direction: `in` on "every value `before` accepted, `after`
 * accepts" (what inputs need), `out` on "every value `after` accepts, `before` accepted" (what
 * outputs need). 0: it does not stand in the way (proved); 1: cannot tell; 2: it does (a value
 * shows it, as far as this difference goes). A pair is compatible in a direction only when
 * every difference is 0 there: each 0 is a proof step, never a guess.
 */
type Dir = 0 | 1 | 2;
interface Effect {
  readonly in: Dir;
  readonly out: Dir;
}
const NONE: Effect = { in: 0, out: 0 };
/** Accepts more: inputs keep working, outputs may surprise consumers. */
const WIDENS: Effect = { in: 0, out: 2 };
/** Accepts less. */
const NARROWS: Effect = { in: 2, out: 0 };
const UNDECIDABLE: Effect = { in: 1, out: 1 };

/**
 * Keywords of an object schema that look at which of its properties are present, or how many:
 * a default the runtime fills in (ajv's `useDefaults`, inputs only) can change what they decide.
 */
const PRESENCE_KEYWORDS = ['maxProperties', 'dependentRequired', 'dependentSchemas', 'dependencies', 'propertyNames', 'patternProperties', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', '$ref', '$dynamicRef', 'unevaluatedProperties'];
/**
 * The same for an array schema and its items: `uniqueItems` and `contains` compare or test the
 * items after a default was filled into one (`[{}, {a: 'x'}]` becomes two equal items).
 */
const ITEM_PRESENCE_KEYWORDS = ['uniqueItems', 'contains', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', '$ref', '$dynamicRef', 'unevaluatedItems'];

function combine(a: Effect, b: Effect): Effect {
  return a.in >= b.in && a.out >= b.out ? a : { in: Math.max(a.in, b.in) as Dir, out: Math.max(a.out, b.out) as Dir };
}

/** Under `not`, what was accepted is refused: the directions swap. */
function flip(e: Effect): Effect {
  return { in: e.out, out: e.in };
}

/** Which change breaks: inputs must not narrow (callers), outputs must not widen (consumers). */
type Role = 'input' | 'output';

interface Raw {
  readonly type: SchemaDifferenceType;
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly effect: Effect;
}

/** Lower bounds: a larger value narrows. Upper bounds: a smaller value narrows. */
const LOWER_BOUNDS = ['minLength', 'minItems', 'minProperties'] as const;
const UPPER_BOUNDS = ['maxLength', 'maxItems', 'maxProperties'] as const;
/** Keywords whose values are data, not schemas (a `$ref` key inside them is not a reference). */
const VALUE_KEYWORDS: ReadonlySet<string> = new Set(['enum', 'const', 'default', 'examples', 'example', 'required']);
/** Keywords the walk compares itself; any other assertion that differs is `keyword-changed`, undecidable. */
const WALKED: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'patternProperties',
  'additionalProperties',
  'required',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  ...LOWER_BOUNDS,
  ...UPPER_BOUNDS,
  'pattern',
  'format',
  'uniqueItems',
  'items',
  'prefixItems',
  'additionalItems',
  'contains',
  'minContains',
  'maxContains',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
  'dependentRequired',
  'dependentSchemas',
  'dependencies',
]);
/** The most subschema comparisons one call makes before the rest is undecidable. */
const CALL_LIMIT = 20_000;
/** The most values of a small integer range enumerated to compare it with an enum. */
const RANGE_LIMIT = 64;

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return jsonEquals(a, b);
}

/**
 * Whether a JSON value holds a reference anywhere (then equal texts may still mean different
 * things). Remembered per document: a caller may change a schema that is not frozen between calls.
 */
function hasRef(value: unknown, flags: WeakMap<object, boolean>): boolean {
  if (typeof value !== 'object' || value === null) return false;
  let flag = flags.get(value);
  if (flag === undefined) {
    flag = false;
    if (Array.isArray(value)) flag = value.some((inner) => hasRef(inner, flags));
    else {
      for (const key of Object.keys(value)) {
        const inner = (value as Record<string, unknown>)[key];
        if (key === '$ref' || key === '$dynamicRef' || key === '$recursiveRef' ? typeof inner === 'string' : !VALUE_KEYWORDS.has(key) && hasRef(inner, flags)) {
          flag = true;
          break;
        }
      }
    }
    flags.set(value, flag);
  }
  return flag;
}

function ownRef(schema: Schema): boolean {
  return typeof schema === 'object' && (typeof schema.$ref === 'string' || schema.$dynamicRef !== undefined || schema.$recursiveRef !== undefined);
}

function hasFinite(schema: Record<string, unknown>): boolean {
  return 'const' in schema || 'enum' in schema;
}

/** A number as an integer times a power of ten, from its shortest decimal text (exact). */
function decimal(n: number): readonly [bigint, number] | undefined {
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(n));
  if (match === null) return undefined;
  const fraction = match[2] ?? '';
  return [BigInt((match[1] as string) + fraction), Number(match[3] ?? 0) - fraction.length];
}

/** Whether `n / d` is an integer, in exact decimal arithmetic (no tolerance). */
function divides(d: number, n: number): boolean | undefined {
  const x = decimal(d);
  const y = decimal(n);
  if (x === undefined || y === undefined || x[0] === 0n) return undefined;
  const e = Math.min(x[1], y[1]);
  return (y[0] * 10n ** BigInt(y[1] - e)) % (x[0] * 10n ** BigInt(x[1] - e)) === 0n;
}

interface Alternative {
  readonly start: boolean;
  readonly body: string;
  readonly end: boolean;
}

/** Splits a regular expression at its top-level `|`, or undefined when its brackets do not balance. */
function splitTop(text: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let inClass = false;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') {
      if (--depth < 0) return undefined;
    } else if (c === '|' && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  if (depth !== 0 || inClass) return undefined;
  parts.push(text.slice(from));
  return parts;
}

/** Whether a group opened at 0 closes at the last character (`(…)` or `(?:…)` around everything). */
function wholeGroup(body: string): string | undefined {
  const open = body.startsWith('(?:') ? 3 : body.startsWith('(') && !body.startsWith('(?') ? 1 : 0;
  if (open === 0 || !body.endsWith(')')) return undefined;
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i === body.length - 1 ? body.slice(open, -1) : undefined;
  }
  return undefined;
}

/**
 * A pattern as its top-level alternatives, each with its anchors: `^(?:a|b)$` is `^a$` or `^b$`.
 * Undefined for a pattern with backreferences (their numbers move when a group is added) or
 * that does not compile.
 */
function alternativesOf(pattern: string): Alternative[] | undefined {
  if (/\\[1-9]|\\k</.test(pattern) || compilePattern(pattern) === null) return undefined;
  const top = splitTop(pattern);
  if (top === undefined) return undefined;
  const out: Alternative[] = [];
  for (const alternative of top) {
    const start = alternative.startsWith('^');
    let body = start ? alternative.slice(1) : alternative;
    let backslashes = 0;
    for (let i = body.length - 2; i >= 0 && body[i] === '\\'; i--) backslashes++;
    const end = body.endsWith('$') && backslashes % 2 === 0;
    if (end) body = body.slice(0, -1);
    const inner = wholeGroup(body);
    const parts = inner === undefined ? [body] : splitTop(inner);
    if (parts === undefined) return undefined;
    for (const part of parts) out.push({ start, body: part, end });
  }
  return out;
}

/**
 * Whether every string `a` matches, `b` matches: each alternative of `a` is, literally, an
 * alternative of `b` anchored the same or less (`^(old|other)$` contains `^old$`; `old` contains `^old$`).
 */
function patternCovers(a: string, b: string): boolean {
  if (a === b) return true;
  const listA = alternativesOf(a);
  const listB = alternativesOf(b);
  if (listA === undefined || listB === undefined) return false;
  return listA.every((x) => listB.some((y) => y.body === x.body && (!y.start || x.start) && (!y.end || x.end)));
}

type Side = 'before' | 'after';

/** What one comparison shares: both documents, and what is already known about their nodes. */
class Context {
  readonly #equivalent = new Map<string, boolean>();
  readonly sameRoot: boolean;
  /** Subschema comparisons so far (CALL_LIMIT). */
  calls = 0;

  constructor(
    readonly before: SchemaDocument,
    readonly after: SchemaDocument,
  ) {
    this.sameRoot = before.root === after.root;
  }

  /** The same documents the other way round (to ask whether a new branch fits an old one). */
  swapped(): Context {
    const context = new Context(this.after, this.before);
    context.calls = this.calls;
    return context;
  }

  doc(side: Side): SchemaDocument {
    return side === 'before' ? this.before : this.after;
  }

  norm(schema: Schema, side: Side): Schema {
    return normalize(schema, this.doc(side));
  }

  /**
   * Whether two nodes mean the same: equal as JSON where neither holds a `$ref`; else equal
   * keyword by keyword with every `$ref` followed on its own side (targets that differ make
   * equal texts differ; cycles are assumed equal, as a bisimulation).
   */
  equivalent(a: unknown, b: unknown): boolean {
    if (a === b && this.sameRoot) return true;
    // Different texts: not known equivalent (refs of other texts may reach equivalent targets;
    // the walk finds that out). Equal texts: equivalent unless a ref in them leads elsewhere.
    if (!same(a, b)) return false;
    if ((!this.before.anyRef || !hasRef(a, this.before.refFlags)) && (!this.after.anyRef || !hasRef(b, this.after.refFlags))) return true;
    if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
    return this.#bisimilar(a, b);
  }

  /**
   * The pairs of `$ref` targets two nodes lead to are equivalent in turn: taken from a worklist
   * (a chain of 20,000 refs is 20,000 pairs, not 20,000 frames of the stack), each pair once,
   * one met again assumed to hold (coinduction). Every answer is kept for the whole comparison:
   * all pairs of a bisimulation that held are equivalent; where one failed, so did each pair
   * that led to it. 15,000 properties each starting a chain into the same 20,000 refs walked
   * their 64 first refs each (2.8 s); now each pair is judged once. Past WORK_LIMIT, not known.
   */
  #bisimilar(a: object, b: object): boolean {
    const start = `${nodeKey(a as Schema)}|${nodeKey(b as Schema)}`;
    const known = this.#equivalent.get(start);
    if (known !== undefined) return known;
    /** Each pair met, with the pair whose equivalence needs it. */
    const from = new Map<string, string | undefined>([[start, undefined]]);
    const queue: [unknown, unknown, string][] = [[a, b, start]];
    let failed: string | undefined;
    for (let i = 0; i < queue.length && failed === undefined; i++) {
      const [x, y, key] = queue[i] as [unknown, unknown, string];
      const targets: [Schema, Schema][] = [];
      if (++work > WORK_LIMIT || !this.#alike(x, y, targets)) failed = key;
      for (const [tx, ty] of failed === undefined ? targets : []) {
        const pair = `${nodeKey(tx)}|${nodeKey(ty)}`;
        if (from.has(pair)) continue;
        const answer = this.#equivalent.get(pair);
        if (answer === true) continue;
        if (answer === false) {
          failed = key;
          break;
        }
        from.set(pair, key);
        queue.push([tx, ty, pair]);
      }
    }
    if (failed === undefined) {
      for (const pair of from.keys()) this.#equivalent.set(pair, true);
      return true;
    }
    // The others met are not known either way (they may have leaned on a pair that failed).
    for (let pair: string | undefined = failed; pair !== undefined; pair = from.get(pair)) this.#equivalent.set(pair, false);
    return false;
  }

  /** Whether two nodes are equal keyword by keyword short of their refs, whose pairs of targets go to `targets`. */
  #alike(x: unknown, y: unknown, targets: [Schema, Schema][]): boolean {
    if (x === y && this.sameRoot) return true;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return x === y;
    if (Array.isArray(x) || Array.isArray(y)) {
      return Array.isArray(x) && Array.isArray(y) && x.length === y.length && x.every((v, i) => this.#alike(v, y[i], targets));
    }
    if (!hasRef(x, this.before.refFlags) && !hasRef(y, this.after.refFlags)) return same(x, y);
    const rx = x as Record<string, unknown>;
    const ry = y as Record<string, unknown>;
    const keys = Object.keys(rx);
    if (keys.length !== Object.keys(ry).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(ry, key)) return false;
      const vx = rx[key];
      const vy = ry[key];
      if (key === '$ref' && typeof vx === 'string' && typeof vy === 'string') {
        const tx = this.before.resolve(vx, rx);
        const ty = this.after.resolve(vy, ry);
        if (tx === undefined || ty === undefined) {
          // Another document: the same only when the same text resolves against the same base.
          if (tx !== ty || vx !== vy || this.before.baseOf(rx) !== this.after.baseOf(ry)) return false;
          continue;
        }
        targets.push([tx, ty]);
        continue;
      }
      // A dynamic reference depends on the path that reached it: equal only in one document.
      if ((key === '$dynamicRef' || key === '$recursiveRef') && !this.sameRoot) return false;
      if (VALUE_KEYWORDS.has(key) ? !same(vx, vy) : !this.#alike(vx, vy, targets)) return false;
    }
    return true;
  }
}

/**
 * Pairs of branches checked for disjointness or matched as equivalent, and names tested against patterns in the current
 * comparison (comparisons are synchronous: one at a time). Both grow with the product of two
 * lists (3,000 oneOf branches: 4.5 million pairs; 20,000 names by 2,000 patterns: 40 million
 * tests, 80 s); past WORK_LIMIT what is left cannot be told.
 */
let work = 0;
const WORK_LIMIT = 1_000_000;

/** Refs followed at once past which a comparison cannot tell (`ref-unresolved`); as deep as `validates` follows them. */
const MAX_OPEN_REFS = 64;

/** Whether no value can be valid under two of the schemas (all of one document); false past the work budget. */
function pairwiseDisjoint(list: readonly Schema[], doc: SchemaDocument): boolean {
  work += (list.length * (list.length - 1)) / 2;
  if (work > WORK_LIMIT) return false;
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) if (!disjoint(list[i] as Schema, list[j] as Schema, doc, 0)) return false;
  }
  return true;
}

/**
 * Whether no value is valid under both: no type in common; every value of a finite one
 * refused by the other; or, for two object schemas (`type: 'object'`: else a string is valid
 * under both), a property both require whose schemas are disjoint (a discriminator).
 */
function disjoint(x: Schema, y: Schema, doc: SchemaDocument, depth: number): boolean {
  if (depth > 8) return false;
  const follow = (s: Schema): Schema | undefined => {
    for (let i = 0; i < 8 && typeof s === 'object' && typeof s.$ref === 'string'; i++) {
      if (Object.keys(s).some((k) => k !== '$ref' && !ANNOTATIONS.has(k))) return s;
      const target = doc.resolve(s.$ref, s);
      if (target === undefined) return undefined;
      s = target;
    }
    return s;
  };
  const a = follow(x);
  const b = follow(y);
  if (a === undefined || b === undefined) return false;
  if (a === false || b === false) return true;
  if (a === true || b === true) return false;
  const ta = typeSet(a);
  const tb = typeSet(b);
  if (!intersects(ta, tb)) return true;
  for (const [one, other] of [
    [a, b],
    [b, a],
  ] as const) {
    const values = 'const' in one ? [one.const] : Array.isArray(one.enum) ? one.enum : undefined;
    if (values !== undefined && values.every((v) => doc.validates(one, v) === false || doc.validates(other, v) === false)) return true;
  }
  const objectOnly = (t: Set<JsonType>) => [...t].every((type) => type === 'object');
  if (!objectOnly(ta) || !objectOnly(tb)) return false;
  const propsA = isObject(a.properties) ? a.properties : {};
  const propsB = isObject(b.properties) ? b.properties : {};
  const requiredA = Array.isArray(a.required) ? a.required : [];
  const requiredB = Array.isArray(b.required) ? b.required : [];
  for (const name of Object.keys(propsA)) {
    if (!requiredA.includes(name) || !requiredB.includes(name) || !Object.hasOwn(propsB, name)) continue;
    if (disjoint(asSchema(propsA[name]), asSchema(propsB[name]), doc, depth + 1)) return true;
  }
  return false;
}

/**
 * Values of one `enum-value-*` type, place and verdict named one by one; the rest are one entry
 * counting them (`omitted`). Two enums of 90,000 other values were 180,000 differences: 21 MB
 * and 1.4 s of CPU on every diff of them, for any reader; the verdict counts every one of them.
 */
const VALUES_LISTED = 100;
/**
 * Values named in all the places of one schema: past it, each place's values are only counted
 * (9,000 enums of 10 other values, a 620 KB spec, were also 180,000 differences and 21 MB).
 */
const VALUES_NAMED = 1_000;

/** The values a schema can accept when they are few: its `enum`/`const`, or its types null/boolean/a small integer range. */
function candidates(schema: Record<string, unknown>): unknown[] | undefined {
  if ('const' in schema) return [schema.const];
  if ('enum' in schema) return Array.isArray(schema.enum) ? schema.enum : undefined;
  const types = typeSet(schema);
  if (![...types].every((t) => t === 'null' || t === 'boolean' || t === 'integer')) return undefined;
  const out: unknown[] = [];
  if (types.has('null')) out.push(null);
  if (types.has('boolean')) out.push(false, true);
  if (types.has('integer')) {
    const lo = schema.minimum;
    const hi = schema.maximum;
    // Safe integers only: from 2^53 on, n + 1 may be n again (the loop would never end).
    if (typeof lo !== 'number' || typeof hi !== 'number' || !Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || hi - lo >= RANGE_LIMIT) return undefined;
    for (let n = lo; n <= hi; n++) out.push(n);
  }
  return out;
}

interface Open {
  readonly depth: number;
  readonly polarity: number;
}

/** The walk over two schemas: each difference with its effect on both directions. */
class Comparer {
  readonly out: Raw[] = [];
  /** Pairs of `$ref` targets this comparer compared (and reported) already. */
  readonly #done = new Set<string>();
  /**
   * Whether a schema above the value being compared looks at it again once a default is filled
   * in (PRESENCE_KEYWORDS, ITEM_PRESENCE_KEYWORDS): a filled default changes the value every
   * enclosing object and array sees, not only its own object.
   */
  #presenceParent = false;

  constructor(
    readonly ctx: Context,
    /** Pairs being compared further up (a recursive schema): met again after a descent, they are assumed to hold. */
    readonly open: Map<string, Open>,
    public depth: number,
    /** 1 where the pair counts as it is, -1 under `not`: an open pair is only assumed at the polarity it was opened. */
    readonly polarity: number,
  ) {}

  report(type: SchemaDifferenceType, path: string, before: unknown, after: unknown, effect: Effect): void {
    this.out.push({ type, path, before: before === undefined ? null : before, after: after === undefined ? null : after, effect });
  }

  #sub(polarity = this.polarity, descend = false): Comparer {
    const sub = new Comparer(this.ctx, new Map(this.open), this.depth + (descend ? 1 : 0), polarity);
    sub.#presenceParent = this.#presenceParent;
    return sub;
  }

  /** The combined effect of comparing two subschemas, without reporting their differences. */
  relate(a: Schema, b: Schema, path: string, descend = false, polarity = this.polarity): Effect {
    const inner = this.#sub(polarity, descend);
    inner.compare(a, b, path);
    let effect = NONE;
    for (const one of inner.out) effect = combine(effect, one.effect);
    return effect;
  }

  /** `relate` of a node of `after` with one of `before` (each resolved in its own document). */
  #relateBack(b: Schema, a: Schema, path: string): Effect {
    const inner = new Comparer(this.ctx.swapped(), new Map(), this.depth, this.polarity);
    inner.compare(b, a, path);
    let effect = NONE;
    for (const one of inner.out) effect = combine(effect, one.effect);
    return effect;
  }

  /** A subschema of the value (a property, an item): recursion through it is well founded. */
  #child(a: Schema, b: Schema, path: string): void {
    this.depth++;
    this.compare(a, b, path);
    this.depth--;
  }

  compare(a: Schema, b: Schema, path: string): void {
    if (this.ctx.equivalent(a, b)) return;
    if (++this.ctx.calls > CALL_LIMIT) {
      // A pathological schema (refs without end, branches without number): undecidable, never a hang.
      this.report('keyword-changed', path, a, b, UNDECIDABLE);
      return;
    }
    const na = this.ctx.norm(a, 'before');
    const nb = this.ctx.norm(b, 'after');
    // A node that normalizes to a boolean (`{not: {}, default: 1}` is false) keeps no annotation,
    // but the runtime still fills its default in (and then refuses it there): compared here, for inputs.
    const lost = (s: Schema, n: Schema) => typeof s === 'object' && typeof n === 'boolean' && Object.hasOwn(s, 'default');
    if (lost(a, na) || lost(b, nb)) {
      const da = typeof a === 'object' && Object.hasOwn(a, 'default') ? a.default : undefined;
      const db = typeof b === 'object' && Object.hasOwn(b, 'default') ? b.default : undefined;
      if ((da === undefined) !== (db === undefined) || !same(da, db)) this.report('annotation-changed', `${path}/default`, da, db, this.#defaultEffect(typeof b === 'object' ? b : {}));
    }
    if ((na !== a || nb !== b) && this.ctx.equivalent(na, nb)) return;
    if (ownRef(na) || ownRef(nb)) {
      // Following a ref leaves its annotations behind, but the runtime fills a `default` beside
      // one (pydantic writes `{$ref: Color, default: 'red'}`): compared here, for inputs.
      const da = typeof a === 'object' && Object.hasOwn(a, 'default');
      const db = typeof b === 'object' && Object.hasOwn(b, 'default');
      if ((da || db) && typeof a === 'object' && typeof b === 'object' && !same(a.default, b.default)) this.report('annotation-changed', `${path}/default`, a.default, b.default, this.#defaultEffect(b));
      return this.#followRefs(na, nb, path);
    }
    if (typeof na === 'boolean' || typeof nb === 'boolean' || isEmptySchema(na) || isEmptySchema(nb)) return this.#compareBoolean(na, nb, path);
    this.#compareObjects(na, nb, path);
  }

  /** Both sides with their `$ref` followed (RFC 3986 against the `$id` scopes); each pair once per comparer. */
  #followRefs(a: Schema, b: Schema, path: string): void {
    const fa = this.#follow(a, 'before');
    const fb = this.#follow(b, 'after');
    if (fa === undefined || fb === undefined) {
      this.report('ref-unresolved', path, a, b, UNDECIDABLE);
      return;
    }
    const key = `${fa.key}\u0000${fb.key}`;
    // A pair judged where no default mattered is judged again where one may (#presenceParent).
    const doneKey = `${key}\u0000${this.#presenceParent}`;
    if (this.#done.has(doneKey)) return;
    // Each ref followed is a level of recursion: a chain of 4,000 `$ref`s overflowed the stack
    // (a 500 on PUT, POST /v1/check and diff), and each of n properties that starts a chain
    // walks it again (n times its length). Past MAX_OPEN_REFS refs followed at once (each
    // holds up to three entries of `open`), it cannot be judged.
    if (this.open.size >= 3 * MAX_OPEN_REFS) {
      this.report('ref-unresolved', path, a, b, UNDECIDABLE);
      return;
    }
    const open = this.open.get(key);
    if (open !== undefined) {
      // A recursive schema met again: assumed to hold (coinduction) only after a descent into
      // the value and at the same polarity; else (under `not`, or a loop without a descent) undecidable.
      if (open.polarity === this.polarity && this.depth > open.depth) return;
      this.report('ref-unresolved', path, a, b, UNDECIDABLE);
      return;
    }
    // A ref that leads back to itself without a descent into the value (`A: {$ref: A, ...}`)
    // never ends, for ajv too: undecidable.
    const loops = [ownRef(a) ? `before\u0000${nodeKey(fa.target)}` : undefined, ownRef(b) ? `after\u0000${nodeKey(fb.target)}` : undefined];
    if (loops.some((loop) => loop !== undefined && this.open.get(loop)?.depth === this.depth)) {
      this.report('ref-unresolved', path, a, b, UNDECIDABLE);
      return;
    }
    for (const loop of loops) if (loop !== undefined) this.open.set(loop, { depth: this.depth, polarity: this.polarity });
    this.open.set(key, { depth: this.depth, polarity: this.polarity });
    const where = ownRef(b) ? (this.ctx.after.pointerOf(fb.target) ?? path) : path;
    this.compare(fa.schema, fb.schema, where);
    this.open.delete(key);
    for (const loop of loops) if (loop !== undefined) this.open.delete(loop);
    this.#done.add(doneKey);
  }

  /**
   * A schema with its `$ref` resolved: the target, with the ref's sibling assertions as an
   * allOf beside it (draft 2020-12 applies them together).
   */
  #follow(schema: Schema, side: Side): { schema: Schema; target: Schema; key: string } | undefined {
    // A side without a ref is keyed by its text and scope: the nodes normalization makes are new objects each time.
    if (typeof schema === 'boolean' || !ownRef(schema)) return { schema, target: schema, key: typeof schema === 'boolean' ? String(schema) : `${this.ctx.doc(side).baseOf(schema)}\u0000${canonicalJson(schema)}` };
    if (typeof schema.$ref !== 'string') return undefined;
    const doc = this.ctx.doc(side);
    const target = doc.resolve(schema.$ref, schema);
    if (target === undefined) return undefined;
    const rest: Record<string, unknown> = {};
    for (const key of Object.keys(schema)) if (key !== '$ref' && !ANNOTATIONS.has(key) && key !== '$defs' && key !== 'definitions') rest[key] = schema[key];
    if (Object.keys(rest).length === 0) return { schema: target, target, key: nodeKey(target) };
    // unevaluated* beside the ref sees what the target evaluated: it stays beside it, not in a branch of its own.
    const both = hasUnevaluated(rest) ? { ...rest, allOf: [target, ...(Array.isArray(rest.allOf) ? rest.allOf : [])] } : { allOf: [target, rest] };
    doc.adopt(rest, schema);
    doc.adopt(both, schema);
    return { schema: both, target, key: `${nodeKey(target)}\u0000${doc.baseOf(schema)}\u0000${canonicalJson(rest)}` };
  }

  #compareBoolean(a: Schema, b: Schema, path: string): void {
    // true and {} accept everything; false accepts nothing.
    if (a === false) {
      if (b !== false) this.report('schema-changed', path, a, b, WIDENS);
      // A property that had to be absent may now get a default filled in, which must pass its schema.
      if (typeof b === 'object' && Object.hasOwn(b, 'default')) this.report('annotation-changed', `${path}/default`, null, b.default, this.#defaultEffect(b));
      return;
    }
    if (b === false) {
      this.report('schema-changed', path, a, b, NARROWS);
      return;
    }
    if (isEmptySchema(a) && isEmptySchema(b)) {
      // `true` is `{}`: a default dropped (`{default: 'a'}` → `true`) is filled in no more.
      if (typeof a === 'object' || typeof b === 'object') this.#annotations(a === true ? {} : (a as Record<string, unknown>), b === true ? {} : (b as Record<string, unknown>), path);
      return;
    }
    if (isEmptySchema(b)) {
      this.report('schema-changed', path, a, b, WIDENS);
      // A default that goes with the assertions is filled in no more (a required property then refuses what passed).
      if (typeof a === 'object') this.#annotations(a, b === true ? {} : b, path);
      return;
    }
    // a accepts everything, b has assertions: compare as objects ({} against b).
    this.#compareObjects(a === true ? {} : (a as Record<string, unknown>), b as Record<string, unknown>, path);
  }

  #annotations(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (ANNOTATIONS.has(key) && !same(a[key], b[key])) this.report('annotation-changed', `${path}/${token(key)}`, a[key], b[key], key === 'default' ? this.#defaultEffect(b) : NONE);
    }
  }

  /**
   * The runtime validates inputs with ajv's `useDefaults`: a property left out gets its
   * `default` first. So for inputs a new or changed default must be valid under its own new
   * schema (else a call that left the property out is refused), and a removed one may have
   * been what let such a call through (a required property): undecidable. Outputs get no defaults.
   */
  #defaultEffect(b: Record<string, unknown>): Effect {
    if (!('default' in b)) return { in: 1, out: 0 };
    // A parent that counts or inspects its properties (maxProperties, dependentRequired, a
    // oneOf on presence …) may refuse the object once the default is filled in.
    if (this.#presenceParent) return { in: 1, out: 0 };
    return { in: this.ctx.after.validates(b, b.default) === true ? 0 : 1, out: 0 };
  }

  /**
   * Runs `compare` for subschemas that apply to the same value as `b` (allOf, then/else,
   * dependentSchemas): a default they fill in lands in the object `b`'s other keywords see.
   */
  #inPlace(b: Record<string, unknown>, compare: () => void): void {
    const outer = this.#presenceParent;
    this.#presenceParent = outer || PRESENCE_KEYWORDS.some((key) => Object.hasOwn(b, key)) || ITEM_PRESENCE_KEYWORDS.some((key) => Object.hasOwn(b, key));
    try {
      compare();
    } finally {
      this.#presenceParent = outer;
    }
  }

  /** Compares a property's two schemas knowing whether their object looks at which properties are present. */
  #property(a: Schema, b: Schema, where: string, presence: boolean): void {
    const outer = this.#presenceParent;
    this.#presenceParent = outer || presence;
    try {
      this.#child(a, b, where);
    } finally {
      this.#presenceParent = outer;
    }
  }

  #compareObjects(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    if (hasUnevaluated(a) || hasUnevaluated(b)) {
      // What unevaluated* refuses depends on every keyword beside it and in place under it:
      // only an equivalent schema (checked before) is known to keep it.
      const key = hasUnevaluated(b) ? (b.unevaluatedProperties !== undefined && b.unevaluatedProperties !== true ? 'unevaluatedProperties' : 'unevaluatedItems') : a.unevaluatedProperties !== undefined && a.unevaluatedProperties !== true ? 'unevaluatedProperties' : 'unevaluatedItems';
      this.report('keyword-changed', `${path}/${key}`, a[key], b[key], UNDECIDABLE);
      return;
    }
    if ((hasFinite(a) || hasFinite(b)) && this.#compareFinite(a, b, path)) {
      this.#annotations(a, b, path);
      return;
    }
    const altA = alternativesKey(a);
    const altB = alternativesKey(b);
    if (altA === 'none' && altB !== 'none' && altB !== 'both') return this.#distribute(a, b, altB, 'after', path);
    if (altB === 'none' && altA !== 'none' && altA !== 'both') return this.#distribute(a, b, altA, 'before', path);
    this.#walk(a, b, path);
  }

  /**
   * One side, or both, can take only a few values (`enum`, `const`, booleans, a small integer
   * range): each is judged under the other schema with the validator, which also covers
   * every other keyword of both (type widenings hidden by an enum included).
   */
  #compareFinite(a: Record<string, unknown>, b: Record<string, unknown>, path: string): boolean {
    if (('enum' in a && !Array.isArray(a.enum)) || ('enum' in b && !Array.isArray(b.enum))) return false;
    const valuesA = candidates(a);
    const valuesB = candidates(b);
    if (valuesA === undefined && valuesB === undefined) return false;
    const before = this.ctx.before;
    const after = this.ctx.after;
    const where = `${path}/${'const' in b ? 'const' : 'enum' in b || !('const' in a) ? 'enum' : 'const'}`;
    const found: Raw[] = [];
    const push = (type: SchemaDifferenceType, at: string, x: unknown, y: unknown, effect: Effect) => found.push({ type, path: at, before: x, after: y, effect });
    // Out of validation steps, every later value is unknown: one difference says so for all.
    const exhausted = () => before.exhausted || after.exhausted;
    // The values meet the other side's own pattern one after another: test them in one vm run.
    if (typeof b.pattern === 'string' && valuesA !== undefined) prefetchPattern(b.pattern, valuesA);
    if (typeof a.pattern === 'string' && valuesB !== undefined) prefetchPattern(a.pattern, valuesB);
    for (const value of valuesA ?? []) {
      const inA = before.validates(a, value);
      if (inA === false) continue;
      const inB = after.validates(b, value);
      if (inB === true) continue;
      push('enum-value-removed', where, value, null, inA === true && inB === false ? NARROWS : { in: 1, out: 0 });
      if (exhausted()) break;
    }
    for (const value of exhausted() ? [] : valuesB ?? []) {
      const inB = after.validates(b, value);
      if (inB === false) continue;
      const inA = before.validates(a, value);
      if (inA === true) continue;
      push('enum-value-added', where, null, value, inA === false && inB === true ? WIDENS : { in: 0, out: 1 });
      if (exhausted()) break;
    }
    if (exhausted()) found.push({ type: 'keyword-changed', path: where, before: null, after: null, effect: UNDECIDABLE });
    if ('const' in a && 'const' in b && found.length > 0) {
      let effect = NONE;
      for (const one of found) effect = combine(effect, one.effect);
      this.report('const-changed', `${path}/const`, a.const, b.const, effect);
      return true;
    }
    for (const one of found) this.out.push(one);
    // The other side takes values beyond any list: it is wider (narrower) for certain.
    if (valuesB === undefined) this.report('const' in a ? 'const-removed' : 'enum-removed', `${path}/${'const' in a ? 'const' : 'enum'}`, 'const' in a ? a.const : a.enum, null, WIDENS);
    if (valuesA === undefined) this.report('const' in b ? 'const-added' : 'enum-added', `${path}/${'const' in b ? 'const' : 'enum'}`, null, 'const' in b ? b.const : b.enum, NARROWS);
    return true;
  }

  /**
   * One side is a choice (`anyOf`, or `oneOf`) and the other is not: `before ⊆ after` when
   * `before` fits one branch of `after` (all branches of `before` fit `after`); the other
   * direction alike. The rest of the choosing schema is folded into each branch. A `oneOf`
   * whose branches are not provably disjoint (else normalization made it an anyOf) is an
   * anyOf only on the side that must be contained: where it must contain, undecidable unless
   * its branches are provably disjoint.
   */
  #distribute(a: Record<string, unknown>, b: Record<string, unknown>, key: 'anyOf' | 'oneOf', side: Side, path: string): void {
    const chooser = side === 'after' ? b : a;
    const list = (chooser[key] as unknown[]).map(asSchema);
    const rest: Record<string, unknown> = {};
    for (const k of Object.keys(chooser)) if (k !== key && !ANNOTATIONS.has(k)) rest[k] = chooser[k];
    const doc = this.ctx.doc(side);
    const branches = list.map((branch) => {
      if (isEmptySchema(rest)) return branch;
      const both = { allOf: [rest, branch] };
      doc.adopt(both, chooser);
      doc.adopt(rest, chooser);
      return both;
    });
    const where = `${path}/${key}`;
    let effect: { in: Dir; out: Dir };
    if (side === 'after') {
      // before ⊆ after: before within some branch; after ⊆ before: every branch within before.
      effect = { in: 2, out: 0 };
      branches.forEach((branch, j) => {
        const e = this.relate(a, branch, `${where}/${j}`);
        effect = { in: Math.min(effect.in, e.in) as Dir, out: Math.max(effect.out, e.out) as Dir };
      });
      if (key === 'oneOf' && effect.in === 0 && !pairwiseDisjoint(list, doc)) effect = { in: 1, out: effect.out };
      this.report('branch-added', where, null, b[key], effect);
    } else {
      effect = { in: 0, out: 2 };
      branches.forEach((branch, i) => {
        const e = this.relate(branch, b, `${where}/${i}`);
        effect = { in: Math.max(effect.in, e.in) as Dir, out: Math.min(effect.out, e.out) as Dir };
      });
      if (key === 'oneOf' && effect.out === 0 && !pairwiseDisjoint(list, doc)) effect = { in: effect.in, out: 1 };
      this.report('branch-removed', where, a[key], null, effect);
    }
    this.#annotations(a, b, path);
  }

  /** Keyword by keyword: each difference is one conjunct of the schema, judged on its own. */
  #walk(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    const typesA = typeSet(a);
    const typesB = typeSet(b);
    const removed = [...typesA].filter((t) => !typesB.has(t));
    const added = [...typesB].filter((t) => !typesA.has(t));
    if (removed.length > 0) this.report('type-removed', `${path}/type`, a.type, b.type, NARROWS);
    if (added.length > 0) this.report('type-added', `${path}/type`, a.type, b.type, WIDENS);
    // Only the types both admit matter for keywords that constrain one type.
    const both = new Set([...typesA].filter((t) => typesB.has(t)));
    const applies = (key: string): boolean => KEYWORD_TYPES[key] === undefined || intersects(both, KEYWORD_TYPES[key] as readonly JsonType[]);
    if (applies('properties')) this.#compareObjectKeywords(a, b, path);
    if (applies('items')) this.#compareArrayKeywords(a, b, path);
    if (applies('minimum')) {
      this.#compareNumericBound('lower', a, b, path);
      this.#compareNumericBound('upper', a, b, path);
      this.#compareMultipleOf(a.multipleOf, b.multipleOf, path);
    }
    for (const key of [...LOWER_BOUNDS, ...UPPER_BOUNDS]) if (applies(key)) this.#compareBound(key, a[key], b[key], path);
    if (applies('pattern')) this.#comparePattern(a.pattern, b.pattern, path);
    if (applies('format')) this.#compareFormat(a.format, b.format, path);
    if (applies('uniqueItems') && (a.uniqueItems === true) !== (b.uniqueItems === true)) {
      const add = b.uniqueItems === true;
      this.report(add ? 'unique-items-added' : 'unique-items-removed', `${path}/uniqueItems`, a.uniqueItems, b.uniqueItems, add ? NARROWS : WIDENS);
    }
    this.#inPlace(b, () => this.#compareAllOf(a.allOf, b.allOf, path));
    this.#compareAlternatives(a, b, path);
    this.#compareNot(a.not, b.not, path);
    this.#inPlace(b, () => this.#compareConditional(a, b, path));
    const keys = Object.keys(a);
    for (const key of Object.keys(b)) if (!Object.hasOwn(a, key)) keys.push(key);
    for (const key of keys) {
      if (WALKED.has(key) || !applies(key)) continue;
      if (ANNOTATIONS.has(key)) {
        if (!same(a[key], b[key])) this.report('annotation-changed', `${path}/${token(key)}`, a[key], b[key], key === 'default' ? this.#defaultEffect(b) : NONE);
      } else if (!this.ctx.equivalent(a[key], b[key])) this.report('keyword-changed', `${path}/${token(key)}`, a[key], b[key], conjunctEffect(key, a, b));
    }
  }

  #compareBound(key: string, a: unknown, b: unknown, path: string): void {
    if (a === b) return;
    const where = `${path}/${key}`;
    const lower = (LOWER_BOUNDS as readonly string[]).includes(key) || key === 'minContains';
    if ((typeof a !== 'number' && a !== undefined) || (typeof b !== 'number' && b !== undefined)) return this.report('keyword-changed', where, a, b, UNDECIDABLE);
    let tighter: boolean;
    if (a === undefined) tighter = true;
    else if (b === undefined) tighter = false;
    else tighter = lower ? (b as number) > a : (b as number) < a;
    this.report(tighter ? 'bound-tightened' : 'bound-loosened', where, a, b, tighter ? NARROWS : WIDENS);
  }

  /** `minimum`/`exclusiveMinimum` (or the upper pair) as one bound: a value and whether it is excluded. */
  #compareNumericBound(side: 'lower' | 'upper', a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    const [closed, open] = side === 'lower' ? ['minimum', 'exclusiveMinimum'] : ['maximum', 'exclusiveMaximum'];
    const boundOf = (s: Record<string, unknown>): { key: string; value: number; excluded: boolean } | undefined | null => {
      if (s[open] !== undefined && typeof s[open] !== 'number') return null;
      if (s[closed] !== undefined && typeof s[closed] !== 'number') return null;
      if (typeof s[open] === 'number') return { key: open, value: s[open] as number, excluded: true };
      if (typeof s[closed] === 'number') return { key: closed, value: s[closed] as number, excluded: false };
      return undefined;
    };
    const x = boundOf(a);
    const y = boundOf(b);
    if (x === null || y === null) {
      // A draft-04 boolean exclusiveMinimum: undecidable when anything about the bound changed.
      for (const key of [closed, open]) if (!same(a[key], b[key])) this.report('keyword-changed', `${path}/${key}`, a[key], b[key], UNDECIDABLE);
      return;
    }
    if (x === undefined && y === undefined) return;
    if (x !== undefined && y !== undefined && x.value === y.value && x.excluded === y.excluded) return;
    const sign = side === 'lower' ? 1 : -1;
    const tighter = x === undefined || (y !== undefined && (sign * (y.value - x.value) > 0 || (y.value === x.value && y.excluded)));
    const key = (y ?? x)?.key as string;
    this.report(tighter ? 'bound-tightened' : 'bound-loosened', `${path}/${key}`, a[key], b[key], tighter ? NARROWS : WIDENS);
  }

  #compareMultipleOf(a: unknown, b: unknown, path: string): void {
    if (a === b) return;
    const where = `${path}/multipleOf`;
    if (b === undefined) return this.report('multiple-of-changed', where, a, b, WIDENS);
    if (a === undefined) return this.report('multiple-of-changed', where, a, b, NARROWS);
    if (typeof a !== 'number' || typeof b !== 'number' || a <= 0 || b <= 0) return this.report('multiple-of-changed', where, a, b, UNDECIDABLE);
    // Every multiple of a is a multiple of b exactly when b divides a (3 and 1.0000000001: neither).
    // That proves it for ajv (the runtime) only when a is an integer: ajv divides in floating
    // point, and a value whose quotient by a fraction rounds to an integer may not round to one
    // by a smaller fraction (-16.35 passes multipleOf 0.01 and fails 0.001 in ajv).
    const dir = (x: boolean | undefined, from: number): Dir => (x === undefined ? 1 : !x ? 2 : Number.isInteger(from) ? 0 : 1);
    this.report('multiple-of-changed', where, a, b, { in: dir(divides(b, a), a), out: dir(divides(a, b), b) });
  }

  #comparePattern(a: unknown, b: unknown, path: string): void {
    if (a === b) return;
    const where = `${path}/pattern`;
    if (a === undefined) return this.report('pattern-added', where, a, b, NARROWS);
    if (b === undefined) return this.report('pattern-removed', where, a, b, WIDENS);
    if (typeof a !== 'string' || typeof b !== 'string') return this.report('pattern-changed', where, a, b, UNDECIDABLE);
    this.report('pattern-changed', where, a, b, { in: patternCovers(a, b) ? 0 : 1, out: patternCovers(b, a) ? 0 : 1 });
  }

  #compareFormat(a: unknown, b: unknown, path: string): void {
    if (a === b) return;
    const where = `${path}/format`;
    if (a === undefined) this.report('format-added', where, a, b, NARROWS);
    else if (b === undefined) this.report('format-removed', where, a, b, WIDENS);
    else this.report('format-changed', where, a, b, UNDECIDABLE);
  }

  /** The schema a property of this name meets: its own and the patterns it matches, else additionalProperties. */
  #schemaFor(name: string, schema: Record<string, unknown>, side: Side): Schema | undefined {
    const properties = isObject(schema.properties) ? schema.properties : {};
    const patterns = isObject(schema.patternProperties) ? schema.patternProperties : {};
    const parts: Schema[] = [];
    if (Object.hasOwn(properties, name)) parts.push(asSchema(properties[name]));
    if (work > WORK_LIMIT) return undefined;
    const names = Object.keys(patterns);
    work += names.length;
    for (const pattern of names) {
      const sub = patterns[pattern];
      const match = matchPattern(pattern, name);
      if (match === undefined) return undefined;
      if (match) parts.push(asSchema(sub));
    }
    if (parts.length === 0) return schema.additionalProperties === undefined ? true : asSchema(schema.additionalProperties);
    if (parts.length === 1) return parts[0];
    const all = { allOf: parts };
    this.ctx.doc(side).adopt(all, schema);
    return all;
  }

  #compareObjectKeywords(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    const propsA = isObject(a.properties) ? a.properties : {};
    const propsB = isObject(b.properties) ? b.properties : {};
    const patternsA = isObject(a.patternProperties) ? a.patternProperties : {};
    const patternsB = isObject(b.patternProperties) ? b.patternProperties : {};
    const patternKeys = Object.keys(patternsA);
    for (const key of Object.keys(patternsB)) if (!Object.hasOwn(patternsA, key)) patternKeys.push(key);
    const patternsKept = patternKeys.every((key) => Object.hasOwn(patternsA, key) && Object.hasOwn(patternsB, key));
    const names = Object.keys(propsA);
    for (const name of Object.keys(propsB)) if (!Object.hasOwn(propsA, name)) names.push(name);
    const presence = PRESENCE_KEYWORDS.some((key) => Object.hasOwn(b, key));
    // The names `#schemaFor` tests against every pattern: one vm run per pattern, not per name.
    if (patternKeys.length > 0 && work + names.length * patternKeys.length <= WORK_LIMIT) {
      const tested = patternsKept ? names.filter((name) => !Object.hasOwn(propsA, name) || !Object.hasOwn(propsB, name)) : names;
      for (const pattern of patternKeys) prefetchPattern(pattern, tested);
    }
    for (const name of names) {
      const inA = Object.hasOwn(propsA, name);
      const inB = Object.hasOwn(propsB, name);
      // Most properties of a new version are the old ones: skip them before building a path.
      if (inA && inB && patternsKept && this.ctx.equivalent(propsA[name], propsB[name])) continue;
      const where = `${path}/properties/${token(name)}`;
      if (inA && inB && patternsKept) {
        // The patterns a name matches are compared once, pattern by pattern, below.
        this.#property(asSchema(propsA[name]), asSchema(propsB[name]), where, presence);
        continue;
      }
      if (inA && inB) {
        // Patterns came or went: the name's whole schema on each side (its own and its patterns).
        const before = this.#schemaFor(name, a, 'before');
        const after = this.#schemaFor(name, b, 'after');
        if (before === undefined || after === undefined) this.report('keyword-changed', where, propsA[name], propsB[name], UNDECIDABLE);
        else this.#property(before, after, where, presence);
        continue;
      }
      // The schema a value under this name met before (after): the property's, the patterns
      // it matches, or additionalProperties for a name neither lists.
      const before = this.#schemaFor(name, a, 'before');
      const after = this.#schemaFor(name, b, 'after');
      let effect = before === undefined || after === undefined ? UNDECIDABLE : this.relate(before, after, where, true);
      // The runtime fills a listed property's default into an input that left it out: a property
      // that comes with a default fills one in from now on, one that goes no longer does (a
      // `required` beside it then refuses what passed), so for inputs neither is proved.
      const given = inB ? propsB[name] : propsA[name];
      if (isObject(given) && Object.hasOwn(given, 'default')) effect = combine(effect, { in: inB && !presence && !this.#presenceParent && this.ctx.after.validates(asSchema(given), given.default) === true ? 0 : 1, out: 0 });
      if (inB) this.report('property-added', where, null, propsB[name], effect);
      else this.report('property-removed', where, propsA[name], null, effect);
    }
    const closedA = a.additionalProperties === false && Object.keys(patternsA).length === 0;
    const closedB = b.additionalProperties === false && Object.keys(patternsB).length === 0;
    const open = (a.additionalProperties === undefined || a.additionalProperties === true) && (b.additionalProperties === undefined || b.additionalProperties === true);
    for (const pattern of patternKeys) {
      const where = `${path}/patternProperties/${token(pattern)}`;
      const inA = Object.hasOwn(patternsA, pattern);
      const inB = Object.hasOwn(patternsB, pattern);
      if (inA && inB) {
        this.#child(asSchema(patternsA[pattern]), asSchema(patternsB[pattern]), where);
        continue;
      }
      // For the names no `properties` lists (those were judged above): on an open object a
      // pattern is one more conjunct; where the other side refused every such name
      // (additionalProperties false, no patterns), a new pattern only adds names (an old one
      // only took them away); otherwise it also moves names away from additionalProperties.
      let effect: Effect;
      if (open) effect = inB ? NARROWS : WIDENS;
      else if (inB && closedA) effect = WIDENS;
      else if (inA && closedB) effect = NARROWS;
      else effect = UNDECIDABLE;
      this.report('keyword-changed', where, inA ? patternsA[pattern] : null, inB ? patternsB[pattern] : null, effect);
    }
    // additionalProperties: for names that no properties list and no pattern (of either side) matches.
    if (!this.ctx.equivalent(a.additionalProperties, b.additionalProperties)) {
      const restA = a.additionalProperties === undefined ? true : asSchema(a.additionalProperties);
      const restB = b.additionalProperties === undefined ? true : asSchema(b.additionalProperties);
      const effect = this.relate(restA, restB, `${path}/additionalProperties`, true);
      this.report('additional-properties-changed', `${path}/additionalProperties`, a.additionalProperties, b.additionalProperties, effect);
    }
    this.#compareDependencies(a, b, path);
    const requiredA = new Set(Array.isArray(a.required) ? (a.required as unknown[]).map(String) : []);
    const requiredB = new Set(Array.isArray(b.required) ? (b.required as unknown[]).map(String) : []);
    for (const name of requiredB) if (!requiredA.has(name)) this.report('required-added', `${path}/required`, null, name, NARROWS);
    for (const name of requiredA) if (!requiredB.has(name)) this.report('required-removed', `${path}/required`, name, null, WIDENS);
  }

  /**
   * dependentRequired, dependentSchemas and draft-07 `dependencies`: each name is a conjunct for
   * the objects that have that property (names required along, or a schema the object meets).
   */
  #compareDependencies(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    for (const key of ['dependentRequired', 'dependentSchemas', 'dependencies']) {
      if (this.ctx.equivalent(a[key], b[key])) continue;
      const mapA = a[key] === undefined ? {} : a[key];
      const mapB = b[key] === undefined ? {} : b[key];
      if (!isObject(mapA) || !isObject(mapB)) {
        this.report('keyword-changed', `${path}/${key}`, a[key], b[key], UNDECIDABLE);
        continue;
      }
      const names = Object.keys(mapA);
      for (const name of Object.keys(mapB)) if (!Object.hasOwn(mapA, name)) names.push(name);
      for (const name of names) {
        const x = mapA[name];
        const y = mapB[name];
        if (this.ctx.equivalent(x, y)) continue;
        const where = `${path}/${key}/${token(name)}`;
        const list = (v: unknown): v is unknown[] => Array.isArray(v) && v.every((n) => typeof n === 'string');
        if ((x === undefined || list(x)) && (y === undefined || list(y)) && key !== 'dependentSchemas') {
          const before = new Set(x ?? []);
          const after = new Set(y ?? []);
          const added = [...after].some((n) => !before.has(n)) || (x === undefined && after.size > 0);
          const removed = [...before].some((n) => !after.has(n)) || (y === undefined && before.size > 0);
          this.report('keyword-changed', where, x, y, added && removed ? { in: 2, out: 2 } : added ? NARROWS : removed ? WIDENS : NONE);
        } else if (key !== 'dependentRequired' && !list(x) && !list(y)) {
          if (x === undefined) this.report('keyword-changed', where, null, y, NARROWS);
          else if (y === undefined) this.report('keyword-changed', where, x, null, WIDENS);
          else this.#inPlace(b, () => this.#child(asSchema(x), asSchema(y), where));
        } else this.report('keyword-changed', where, x, y, UNDECIDABLE);
      }
    }
  }

  /**
   * Arrays: the schema of item i is `prefixItems[i]` (draft 2020-12) or `items[i]` (draft-07's
   * tuple form), else the rest: `items` (2020-12, or draft-07's single schema) or
   * `additionalItems` (draft-07 after a tuple).
   */
  #compareArrayKeywords(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    // ajv 8 lets an empty array through `contains` when `prefixItems` (or the tuple `items` of
    // draft-07 and 2019-09) has typed entries (what the runtime does, not what the
    // specification says): beside that pair, any change of the array keywords is undecidable.
    const quirk = (s: Record<string, unknown>) => s.contains !== undefined && ((Array.isArray(s.prefixItems) && s.prefixItems.length > 0) || (Array.isArray(s.items) && s.items.length > 0));
    if (quirk(a) || quirk(b)) {
      const keys = ['prefixItems', 'items', 'contains', 'minContains', 'maxContains', 'minItems', 'maxItems', 'additionalItems', 'uniqueItems'];
      const changed = keys.filter((key) => !this.ctx.equivalent(a[key], b[key]));
      if (changed.length > 0) this.report('keyword-changed', `${path}/contains`, a.contains, b.contains, UNDECIDABLE);
      return;
    }
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
    const outer = this.#presenceParent;
    this.#presenceParent = outer || ITEM_PRESENCE_KEYWORDS.some((key) => Object.hasOwn(b, key));
    try {
      for (let i = 0; i < length; i++) {
        const itemA = i < shapeA.prefix.length ? asSchema(shapeA.prefix[i]) : shapeA.rest;
        const itemB = i < shapeB.prefix.length ? asSchema(shapeB.prefix[i]) : shapeB.rest;
        this.#compareItems(itemA, itemB, `${path}/${shapeB.prefix.length > i ? shapeB.prefixKey : shapeB.restKey}${shapeB.prefix.length > i ? `/${i}` : ''}`);
      }
      this.#compareItems(shapeA.rest, shapeB.rest, `${path}/${shapeB.restKey}`);
    } finally {
      this.#presenceParent = outer;
    }
    const containsSame = this.ctx.equivalent(a.contains, b.contains);
    if (!containsSame) {
      const where = `${path}/contains`;
      if (a.maxContains !== undefined || b.maxContains !== undefined) this.report('keyword-changed', where, a.contains, b.contains, UNDECIDABLE);
      else if (a.contains === undefined) this.report('keyword-changed', where, null, b.contains, NARROWS);
      else if (b.contains === undefined) this.report('keyword-changed', where, a.contains, null, WIDENS);
      // Every array with an item the old `contains` accepts has one the new accepts when the new accepts more.
      else this.report('keyword-changed', where, a.contains, b.contains, this.relate(asSchema(a.contains), asSchema(b.contains), where, true));
    }
    for (const key of ['minContains', 'maxContains']) {
      if (same(a[key], b[key])) continue;
      if (containsSame) this.#compareBound(key, a[key] ?? (key === 'minContains' ? 1 : undefined), b[key] ?? (key === 'minContains' ? 1 : undefined), path);
      else this.report('keyword-changed', `${path}/${key}`, a[key], b[key], UNDECIDABLE);
    }
  }

  #compareItems(a: Schema, b: Schema, path: string): void {
    if (this.ctx.equivalent(a, b)) return;
    // From "any item" to a schema (or back): one difference for the items as a whole.
    if (isEmptySchema(a) || isEmptySchema(b)) this.report('items-changed', path, a === true ? null : a, b === true ? null : b, this.relate(a, b, path, true));
    else this.#child(a, b, path);
  }

  /** allOf: each branch is a conjunct; identical branches match wherever they are, the rest by position. */
  #compareAllOf(a: unknown, b: unknown, path: string): void {
    if (this.ctx.equivalent(a, b)) return;
    const where = `${path}/allOf`;
    if (a === undefined) return this.report('branch-added', where, null, b, NARROWS);
    if (b === undefined) return this.report('branch-removed', where, a, null, WIDENS);
    const listA = Array.isArray(a) ? a.map(asSchema) : [];
    const listB = Array.isArray(b) ? b.map(asSchema) : [];
    const { extraA, extraB, pairs } = this.#match(listA, listB);
    for (const [i, j] of pairs) this.compare(listA[i] as Schema, listB[j] as Schema, `${where}/${j}`);
    for (const i of extraA) this.report('branch-removed', `${where}/${i}`, listA[i], null, WIDENS);
    for (const j of extraB) this.report('branch-added', `${where}/${j}`, null, listB[j], NARROWS);
  }

  /** Equivalent branches match in any order; the others pair by position. */
  #match(listA: Schema[], listB: Schema[]): { extraA: number[]; extraB: number[]; pairs: [number, number][] } {
    const usedB = new Set<number>();
    const unmatchedA: number[] = [];
    listA.forEach((x, i) => {
      // Past the work budget, the rest go by position (each pair then compared, within CALL_LIMIT).
      const j = listB.findIndex((y, k) => !usedB.has(k) && ++work <= WORK_LIMIT && this.ctx.equivalent(x, y));
      if (j === -1) unmatchedA.push(i);
      else usedB.add(j);
    });
    const unmatchedB = listB.map((_, j) => j).filter((j) => !usedB.has(j));
    const count = Math.min(unmatchedA.length, unmatchedB.length);
    const pairs: [number, number][] = [];
    for (let p = 0; p < count; p++) pairs.push([unmatchedA[p] as number, unmatchedB[p] as number]);
    return { extraA: unmatchedA.slice(count), extraB: unmatchedB.slice(count), pairs };
  }

  /**
   * anyOf/oneOf on both sides: before ⊆ after when each old branch fits a new one. A oneOf
   * is an anyOf where it must be contained (`before` for inputs); where it must contain, a
   * value matching two of its branches fails it, so that direction is undecidable unless the
   * lists are equivalent.
   */
  #compareAlternatives(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    if (a.anyOf === undefined && a.oneOf === undefined && b.anyOf === undefined && b.oneOf === undefined) return;
    const keysA = (['anyOf', 'oneOf'] as const).filter((k) => Array.isArray(a[k]));
    const keysB = (['anyOf', 'oneOf'] as const).filter((k) => Array.isArray(b[k]));
    const pairs: ['anyOf' | 'oneOf' | undefined, 'anyOf' | 'oneOf' | undefined][] =
      keysA.length === 1 && keysB.length === 1 ? [[keysA[0], keysB[0]]] : [['anyOf', 'anyOf'], ['oneOf', 'oneOf']];
    for (const [keyA, keyB] of pairs) {
      const listA = keyA === undefined || !Array.isArray(a[keyA]) ? undefined : (a[keyA] as unknown[]).map(asSchema);
      const listB = keyB === undefined || !Array.isArray(b[keyB]) ? undefined : (b[keyB] as unknown[]).map(asSchema);
      if (listA === undefined && listB === undefined) continue;
      const key = (keyB ?? keyA) as string;
      const where = `${path}/${key}`;
      if (listA === undefined) {
        this.report('branch-added', where, null, b[key], NARROWS);
        continue;
      }
      if (listB === undefined) {
        this.report('branch-removed', where, a[key], null, WIDENS);
        continue;
      }
      if (keyA === keyB && this.ctx.equivalent(listA, listB)) continue;
      const maskIn = keyB === 'oneOf' && !pairwiseDisjoint(listB, this.ctx.after);
      const maskOut = keyA === 'oneOf' && !pairwiseDisjoint(listA, this.ctx.before);
      const target = maskIn || maskOut ? this.#sub() : this;
      const { extraA, extraB, pairs: matched } = target.#match(listA, listB);
      for (const [i, j] of matched) target.compare(listA[i] as Schema, listB[j] as Schema, `${where}/${j}`);
      for (const i of extraA) {
        // One alternative fewer narrows, unless a remaining branch accepts all it accepted.
        const covered = listB.some((other, j) => this.relate(listA[i] as Schema, other, `${where}/${j}`).in === 0);
        target.report('branch-removed', `${where}/${i}`, listA[i], null, covered ? NONE : NARROWS);
      }
      for (const j of extraB) {
        const covered = listA.some((other, i) => this.#relateBack(listB[j] as Schema, other, `${path}/${keyA}/${i}`).in === 0);
        target.report('branch-added', `${where}/${j}`, null, listB[j], covered ? NONE : WIDENS);
      }
      if (target !== this) {
        // anyOf became a oneOf (or back) over the same branches: a value matching two of them
        // changes its verdict, so the masked direction is undecidable even with no other difference.
        if (keyA !== keyB) target.report('keyword-changed', where, a[keyA as string], b[keyB as string], NONE);
        for (const raw of target.out) {
          const effect = { in: maskIn && raw.effect.in === 0 ? 1 : raw.effect.in, out: maskOut && raw.effect.out === 0 ? 1 : raw.effect.out } as Effect;
          this.out.push({ ...raw, effect });
        }
      }
    }
  }

  #compareNot(a: unknown, b: unknown, path: string): void {
    if (this.ctx.equivalent(a, b)) return;
    const where = `${path}/not`;
    if (a === undefined) return this.report('not-changed', where, null, b, NARROWS);
    if (b === undefined) return this.report('not-changed', where, a, null, WIDENS);
    // not A ⊆ not B exactly when B ⊆ A: the inner comparison with the directions swapped,
    // in a comparer of its own (a pair compared elsewhere is compared again here).
    this.report('not-changed', where, a, b, flip(this.relate(asSchema(a), asSchema(b), where, false, -this.polarity)));
  }

  /** if/then/else: with the same `if`, `then` and `else` are conjuncts on their values; another `if` is undecidable. */
  #compareConditional(a: Record<string, unknown>, b: Record<string, unknown>, path: string): void {
    if (a.if === undefined && b.if === undefined) return;
    if (a.if === undefined || b.if === undefined) {
      this.report('keyword-changed', `${path}/if`, a.if, b.if, a.if === undefined ? { in: 1, out: 0 } : { in: 0, out: 1 });
      return;
    }
    if (!this.ctx.equivalent(a.if, b.if)) {
      this.report('keyword-changed', `${path}/if`, a.if, b.if, UNDECIDABLE);
      return;
    }
    for (const key of ['then', 'else']) {
      if (!this.ctx.equivalent(a[key], b[key])) this.compare(a[key] === undefined ? true : asSchema(a[key]), b[key] === undefined ? true : asSchema(b[key]), `${path}/${key}`);
    }
  }
}

/**
 * A keyword this walk does not model, changed: undecidable, but for `propertyNames`, a plain
 * conjunct on names: removed, it only widens; added, it only narrows.
 */
function conjunctEffect(key: string, a: Record<string, unknown>, b: Record<string, unknown>): Effect {
  if (key !== 'propertyNames') return UNDECIDABLE;
  if (b[key] === undefined) return WIDENS;
  return a[key] === undefined ? NARROWS : UNDECIDABLE;
}

/** Which of anyOf/oneOf a schema has: none, one of them, or both. */
function alternativesKey(schema: Record<string, unknown>): 'none' | 'anyOf' | 'oneOf' | 'both' {
  const anyOf = Array.isArray(schema.anyOf);
  const oneOf = Array.isArray(schema.oneOf);
  return anyOf && oneOf ? 'both' : anyOf ? 'anyOf' : oneOf ? 'oneOf' : 'none';
}

const frozenDocuments = new WeakMap<object, SchemaDocument>();
/** Draft-07 documents read as ajv reads them (a `$ref`'s siblings applied), kept the same way. */
const frozenAjvDocuments = new WeakMap<object, SchemaDocument>();

/** Whether a value is frozen all the way down (a registry's stored specs are). */
function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  for (const inner of Object.values(value)) if (!deeplyFrozen(inner)) return false;
  return true;
}

/**
 * The document of a schema. A deeply frozen schema cannot change, so its document (where its
 * refs lead, its nodes' normal forms) is kept and reused by every later comparison with it.
 */
function documentOf(schema: Schema, refSiblings: 'ignore' | 'apply' = 'ignore'): SchemaDocument {
  if (typeof schema !== 'object' || !Object.isFrozen(schema)) return new SchemaDocument(schema, refSiblings);
  const documents = refSiblings === 'ignore' ? frozenDocuments : frozenAjvDocuments;
  let doc = documents.get(schema);
  if (doc === undefined) {
    doc = new SchemaDocument(schema, refSiblings);
    if (deeplyFrozen(schema)) documents.set(schema, doc);
  }
  return doc;
}

/** The raw differences of one reading of the two documents; `role` input: the values judged get defaults filled in. */
function rawDifferences(before: SchemaDocument, after: SchemaDocument, role: Role): readonly Raw[] {
  before.validationSteps = 0;
  after.validationSteps = 0;
  before.fillsDefaults = role === 'input';
  after.fillsDefaults = role === 'input';
  work = 0;
  const comparer = new Comparer(new Context(before, after), new Map(), 0, 1);
  comparer.compare(before.root, after.root, '');
  return comparer.out;
}

/**
 * Draft-07 says a `$ref`'s siblings are ignored; ajv, which the runtime validates with,
 * applies them. Where a draft-07 document has such siblings, the two readings differ, and the
 * verdict must hold under both: the differences of both, the same difference counted once
 * with the worse effect in each direction.
 */
function bothReadings(before: SchemaDocument, after: SchemaDocument, role: Role): readonly Raw[] {
  const spec = rawDifferences(before, after, role);
  const needsBoth = (doc: SchemaDocument) => doc.ignoresRefSiblings && holdsRefWithSiblings(doc.root);
  if (!needsBoth(before) && !needsBoth(after)) return spec;
  const merged = new Map<string, Raw>();
  for (const raw of [...spec, ...rawDifferences(documentOf(before.root, 'apply'), documentOf(after.root, 'apply'), role)]) {
    const key = `${raw.type}\u0000${raw.path}\u0000${canonicalJson(raw.before ?? null)}\u0000${canonicalJson(raw.after ?? null)}`;
    const seen = merged.get(key);
    merged.set(key, seen === undefined ? raw : { ...seen, effect: { in: Math.max(seen.effect.in, raw.effect.in) as Dir, out: Math.max(seen.effect.out, raw.effect.out) as Dir } });
  }
  return [...merged.values()];
}

/** Keywords whose subschemas ajv validates without filling in defaults (its `compositeRule`). */
const COMPOSITE_KEYWORDS: ReadonlySet<string> = new Set(['anyOf', 'oneOf', 'not', 'if', 'contains']);
/** Subschemas that apply to the value their parent applies to. */
const IN_PLACE_KEYWORDS: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas', 'dependencies']);
/** Keywords that count or inspect which properties an object has (PRESENCE_KEYWORDS but the applicators). */
const COUNTING_KEYWORDS = ['maxProperties', 'dependentRequired', 'dependentSchemas', 'dependencies', 'propertyNames', 'patternProperties', 'unevaluatedProperties'];

/** Where a default is, and its value. */
type DefaultSite = { readonly pointer: string; readonly value: unknown } | undefined;

/** `find`, its answer kept with each document (a stored spec's document is kept and reused). */
function perDocument(find: (doc: SchemaDocument) => DefaultSite): (doc: SchemaDocument) => DefaultSite {
  const answers = new WeakMap<SchemaDocument, DefaultSite>();
  return (doc) => {
    if (answers.has(doc)) return answers.get(doc);
    const found = find(doc);
    answers.set(doc, found);
    return found;
  };
}

/**
 * A property default ajv may leave unfilled (under a composite keyword, or anywhere in a
 * document that reaches a ref from one) whose filling decides something: its property is
 * required, its object looks at which properties are present, or its own schema refuses it.
 */
const inertDefault = perDocument(findInertDefault);

function findInertDefault(doc: SchemaDocument): DefaultSite {
  // One cheap pass first: most documents have no composite keyword, so no default ajv leaves unfilled.
  let composites = false;
  let everywhere = false;
  const scan = (node: unknown, composite: boolean, depth: number): void => {
    if (everywhere || depth > MAX_JSON_DEPTH || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const one of node) scan(one, composite, depth + 1);
      return;
    }
    const record = node as Record<string, unknown>;
    if (composite && (typeof record.$ref === 'string' || record.$dynamicRef !== undefined)) everywhere = true;
    for (const key in record) {
      if (VALUE_KEYWORDS.has(key)) continue;
      const entering = COMPOSITE_KEYWORDS.has(key);
      if (entering) composites = true;
      scan(record[key], composite || entering, depth + 1);
    }
  };
  scan(doc.root, false, 0);
  if (!composites) return undefined;
  let found: { pointer: string; value: unknown } | undefined;
  // `required` and the counting keywords of the object a subschema applies in place to (an anyOf branch's, its parent's).
  const visit = (node: unknown, pointer: string, composite: boolean, depth: number, outerRequired: readonly unknown[], outerLooks: boolean): void => {
    if (found !== undefined || depth > MAX_JSON_DEPTH || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      node.forEach((one, i) => visit(one, `${pointer}/${i}`, composite, depth + 1, outerRequired, outerLooks));
      return;
    }
    const record = node as Record<string, unknown>;
    const required = Array.isArray(record.required) ? [...outerRequired, ...record.required] : outerRequired;
    const counts = outerLooks || COUNTING_KEYWORDS.some((key) => Object.hasOwn(record, key));
    if ((composite || everywhere) && isObject(record.properties)) {
      const looks = counts || PRESENCE_KEYWORDS.some((key) => Object.hasOwn(record, key));
      for (const [name, property] of Object.entries(record.properties)) {
        if (!isObject(property) || !Object.hasOwn(property, 'default')) continue;
        if (looks || required.includes(name) || doc.validates(property as Schema, property.default) !== true) {
          found = { pointer: `${pointer}/properties/${token(name)}/default`, value: property.default };
          return;
        }
      }
    }
    // ajv also fills the defaults of a tuple's entries (draft-07's array `items`): rare, so any such one counts.
    if ((composite || everywhere) && Array.isArray(record.items)) {
      const index = record.items.findIndex((entry) => isObject(entry) && Object.hasOwn(entry, 'default'));
      if (index !== -1) {
        found = { pointer: `${pointer}/items/${index}/default`, value: (record.items[index] as Record<string, unknown>).default };
        return;
      }
    }
    for (const [key, value] of Object.entries(record)) {
      if (VALUE_KEYWORDS.has(key)) continue;
      const inPlace = IN_PLACE_KEYWORDS.has(key);
      visit(value, `${pointer}/${token(key)}`, composite || COMPOSITE_KEYWORDS.has(key), depth + 1, inPlace ? required : [], inPlace && counts);
    }
  };
  visit(doc.root, '', false, 0, [], false);
  return found;
}

/**
 * One step of ajv's validation of an input, as far as defaults go: a default filled into an
 * object (`fill`), a keyword looking at which properties an object has or at their values
 * (`look`; `names` null: at all of them), or an `enum`/`const` comparing a value whole (`read`).
 * `data` is where the value is, a property name or `*` (any item or other name) per level.
 */
interface Step {
  readonly kind: 'fill' | 'look' | 'read';
  readonly data: readonly string[];
  /** The properties it fills (one) or looks at; null: all. */
  readonly names: readonly string[] | null;
  readonly pointer: string;
  readonly value?: unknown;
}

/** Nodes the order of ajv's steps is followed through, per document, before it cannot tell. */
const ORDER_STEPS = 20_000;
const ARRAY_KEYWORDS = ['maxItems', 'minItems', 'prefixItems', 'items', 'additionalItems', 'contains', 'uniqueItems', 'maxContains', 'minContains', 'unevaluatedItems'];
const OBJECT_KEYWORDS = ['maxProperties', 'minProperties', 'required', 'propertyNames', 'additionalProperties', 'dependencies', 'properties', 'patternProperties', 'dependentRequired', 'dependentSchemas', 'unevaluatedProperties'];

/**
 * A default whose effect depends on the order ajv checks in. ajv fills a schema's property
 * defaults only when it reaches that schema's object keywords: after the keywords of every type
 * (`$ref`, `enum`, `const`, `not`, `anyOf`, `oneOf`, `allOf`, `if`/`then`/`else`, in that
 * order), which see the object as it was, and after whatever ran on the same value before (an
 * earlier `allOf` branch). The walk reads every default as filled in before anything looks,
 * and `enum`/`const` as comparing the value given. So where something looks at a property
 * before a default is filled into it (`{properties: {a: {default: 1}}, allOf: [{required:
 * ['a']}]}` refuses `{}`, its flattened form takes it), an `enum`/`const` compares a value a
 * default was filled into before (`allOf: [{properties: {a: {default: 1}}}, {enum: [{a: 1}]}]`
 * takes `{}`), or two defaults are filled into one property (the first wins), the input
 * verdict is undecidable. So is a document this cannot follow (a recursive schema with
 * defaults, `$dynamicRef`, more than ORDER_STEPS nodes).
 */
const orderedDefault = perDocument(findOrderedDefault);

function findOrderedDefault(doc: SchemaDocument): DefaultSite {
  if (!holdsPropertyDefault(doc.root, 0)) return undefined;
  const steps: Step[] = [];
  let count = 0;
  let cut = false;
  /** Nodes being followed on the current value (a loop in place ends there), and up the whole stack (recursion through a descent). */
  let inPlace = new Set<object>();
  const stack = new Set<object>();
  const add = (kind: Step['kind'], data: readonly string[], names: readonly string[] | null, pointer: string, value?: unknown) => {
    steps.push({ kind, data, names, pointer, value });
  };
  const descend = (node: unknown, pointer: string, data: readonly string[], key: string, depth: number) => {
    const outer = inPlace;
    inPlace = new Set();
    evaluate(node, pointer, [...data, key], depth + 1);
    inPlace = outer;
  };
  // In ajv's order (ajv 8's RULES): the keywords of every type, then the array and the object keywords, defaults filled first in each.
  const evaluate = (node: unknown, pointer: string, data: readonly string[], depth: number): void => {
    if (cut || !isObject(node) || inPlace.has(node)) return;
    if (stack.has(node) || ++count > ORDER_STEPS || depth > MAX_JSON_DEPTH || node.$dynamicRef !== undefined || node.$recursiveRef !== undefined) {
      cut = true;
      return;
    }
    inPlace.add(node);
    stack.add(node);
    try {
      if (typeof node.$ref === 'string') {
        const target = doc.resolve(node.$ref, node);
        if (target === undefined) add('look', data, null, pointer);
        else evaluate(target, doc.pointerOf(target) ?? `${pointer}/$ref`, data, depth + 1);
      }
      if ('const' in node || 'enum' in node) add('read', data, null, pointer);
      if (node.not !== undefined) evaluate(node.not, `${pointer}/not`, data, depth + 1);
      for (const key of ['anyOf', 'oneOf', 'allOf']) {
        const list = node[key];
        if (Array.isArray(list)) list.forEach((branch, i) => evaluate(branch, `${pointer}/${key}/${i}`, data, depth + 1));
      }
      for (const key of ['if', 'then', 'else']) if (node[key] !== undefined) evaluate(node[key], `${pointer}/${key}`, data, depth + 1);
      if (ARRAY_KEYWORDS.some((key) => Object.hasOwn(node, key))) {
        const tuple = Array.isArray(node.items) ? node.items : undefined;
        tuple?.forEach((entry, i) => {
          if (isObject(entry) && entry.default !== undefined) add('fill', data, [String(i)], `${pointer}/items/${i}/default`, entry.default);
        });
        if (node.maxItems !== undefined || node.minItems !== undefined || node.uniqueItems !== undefined || node.unevaluatedItems !== undefined) add('look', data, null, pointer);
        if (Array.isArray(node.prefixItems)) node.prefixItems.forEach((entry, i) => descend(entry, `${pointer}/prefixItems/${i}`, data, '*', depth));
        if (tuple !== undefined) tuple.forEach((entry, i) => descend(entry, `${pointer}/items/${i}`, data, '*', depth));
        else if (node.items !== undefined) descend(node.items, `${pointer}/items`, data, '*', depth);
        for (const key of ['additionalItems', 'contains', 'unevaluatedItems']) if (node[key] !== undefined) descend(node[key], `${pointer}/${key}`, data, '*', depth);
      }
      if (OBJECT_KEYWORDS.some((key) => Object.hasOwn(node, key))) {
        const properties = isObject(node.properties) ? node.properties : {};
        const names = Object.keys(properties);
        const where = names.map((name) => `${pointer}/properties/${token(name)}`);
        names.forEach((name, i) => {
          const property = properties[name];
          if (isObject(property) && property.default !== undefined) add('fill', data, [name], `${where[i]}/default`, property.default);
        });
        if (Array.isArray(node.required)) add('look', data, node.required.map(String), pointer);
        for (const key of ['maxProperties', 'minProperties', 'propertyNames', 'additionalProperties', 'patternProperties', 'unevaluatedProperties']) if (node[key] !== undefined) add('look', data, null, `${pointer}/${key}`);
        for (const key of ['dependencies', 'dependentRequired', 'dependentSchemas']) {
          const map = node[key];
          if (!isObject(map)) continue;
          for (const [name, dependency] of Object.entries(map)) {
            add('look', data, Array.isArray(dependency) ? [name, ...dependency.map(String)] : [name], `${pointer}/${key}/${token(name)}`);
            if (!Array.isArray(dependency)) evaluate(dependency, `${pointer}/${key}/${token(name)}`, data, depth + 1);
          }
        }
        names.forEach((name, i) => {
          const property = asSchema(properties[name]);
          if (!isEmptySchema(property)) add('look', data, [name], where[i] as string);
          descend(property, where[i] as string, data, name, depth);
        });
        for (const key of ['additionalProperties', 'unevaluatedProperties']) if (node[key] !== undefined) descend(node[key], `${pointer}/${key}`, data, '*', depth);
        if (isObject(node.patternProperties)) for (const [pattern, sub] of Object.entries(node.patternProperties)) descend(sub, `${pointer}/patternProperties/${token(pattern)}`, data, '*', depth);
      }
    } finally {
      stack.delete(node);
    }
  };
  evaluate(doc.root, '', [], 0);
  if (cut) {
    const first = steps.find((step) => step.kind === 'fill');
    return first === undefined ? { pointer: '', value: null } : { pointer: first.pointer, value: first.value };
  }
  const alias = (x: readonly string[], y: readonly string[], length = x.length) => x.length === length && y.length >= length && x.every((seg, i) => seg === y[i] || seg === '*' || y[i] === '*');
  // One pass in ajv's order: each fill against the looks and fills before it (of its name, or
  // of all names), each read against the fills before it.
  const looksAtAll: Step[] = [];
  const looksAt = new Map<string, Step[]>();
  const filled: Step[] = [];
  const filledAt = new Map<string, Step[]>();
  const list = (map: Map<string, Step[]>, name: string): Step[] => {
    let entries = map.get(name);
    if (entries === undefined) map.set(name, (entries = []));
    return entries;
  };
  for (const step of steps) {
    if (step.kind === 'look') {
      if (step.names === null) looksAtAll.push(step);
      else for (const name of step.names) list(looksAt, name).push(step);
    } else if (step.kind === 'read') {
      // An enum or const at a value a default was filled into, or at one enclosing it: it compares the filled value.
      const fill = filled.find((one) => alias(step.data, one.data, step.data.length));
      if (fill !== undefined) return { pointer: fill.pointer, value: fill.value };
    } else {
      const name = (step.names as readonly string[])[0] as string;
      const here = (other: Step) => alias(other.data, step.data, step.data.length);
      const lookedFirst = looksAtAll.some(here) || (looksAt.get(name)?.some(here) ?? false);
      const filledFirst = filledAt.get(name)?.some((one) => here(one) && !same(one.value, step.value)) ?? false;
      if (lookedFirst || filledFirst) return { pointer: step.pointer, value: step.value };
      filled.push(step);
      list(filledAt, name).push(step);
    }
  }
  return undefined;
}

/** Whether a schema holds a property default (or a draft-07 tuple entry's) anywhere: else no order matters. */
function holdsPropertyDefault(node: unknown, depth: number): boolean {
  if (typeof node !== 'object' || node === null || depth > MAX_JSON_DEPTH) return false;
  if (Array.isArray(node)) return node.some((one) => holdsPropertyDefault(one, depth + 1));
  const record = node as Record<string, unknown>;
  if (isObject(record.properties) && Object.values(record.properties).some((p) => isObject(p) && p.default !== undefined)) return true;
  if (Array.isArray(record.items) && record.items.some((p) => isObject(p) && p.default !== undefined)) return true;
  for (const key of Object.keys(record)) if (!VALUE_KEYWORDS.has(key) && holdsPropertyDefault(record[key], depth + 1)) return true;
  return false;
}

function checkSchemaArgument(method: string, name: string, value: unknown): Schema {
  if (typeof value === 'boolean') return value;
  if (isObject(value)) return value;
  throw new TypeError(`${method}(): ${name} must be a JSON Schema (an object or a boolean), got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
}

/**
 * Runs a comparison within a budget for its pattern tests (pattern-match.ts); when it
 * fails (the stack of the recursive walk exhausted, a cycle met), a schema nested deeper than
 * a spec may or holding a cycle is named instead, as a TypeError.
 * Looked for only then: a schema that compares costs nothing more.
 */
function walkable<T>(method: string, schemas: Record<string, Schema>, compare: () => T, budget = new PatternBudget()): T {
  try {
    return withinBudget(budget, compare);
  } catch (error) {
    for (const [name, schema] of Object.entries(schemas)) {
      const problem = typeof schema === 'object' ? nestingProblem(schema, [], []) : undefined;
      if (problem !== undefined) throw new TypeError(`${method}(): ${name} ${problem}`, { cause: error });
    }
    throw error;
  }
}

/**
 * Why a schema cannot be walked, or `undefined`: nesting deeper than a spec may (MAX_JSON_DEPTH),
 * which would exhaust the stack of the recursive comparison, or a cycle (depth first, a cycle
 * runs into that depth at once; only then is the path searched for the repeated object).
 */
function nestingProblem(value: object, path: string[], objects: object[]): string | undefined {
  if (objects.length >= MAX_JSON_DEPTH) {
    const repeat = objects.findIndex((one, i) => objects.indexOf(one, i + 1) !== -1);
    const keys = repeat === -1 ? path : path.slice(0, objects.indexOf(objects[repeat] as object, repeat + 1));
    const pointer = keys.map((key) => `/${token(key)}`).join('');
    const at = pointer.length > 120 ? `${pointer.slice(0, 120)}...` : pointer;
    return repeat === -1 ? `is nested deeper than ${MAX_JSON_DEPTH} levels (at '${at}')` : `holds a cycle, which no JSON text does (at '${at}')`;
  }
  objects.push(value);
  for (const key of Object.keys(value)) {
    const inner = (value as Record<string, unknown>)[key];
    if (typeof inner !== 'object' || inner === null) continue;
    path.push(key);
    const problem = nestingProblem(inner, path, objects);
    if (problem !== undefined) return problem;
    path.pop();
  }
  objects.pop();
  return undefined;
}

function breakingOf(effect: Effect, role: Role): boolean | 'undecidable' {
  const dir = role === 'input' ? effect.in : effect.out;
  return dir === 0 ? false : dir === 2 ? true : 'undecidable';
}

/** The raw differences of two schemas, with a prefix on every path. */
function differencesOf(before: Schema, after: Schema, role: Role, prefix: string): SchemaDifference[] {
  // The same text is the same schema (its refs resolve alike): nothing to walk.
  if (same(before, after)) return [];
  const docBefore = documentOf(before);
  const docAfter = documentOf(after);
  const raws = [...bothReadings(docBefore, docAfter, role)];
  // A side ajv cannot compile validates nothing at run time, whatever the walk read into it.
  for (const [doc, side] of [[docBefore, 'before'], [docAfter, 'after']] as const) {
    const bad = doc.malformed;
    if (bad === null) continue;
    // The walk may have judged that keyword already: then it is that difference, proving nothing.
    const refAt = bad.pointer.endsWith('/$ref') ? bad.pointer.slice(0, -'/$ref'.length) : undefined;
    if (raws.some((raw) => raw.type === 'ref-unresolved' && raw.path === refAt && raw.effect.in === 1 && raw.effect.out === 1)) continue;
    const seen = raws.findIndex((raw) => raw.type === 'keyword-changed' && raw.path === bad.pointer);
    if (seen !== -1) raws[seen] = { ...(raws[seen] as Raw), effect: combine((raws[seen] as Raw).effect, UNDECIDABLE) };
    else raws.push({ type: 'keyword-changed', path: bad.pointer, before: side === 'before' ? bad.value : null, after: side === 'after' ? bad.value : null, effect: UNDECIDABLE });
  }
  // The walk reads every default as filled in; ajv fills none under anyOf/oneOf/not/if/contains
  // (except through a ref it compiles apart), so one there that decides something is undecidable.
  if (role === 'input') {
    for (const [doc, side] of [[docAfter, 'after'], [docBefore, 'before']] as const) {
      const site = inertDefault(doc) ?? orderedDefault(doc);
      if (site === undefined) continue;
      raws.push({ type: 'annotation-changed', path: side === 'after' ? site.pointer : '', before: side === 'before' ? site.value : null, after: side === 'after' ? site.value : null, effect: { in: 1, out: 0 } });
      break;
    }
  }
  const out: SchemaDifference[] = [];
  /** Per enum-value type, place and verdict: the values named, those left out, and where the entry counting them is. */
  const groups = new Map<string, { named: number; omitted: number; rest: number }>();
  let named = 0;
  for (const raw of raws) {
    const type = raw.type;
    const path = prefix + raw.path;
    const breaking = breakingOf(raw.effect, role);
    if (type === 'enum-value-added' || type === 'enum-value-removed') {
      const key = `${type}\u0000${path}\u0000${String(breaking)}`;
      let group = groups.get(key);
      if (group === undefined) groups.set(key, (group = { named: 0, omitted: 0, rest: -1 }));
      if (group.named >= VALUES_LISTED || named >= VALUES_NAMED) {
        // In place of the first value left out; its count is known once every value is seen.
        if (group.rest === -1) group.rest = out.push({ type, path, before: null, after: null, breaking, omitted: 0 }) - 1;
        group.omitted++;
        continue;
      }
      group.named++;
      named++;
    }
    // Copies: the caller's schemas are neither frozen nor shared.
    out.push(Object.freeze({ type, path, before: freezeDeep(structuredClone(raw.before)), after: freezeDeep(structuredClone(raw.after)), breaking }));
  }
  for (const group of groups.values()) {
    if (group.rest !== -1) out[group.rest] = Object.freeze({ ...(out[group.rest] as SchemaDifference), omitted: group.omitted });
  }
  return out;
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
 * 2020-12, 2019-09 or draft-07 by their `$schema`) and lists every difference with a JSON
 * Pointer into `after`. Sound: `compatible: true` (and `breaking: false` on a difference)
 * only when it is proved, with ajv's meaning of "valid"; `$ref`s are followed wherever
 * they are reached (with `$id` scopes), `not` swaps the direction, `enum`/`const` are
 * judged value by value. Equivalent forms compare equal (type arrays and anyOf of types,
 * one-branch combinators, nested allOf, integer bounds, no-op keywords). A property added to
 * an open object (no `additionalProperties: false`) narrows: the old schema let any value
 * through under that name. What the schemas cannot decide (a `pattern` not contained
 * literally, a changed `if`, a keyword this walk does not know) is `'undecidable'` and makes
 * the pair incompatible. Annotations (`description`, `title`, `default`, `examples`…) are
 * reported and never break. The values given are not changed (a deeply frozen schema's
 * analysis is kept for later calls); the answer is deeply frozen. docs/versions.md has the rules.
 * @throws TypeError when a schema is not an object or a boolean
 */
export function compareSchemas(before: unknown, after: unknown): SchemaComparison {
  const a = checkSchemaArgument('compareSchemas', 'before', before);
  const b = checkSchemaArgument('compareSchemas', 'after', after);
  return walkable('compareSchemas', { before: a, after: b }, () => comparison(differencesOf(a, b, 'input', '')));
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
  return compareToolSchemasWithin(before, after, new PatternBudget());
}

/** `compareToolSchemas` within a budget for pattern tests that a batch's comparisons share (versions.ts). */
export function compareToolSchemasWithin(before: ToolSchemas, after: ToolSchemas, budget: PatternBudget): SchemaComparison {
  const inputBefore = checkSchemaArgument('compareToolSchemas', 'before.input_schema', before?.input_schema);
  const inputAfter = checkSchemaArgument('compareToolSchemas', 'after.input_schema', after?.input_schema);
  const outputBefore = checkSchemaArgument('compareToolSchemas', 'before.output_schema', before.output_schema);
  const outputAfter = checkSchemaArgument('compareToolSchemas', 'after.output_schema', after.output_schema);
  const schemas = { 'before.input_schema': inputBefore, 'after.input_schema': inputAfter, 'before.output_schema': outputBefore, 'after.output_schema': outputAfter };
  return walkable(
    'compareToolSchemas',
    schemas,
    () => comparison([...differencesOf(inputBefore, inputAfter, 'input', '/input_schema'), ...differencesOf(outputBefore, outputAfter, 'output', '/output_schema')]),
    budget,
  );
}
