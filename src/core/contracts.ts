import { z } from 'zod';
import { acceptedCanonicalJson, hasPlainPrototype, isPlainRecord, isWellFormed } from './canonical.js';
import { previewValue } from './issues.js';

/** A JSON value as the contracts accept it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** A plain object whose values are JSON. */
export type JsonObject = { [key: string]: JsonValue };

/** The MCP tool-name rule (specification of 2025-11-25): 1-128 of `A-Z a-z 0-9 _ - .`. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** Deeper nesting than this is refused rather than risk a stack overflow. */
export const MAX_JSON_DEPTH = 256;

const LONE_SURROGATE_MESSAGE = 'must be well-formed Unicode: it contains a lone surrogate (half of a UTF-16 pair)';

/**
 * Whether a version can be stored by every store: well-formed Unicode without U+0000. Other
 * text (description, tags, the schemas) may hold U+0000: stores keep it escaped in the spec's JSON text.
 */
function isStorableVersion(text: string): boolean {
  return isWellFormed(text) && hasNoNul(text);
}

/** A refinement's message that also shows the offending value (zod leaves it out of custom issues). */
function withValue(message: string): (issue: { readonly input?: unknown }) => string {
  return (issue) => `${message} (got ${previewValue(issue.input)})`;
}

function hasNoNul(text: string): boolean {
  return !text.includes('\u0000');
}

/**
 * The largest integer every JSON reader holds exactly (RFC 8785, I-JSON: 2^53 - 1): the
 * bound on numbers in a new spec. A registration a store holds (a snapshot entry, a stored
 * row) may hold any finite number: see `StoredJsonObjectSchema`.
 */
export const MAX_EXACT_INTEGER = Number.MAX_SAFE_INTEGER;

type JsonProblem = { path: (string | number)[]; message: string };

/**
 * Walks a value and reports every place that is not JSON the contracts accept (numbers up to
 * `maxMagnitude`); shared references are fine, cycles are not.
 */
export function findJsonProblems(root: unknown, maxMagnitude: number = MAX_EXACT_INTEGER): JsonProblem[] {
  const problems: JsonProblem[] = [];
  const ancestors = new Set<object>();
  // One path array, pushed and popped as the walk goes; copied only into a problem.
  const path: (string | number)[] = [];
  const report = (message: string): void => {
    problems.push({ path: path.slice(), message });
  };
  const walk = (value: unknown): void => {
    if (problems.length >= 20) return;
    switch (typeof value) {
      case 'string':
        if (!isWellFormed(value)) report(`${LONE_SURROGATE_MESSAGE} (got ${previewValue(value)})`);
        return;
      case 'boolean':
        return;
      case 'number':
        if (!Number.isFinite(value)) report(`not a JSON value: ${previewValue(value)}`);
        else if (Math.abs(value) > maxMagnitude) {
          // Every double this large is an integer; beyond 2^53 - 1 readers round it (JSON text
          // such as 18446744073709551615 arrives here already rounded to 18446744073709552000).
          report(`${value} is beyond the integers JSON holds exactly (±${MAX_EXACT_INTEGER}, RFC 8785 / I-JSON); write it as a string`);
        }
        return;
      case 'object':
        break;
      default:
        report(`not a JSON value: ${previewValue(value)}`);
        return;
    }
    if (value === null) return;
    if (ancestors.has(value)) {
      report('not a JSON value: a cycle (the object contains itself)');
      return;
    }
    if (path.length >= MAX_JSON_DEPTH) {
      report(`nested deeper than ${MAX_JSON_DEPTH} levels`);
      return;
    }
    ancestors.add(value);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        if (!(i in value)) report('not a JSON value: a hole in a sparse array');
        else walk(value[i]);
        path.pop();
      }
    } else if (!hasPlainPrototype(value)) {
      report(`not a JSON value: ${previewValue(value)}; only plain objects are allowed`);
    } else {
      if (Object.getOwnPropertySymbols(value).length > 0) report('not a JSON value: an object with symbol keys');
      for (const key of Object.keys(value)) {
        path.push(key);
        if (!isWellFormed(key)) report(`the key ${LONE_SURROGATE_MESSAGE} (got ${previewValue(key)})`);
        walk((value as Record<string, unknown>)[key]);
        path.pop();
      }
    }
    ancestors.delete(value);
  };
  walk(root);
  return problems;
}

/** Where the schema check leaves each accepted schema's canonical text, while `parseWithSchemaTexts` runs. */
let schemaTexts: Map<object, string> | undefined;

/**
 * Runs a zod parse whose schemas include `JsonObjectSchema` and returns, with its result,
 * the canonical JSON of every schema it accepted, by object. The check writes that text as
 * it walks the schema, so preparing a spec after validation does not walk it again.
 */
export function parseWithSchemaTexts<T>(parse: () => T): { readonly result: T; readonly schemaTexts: ReadonlyMap<object, string> } {
  const outer = schemaTexts;
  const texts = new Map<object, string>();
  schemaTexts = texts;
  try {
    return { result: parse(), schemaTexts: texts };
  } finally {
    schemaTexts = outer;
  }
}

/** A plain JSON object whose numbers are at most `maxMagnitude`. */
function jsonObjectSchema(maxMagnitude: number) {
  return z.custom<JsonObject>().superRefine((value, ctx) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: `expected a JSON object, got ${previewValue(value)}`, input: value });
      return;
    }
    // One plain walk accepts the common case, a valid schema, and writes its canonical text;
    // only what it refuses is walked again to say what is wrong and where.
    const text = acceptedCanonicalJson(value, MAX_JSON_DEPTH, maxMagnitude);
    if (text !== undefined) {
      schemaTexts?.set(value, text);
      return;
    }
    for (const problem of findJsonProblems(value, maxMagnitude)) {
      ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path, input: value });
    }
  });
}

/** A plain JSON object (an `input_schema` or `output_schema` of a new spec): numbers within ±(2^53 - 1). */
export const JsonObjectSchema = jsonObjectSchema(MAX_EXACT_INTEGER);

/**
 * A schema as a store holds it (in a registration, a snapshot, a stored row): any finite
 * number. The first releases stored numbers beyond ±(2^53 - 1), and a restore must take back
 * what a store holds; every finite double reads back from its JSON text as the same double
 * (docs/contract.md, "Numbers beyond ±(2^53 - 1)").
 */
export const StoredJsonObjectSchema = jsonObjectSchema(Infinity);

/** A string of well-formed Unicode. */
const Text = z.string().refine(isWellFormed, { error: withValue(LONE_SURROGATE_MESSAGE) });
/**
 * Text a store keeps in a text column of its own (`what` it is, for the message): well-formed
 * Unicode without U+0000, which PostgreSQL text cannot hold. Refused, never altered.
 */
export function storableText(what: string): typeof Text {
  return Text.refine(hasNoNul, { error: withValue(`must not contain U+0000 (NUL): every store keeps ${what} in a text column, and PostgreSQL text cannot hold it`) });
}

/** A version: well-formed Unicode without U+0000 (`isStorableVersion`). */
const VersionText = storableText('the version');

/** A tool specification: what an agent needs to call a tool. Unknown fields are an error. */
export const ToolSpec = z.strictObject({
  tool_name: z
    .string()
    .regex(TOOL_NAME_PATTERN, { error: 'must be 1-128 characters of A-Z a-z 0-9 _ - . (the MCP tool-name rule)' }),
  version: VersionText.nullable().default(null),
  description: Text.nullable().default(null),
  input_schema: JsonObjectSchema,
  output_schema: JsonObjectSchema,
  tags: z.array(z.string().min(1, { error: 'must be a non-empty string' }).refine(isWellFormed, { error: withValue(LONE_SURROGATE_MESSAGE) })).default([]),
});
export type ToolSpec = z.output<typeof ToolSpec>;
/** A spec as a store holds it: a `ToolSpec` whose schemas may hold any finite number (`StoredJsonObjectSchema`). */
const StoredToolSpec = ToolSpec.extend({ input_schema: StoredJsonObjectSchema, output_schema: StoredJsonObjectSchema });
/** What `register` accepts: defaults may be left out. */
export type ToolSpecInput = z.input<typeof ToolSpec>;

/** The contract's fields in contract order (defaults the caller left out are added in this order). */
export const SPEC_FIELD_ORDER = Object.keys(ToolSpec.shape) as readonly (keyof ToolSpec)[];
/** The contract's fields: any other key makes an input not a spec. */
export const SPEC_FIELDS: ReadonlySet<string> = new Set(SPEC_FIELD_ORDER);

/**
 * `ToolSpec.safeParse(input)` for the common case, a plain object that is a valid spec,
 * without zod's machinery (about 2 µs of the 9.7 µs preparing a spec cost): the same data in the
 * same shape, with the canonical text of its schemas. `undefined` means "not certainly
 * valid": the caller then runs zod, which stays the validator of record and says what is
 * wrong. It accepts only what zod accepts (test/core/contracts.test.ts checks both agree).
 */
export function acceptToolSpec(
  input: unknown,
  /** The bound on numbers: a new spec's (the default), or `Infinity` for a spec a store holds (`StoredToolSpec`). */
  maxMagnitude: number = MAX_EXACT_INTEGER,
): { readonly data: ToolSpec; readonly schemaTexts: Map<object, string> } | undefined {
  if (!isPlainRecord(input)) return undefined;
  // zod's strict check walks the keys with for...in (inherited enumerable ones included).
  for (const key in input) if (!SPEC_FIELDS.has(key)) return undefined;
  const { tool_name: toolName, version = null, description = null, input_schema: inputSchema, output_schema: outputSchema, tags = [] } = input;
  if (typeof toolName !== 'string' || !TOOL_NAME_PATTERN.test(toolName)) return undefined;
  if (!(version === null || (typeof version === 'string' && isStorableVersion(version)))) return undefined;
  if (!isTextOrNull(description) || !Array.isArray(tags)) return undefined;
  const tagsOut = new Array<string>(tags.length);
  for (let i = 0; i < tags.length; i++) {
    const tag: unknown = tags[i];
    if (typeof tag !== 'string' || tag.length === 0 || !isWellFormed(tag)) return undefined;
    tagsOut[i] = tag;
  }
  const schemaTexts = new Map<object, string>();
  for (const schema of [inputSchema, outputSchema]) {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
    const text = acceptedCanonicalJson(schema, MAX_JSON_DEPTH, maxMagnitude);
    if (text === undefined) return undefined;
    schemaTexts.set(schema, text);
  }
  const data = {
    tool_name: toolName,
    version,
    description,
    input_schema: inputSchema as JsonObject,
    output_schema: outputSchema as JsonObject,
    tags: tagsOut,
  };
  return { data, schemaTexts };
}

function isTextOrNull(value: unknown): value is string | null {
  return value === null || (typeof value === 'string' && isWellFormed(value));
}

const DATE_TIME_MESSAGE = 'must be an ISO 8601 date-time with Z or a numeric offset, such as 2025-01-31T12:00:00+00:00';
const isoDateTime = z.iso.datetime({ offset: true });
/**
 * An offset with seconds, and microseconds after them, which `isoformat()` writes for a zone
 * whose offset is not whole minutes (local mean time before 1900, such as +05:53:28 for
 * Kolkata); zod's ISO check knows hours and minutes only.
 */
const SECONDS_OFFSET = /^(.+)[+-]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?$/;

function isIsoDateTime(text: string): boolean {
  if (isoDateTime.safeParse(text).success) return true;
  const match = SECONDS_OFFSET.exec(text);
  return match !== null && isoDateTime.safeParse(`${match[1] as string}Z`).success;
}

/**
 * An ISO 8601 date-time with `Z` or a numeric offset and any number of fractional digits,
 * as Python's `isoformat()` writes it (an offset with seconds included). Kept verbatim, never
 * reformatted.
 */
export const IsoDateTime = z.string({ error: DATE_TIME_MESSAGE }).refine(isIsoDateTime, { error: withValue(DATE_TIME_MESSAGE) });

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const SUNSET_MESSAGE = 'must be an ISO 8601 date (2026-12-31) or date-time with Z or a numeric offset';

/** An ISO 8601 calendar date (`YYYY-MM-DD`) that exists. */
function isIsoDate(text: string): boolean {
  const match = ISO_DATE.exec(text);
  if (match === null) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** When a tool stops being offered: an ISO 8601 date (from its start, UTC) or date-time. Kept verbatim. */
export const Sunset = z.string({ error: SUNSET_MESSAGE }).refine((text) => isIsoDate(text) || isIsoDateTime(text), { error: withValue(SUNSET_MESSAGE) });

/**
 * Why a tool should no longer be used (issue 27): a message for people and models, the tool
 * to use instead, and when it stops being offered. Unknown fields are an error.
 */
export const Deprecation = z.strictObject({
  // U+0000: SQLite's CHECK counted '\u0000' as empty (a 500), and PostgreSQL text cannot hold it.
  message: storableText('the message').min(1, { error: 'must be a non-empty string' }),
  replacement: z
    .string()
    .regex(TOOL_NAME_PATTERN, { error: 'must be a tool name: 1-128 characters of A-Z a-z 0-9 _ - . (the MCP tool-name rule)' })
    .nullable()
    .default(null),
  sunset: Sunset.nullable().default(null),
});
export type Deprecation = z.output<typeof Deprecation>;
export type DeprecationInput = z.input<typeof Deprecation>;

/**
 * The first moment a sunset date-time or date (its start, UTC) has passed, in ms since the
 * epoch; `undefined` for text that is neither.
 */
export function sunsetTime(sunset: string): number | undefined {
  if (isIsoDate(sunset)) return Date.parse(`${sunset}T00:00:00Z`);
  const ms = Date.parse(sunset);
  if (!Number.isNaN(ms)) return ms;
  // An offset with seconds (isoformat() before 1900): seconds dropped, as Date.parse cannot read them.
  const match = /^(.+[+-]\d{2}:\d{2}):\d{2}(\.\d+)?$/.exec(sunset);
  return match === null ? undefined : Date.parse(match[1] as string);
}

/** Whether a deprecation's sunset has passed at `now` (ms): from then on the runtime no longer offers the tool, and the exports leave it out. */
export function isPastSunset(deprecation: { readonly sunset: string | null } | null, now: number): boolean {
  if (deprecation === null || deprecation.sunset === null) return false;
  const at = sunsetTime(deprecation.sunset);
  return at !== undefined && now >= at;
}

/**
 * A stored tool: its spec, whether it is enabled, when this spec was registered, and its
 * deprecation (`null`: not deprecated).
 */
export const ToolRegistration = z.strictObject({
  spec: StoredToolSpec,
  enabled: z.boolean().default(true),
  created_at: IsoDateTime.nullable().default(null),
  deprecation: Deprecation.nullable().default(null),
});
export type ToolRegistration = z.output<typeof ToolRegistration>;
export type ToolRegistrationInput = z.input<typeof ToolRegistration>;

const REGISTRATION_KEYS = new Set(Object.keys(ToolRegistration.shape));

/** `ToolRegistration.safeParse(input)` for the common case, as `acceptToolSpec` does for a spec. */
export function acceptToolRegistration(
  input: unknown,
): { readonly data: ToolRegistration; readonly schemaTexts: Map<object, string> } | undefined {
  if (!isPlainRecord(input)) return undefined;
  for (const key in input) if (!REGISTRATION_KEYS.has(key)) return undefined;
  const { spec, enabled = true, created_at: createdAt = null, deprecation = null } = input;
  const accepted = acceptToolSpec(spec, Infinity);
  if (accepted === undefined || typeof enabled !== 'boolean') return undefined;
  if (createdAt !== null && !IsoDateTime.safeParse(createdAt).success) return undefined;
  // A deprecated entry is rare in a snapshot: zod checks it.
  if (deprecation !== null) return undefined;
  return { data: { spec: accepted.data, enabled, created_at: createdAt as string | null, deprecation: null }, schemaTexts: accepted.schemaTexts };
}

/**
 * A registration as a snapshot holds it: `deprecation` is written only when set (a snapshot
 * without deprecations stays readable by the Python registry), so it may be left out.
 */
export const SnapshotRegistration = ToolRegistration.extend({ deprecation: Deprecation.nullable().optional() });

/** The whole registry as data: the wire format of export and import. */
export const ToolRegistrySnapshot = z.strictObject({
  tools: z.array(SnapshotRegistration),
});
export type ToolRegistrySnapshot = z.output<typeof ToolRegistrySnapshot>;
export type ToolRegistrySnapshotInput = z.input<typeof ToolRegistrySnapshot>;
