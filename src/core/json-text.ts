// Numbers in JSON text that JavaScript would silently change: JSON.parse rounds
// 18446744073709551615 to 18446744073709552000 and reads 1e400 as Infinity. Such a number
// is refused with its path rather than stored altered (RFC 8785 takes JSON numbers as
// IEEE 754 doubles; I-JSON warns that larger integers are not exact).
import { SnapshotInvalidError, ValidationError } from './errors.js';
import { MAX_LISTED_ISSUES, formatPath } from './issues.js';
import type { RegistryIssue } from './issues.js';

/** One number token of a JSON text whose value a double does not hold as written. */
export interface InexactNumber {
  /** Where it is, as a zod-style path: `['tools', 0, 'spec', 'input_schema', 'maximum']`. */
  readonly path: readonly (string | number)[];
  /** The token as written. */
  readonly token: string;
}

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** The decimal value of a number token as sign, significant digits and exponent (zero has no sign). */
function decimal(token: string): string {
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = NUMBER.exec(token) ?? [];
  let digits = (whole + fraction).replace(/^0+/, '');
  if (digits === '') return '0';
  let power = Number(exponent) - fraction.length;
  const trimmed = digits.replace(/0+$/, '');
  power += digits.length - trimmed.length;
  digits = trimmed;
  return `${sign}${digits}e${power}`;
}

/** Whether the double a token parses to, written back, is the same decimal number (-0 is 0). */
export function isExactNumber(token: string): boolean {
  const value = Number(token);
  return Number.isFinite(value) && decimal(token) === decimal(jsonNumber(value));
}

/** A finite double as JSON writes it, exponent spelled so the NUMBER pattern reads it. */
function jsonNumber(value: number): string {
  return JSON.stringify(value).replace('e+', 'e');
}

// Only a long run of digits or an exponent can be inexact: up to 15 significant digits
// always round-trip through a double. Texts without either skip the scan.
const MAYBE_INEXACT = /[\d.]{16}|\d[eE]/;

/** A key given twice in one object of a JSON text (`JSON.parse` keeps the last value). */
export interface RepeatedKey {
  /** The second occurrence's place, as a zod-style path ending with the key. */
  readonly path: readonly (string | number)[];
  /** The key, unescaped. */
  readonly key: string;
}

/** The index of the quote that closes the string opening at `start` of a valid JSON text. */
function closingQuote(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let backslashes = 0;
    while (text[end - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * One pass over a valid JSON text: its inexact numbers (when `numbers`) and its keys given
 * twice in one object (when `keys`), each with its path.
 */
function scanJson(text: string, want: { numbers: boolean; keys: boolean; limit?: number }): { inexact: InexactNumber[]; repeated: RepeatedKey[]; total: number } {
  const inexact: InexactNumber[] = [];
  const repeated: RepeatedKey[] = [];
  // Each found one's path costs its depth: past `limit` they are only counted.
  const limit = want.limit ?? Infinity;
  let total = 0;
  // One frame per open object (the key being read, and the keys seen) or array (the index being read).
  const frames: { key: string | number; inObject: boolean; expectKey: boolean; seen: Set<string> | undefined }[] = [];
  // Strings are skipped whole (most of a text's bytes); everything else is read a character at a time.
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    if (char === '"') {
      const end = closingQuote(text, i);
      const top = frames.at(-1);
      if (top?.expectKey === true) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        top.key = key;
        if (top.seen !== undefined) {
          if (!top.seen.has(key)) top.seen.add(key);
          else if (total++ < limit) repeated.push({ path: frames.map((frame) => frame.key), key });
        }
      }
      i = end + 1;
    } else if (char === '{' || char === '[') {
      const inObject = char === '{';
      frames.push({ key: 0, inObject, expectKey: inObject, seen: inObject && want.keys ? new Set() : undefined });
      i++;
    } else if (char === '}' || char === ']') {
      frames.pop();
      i++;
    } else if (char === ',') {
      const top = frames.at(-1);
      if (top !== undefined) {
        if (top.inObject) top.expectKey = true;
        else top.key = (top.key as number) + 1;
      }
      i++;
    } else if (char === ':') {
      const top = frames.at(-1);
      if (top !== undefined) top.expectKey = false;
      i++;
    } else if (want.numbers && (char === '-' || (char >= '0' && char <= '9'))) {
      let end = i + 1;
      while (end < text.length && /[\d.eE+-]/.test(text[end] as string)) end++;
      const token = text.slice(i, end);
      if (!isExactNumber(token) && total++ < limit) inexact.push({ path: frames.map((frame) => frame.key), token });
      i = end;
    } else {
      i++;
    }
  }
  return { inexact, repeated, total };
}

/**
 * Every number of a valid JSON text that a double does not hold as written, with its path.
 * Call it after `JSON.parse(text)` succeeded.
 */
export function inexactNumbers(text: string): InexactNumber[] {
  if (!MAYBE_INEXACT.test(text)) return [];
  return scanJson(text, { numbers: true, keys: false }).inexact;
}

function inexactMessage(token: string): string {
  return `the number ${token} cannot be kept exactly (a double holds ${String(Number(token))}); write it as a string`;
}

/**
 * The numbers of a JSON text that `JSON.parse` would change (`18446744073709551615` read as
 * `18446744073709552000`, `1e400` as `Infinity`), as issues naming each one's place
 * (`pathText` such as `input_schema.maximum`), so that such input can be refused rather than
 * stored altered, as the command refuses it. Empty when every number is exact. Call it
 * after `JSON.parse(text)` succeeded; a text without a long number or an exponent costs one
 * regular-expression test.
 */
export function inexactNumberIssues(text: string): RegistryIssue[] {
  return inexactNumbers(text).map(({ path, token }) =>
    Object.freeze({
      code: 'custom',
      message: inexactMessage(token),
      path: Object.freeze([...path]),
      pathText: formatPath(path),
    }),
  );
}

/**
 * The first `limit` inexact numbers and repeated keys (with `keys`) of a JSON text as issues,
 * and how many there are: 170,000 `1e400`s in a 1 MiB body, each listed with its path 60
 * levels deep, took 12 s, 1.7 GB and a 100 MB answer (and ended the server out of memory
 * where nothing bounded the depth: `/mcp`).
 */
function scanIssues(text: string, keys: boolean, limit: number): { issues: RegistryIssue[]; total: number } {
  const numbers = MAYBE_INEXACT.test(text);
  if (!numbers && !keys) return { issues: [], total: 0 };
  const { inexact, repeated, total } = scanJson(text, { numbers, keys, limit });
  const issue = (path: readonly (string | number)[], message: string): RegistryIssue =>
    Object.freeze({ code: 'custom', message, path: Object.freeze([...path]), pathText: formatPath(path) });
  const issues = [
    ...inexact.map(({ path, token }) => issue(path, inexactMessage(token))),
    ...repeated.map(({ path, key }) => issue(path, `the key ${JSON.stringify(key)} is given twice in one object (JSON.parse would keep the last); give it once`)),
  ];
  return { issues, total };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The offset of the first byte that does not begin a well-formed UTF-8 sequence (RFC 3629), or -1. */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] as number;
    if (lead < 0x80) {
      i++;
      continue;
    }
    // The continuation bytes a lead byte needs, and the range its first one must be in (no overlongs, no surrogates, nothing past U+10FFFF).
    const [count, low, high] =
      lead >= 0xc2 && lead <= 0xdf ? [1, 0x80, 0xbf]
      : lead === 0xe0 ? [2, 0xa0, 0xbf]
      : lead === 0xed ? [2, 0x80, 0x9f]
      : lead >= 0xe1 && lead <= 0xef ? [2, 0x80, 0xbf]
      : lead === 0xf0 ? [3, 0x90, 0xbf]
      : lead === 0xf4 ? [3, 0x80, 0x8f]
      : lead >= 0xf1 && lead <= 0xf3 ? [3, 0x80, 0xbf]
      : [0, 0, 0];
    if (count === 0) return i;
    for (let k = 1; k <= count; k++) {
      const next = bytes[i + k];
      if (next === undefined || next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf)) return i;
    }
    i += count + 1;
  }
  return -1;
}

/** The path of the value being written at the end of `text`, the start of a JSON text (a key being written: its object's). */
function pathAtEnd(text: string): (string | number)[] {
  const frames: { key: string | number; inObject: boolean; expectKey: boolean }[] = [];
  let i = 0;
  while (i < text.length) {
    const char = text[i] as string;
    if (char === '{' || char === '[') frames.push({ key: 0, inObject: char === '{', expectKey: char === '{' });
    else if (char === '}' || char === ']') frames.pop();
    else if (char === ',') {
      const top = frames.at(-1);
      if (top !== undefined) {
        if (top.inObject) top.expectKey = true;
        else top.key = (top.key as number) + 1;
      }
    } else if (char === ':') {
      const top = frames.at(-1);
      if (top !== undefined) top.expectKey = false;
    } else if (char === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = frames.at(-1);
      if (end >= text.length) return frames.map((frame) => frame.key).slice(0, top?.expectKey === true ? -1 : undefined);
      if (top?.expectKey === true) {
        try {
          top.key = JSON.parse(text.slice(i, end + 1)) as string;
        } catch {
          top.key = text.slice(i + 1, end);
        }
      }
      i = end;
    }
    i++;
  }
  return frames.map((frame) => frame.key);
}

/** The deepest nesting of arrays and objects in JSON text (strings skipped). */
export function jsonDepth(text: string, stopAt: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > stopAt) return deepest;
    } else if (c === 93 || c === 125) depth--;
  }
  return deepest;
}

/** What `parseJsonBytes` is reading, for its messages and its error. */
export interface JsonBytesOptions {
  /** The input in messages: `standard input`, a file name, `the body`. */
  readonly name: string;
  /** What the text is meant to be: refused as VALIDATION_FAILED (`spec`, the default) or SNAPSHOT_INVALID (`snapshot`). */
  readonly kind?: 'spec' | 'snapshot';
  /**
   * Refuse a key given twice in one object (`{"tool_name":"a","tool_name":"b"}`), which
   * `JSON.parse` would read as its last value: RFC 8259 leaves such text's meaning open and
   * I-JSON (RFC 7493) forbids it. The command's files and standard input set it.
   */
  readonly refuseRepeatedKeys?: boolean;
  /**
   * Refuse text whose arrays and objects nest deeper than this, counted before it is parsed:
   * `JSON.parse` and the checks above cost far more per byte on deep text (a 1 MiB body of
   * 500,000 brackets: 0.5-2 s), and each issue's path is as long as its depth.
   */
  readonly maxDepth?: number;
}

/**
 * Parses JSON bytes as the command and the server read their input: refused, never altered.
 * JSON text is UTF-8 (RFC 8259): bytes that are not (a file saved as Windows-1252 or UTF-16)
 * are refused rather than read as U+FFFD; a leading byte-order mark is skipped; a number a
 * double does not hold as written (18446744073709551616, 1e400) is refused with its path,
 * and so, with `refuseRepeatedKeys`, is a key given twice in one object.
 * @throws VALIDATION_FAILED (`kind` `spec`) or SNAPSHOT_INVALID (`snapshot`), with
 *   `context.path` and `issues` for a number or a repeated key
 */
export function parseJsonBytes(bytes: Uint8Array, options: JsonBytesOptions): unknown {
  const { name, kind = 'spec', refuseRepeatedKeys = false, maxDepth } = options;
  const refuse = (message: string, issues: readonly RegistryIssue[] = [], context: Record<string, unknown> = {}): never => {
    throw kind === 'spec' ? new ValidationError(message, issues, context) : new SnapshotInvalidError(message, issues, context);
  };
  let decoded = '';
  try {
    decoded = UTF8.decode(bytes);
  } catch {
    const offset = invalidUtf8Offset(bytes);
    if (offset < 0) refuse(`${name} is not UTF-8 text (JSON must be); save it as UTF-8`);
    const path = formatPath(pathAtEnd(UTF8.decode(bytes.subarray(0, Math.max(offset, 0)))));
    const byte = `0x${(bytes[offset] ?? 0).toString(16).toUpperCase().padStart(2, '0')}`;
    refuse(`${name} is not UTF-8 text (JSON must be): byte ${byte} at offset ${offset}${path === '' ? '' : `, in ${path}`}; save it as UTF-8`, [], { ...(path === '' ? {} : { path }), offset });
  }
  // Editors on Windows like to start UTF-8 files with a byte-order mark; JSON.parse does not.
  const text = decoded.replace(/^\uFEFF/, '');
  if (maxDepth !== undefined && jsonDepth(text, maxDepth) > maxDepth) refuse(`${name} nests arrays and objects deeper than ${maxDepth} levels`, [], { max_depth: maxDepth });
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    refuse(`${name} is not JSON: ${text.trim() === '' ? 'it is empty' : (error as Error).message}`);
  }
  const { issues, total } = scanIssues(text, refuseRepeatedKeys, MAX_LISTED_ISSUES);
  if (total > 0) {
    const first = issues[0] as RegistryIssue;
    refuse(`${name}: ${first.pathText}: ${first.message}${total > 1 ? ` (and ${total - 1} more${total > issues.length ? `; the first ${issues.length} are listed` : ''})` : ''}`, issues, { path: first.pathText });
  }
  return value;
}
