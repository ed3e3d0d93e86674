// JSON Schema validation for tools: ajv 8, one compile per schema, cached on the Tool.
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { FormatsPlugin } from 'ajv-formats';
import { fingerprintOfCanonical } from '../core/canonical.js';
import type { JsonObject, JsonValue } from '../core/contracts.js';
import { PATTERN_CHECK_MS, boundedRegExp, checkWhole, compiling, startCheck, uncheckedTest } from './pattern-engine.js';
import type { Patterns, Unchecked } from './pattern-engine.js';
import type { ToolResultIssue } from './tool-result.js';
import { uniqueItems } from './unique-items.js';

/** A compiled schema: `check(value)` returns every problem, or `undefined` when valid. */
export type SchemaCheck = (value: unknown) => ToolResultIssue[] | undefined;

type AjvInstance = Ajv | Ajv2019 | Ajv2020;
type Draft = 'draft-07' | '2019-09' | '2020-12';

// `strict: false`: unknown keywords (`example`, `x-...`) and unknown formats are
// annotations, as JSON Schema itself says; schemas from other tools must still compile.
// The formats ajv-formats knows (email, uri, date-time, uuid...) are validated.
// `regExp`: every `pattern` test is bounded in time (pattern-engine.ts).
const BASE: Options = { allErrors: true, strict: false, logger: false, code: { regExp: boundedRegExp } };

// ajv keeps every schema an instance compiled, and its validator, in the instance's scope for
// the instance's life; removeSchema does not drop them (ajv-validator/ajv#1413). One instance
// for the process kept about 4 KB of every Tool ever defined: a server that checks each
// elicitation answer, or lists an upstream's tools, with a new Tool grew for as long as it ran.
// So an instance compiles COMPILES_PER_INSTANCE schemas and is then replaced; a validator keeps
// its own instance, which goes when the last of its validators does. Its meta-schema (about
// 20 ms to compile, the bulk of a new instance) is checked on a checker per draft that
// compiles nothing else; the compiling instances skip that check (1-2 ms each).
const COMPILES_PER_INSTANCE = 100;
const checkers = new Map<Draft, AjvInstance>();
const compilers = new Map<string, { readonly ajv: AjvInstance; compiles: number }>();

/* eslint-disable typescript/no-require-imports -- a require the bundle resolves is what defers a module's run */
/**
 * ajv's and ajv-formats' modules, run at the first schema a process compiles rather than in every
 * process that loads the runtime (with semver's, 9 % of the instructions of an
 * `import('tool-registry')`): the bundle turns each `require` into a call of the bundled
 * module, which runs once.
 */
function ajvClass(draft: Draft): new (options: Options) => AjvInstance {
  if (draft === 'draft-07') return (require('ajv') as { Ajv: typeof Ajv }).Ajv;
  if (draft === '2019-09') return (require('ajv/dist/2019.js') as { Ajv2019: typeof Ajv2019 }).Ajv2019;
  return (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020;
}

function newInstance(draft: Draft, options: Options): AjvInstance {
  const ajv = new (ajvClass(draft))(options);
  (require('ajv-formats') as { default: FormatsPlugin }).default(ajv);
  /* eslint-enable typescript/no-require-imports */
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(uniqueItems);
  return ajv;
}

/** The instance that checks schemas of `draft` against their meta-schema. */
function checker(draft: Draft): AjvInstance {
  let ajv = checkers.get(draft);
  if (ajv === undefined) checkers.set(draft, (ajv = newInstance(draft, BASE)));
  return ajv;
}

/** An instance to compile one schema on (counted: the COMPILES_PER_INSTANCE-th is its last). */
function compiler(draft: Draft, useDefaults: boolean, ownProperties: boolean): AjvInstance {
  const key = `${draft}:${useDefaults}:${ownProperties}`;
  let entry = compilers.get(key);
  if (entry === undefined || entry.compiles >= COMPILES_PER_INSTANCE) {
    entry = { ajv: newInstance(draft, { ...BASE, useDefaults, ownProperties, validateSchema: false }), compiles: 0 };
    compilers.set(key, entry);
  }
  entry.compiles++;
  return entry.ajv;
}

/**
 * Whether `schema` names anything Object.prototype has (`constructor`, `toString`, ...), as a key
 * or a string (a `required` entry). ajv reads `value.constructor` and takes an inherited member
 * for a property that is there: an optional `toString` left out failed "must be number", a
 * required `constructor` left out passed. Such schemas compile with ajv's `ownProperties`, which
 * checks every property with hasOwnProperty; the others do not pay for it (about 80 ns a call
 * for a 5-property schema with `additionalProperties: false`).
 */
function namesPrototypeMember(value: JsonValue): boolean {
  if (typeof value === 'string') return value === '__proto__' || Object.hasOwn(Object.prototype, value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(namesPrototypeMember);
  return Object.keys(value).some((key) => namesPrototypeMember(key) || namesPrototypeMember(value[key] as JsonValue));
}

/**
 * Where `schema` declares a property named `__proto__` (`/properties/__proto__`, at any depth),
 * or undefined. ajv leaves that name out of `properties`: its value was never checked, and
 * beside `additionalProperties: false` the property was refused as undeclared.
 */
function protoProperty(value: JsonValue, pointer = ''): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = protoProperty(value[index] as JsonValue, `${pointer}/${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const item = value[key] as JsonValue;
    if (key === 'properties' && typeof item === 'object' && item !== null && !Array.isArray(item) && Object.hasOwn(item, '__proto__')) return `${pointer}/properties/__proto__`;
    const found = protoProperty(item, `${pointer}/${escapePointer(key)}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Which draft a schema asks for with `$schema`; none means 2020-12. */
function draftOf(schema: JsonObject): Draft {
  const declared = schema.$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared === 'string') {
    // The scheme of each meta-schema's `$id`: ajv finds it by that text (the other scheme was its "no schema with key or ref").
    if (/^http:\/\/json-schema\.org\/draft-07\/schema#?$/.test(declared)) return 'draft-07';
    if (/^https:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/.test(declared)) return '2019-09';
    if (/^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(declared)) return '2020-12';
  }
  throw new Error(
    `unsupported $schema ${JSON.stringify(declared)}: use draft 2020-12 (the default), 2019-09 or draft-07`,
  );
}

// Checks compiled lately, by the SHA-256 of what they are compiled from (the schema's JSON text,
// its keys in their order, which decides the order defaults are filled in and issues reported;
// and applyDefaults): a schema defined again (a gateway's cold listing of an upstream whose
// tools share schemas, a namespace opened again) reuses its check instead of compiling it again.
// A check is a function of that text alone, so sharing it across tools and namespaces tells
// nothing. At most COMPILED_KEPT, the least recently used dropped first.
const COMPILED_KEPT = 1_000;
const compiledChecks = new Map<string, SchemaCheck>();

/**
 * Compiles `schema` (a frozen JSON object), or gives the check compiled lately for the same
 * schema. `applyDefaults` fills in schema defaults on the value being checked (inputs only:
 * the value is the invocation's own copy).
 * @throws Error with ajv's message when the schema cannot be compiled
 */
export function compileSchema(schema: JsonObject, applyDefaults: boolean): SchemaCheck {
  // JSON values only (the spec's contract refused anything else): the text is the schema.
  const key = fingerprintOfCanonical(`${applyDefaults ? 'defaults' : 'plain'}:${JSON.stringify(schema)}`);
  const known = compiledChecks.get(key);
  if (known !== undefined) {
    compiledChecks.delete(key);
    compiledChecks.set(key, known);
    return known;
  }
  const check = compileAnew(schema, applyDefaults);
  compiledChecks.set(key, check);
  if (compiledChecks.size > COMPILED_KEPT) compiledChecks.delete(compiledChecks.keys().next().value as string);
  return check;
}

function compileAnew(schema: JsonObject, applyDefaults: boolean): SchemaCheck {
  const draft = draftOf(schema);
  const proto = protoProperty(schema);
  if (proto !== undefined) throw new Error(`it declares a property named "__proto__" (at ${proto}), which ajv cannot check: it skips that name`);
  const ajv = compiler(draft, applyDefaults, namesPrototypeMember(schema));
  let validate: ValidateFunction;
  let patterns: Patterns;
  try {
    // The meta-schema check is ajv's own (`schema is invalid: ...`), as its compile makes it.
    ({ compiled: validate, patterns } = compiling(() => {
      checker(draft).validateSchema(schema, true);
      return ajv.compile(schema);
    }));
  } finally {
    // The compiled function keeps what it needs; dropping the schema from ajv's registry
    // lets two tools use the same `$id` and lets a dropped Tool be collected.
    ajv.removeSchema(schema);
  }
  // ajv compiles `"$async": true` to a check that returns a Promise: read as "valid", it let any
  // arguments through, and its rejection ended the process.
  if ((validate as { $async?: unknown }).$async === true) throw new Error('it declares "$async": true, which makes the check asynchronous: not supported (the check must answer at once)');
  if (patterns === 'none') return (value) => (validate(value) ? undefined : toIssues(validate.errors ?? []));
  if (patterns === 'bounded') {
    return (value) => {
      startCheck();
      const valid = validate(value);
      const missed = uncheckedTest();
      if (missed !== undefined) return [uncheckedIssue(missed, value)];
      return valid ? undefined : toIssues(validate.errors ?? []);
    };
  }
  return (value) => {
    // What a run interrupted in the vm may have left of defaults in the value is undone before it runs again.
    const before = applyDefaults && typeof value === 'object' && value !== null ? structuredClone(value) : undefined;
    const checked = checkWhole(() => validate(value), () => restore(value, before));
    if (!('answer' in checked)) return [uncheckedIssue(checked, value)];
    return checked.answer ? undefined : toIssues(validate.errors ?? []);
  };
}

/** Gives `value` (JSON data) the members of `before` again, its copy from before the check. */
function restore(value: unknown, before: unknown): void {
  if (typeof value !== 'object' || value === null || typeof before !== 'object' || before === null) return;
  if (Array.isArray(value)) {
    value.length = 0;
    for (const item of before as unknown[]) value.push(item);
    return;
  }
  const target = value as Record<string, unknown>;
  for (const key of Object.keys(target)) delete target[key];
  // defineProperty: a member named `__proto__` stays a member.
  for (const [key, item] of Object.entries(before)) Object.defineProperty(target, key, { value: item, writable: true, enumerable: true, configurable: true });
}

/**
 * A check the pattern budget stopped: refused, never valid. It names the pattern as ajv's own
 * message does (`must match pattern "..."`) and the first place (depth first) holding the
 * value the test was on, as a value or a property name; the other issues are left out (a test
 * past the budget answered `false`, so ajv's would mislead).
 */
function uncheckedIssue({ pattern, value }: Unchecked, checked: unknown): ToolResultIssue {
  if (pattern === undefined || value === undefined) return { path: '', message: `could not be checked within ${PATTERN_CHECK_MS} ms` };
  return { path: placeOf(value, checked) ?? '', message: `could not be checked against pattern "${pattern}" within ${PATTERN_CHECK_MS} ms` };
}

/** The JSON Pointer of the first place in `data` that is the string `text` or a property named so. */
function placeOf(text: string, data: unknown, path = ''): string | undefined {
  if (data === text) return path;
  if (typeof data !== 'object' || data === null) return undefined;
  for (const [key, item] of Object.entries(data)) {
    const at = `${path}/${escapePointer(key)}`;
    if (key === text && !Array.isArray(data)) return at;
    const found = placeOf(text, item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether a schema constrains anything (`{}` and annotation-only schemas accept every value). */
export function constrains(schema: JsonObject): boolean {
  return Object.keys(schema).some((key) => !ANNOTATIONS.has(key));
}

const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly']);

/** One token of a JSON Pointer (RFC 6901): `~` becomes `~0`, `/` becomes `~1`. */
export function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** ajv errors as `{ path, message }`; a missing or extra property is pointed at itself (`/limit`). */
function toIssues(errors: readonly ErrorObject[]): ToolResultIssue[] {
  return errors.map((error) => {
    const params = error.params as { missingProperty?: unknown; additionalProperty?: unknown };
    if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
      return { path: `${error.instancePath}/${escapePointer(params.missingProperty)}`, message: 'is required' };
    }
    if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      return { path: `${error.instancePath}/${escapePointer(params.additionalProperty)}`, message: 'is not allowed (no such property)' };
    }
    return { path: error.instancePath, message: error.message ?? `fails ${error.keyword}` };
  });
}
