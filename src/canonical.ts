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

/**
 * Canonical JSON: object keys sorted by code point at every depth, arrays in order, no
 * whitespace. Two specs are identical exactly when their canonical JSON is equal.
 * The input must already be valid JSON data (the contracts check that).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort(compareCodePoints);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += (i === 0 ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(record[key]);
  }
  return out + '}';
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
