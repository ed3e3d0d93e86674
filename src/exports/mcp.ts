// MCP (Model Context Protocol): every rule for `tools/list`, and the exporter.
// Sources (docs/providers/mcp.md): the specification's tool-name rule (2025-11-25), the
// TypeScript SDK's toolNameValidation (warnings as data) and its ListToolsResultSchema.
import type { JsonObject } from '../core/contracts.js';
import { exportWith } from './findings.js';
import type { ProviderRules } from './rule-set.js';
import { copyJson, rootTypeObject } from './schema.js';
import type { RuleHit } from './schema.js';
import type { ExportItems, McpExportOptions, McpRevision, McpTool, ObjectJsonSchema } from './types.js';

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
    if (hasOutputSchema(spec.output_schema)) {
      const output = rootTypeObject(spec.output_schema, 'output_schema', `${WHO} (outputSchema)`);
      if (output !== undefined) hits.push(output);
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

/**
 * The tools as entries of an MCP `tools/list` result: `{ name, description?, inputSchema,
 * outputSchema? }`. `description` is left out when null, `outputSchema` when the spec's
 * `output_schema` is `{}`. Schemas are copied with their key order, never changed.
 * @throws PROVIDER_INCOMPATIBLE with every error finding in `context.findings`, unless `onIncompatible: 'skip'`
 */
export function toMcpTools(items: ExportItems, options: McpExportOptions = {}): McpTool[] {
  const revision = options.revision ?? '2025-11-25';
  if (revision !== '2025-11-25' && revision !== '2025-06-18') {
    throw new TypeError(`toMcpTools: revision must be '2025-11-25' or '2025-06-18', got ${JSON.stringify(revision)}`);
  }
  return exportWith('toMcpTools', items, options, mcpRules, { strict: false, revision: revision as McpRevision }, (spec) => {
    const inputSchema = copyJson(spec.input_schema) as ObjectJsonSchema;
    const tool: McpTool =
      spec.description === null ? { name: spec.tool_name, inputSchema } : { name: spec.tool_name, description: spec.description, inputSchema };
    if (hasOutputSchema(spec.output_schema)) tool.outputSchema = copyJson(spec.output_schema) as ObjectJsonSchema;
    return tool;
  });
}
