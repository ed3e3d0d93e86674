// MCP (Model Context Protocol): every rule for `tools/list`, and the exporter.
// Sources (docs/providers/mcp.md): the specification's tool-name rule (2025-11-25), the
// TypeScript SDK's toolNameValidation (warnings as data) and its ListToolsResultSchema.
import type { JsonObject } from '../core/contracts.js';
import { previewValue } from '../core/issues.js';
import { exportWith } from './findings.js';
import type { ProviderRules } from './rule-set.js';
import { copyJson, isSchemaObject, pointerTo, rootTypeObject } from './schema.js';
import type { RuleHit } from './schema.js';
import type { ExportItems, McpExportOptions, McpRevision, McpTool, McpToolAnnotations, ObjectJsonSchema } from './types.js';

/** The tool-name rule of the MCP specification of 2025-11-25. */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
const WHO = 'MCP';

function nameRules(name: string): RuleHit[] {
  if (!MCP_TOOL_NAME.test(name)) {
    return [{ path: '/tool_name', rule: 'name-pattern', severity: 'error', message: `MCP tool names must match ^[A-Za-z0-9_.-]{1,128}$; got ${JSON.stringify(name)}` }];
  }
  // The SDK's toolNameValidation warns (and still registers) for these.
  const hits: RuleHit[] = [];
  if (name.startsWith('-') || name.endsWith('-') || name.startsWith('.') || name.endsWith('.')) {
    hits.push({ path: '/tool_name', rule: 'name-edge-character', severity: 'warning', message: `${JSON.stringify(name)} starts or ends with a dash or a dot, which the MCP SDK warns may cause parsing issues` });
  }
  return hits;
}

/**
 * What the SDK's `ToolSchema` checks beyond the root type: `properties`, when present, is an
 * object whose every value is an object (a boolean schema such as `true` is refused), and
 * `required` is an array of strings. One entry that fails makes a client reject the whole
 * `tools/list`.
 */
function rootShapeRules(schema: JsonObject, field: 'input_schema' | 'output_schema'): RuleHit[] {
  const hits: RuleHit[] = [];
  const prefix = field === 'input_schema' ? '' : 'output-';
  // The SDK's zod parse drops a key named "__proto__" at the root and among the root
  // properties, silently: a client would show the model a schema without it.
  if (Object.prototype.hasOwnProperty.call(schema, '__proto__')) {
    hits.push({ path: pointerTo(`/${field}`, '__proto__'), rule: `${prefix}root-proto-key`, severity: 'error', message: `${WHO} clients drop a key named "__proto__" at the root of ${field} (the SDK's schema parse leaves it out)` });
  }
  const { properties, required } = schema;
  if (properties !== undefined) {
    if (!isSchemaObject(properties)) {
      hits.push({ path: `/${field}/properties`, rule: `${prefix}root-properties`, severity: 'error', message: `${WHO} needs "properties" at the root of ${field} to be an object of schemas; got ${previewValue(properties)}` });
    } else {
      for (const name of Object.keys(properties)) {
        const value = properties[name];
        if (name === '__proto__') {
          hits.push({ path: pointerTo(`/${field}/properties`, name), rule: `${prefix}root-proto-key`, severity: 'error', message: `${WHO} clients drop a root property named "__proto__" of ${field} (the SDK's schema parse leaves it out)` });
          continue;
        }
        if (typeof value === 'object' && value !== null) continue;
        hits.push({ path: pointerTo(`/${field}/properties`, name), rule: `${prefix}root-properties`, severity: 'error', message: `${WHO} needs every root property of ${field} to be a schema object; ${JSON.stringify(name)} is ${previewValue(value)}` });
      }
    }
  }
  if (required !== undefined) {
    if (!Array.isArray(required)) {
      hits.push({ path: `/${field}/required`, rule: `${prefix}root-required`, severity: 'error', message: `${WHO} needs "required" at the root of ${field} to be an array of strings; got ${previewValue(required)}` });
    } else {
      required.forEach((value, index) => {
        if (typeof value === 'string') return;
        hits.push({ path: pointerTo(`/${field}/required`, index), rule: `${prefix}root-required`, severity: 'error', message: `${WHO} needs "required" at the root of ${field} to hold strings only; got ${previewValue(value)}` });
      });
    }
  }
  return hits;
}

/** An output schema that says nothing (`{}`) is not exported: MCP's outputSchema is optional and must be an object schema. */
function hasOutputSchema(schema: JsonObject): boolean {
  return Object.keys(schema).length > 0;
}

export const mcpRules: ProviderRules = {
  provider: 'mcp',
  label: WHO,
  tool(spec, context) {
    const hits = nameRules(spec.tool_name);
    const input = rootTypeObject(spec.input_schema, 'input_schema', `${WHO} (the client SDK rejects the whole tools/list otherwise)`);
    if (input !== undefined) hits.push(input);
    hits.push(...rootShapeRules(spec.input_schema, 'input_schema'));
    if (hasOutputSchema(spec.output_schema) && !(context.omitNonObjectOutput === true && spec.output_schema.type !== 'object')) {
      const output = rootTypeObject(spec.output_schema, 'output_schema', `${WHO} (outputSchema)`);
      if (output !== undefined) hits.push(output);
      hits.push(...rootShapeRules(spec.output_schema, 'output_schema'));
    }
    if (context.revision === '2025-06-18') {
      for (const field of ['input_schema', 'output_schema'] as const) {
        if ('$schema' in spec[field]) {
          hits.push({ path: `/${field}/$schema`, rule: 'schema-dialect-revision', severity: 'warning', message: `MCP 2025-06-18 defines no "$schema" in tool schemas (2025-11-25 does); a 2025-06-18 client may ignore it` });
        }
      }
    }
    return hits;
  },
  request() {
    return [];
  },
};

/** MCP's `ToolAnnotations` (2025-11-25): a title and four hints. */
const ANNOTATIONS = ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** A runtime Tool's `title` and `annotations` (read by shape; specs and registrations have none). */
function toolMetadata(source: unknown): { title?: string; annotations?: McpToolAnnotations } {
  if (typeof source !== 'object' || source === null) return {};
  const { title, annotations } = source as { title?: unknown; annotations?: unknown };
  const out: { title?: string; annotations?: McpToolAnnotations } = {};
  if (typeof title === 'string') out.title = title;
  if (typeof annotations === 'object' && annotations !== null) {
    const hints: Record<string, unknown> = {};
    for (const key of ANNOTATIONS) {
      const value = (annotations as Record<string, unknown>)[key];
      if (typeof value === (key === 'title' ? 'string' : 'boolean')) hints[key] = value;
    }
    if (Object.keys(hints).length > 0) out.annotations = hints;
  }
  return out;
}

/**
 * The tools as entries of an MCP `tools/list` result: `{ name, title?, description?,
 * inputSchema, outputSchema?, annotations? }`. `description` is left out when null,
 * `outputSchema` when the spec's `output_schema` is `{}` (or, with `nonObjectOutputSchema:
 * 'omit'`, not an object schema); `title` and `annotations` come from runtime Tools that have
 * them. Schemas are copied with their key order, never changed.
 * @throws PROVIDER_INCOMPATIBLE with every error finding in `context.findings`, unless `onIncompatible: 'skip'`
 */
export function toMcpTools(items: ExportItems, options: McpExportOptions = {}): McpTool[] {
  const revision = options.revision ?? '2025-11-25';
  if (revision !== '2025-11-25' && revision !== '2025-06-18') {
    throw new TypeError(`toMcpTools: revision must be '2025-11-25' or '2025-06-18', got ${JSON.stringify(revision)}`);
  }
  const nonObject = options.nonObjectOutputSchema ?? 'error';
  if (nonObject !== 'error' && nonObject !== 'omit') {
    throw new TypeError(`toMcpTools: nonObjectOutputSchema must be 'error' or 'omit', got ${JSON.stringify(nonObject)}`);
  }
  const context = { strict: false, revision: revision as McpRevision, omitNonObjectOutput: nonObject === 'omit' };
  return exportWith('toMcpTools', items, options, mcpRules, context, (spec, source) => {
    const inputSchema = copyJson(spec.input_schema) as ObjectJsonSchema;
    const { title, annotations } = toolMetadata(source);
    // Built in the order the MCP specification lists the fields.
    const tool = { name: spec.tool_name } as McpTool;
    if (title !== undefined) tool.title = title;
    if (spec.description !== null) tool.description = spec.description;
    tool.inputSchema = inputSchema;
    if (hasOutputSchema(spec.output_schema) && !(nonObject === 'omit' && spec.output_schema.type !== 'object')) {
      tool.outputSchema = copyJson(spec.output_schema) as ObjectJsonSchema;
    }
    if (annotations !== undefined) tool.annotations = annotations;
    return tool;
  });
}
