// Specs for the export tests: a strict-clean base and small builders.
import type { JsonObject, ToolSpecInput } from '../../src/index.js';

/** A schema every provider accepts, strict modes included. */
export function cleanSchema(extra: JsonObject = {}): JsonObject {
  return { type: 'object', properties: { q: { type: 'string', description: 'the query' } }, required: ['q'], additionalProperties: false, ...extra };
}

export function tool(name: string, input_schema: JsonObject = cleanSchema(), extra: Partial<ToolSpecInput> = {}): ToolSpecInput {
  return { tool_name: name, version: '1.0.0', description: `the ${name} tool`, input_schema, output_schema: {}, ...extra };
}

/** `count` clean tools named t0, t1, ... */
export function many(count: number, schema: () => JsonObject = () => cleanSchema()): ToolSpecInput[] {
  return Array.from({ length: count }, (_, i) => tool(`t${i}`, schema()));
}

/** A strict-clean object schema nested `levels` objects deep (the root is level 1). */
export function nested(levels: number): JsonObject {
  let schema: JsonObject = cleanSchema();
  for (let i = 1; i < levels; i++) schema = { type: 'object', properties: { inner: schema }, required: ['inner'], additionalProperties: false };
  return schema;
}
