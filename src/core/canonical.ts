import { createHash } from 'node:crypto';

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
/** Beyond this nesting a value is taken for a cycle; the contracts refuse far less deep. */
const MAX_CANONICAL_DEPTH = 1000;

function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * Canonical JSON of `value`, or `undefined` when it is not JSON data (a function, NaN, a
 * Date or other class instance, a sparse array, symbol keys, a cycle): such a value has no
 * canonical form, so it can never be identical to a stored spec.
 */
function tryCanonicalJson(value: unknown, depth = 0): string | undefined {
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (depth >= MAX_CANONICAL_DEPTH) return undefined;
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) {
      const item = i in value ? tryCanonicalJson(value[i], depth + 1) : undefined;
      if (item === undefined) return undefined;
      out += (i === 0 ? '' : ',') + item;
    }
    return out + ']';
  }
  if (!isPlainRecord(value)) return undefined;
  const record = value;
  const keys = Object.keys(record).sort(compareCodePoints);
  out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const item = tryCanonicalJson(record[key], depth + 1);
    if (item === undefined) return undefined;
    out += (i === 0 ? '' : ',') + quote(key) + ':' + item;
  }
  return out + '}';
}

/**
 * Canonical JSON: object keys sorted by code point at every depth, arrays in order, no
 * whitespace. Two specs are identical exactly when their canonical JSON is equal.
 * @throws TypeError when the value is not JSON data
 */
export function canonicalJson(value: unknown): string {
  const text = tryCanonicalJson(value);
  if (text === undefined) throw new TypeError('canonicalJson(): the value is not JSON data');
  return text;
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
  if (keys.length !== Object.keys(json).length) return false;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(json, key)) return false;
    if (!jsonEquals(value[key], (json as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** SHA-256 (hex) of a canonical JSON text: a spec's fingerprint. */
export function fingerprintOf(canonical: string): string {
  return createHash('sha256').update(canonical).digest('hex');
}

/** Freezes a value and everything reachable from it (JSON data: no cycles); returns it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
