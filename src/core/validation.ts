import { canonicalJson, deepFreeze, fingerprintOfCanonical, frozenJsonCopy, isPlainRecord, jsonEquals } from './canonical.js';
import { z } from 'zod';
import type { Deprecation, ToolSpecInput } from './contracts.js';
import {
  Deprecation as DeprecationSchema,
  acceptToolRegistration,
  acceptToolSpec,
  parseWithSchemaTexts,
  SPEC_FIELD_ORDER,
  SPEC_FIELDS,
  ToolRegistration,
  ToolRegistrySnapshot,
  ToolSpec,
} from './contracts.js';
import { DuplicateToolError, SnapshotInvalidError, ValidationError } from './errors.js';
import { MAX_LISTED_ISSUES, describeIssues, toRegistryIssues } from './issues.js';
import type { RegistryIssue } from './issues.js';

/** A validated spec reduced to what stores write: its canonical JSON and fingerprint. */
export interface PreparedSpec {
  readonly tool_name: string;
  readonly version: string | null;
  /** Canonical JSON of the whole spec, defaults applied. */
  readonly canonical: string;
  /** SHA-256 of `canonical`. */
  readonly fingerprint: string;
  /** The spec's JSON text as given: the caller's key order at every depth, defaults after the given keys. */
  readonly json: string;
  /**
   * The deeply frozen spec, equal to `materializeSpec(json)`: copied while the validated
   * input is at hand, which costs half of parsing `json` again.
   */
  readonly spec: ToolSpec;
}

/**
 * One entry of a validated snapshot, with where it stood (`tools[3]`): what the import's plan
 * needs, and no spec text. An import holds every entry until it writes; the text is built
 * again entry by entry as it writes (`snapshotEntryJson`), so only a chunk of texts is alive.
 */
export interface PreparedImportEntry extends Omit<PreparedSpec, 'canonical' | 'json' | 'spec'> {
  readonly enabled: boolean;
  readonly created_at: string | null;
  /** Frozen; null when the entry has none. */
  readonly deprecation: Deprecation | null;
  readonly path: string;
}

/**
 * The spec as registered: the caller's keys in the caller's order (the schemas are the
 * caller's own objects, so their nested order is kept too), then the defaults it left out.
 */
function registeredSpec(spec: ToolSpec, input: unknown): ToolSpec {
  // The parsed spec holds every field in contract order: when the caller's keys are a prefix
  // of that order (all of it, usually), it is already the registered order.
  if (isContractOrderPrefix(Object.keys(input as object))) return spec;
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(input as object)) ordered[key] = spec[key as keyof ToolSpec];
  for (const key of SPEC_FIELD_ORDER) if (!(key in ordered)) ordered[key] = spec[key];
  return ordered as ToolSpec;
}

function isContractOrderPrefix(keys: readonly string[]): boolean {
  for (let i = 0; i < keys.length; i++) if (keys[i] !== SPEC_FIELD_ORDER[i]) return false;
  return true;
}

/**
 * canonicalJson of a parsed spec: its fields are known, so only the schemas need sorting,
 * and their text is the one their check wrote (`parseWithSchemaTexts`).
 */
function canonicalSpecJson(spec: ToolSpec, schemaTexts: ReadonlyMap<object, string>): string {
  return (
    `{"description":${spec.description === null ? 'null' : JSON.stringify(spec.description)}` +
    `,"input_schema":${schemaTexts.get(spec.input_schema) ?? canonicalJson(spec.input_schema)}` +
    `,"output_schema":${schemaTexts.get(spec.output_schema) ?? canonicalJson(spec.output_schema)}` +
    `,"tags":${canonicalJson(spec.tags)}` +
    // The tool-name rule allows no character that JSON escapes.
    `,"tool_name":"${spec.tool_name}"` +
    `,"version":${spec.version === null ? 'null' : JSON.stringify(spec.version)}}`
  );
}

/** Validates one spec (zod, unless the common case is certainly valid); on success, also the canonical text of its schemas. */
function parseToolSpec(input: unknown) {
  const accepted = acceptToolSpec(input);
  if (accepted !== undefined) return { success: true as const, ...accepted };
  const { result, schemaTexts } = parseWithSchemaTexts(() => ToolSpec.safeParse(input));
  return result.success ? { success: true as const, data: result.data, schemaTexts } : result;
}

function prepare(spec: ToolSpec, input: unknown, schemaTexts: ReadonlyMap<object, string>): PreparedSpec {
  const canonical = canonicalSpecJson(spec, schemaTexts);
  const registered = registeredSpec(spec, input);
  return {
    tool_name: spec.tool_name,
    version: spec.version,
    canonical,
    fingerprint: fingerprintOfCanonical(canonical),
    json: JSON.stringify(registered),
    spec: frozenJsonCopy(registered),
  };
}

/**
 * Builds the deeply frozen spec object handed to callers from its stored JSON text, keeping
 * the text's key order (what was registered; rows stored before key order was kept are
 * canonical, and come back so). Every store goes through here. JSON.parse also keeps a key
 * named `__proto__` as ordinary data.
 */
export function materializeSpec(json: string): ToolSpec {
  return deepFreeze(JSON.parse(json) as ToolSpec);
}

/** A frozen registration in contract field order (`deprecation` must be frozen already, or null). */
export function makeRegistration(spec: ToolSpec, enabled: boolean, createdAt: string | null, deprecation: Deprecation | null): ToolRegistration {
  return Object.freeze({ spec, enabled, created_at: createdAt, deprecation });
}

/** A frozen deprecation in contract field order, from stored fields (a store's row). */
export function makeDeprecation(message: string, replacement: string | null, sunset: string | null): Deprecation {
  return Object.freeze({ message, replacement, sunset });
}

/**
 * Validates what `deprecate()` was given (defaults applied, frozen).
 * @throws VALIDATION_FAILED naming every bad field (`message`, `replacement`, `sunset`)
 */
export function parseDeprecation(toolName: string, input: unknown): Deprecation {
  const result = DeprecationSchema.safeParse(input);
  if (!result.success) {
    const issues = toRegistryIssues(result.error.issues);
    throw new ValidationError(`invalid deprecation of tool ${JSON.stringify(toolName)}: ${describeIssues(issues, input)}`, issues, {
      tool_name: toolName,
      path: (issues[0] as RegistryIssue).pathText,
    });
  }
  const { message, replacement, sunset } = result.data;
  return makeDeprecation(message, replacement, sunset);
}

/**
 * A registration as a snapshot writes it: `deprecation` only when set, so a snapshot without
 * deprecations stays readable by the Python registry.
 */
export function snapshotRegistration(registration: ToolRegistration): ToolRegistration | Omit<ToolRegistration, 'deprecation'> {
  if (registration.deprecation !== null) return registration;
  return Object.freeze({ spec: registration.spec, enabled: registration.enabled, created_at: registration.created_at });
}

/**
 * Whether `input`, with the contract's defaults applied, is the stored spec: the same as
 * comparing canonical JSON (rule 2's identity), but without validating, building the text
 * or hashing it, so an identical re-register costs a comparison. Anything that is not JSON
 * data, or carries an unknown field, is never the stored (valid) spec.
 */
export function isStoredSpec(input: unknown, stored: ToolSpec): boolean {
  if (!isPlainRecord(input)) return false;
  for (const key of Object.keys(input)) if (!SPEC_FIELDS.has(key)) return false;
  const { tool_name: toolName, version = null, description = null, tags = [], input_schema, output_schema } = input;
  return (
    toolName === stored.tool_name &&
    version === stored.version &&
    description === stored.description &&
    jsonEquals(tags, stored.tags) &&
    jsonEquals(input_schema, stored.input_schema) &&
    jsonEquals(output_schema, stored.output_schema)
  );
}

/**
 * A spec's fingerprint, exactly as the registry stores it (`HistoryEntry.fingerprint`, the
 * `fingerprint` column): the SHA-256 (hex) of its canonical JSON, the contract's defaults
 * applied, so key order and left-out defaults do not matter. A string is taken for canonical
 * JSON text already (`canonicalJson` of a complete spec) and hashed as it is.
 * @throws VALIDATION_FAILED when `spec` is not a string and not a valid `ToolSpec`
 */
export function fingerprintOf(spec: ToolSpecInput | string): string {
  return typeof spec === 'string' ? fingerprintOfCanonical(spec) : parseSpec(spec).fingerprint;
}

/** Validates a spec for `register`; throws `VALIDATION_FAILED` naming every bad field and value. */
export function parseSpec(input: unknown): PreparedSpec {
  const result = parseToolSpec(input);
  if (!result.success) {
    const issues = toRegistryIssues(result.error.issues);
    const name = toolNameOf(input);
    throw new ValidationError(
      `invalid tool spec${name === undefined ? '' : ` ${JSON.stringify(name)}`}: ${describeIssues(issues, input)}${listedNote(issues.length, false)}`,
      issues.slice(0, MAX_LISTED_ISSUES),
      name === undefined ? {} : { tool_name: name },
    );
  }
  return prepare(result.data, input, result.schemaTexts);
}

/**
 * Validates a batch for `registerMany`: every bad spec is reported in one
 * `VALIDATION_FAILED`, each issue's path prefixed with the index (`[2].version`); a name
 * given twice is `DUPLICATE_TOOL`.
 */
export function parseSpecs(inputs: readonly unknown[]): PreparedSpec[] {
  const issues: RegistryIssue[] = [];
  let firstBadName: string | undefined;
  const prepared: (PreparedSpec | undefined)[] = [];
  let stopped = false;
  // Index by index, so holes of a sparse batch are reported (as undefined), not skipped.
  for (let index = 0; index < inputs.length; index++) {
    const input = inputs[index];
    const result = parseToolSpec(input);
    if (result.success) {
      prepared.push(prepare(result.data, input, result.schemaTexts));
      continue;
    }
    if (issues.length === 0) firstBadName = toolNameOf(input);
    issues.push(...toRegistryIssues(result.error.issues, [index]));
    // The batch is refused anyway: checking every entry of a hostile one cost 33 µs each.
    stopped = issues.length >= MAX_LISTED_ISSUES && index < inputs.length - 1;
    if (stopped) break;
  }
  if (issues.length > 0) {
    throw new ValidationError(`invalid tool specs: ${describeIssues(issues, inputs)}${listedNote(issues.length, stopped)}`, issues.slice(0, MAX_LISTED_ISSUES), {
      path: (issues[0] as RegistryIssue).pathText,
      ...(firstBadName === undefined ? {} : { tool_name: firstBadName }),
    });
  }
  const seen = new Map<string, string>();
  return (prepared as PreparedSpec[]).map((spec, index) => {
    const path = `[${index}]`;
    const earlier = seen.get(spec.tool_name);
    if (earlier !== undefined) throw new DuplicateToolError(spec.tool_name, path, earlier);
    seen.set(spec.tool_name, path);
    return spec;
  });
}

/**
 * Checks specs as `register` (one spec) or `registerMany` (an array) would, without a
 * registry: for refusing bad input before a database is opened or a request is sent.
 * @returns the specs as they would be registered (defaults applied, the caller's key order,
 *   deeply frozen), in the given order
 * @throws VALIDATION_FAILED naming every bad field and value (in an array, prefixed with the
 *   index: `[2].version`); DUPLICATE_TOOL for a name an array gives twice
 */
export function validateSpecs(input: unknown): ToolSpec[] {
  return (Array.isArray(input) ? parseSpecs(input) : [parseSpec(input)]).map((prepared) => prepared.spec);
}

/**
 * Checks a snapshot as `importSnapshot` would, without a registry: for refusing bad input
 * before a database is opened or a request is sent.
 * @returns the snapshot's tool names, in its order
 * @throws SNAPSHOT_INVALID naming every bad entry's path (`tools[3].spec.version`);
 *   DUPLICATE_TOOL for a name given twice
 */
export function validateSnapshot(input: unknown): string[] {
  return parseSnapshot(input).map((entry) => entry.tool_name);
}

/**
 * Validates a whole snapshot for `importSnapshot`: `SNAPSHOT_INVALID` with every issue's
 * path (`tools[3].spec.version`), or `DUPLICATE_TOOL` for a name given twice.
 */
export function parseSnapshot(input: unknown): PreparedImportEntry[] {
  const tools = snapshotTools(input);
  // Entry by entry, so only one parsed copy is alive at a time: an import of 100k tools
  // holds the caller's object and the prepared texts, not a second parsed snapshot.
  const issues: RegistryIssue[] = [];
  let firstBadName: string | undefined;
  let duplicate: DuplicateToolError | undefined;
  const seen = new Map<string, string>();
  const entries: PreparedImportEntry[] = [];
  let stopped = false;
  for (let index = 0; index < tools.length; index++) {
    const checked = checkSnapshotEntry(tools[index], index);
    if (!checked.ok) {
      if (issues.length === 0) firstBadName = checked.toolName;
      issues.push(...checked.issues);
      // The snapshot is refused anyway (see parseSpecs).
      stopped = issues.length >= MAX_LISTED_ISSUES && index < tools.length - 1;
      if (stopped) break;
      continue;
    }
    const toolName = checked.registration.spec.tool_name;
    const path = `tools[${index}]`;
    const earlier = seen.get(toolName);
    if (earlier !== undefined) duplicate ??= new DuplicateToolError(toolName, path, earlier);
    seen.set(toolName, path);
    // Once the snapshot is refused anyway, entries are only checked, not prepared.
    if (issues.length === 0 && duplicate === undefined) entries.push(prepareSnapshotEntry(checked, path));
  }
  if (issues.length > 0) throw snapshotInvalid(issues, input, firstBadName, stopped);
  if (duplicate !== undefined) throw duplicate;
  return entries;
}

/**
 * The `tools` array of a snapshot whose outer shape is valid (an object with exactly a
 * `tools` array); each entry is then checked on its own.
 * @throws SNAPSHOT_INVALID for any other shape
 */
function snapshotTools(input: unknown): readonly unknown[] {
  const shape = snapshotShapeSchema().safeParse(input);
  if (!shape.success) throw snapshotInvalid(toRegistryIssues(shape.error.issues), input, undefined);
  return shape.data.tools;
}

/** An invalid snapshot entry: every issue (paths from the snapshot's root, `tools[3].spec.version`) and its tool name when it has a string one. */
interface SnapshotEntryFailure {
  readonly ok: false;
  readonly issues: RegistryIssue[];
  readonly toolName: string | undefined;
}

/** A valid snapshot entry, with the canonical text of its schemas written by their check. */
interface CheckedSnapshotEntry {
  readonly ok: true;
  readonly registration: ToolRegistration;
  readonly schemaTexts: ReadonlyMap<object, string>;
}

/** Validates the snapshot entry `tools[index]` on its own; duplicate names across entries are the caller's to find. */
function checkSnapshotEntry(entry: unknown, index: number): CheckedSnapshotEntry | SnapshotEntryFailure {
  const accepted = acceptToolRegistration(entry);
  if (accepted !== undefined) return { ok: true, registration: accepted.data, schemaTexts: accepted.schemaTexts };
  const { result, schemaTexts } = parseWithSchemaTexts(() => ToolRegistration.safeParse(entry));
  if (result.success) return { ok: true, registration: result.data, schemaTexts };
  return {
    ok: false,
    issues: toRegistryIssues(result.error.issues, ['tools', index]),
    toolName: toolNameOf((entry as { spec?: unknown } | undefined)?.spec),
  };
}

/** What the import's plan needs of a valid entry: no spec text (see `snapshotEntryJson`). */
function prepareSnapshotEntry({ registration, schemaTexts }: CheckedSnapshotEntry, path: string): PreparedImportEntry {
  const spec = registration.spec;
  return {
    tool_name: spec.tool_name,
    version: spec.version,
    fingerprint: fingerprintOfCanonical(canonicalSpecJson(spec, schemaTexts)),
    enabled: registration.enabled,
    created_at: registration.created_at,
    deprecation:
      registration.deprecation === null || registration.deprecation === undefined
        ? null
        : makeDeprecation(registration.deprecation.message, registration.deprecation.replacement, registration.deprecation.sunset),
    path,
  };
}

// --- an import's second pass ------------------------------------------------------------

let specDefaults: Readonly<Record<string, unknown>> | undefined;

/** The defaults `ToolSpec` applies to fields a spec leaves out (read from the schema itself, at the first import: not in every process that loads the core). */
function specDefaultValues(): Readonly<Record<string, unknown>> {
  if (specDefaults === undefined) {
    const { version, description, tags } = ToolSpec.parse({ tool_name: 'x', input_schema: {}, output_schema: {} });
    specDefaults = { version, description, tags };
  }
  return specDefaults;
}

/**
 * The registered JSON text of entry `index` of a snapshot that `parseSnapshot` accepted as
 * `entry` (an import's second pass, as it writes). With `recheck` false the entry is read
 * as pass 1 left it (nothing ran in between), so only the text is built: the validated
 * spec's values are the caller's own (zod copies `tags` alone, item for item), with the
 * defaults added. With `recheck` true (the caller's code may have run since pass 1) the
 * entry is validated again and must give the same spec, `enabled` and `created_at`.
 * @throws SNAPSHOT_INVALID (path `tools[i]`) when a rechecked entry changed
 */
export function snapshotEntryJson(snapshot: unknown, index: number, entry: PreparedImportEntry, recheck: boolean): string {
  if (!recheck) {
    const input = (snapshot as { tools: { spec: Record<string, unknown> }[] }).tools[index]?.spec as Record<string, unknown>;
    const spec: Record<string, unknown> = {};
    const defaults = specDefaultValues();
    for (const key of Object.keys(input)) spec[key] = input[key] === undefined && key in defaults ? defaults[key] : input[key];
    for (const key of Object.keys(defaults)) if (spec[key] === undefined) spec[key] = defaults[key];
    return JSON.stringify(registeredSpec(spec as ToolSpec, input));
  }
  const tools = (snapshot as { tools?: unknown } | null)?.tools;
  const input = Array.isArray(tools) ? (tools[index] as unknown) : undefined;
  const checked = checkSnapshotEntry(input, index);
  if (checked.ok) {
    const again = prepareSnapshotEntry(checked, entry.path);
    if (again.tool_name === entry.tool_name && again.fingerprint === entry.fingerprint && again.enabled === entry.enabled && again.created_at === entry.created_at) {
      return JSON.stringify(registeredSpec(checked.registration.spec, (input as { spec: unknown }).spec));
    }
  }
  const message = `${entry.path} changed while the import ran; a snapshot must not change until importSnapshot settles`;
  const issue: RegistryIssue = Object.freeze({ code: 'custom', message, path: Object.freeze(['tools', index]), pathText: entry.path });
  throw new SnapshotInvalidError(`invalid snapshot: ${message}; nothing was imported`, [issue], { path: entry.path, tool_name: entry.tool_name });
}

// ------------------------------------------------------------------------------------------

let snapshotShape: z.ZodType<{ tools: unknown[] }> | undefined;

/** The snapshot's outer shape; entries are checked one by one with `ToolRegistration` (built at the first snapshot). */
const snapshotShapeSchema = (): z.ZodType<{ tools: unknown[] }> => (snapshotShape ??= ToolRegistrySnapshot.extend({ tools: z.array(z.unknown()) }));

/** `SNAPSHOT_INVALID` for these issues (paths from the snapshot's root), naming the first bad entry's tool when known. */
function snapshotInvalid(issues: RegistryIssue[], input: unknown, toolName: string | undefined, stopped = false): SnapshotInvalidError {
  const first = issues[0];
  return new SnapshotInvalidError(`invalid snapshot: ${describeIssues(issues, input)}${listedNote(issues.length, stopped)}`, issues.slice(0, MAX_LISTED_ISSUES), {
    ...(first === undefined ? {} : { path: first.pathText }),
    ...(toolName === undefined ? {} : { tool_name: toolName }),
  });
}

/** What a message adds when its error lists fewer issues than it found, or stopped looking. */
function listedNote(found: number, stopped: boolean): string {
  if (stopped) return ` (checking stopped there: at most ${MAX_LISTED_ISSUES} issues are listed)`;
  return found > MAX_LISTED_ISSUES ? ` (the first ${MAX_LISTED_ISSUES} are listed)` : '';
}

function toolNameOf(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const name = (input as { tool_name?: unknown }).tool_name;
  return typeof name === 'string' ? name : undefined;
}
