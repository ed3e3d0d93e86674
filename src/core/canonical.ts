import * as crypto from 'node:crypto';

/** Orders strings by Unicode code point (as SQLite's BINARY collation and Python's `sorted` do). */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after the whole BMP, unlike UTF-16 code units.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** Strings that JSON.stringify would escape; all others are quoted as they are (faster). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
/** A key with a surrogate: only then does UTF-16 order (the default sort) differ from code-point order. */
const SURROGATE = /[\ud800-\udfff]/;
/** Beyond this nesting a value is taken for a cycle; the contracts refuse far less deep. */
const MAX_CANONICAL_DEPTH = 1000;

/**
 * A lone surrogate: half of a UTF-16 pair without its other half (the `u` flag pairs the halves
 * that match). The range is `\p{Cs}`, written out: V8 looks a property up in ICU when it parses it.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
/** `String.prototype.isWellFormed` (ES2024, Node 20+), typed here because the build targets ES2022. */
const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/** Whether a string is well-formed Unicode: SQLite, UTF-8 files and other languages cannot hold a lone surrogate. */
export const isWellFormed: (text: string) => boolean =
  nativeIsWellFormed === undefined ? (text) => !LONE_SURROGATE.test(text) : (text) => nativeIsWellFormed.call(text);

/**
 * What a walk refuses besides non-JSON data. `canonicalJson` takes any JSON; the contracts
 * also refuse lone surrogates, integers beyond what every reader holds exactly and deep nesting.
 */
interface WalkLimits {
  readonly maxDepth: number;
  /** Refuse strings and keys that are not well-formed Unicode. */
  readonly wellFormed: boolean;
  /** The largest magnitude a number may have. */
  readonly maxMagnitude: number;
}

const ANY_JSON: WalkLimits = { maxDepth: MAX_CANONICAL_DEPTH, wellFormed: false, maxMagnitude: Infinity };

/** JSON text of a string, or `undefined` for a lone surrogate when the limits refuse one. */
function quote(text: string, limits: WalkLimits): string | undefined {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  if (limits.wellFormed && !isWellFormed(text)) return undefined;
  return JSON.stringify(text);
}

// Specs repeat the same few keys ("type", "properties", "description"...), so their quoted text
// is kept: a lookup is cheaper than testing and concatenating each time. A key with a surrogate
// is never kept, so a hit is well-formed and sorts alike in UTF-16 and code points.
const QUOTED_KEYS_LIMIT = 4096;
const QUOTED_KEY_MAX_LENGTH = 40;
const quotedKeys = new Map<string, string>();

/** The JSON text of a key without surrogates, kept for the next time. */
function quoteKey(key: string): string {
  const quoted = JSON.stringify(key);
  if (key.length <= QUOTED_KEY_MAX_LENGTH) {
    if (quotedKeys.size >= QUOTED_KEYS_LIMIT) quotedKeys.clear();
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * Canonical JSON of `value`, or `undefined` when it is not JSON data (a function, NaN, a
 * Date or other class instance, a sparse array, symbol keys, a cycle) or breaks `limits`:
 * such a value has no canonical form, so it can never be identical to a stored spec.
 */
function walk(value: unknown, depth: number, limits: WalkLimits): string | undefined {
  switch (typeof value) {
    case 'string':
      return quote(value, limits);
    case 'number':
      // A finite number's JSON text is its ToString (-0 included: both write 0).
      return Number.isFinite(value) && Math.abs(value) <= limits.maxMagnitude ? `${value}` : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (depth >= limits.maxDepth) return undefined;
  let out: string;
  if (Array.isArray(value)) {
    const length = value.length;
    if (length === 0) return '[]';
    out = '[';
    for (let i = 0; i < length; i++) {
      const item = i in value ? walk(value[i], depth + 1, limits) : undefined;
      if (item === undefined) return undefined;
      out += i === 0 ? item : `,${item}`;
    }
    return `${out}]`;
  }
  if (!isPlainRecord(value)) return undefined;
  const keys = Object.keys(value);
  const count = keys.length;
  if (count === 0) return '{}';
  sortUtf16(keys);
  out = '{';
  for (let i = 0; i < count; i++) {
    const key = keys[i] as string;
    let quoted = quotedKeys.get(key);
    if (quoted === undefined) {
      // UTF-16 order is code-point order unless a key has a surrogate (such keys are never kept).
      if (SURROGATE.test(key)) return objectByCodePoints(value, keys, depth, limits);
      quoted = quoteKey(key);
    }
    const item = walk(value[key], depth + 1, limits);
    if (item === undefined) return undefined;
    out += `${i === 0 ? quoted : `,${quoted}`}:${item}`;
  }
  return `${out}}`;
}

/** The canonical text of an object with a surrogate in some key: sorted by code point proper. */
function objectByCodePoints(value: Record<string, unknown>, keys: string[], depth: number, limits: WalkLimits): string | undefined {
  keys.sort(compareCodePoints);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const quoted = quote(key, limits);
    const item = quoted === undefined ? undefined : walk(value[key], depth + 1, limits);
    if (item === undefined) return undefined;
    out += `${i === 0 ? '' : ','}${quoted}:${item}`;
  }
  return `${out}}`;
}

/** Objects this small are sorted in place by insertion, far cheaper than calling Array#sort. */
const INSERTION_SORT_MAX = 24;

/** Sorts strings by UTF-16 code unit, as `Array#sort()` without a comparator does. */
function sortUtf16(keys: string[]): void {
  if (keys.length > INSERTION_SORT_MAX) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
}

/**
 * Canonical JSON: object keys sorted by code point at every depth, arrays in order, no
 * whitespace. Two specs are identical exactly when their canonical JSON is equal.
 * @throws TypeError when the value is not JSON data
 */
export function canonicalJson(value: unknown): string {
  const text = walk(value, 0, ANY_JSON);
  if (text === undefined) throw new TypeError('canonicalJson(): the value is not JSON data');
  return text;
}

/**
 * Canonical JSON of `value` if it is JSON data whose strings and keys are well-formed Unicode,
 * whose numbers are at most `maxMagnitude` and which nests less than `maxDepth` deep (a
 * cycle runs into that depth); otherwise `undefined`. The contracts check a schema with it,
 * so an accepted schema's canonical text comes with the check.
 */
export function acceptedCanonicalJson(value: unknown, maxDepth: number, maxMagnitude: number): string | undefined {
  return walk(value, 0, { maxDepth, wellFormed: true, maxMagnitude });
}

/** A plain object (prototype `Object.prototype` or null) without symbol keys. */
export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && hasPlainPrototype(value) && Object.getOwnPropertySymbols(value).length === 0;
}

/** Whether an object's prototype is `Object.prototype` or null (not an array, Date, Map, class instance...). */
export function hasPlainPrototype(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Whether `value` is JSON data equal to `json` (a parsed JSON value) as canonical JSON
 * would compare them: key order ignored, array order kept. Anything that is not JSON
 * (NaN, undefined, a hole, a class instance, symbol keys) is unequal. The walk follows
 * `json`, which is finite, so a cycle in `value` ends it.
 */
export function jsonEquals(value: unknown, json: unknown): boolean {
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'number') return Number.isFinite(value) && value === json;
    return (typeof value === 'string' || typeof value === 'boolean' || value === null) && value === json;
  }
  if (typeof json !== 'object' || json === null) return false;
  if (Array.isArray(value)) {
    if (!Array.isArray(json) || value.length !== json.length) return false;
    for (let i = 0; i < value.length; i++) if (!(i in value) || !jsonEquals(value[i], json[i])) return false;
    return true;
  }
  if (Array.isArray(json) || !isPlainRecord(value)) return false;
  const keys = Object.keys(value);
  const jsonKeys = Object.keys(json);
  if (keys.length !== jsonKeys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    // Specs come back in the order they were registered, so a key usually stands where it
    // stood; only a key out of place needs the lookup.
    if (key !== jsonKeys[i] && !Object.prototype.hasOwnProperty.call(json, key)) return false;
    if (!jsonEquals(value[key], (json as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** SHA-256 (hex) of a canonical JSON text: a spec's fingerprint. */
export function fingerprintOfCanonical(canonical: string): string {
  return sha256Hex(canonical);
}

// crypto.hash (Node 20.12+, 21.7+) hashes in one call, about twice as fast as a Hash object
// for a spec-sized text; older Node 20 releases lack it.
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

/**
 * A deeply frozen copy of JSON data, equal to `deepFreeze(JSON.parse(JSON.stringify(value)))`
 * (the same keys in the same order, -0 written as 0) without the text in between. Only for
 * data the contracts accepted: no cycles, no holes, finite numbers, plain objects.
 */
export function frozenJsonCopy<T>(value: T): T {
  return copyJson(value) as T;
}

function copyJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value === 0 ? 0 : value;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = copyJson(value[i]);
    return Object.freeze(copy);
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copyJson((value as Record<string, unknown>)[key]);
    // Assigning `__proto__` would set the prototype; JSON.parse makes it an own key.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return Object.freeze(copy);
}

/** Freezes a value and everything reachable from it (JSON data: no cycles); returns it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') freezeObject(value);
  return value;
}

// Only objects are visited (strings and numbers are skipped by the caller), arrays by index.
function freezeObject(value: object): void {
  Object.freeze(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item !== null && typeof item === 'object') freezeObject(item);
    }
    return;
  }
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== null && typeof item === 'object') freezeObject(item);
  }
}
