// Anthropic (Messages API custom tools): every rule, and the exporter.
// Sources (docs/providers/anthropic.md): the tool-use docs (name pattern, input_schema an
// object) and the structured-outputs / strict-tool-use docs (the supported JSON Schema
// subset and the per-request complexity limits); the API error that refuses an input_schema
// that is not valid JSON Schema draft 2020-12.
import type { JsonObject, JsonValue, ToolSpec } from '../core/contracts.js';
import { checkBoolean, deferLoadingOf, exportWith } from './findings.js';
import { metaSchemaProblems } from './meta-schema.js';
import type { ProviderRules } from './rule-set.js';
import { copyJson, isObjectSchema, isSchemaObject, pointerTo, rootComposition, rootTypeObject, subschemaSlots, walkSchema } from './schema.js';
import type { RuleHit } from './schema.js';
import type { AnthropicExportOptions, AnthropicTool, AnthropicToolReference, AnthropicToolSearchTool, ExportItems, LintFinding, ObjectJsonSchema } from './types.js';
import { ProviderIncompatibleError } from '../core/errors.js';

const WHO = 'Anthropic';
/** Tool names: a-z, A-Z, 0-9, underscores and dashes, at most 64. */
export const ANTHROPIC_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Keys of the root `properties` of input_schema (the API checks the top level only). */
export const ANTHROPIC_PROPERTY_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;
export const ANTHROPIC_MAX_STRICT_TOOLS = 20;
export const ANTHROPIC_MAX_OPTIONAL_PARAMETERS = 24;
export const ANTHROPIC_MAX_UNION_PARAMETERS = 16;
/**
 * The keywords strict tool use takes: what `@anthropic-ai/sdk`'s `transformJSONSchema` keeps
 * (its strict subset), plus `default`, `pattern` and `definitions`, which the structured-outputs
 * docs list as supported although the SDK helper moves them into the description. Any other
 * keyword is refused (the SDK moves it into the description).
 */
export const ANTHROPIC_STRICT_KEYWORDS: readonly string[] = [
  'type', 'enum', 'const', 'anyOf', 'allOf', '$ref', '$defs', 'definitions', '$schema', 'title', 'description',
  'default', 'properties', 'additionalProperties', 'required', 'format', 'pattern', 'items', 'minItems',
];
/** The string formats strict tool use supports (`uri` included, unlike OpenAI). */
export const ANTHROPIC_STRICT_FORMATS: readonly string[] = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid'];

/** Keywords the SDK keeps only on a schema of one type (it moves them into the description elsewhere). */
const TYPED_KEYWORDS: Readonly<Record<string, string>> = { format: 'string', items: 'array', minItems: 'array', properties: 'object', required: 'object', additionalProperties: 'object' };

const isLiteral = (value: JsonValue): boolean => value === null || typeof value !== 'object';
const hasType = (schema: JsonObject, type: string): boolean => schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));

/** `#/$defs/a` -> `/$defs/a`; undefined for a ref that is not local. */
function localTarget(ref: string): string | undefined {
  if (!ref.startsWith('#')) return undefined;
  try {
    return decodeURIComponent(ref.slice(1));
  } catch {
    return ref.slice(1);
  }
}

/** The first `$ref` (pointer relative to the schema) that makes the schema recursive, if any. */
function recursiveRef(schema: JsonObject): string | undefined {
  const refs: { at: string; target: string; index: number }[] = [];
  walkSchema(schema, '', (node) => {
    const target = typeof node.schema.$ref === 'string' ? localTarget(node.schema.$ref) : undefined;
    if (target !== undefined) refs.push({ at: node.pointer, target, index: refs.length });
  });
  if (refs.length === 0) return undefined;
  // Following a ref to T means every ref inside T's subtree can be followed next; a cycle is
  // recursion. The refs inside T are found by place in a sorted copy (a scan of every ref for
  // every target is quadratic along a chain) and followed on a stack of our own (a chain of
  // 8,000 refs overflowed the call stack: GET /v1/lint was a 500); in document order, as before.
  const byPlace = [...refs].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.index - b.index));
  const firstFrom = (text: string): number => {
    let low = 0;
    let high = byPlace.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((byPlace[middle] as { at: string }).at < text) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const refsInside = (target: string): readonly { at: string; target: string; index: number }[] => {
    if (target === '') return refs;
    const found = [];
    for (let index = firstFrom(target); index < byPlace.length && byPlace[index]?.at === target; index++) found.push(byPlace[index] as (typeof refs)[number]);
    const below = `${target}/`;
    for (let index = firstFrom(below); index < byPlace.length && byPlace[index]?.at.startsWith(below) === true; index++) found.push(byPlace[index] as (typeof refs)[number]);
    return found.sort((a, b) => a.index - b.index);
  };
  const state = new Map<string, 'open' | 'done'>([['', 'open']]);
  const stack = [{ target: '', next: refsInside(''), position: 0 }];
  while (stack.length > 0) {
    const frame = stack.at(-1) as (typeof stack)[number];
    const ref = frame.next[frame.position++];
    if (ref === undefined) {
      state.set(frame.target, 'done');
      stack.pop();
      continue;
    }
    const seen = state.get(ref.target);
    if (seen === 'open') return ref.at;
    if (seen === undefined) {
      state.set(ref.target, 'open');
      stack.push({ target: ref.target, next: refsInside(ref.target), position: 0 });
    }
  }
  return undefined;
}

function strictRules(schema: JsonObject): RuleHit[] {
  const hits: RuleHit[] = [];
  const hit = (path: string, rule: string, message: string): void => {
    hits.push({ path, rule, severity: 'error', message: `Anthropic strict tool use ${message}` });
  };
  walkSchema(schema, '/input_schema', (node) => {
    const { schema: sub, pointer } = node;
    for (const slot of subschemaSlots(sub, pointer)) {
      if (typeof slot.value === 'boolean' && slot.keyword !== 'additionalProperties') hit(slot.pointer, 'strict-boolean-schema', `needs a schema object here, not the boolean schema ${String(slot.value)}`);
    }
    for (const keyword of Object.keys(sub)) {
      if (!ANTHROPIC_STRICT_KEYWORDS.includes(keyword)) hit(pointerTo(pointer, keyword), 'strict-unsupported-keyword', `does not support "${keyword}"`);
      const type = TYPED_KEYWORDS[keyword];
      if (type !== undefined && !('$ref' in sub) && !hasType(sub, type)) hit(pointerTo(pointer, keyword), 'strict-unsupported-keyword', `supports "${keyword}" on ${type} schemas only (with "type": "${type}")`);
    }
    if (Array.isArray(sub.items)) hit(pointerTo(pointer, 'items'), 'strict-tuple-items', 'takes one schema for every array item, not a list (tuple form)');
    if ('minItems' in sub && sub.minItems !== 0 && sub.minItems !== 1) hit(pointerTo(pointer, 'minItems'), 'strict-unsupported-keyword', `supports minItems 0 or 1 only; got ${JSON.stringify(sub.minItems)}`);
    if (typeof sub.format === 'string' && !ANTHROPIC_STRICT_FORMATS.includes(sub.format)) {
      hit(pointerTo(pointer, 'format'), 'strict-format', `does not support format ${JSON.stringify(sub.format)}; supported: ${ANTHROPIC_STRICT_FORMATS.join(', ')}`);
    }
    if ('enum' in sub && !(Array.isArray(sub.enum) && sub.enum.length > 0 && sub.enum.every(isLiteral))) {
      hit(pointerTo(pointer, 'enum'), 'strict-enum-values', 'takes enums of strings, numbers, booleans or null only (no objects or arrays), and not empty');
    }
    if ('const' in sub && !isLiteral(sub.const as JsonValue)) hit(pointerTo(pointer, 'const'), 'strict-enum-values', 'takes a string, number, boolean or null "const" only');
    const ref = sub.$ref;
    if (ref !== undefined) {
      if (typeof ref !== 'string' || localTarget(ref) === undefined) hit(pointerTo(pointer, '$ref'), 'strict-external-ref', `supports only local "$ref"s; got ${JSON.stringify(ref)}`);
      // The SDK sends a "$ref" with its "$defs" only: anything else beside it is dropped.
      for (const key of Object.keys(sub)) {
        if (key !== '$ref' && key !== '$defs') hit(pointerTo(pointer, key), 'strict-ref-siblings', `takes nothing beside "$ref" but "$defs"; found ${JSON.stringify(key)}`);
      }
    } else if (!('type' in sub) && !['anyOf', 'allOf', 'oneOf', 'enum', 'const'].some((keyword) => keyword in sub)) {
      hit(pointerTo(pointer, 'type'), 'strict-untyped-schema', 'needs a "type" on every schema without anyOf, allOf, enum, const or $ref');
    }
    if (Array.isArray(sub.allOf)) {
      sub.allOf.forEach((branch, index) => {
        if (isSchemaObject(branch) && '$ref' in branch) hit(pointerTo(pointer, 'allOf', index, '$ref'), 'strict-allof-ref', 'does not support "$ref" inside "allOf"');
      });
    }
    if (isObjectSchema(sub) && sub.additionalProperties !== false) {
      hit(pointerTo(pointer, 'additionalProperties'), 'strict-additional-properties', 'needs "additionalProperties": false on every object');
    }
  });
  const recursive = recursiveRef(schema);
  if (recursive !== undefined) {
    hit(`/input_schema${recursive}/$ref`, 'strict-recursive-schema', 'does not support recursive schemas; this "$ref" refers back to a schema that contains it');
  }
  return hits;
}

/** Optional and union-typed parameters of one schema, counted at every level. */
function parameterCounts(schema: JsonObject): { optional: number; unions: number } {
  let optional = 0;
  let unions = 0;
  walkSchema(schema, '', (node) => {
    const sub = node.schema;
    if (node.propertyName !== null && (Array.isArray(sub.anyOf) || Array.isArray(sub.oneOf) || (Array.isArray(sub.type) && sub.type.length > 1))) unions++;
    if (!isSchemaObject(sub.properties)) return;
    const required = Array.isArray(sub.required) ? sub.required : [];
    for (const name of Object.keys(sub.properties)) if (!required.includes(name)) optional++;
  });
  return { optional, unions };
}

function strictRequestRules(specs: readonly ToolSpec[]): RuleHit[] {
  const hits: RuleHit[] = [];
  if (specs.length > ANTHROPIC_MAX_STRICT_TOOLS) {
    hits.push({ path: '', rule: 'strict-max-tools', severity: 'error', message: `Anthropic accepts at most ${ANTHROPIC_MAX_STRICT_TOOLS} strict tools in one request; this one has ${specs.length}` });
  }
  let optional = 0;
  let unions = 0;
  for (const spec of specs) {
    const counts = parameterCounts(spec.input_schema);
    optional += counts.optional;
    unions += counts.unions;
  }
  if (optional > ANTHROPIC_MAX_OPTIONAL_PARAMETERS) {
    hits.push({ path: '', rule: 'strict-max-optional-parameters', severity: 'error', message: `Anthropic accepts at most ${ANTHROPIC_MAX_OPTIONAL_PARAMETERS} optional parameters across the strict tools of one request; these have ${optional}` });
  }
  if (unions > ANTHROPIC_MAX_UNION_PARAMETERS) {
    hits.push({ path: '', rule: 'strict-max-union-parameters', severity: 'error', message: `Anthropic accepts at most ${ANTHROPIC_MAX_UNION_PARAMETERS} union-typed parameters (anyOf or a type list) across the strict tools of one request; these have ${unions}` });
  }
  return hits;
}

function nameMessage(name: string): string {
  return `Anthropic tool names must match ^[a-zA-Z0-9_-]{1,64}$; got ${JSON.stringify(name)}`;
}

export const anthropicRules: ProviderRules = {
  provider: 'anthropic',
  label: WHO,
  tool(spec, context) {
    const hits: RuleHit[] = [];
    if (!ANTHROPIC_TOOL_NAME.test(spec.tool_name)) {
      hits.push({ path: '/tool_name', rule: 'name-pattern', severity: 'error', message: nameMessage(spec.tool_name) });
    }
    const root = rootTypeObject(spec.input_schema, 'input_schema', WHO);
    if (root !== undefined) hits.push(root);
    hits.push(...rootComposition(spec.input_schema, WHO));
    for (const { pointer, problem } of metaSchemaProblems(spec.input_schema)) {
      hits.push({ path: `/input_schema${pointer}`, rule: 'schema-invalid', severity: 'error', message: `Anthropic needs input_schema to be valid JSON Schema draft 2020-12; at ${pointer === '' ? 'its root' : pointer} it ${problem}` });
    }
    const properties = spec.input_schema.properties;
    if (isSchemaObject(properties)) {
      for (const key of Object.keys(properties)) {
        if (ANTHROPIC_PROPERTY_KEY.test(key)) continue;
        hits.push({ path: pointerTo('/input_schema', 'properties', key), rule: 'property-key-pattern', severity: 'error', message: `Anthropic needs every top-level property key of input_schema to match ^[a-zA-Z0-9_.-]{1,64}$; got ${JSON.stringify(key)}` });
      }
    }
    if (context.strict) hits.push(...strictRules(spec.input_schema));
    return hits;
  },
  request(specs, context) {
    return context.strict ? strictRequestRules(specs) : [];
  },
};

/**
 * The tools as Anthropic custom tools: `{ name, description, input_schema }`, plus
 * `strict: true` when asked (and then the strict rules apply). `description` is left out
 * when null. Schemas are copied with their key order, never changed.
 * With `deferLoading` (tool search; docs/providers/anthropic.md), the tools carry
 * `defer_loading: true` (but those in `keep`) and Anthropic's tool search tool comes last.
 * @throws PROVIDER_INCOMPATIBLE with every error finding in `context.findings`, unless `onIncompatible: 'skip'`
 */
export function toAnthropicTools(items: ExportItems, options?: AnthropicExportOptions & { deferLoading?: false }): AnthropicTool[];
export function toAnthropicTools(items: ExportItems, options: AnthropicExportOptions): (AnthropicTool | AnthropicToolSearchTool)[];
export function toAnthropicTools(items: ExportItems, options: AnthropicExportOptions = {}): (AnthropicTool | AnthropicToolSearchTool)[] {
  const strict = checkBoolean('toAnthropicTools', 'strict', options.strict);
  const defer = deferLoadingOf('toAnthropicTools', options.deferLoading, ['bm25', 'regex', 'client'] as const, 'bm25');
  const tools = exportWith('toAnthropicTools', items, options, anthropicRules, { strict, revision: '2025-11-25' }, (spec) => {
    const input_schema = copyJson(spec.input_schema) as ObjectJsonSchema;
    const tool: AnthropicTool =
      spec.description === null ? { name: spec.tool_name, input_schema } : { name: spec.tool_name, description: spec.description, input_schema };
    if (strict) tool.strict = true;
    if (defer !== undefined && !defer.keep.has(spec.tool_name)) tool.defer_loading = true;
    return tool;
  });
  if (defer === undefined || defer.toolSearch === 'client') return tools;
  const search: AnthropicToolSearchTool =
    defer.toolSearch === 'bm25'
      ? { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' }
      : { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' };
  return [...tools, search];
}

/**
 * Client-side tool search for Anthropic: the `tool_reference` blocks to put in the
 * `tool_result` of your own search tool, one per tool found (their definitions, sent with
 * `defer_loading: true`, are then loaded). Takes tool names, `toolSearchTool`'s output
 * (`{ tools }`) or a `registry.search` page (`{ results }`).
 */
export function toAnthropicToolReferences(
  found: readonly string[] | { readonly tools: readonly { readonly name: string }[] } | { readonly results: readonly { readonly registration: { readonly spec: { readonly tool_name: string } } }[] },
): AnthropicToolReference[] {
  let names: readonly unknown[];
  if (Array.isArray(found)) names = found;
  else if (typeof found === 'object' && found !== null && Array.isArray((found as { tools?: unknown }).tools)) names = (found as { tools: { name: unknown }[] }).tools.map((tool) => tool?.name);
  else if (typeof found === 'object' && found !== null && Array.isArray((found as { results?: unknown }).results)) {
    names = (found as { results: { registration?: { spec?: { tool_name?: unknown } } }[] }).results.map((result) => result?.registration?.spec?.tool_name);
  } else throw new TypeError('toAnthropicToolReferences(): give tool names, a toolSearchTool output or a search page');
  const references = names.map((name, index): AnthropicToolReference => {
    if (typeof name !== 'string') throw new TypeError(`toAnthropicToolReferences(): the tool name at [${index}] is not a string`);
    return { type: 'tool_reference', tool_name: name };
  });
  // A reference Anthropic refuses fails the whole request (`tool_reference.tool_name`): said here, as an export says it.
  const refused: LintFinding[] = references
    .filter((reference) => !ANTHROPIC_TOOL_NAME.test(reference.tool_name))
    .map((reference) => Object.freeze({ tool_name: reference.tool_name, provider: 'anthropic', path: '/tool_name', rule: 'name-pattern', severity: 'error', message: nameMessage(reference.tool_name) }));
  if (refused.length > 0) {
    const first = (refused[0] as LintFinding).tool_name as string;
    throw new ProviderIncompatibleError(`toAnthropicToolReferences(): Anthropic would reject ${refused.length === 1 ? 'this reference' : `${refused.length} references`}; first: ${JSON.stringify(first)}: ${nameMessage(first)} [name-pattern]`, {
      provider: 'anthropic',
      findings: Object.freeze(refused),
      tool_name: first,
    });
  }
  return references;
}
