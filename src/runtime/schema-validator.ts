// JSON Schema validation for tools: ajv 8, one compile per schema, cached on the Tool.
import { Ajv } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { JsonObject } from '../core/contracts.js';
import type { ToolResultIssue } from './tool-result.js';

/** A compiled schema: `check(value)` returns every problem, or `undefined` when valid. */
export type SchemaCheck = (value: unknown) => ToolResultIssue[] | undefined;

type AjvInstance = Ajv | Ajv2019 | Ajv2020;
type Draft = 'draft-07' | '2019-09' | '2020-12';

// `strict: false`: unknown keywords (`example`, `x-...`) and unknown formats are
// annotations, as JSON Schema itself says; schemas from other tools must still compile.
// The formats ajv-formats knows (email, uri, date-time, uuid...) are validated.
const BASE: Options = { allErrors: true, strict: false, logger: false };
const instances = new Map<string, AjvInstance>();

function instance(draft: Draft, useDefaults: boolean): AjvInstance {
  const key = `${draft}:${useDefaults}`;
  let ajv = instances.get(key);
  if (ajv === undefined) {
    const options = { ...BASE, useDefaults };
    ajv = draft === 'draft-07' ? new Ajv(options) : draft === '2019-09' ? new Ajv2019(options) : new Ajv2020(options);
    addFormats.default(ajv);
    instances.set(key, ajv);
  }
  return ajv;
}

/** Which draft a schema asks for with `$schema`; none means 2020-12. */
function draftOf(schema: JsonObject): Draft {
  const declared = schema.$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared === 'string') {
    if (/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/.test(declared)) return 'draft-07';
    if (/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/.test(declared)) return '2019-09';
    if (/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(declared)) return '2020-12';
  }
  throw new Error(
    `unsupported $schema ${JSON.stringify(declared)}: use draft 2020-12 (the default), 2019-09 or draft-07`,
  );
}

/**
 * Compiles `schema` (a frozen JSON object). `applyDefaults` fills in schema defaults on the
 * value being checked (inputs only: the value is the invocation's own copy).
 * @throws Error with ajv's message when the schema cannot be compiled
 */
export function compileSchema(schema: JsonObject, applyDefaults: boolean): SchemaCheck {
  const ajv = instance(draftOf(schema), applyDefaults);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
  } finally {
    // The compiled function keeps what it needs; dropping the schema from ajv's registry
    // lets two tools use the same `$id` and lets a dropped Tool be collected.
    ajv.removeSchema(schema);
  }
  return (value) => (validate(value) ? undefined : toIssues(validate.errors ?? []));
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
