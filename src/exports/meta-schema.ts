// Whether a schema is valid JSON Schema draft 2020-12: the meta-schema's validator that the build
// generates with ajv's standalone code (scripts/json-schema-2020-12.mjs), required on first use.
// Compiling the meta-schema here instead cost 280-400 ms of CPU per process; this costs about
// 10 ms once, and nothing in a process that never asks (it is not part of any bundle).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { packageFile } from '../package-files.js';

interface MetaError {
  readonly instancePath: string;
  readonly keyword: string;
  readonly params: { readonly type?: string | string[]; readonly allowedValues?: unknown[] };
  readonly message?: string;
}
type MetaValidator = ((schema: unknown) => boolean) & { errors?: MetaError[] | null };

const GENERATED = 'dist/exports/json-schema-2020-12.cjs';
/** Keywords whose error only says that another error below it made a branch fail. */
const WRAPPERS = new Set(['anyOf', 'oneOf', 'if', '$dynamicRef', '$ref']);

let validator: MetaValidator | undefined;

function load(): MetaValidator {
  const file = fileURLToPath(packageFile(GENERATED));
  try {
    return createRequire(import.meta.url)(file) as MetaValidator;
  } catch (error) {
    throw new Error(`tool-registry: cannot load ${GENERATED}, which \`npm run build\` writes`, { cause: error });
  }
}

function describe(error: MetaError): string {
  if (error.keyword === 'type') {
    const tuple = error.instancePath.endsWith('/items') ? ' (a list of schemas is draft-07\'s tuple form; 2020-12 says prefixItems)' : '';
    return `must be ${[error.params.type].flat().join(' or ')}${tuple}`;
  }
  if (error.keyword === 'enum') return `must be one of ${JSON.stringify(error.params.allowedValues ?? [])}`;
  return error.message ?? `breaks "${error.keyword}"`;
}

/**
 * Every place where `schema` is not valid against the JSON Schema draft 2020-12 meta-schema:
 * its JSON Pointer (relative to `schema`, `''` for the root) and what is wrong there.
 */
export function metaSchemaProblems(schema: unknown): { pointer: string; problem: string }[] {
  validator ??= load();
  if (validator(schema)) return [];
  const byPointer = new Map<string, MetaError[]>();
  for (const error of validator.errors ?? []) byPointer.set(error.instancePath, [...(byPointer.get(error.instancePath) ?? []), error]);
  return [...byPointer].map(([pointer, errors]) => {
    const specific = errors.filter((error) => !WRAPPERS.has(error.keyword));
    const either = specific.length < errors.length;
    const problems = [...new Set((specific.length > 0 ? specific : errors).map(describe))];
    return { pointer, problem: problems.join(either ? ' or ' : '; ') };
  });
}
