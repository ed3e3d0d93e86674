// Anthropic (Messages API custom tools): every rule, and the exporter.
// Sources (docs/providers/anthropic.md): the tool-use docs (name pattern, input_schema an
// object) and the structured-outputs / strict-tool-use docs (the supported JSON Schema
// subset and the per-request complexity limits).
import type { JsonObject, ToolSpec } from '../core/contracts.js';
import { checkBoolean, exportWith } from './findings.js';
import type { ProviderRules } from './rule-set.js';
import { copyJson, isObjectSchema, isSchemaObject, pointerTo, rootComposition, rootTypeObject, walkSchema } from './schema.js';
import type { RuleHit } from './schema.js';
import type { AnthropicExportOptions, AnthropicTool, ExportItems, ObjectJsonSchema } from './types.js';

const WHO = 'Anthropic';
/** Tool names: a-z, A-Z, 0-9, underscores and dashes, at most 64. */
export const ANTHROPIC_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const ANTHROPIC_MAX_STRICT_TOOLS = 20;
export const ANTHROPIC_MAX_OPTIONAL_PARAMETERS = 24;
export const ANTHROPIC_MAX_UNION_PARAMETERS = 16;
/** Constraints strict tool use does not support (numbers, strings, arrays beyond minItems 0/1). */
export const ANTHROPIC_STRICT_REFUSED: readonly string[] = [
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength',
  'maxItems', 'uniqueItems', 'contains', 'minContains', 'maxContains',
];

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
  const refs: { at: string; target: string }[] = [];
  walkSchema(schema, '', (node) => {
    const target = typeof node.schema.$ref === 'string' ? localTarget(node.schema.$ref) : undefined;
    if (target !== undefined) refs.push({ at: node.pointer, target });
  });
  if (refs.length === 0) return undefined;
  // Following a ref to T means every ref inside T's subtree can be followed next; a cycle is recursion.
  const inside = (at: string, target: string): boolean => target === '' || at === target || at.startsWith(`${target}/`);
  const state = new Map<string, 'open' | 'done'>();
  const visit = (target: string): string | undefined => {
    state.set(target, 'open');
    for (const ref of refs) {
      if (!inside(ref.at, target)) continue;
      const seen = state.get(ref.target);
      if (seen === 'open') return ref.at;
      if (seen === undefined) {
        const found = visit(ref.target);
        if (found !== undefined) return found;
      }
    }
    state.set(target, 'done');
    return undefined;
  };
  return visit('');
}

function strictRules(schema: JsonObject): RuleHit[] {
  const hits: RuleHit[] = [];
  walkSchema(schema, '/input_schema', (node) => {
    const { schema: sub, pointer } = node;
    for (const keyword of ANTHROPIC_STRICT_REFUSED) {
      if (!(keyword in sub)) continue;
      hits.push({ path: pointerTo(pointer, keyword), rule: 'strict-unsupported-keyword', severity: 'error', message: `Anthropic strict tool use does not support "${keyword}"` });
    }
    if (typeof sub.minItems === 'number' && sub.minItems > 1) {
      hits.push({ path: pointerTo(pointer, 'minItems'), rule: 'strict-unsupported-keyword', severity: 'error', message: `Anthropic strict tool use supports minItems 0 or 1 only; got ${sub.minItems}` });
    }
    if (typeof sub.$ref === 'string' && localTarget(sub.$ref) === undefined) {
      hits.push({ path: pointerTo(pointer, '$ref'), rule: 'strict-external-ref', severity: 'error', message: `Anthropic strict tool use supports only local "$ref"s; got ${JSON.stringify(sub.$ref)}` });
    }
    if (isObjectSchema(sub) && sub.additionalProperties !== false) {
      hits.push({ path: pointerTo(pointer, 'additionalProperties'), rule: 'strict-additional-properties', severity: 'error', message: 'Anthropic strict tool use needs "additionalProperties": false on every object' });
    }
  });
  const recursive = recursiveRef(schema);
  if (recursive !== undefined) {
    hits.push({ path: `/input_schema${recursive}/$ref`, rule: 'strict-recursive-schema', severity: 'error', message: 'Anthropic strict tool use does not support recursive schemas; this "$ref" refers back to a schema that contains it' });
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

export const anthropicRules: ProviderRules = {
  provider: 'anthropic',
  label: WHO,
  tool(spec, context) {
    const hits: RuleHit[] = [];
    if (!ANTHROPIC_TOOL_NAME.test(spec.tool_name)) {
      hits.push({ path: '/tool_name', rule: 'name-pattern', severity: 'error', message: `Anthropic tool names must match ^[a-zA-Z0-9_-]{1,64}$; got ${JSON.stringify(spec.tool_name)}` });
    }
    const root = rootTypeObject(spec.input_schema, 'input_schema', WHO);
    if (root !== undefined) hits.push(root);
    hits.push(...rootComposition(spec.input_schema, WHO));
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
 * @throws PROVIDER_INCOMPATIBLE with every error finding in `context.findings`, unless `onIncompatible: 'skip'`
 */
export function toAnthropicTools(items: ExportItems, options: AnthropicExportOptions = {}): AnthropicTool[] {
  const strict = checkBoolean('toAnthropicTools', 'strict', options.strict);
  return exportWith('toAnthropicTools', items, options, anthropicRules, { strict, revision: '2025-11-25' }, (spec) => {
    const input_schema = copyJson(spec.input_schema) as ObjectJsonSchema;
    const tool: AnthropicTool =
      spec.description === null ? { name: spec.tool_name, input_schema } : { name: spec.tool_name, description: spec.description, input_schema };
    if (strict) tool.strict = true;
    return tool;
  });
}
