// Property: whatever an exporter accepts, it sends with the schema exactly as given (same
// keys, same order, same values; OpenAI's documented root properties: {} aside); it never renames a tool. Refused tools are left out whole.
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, toAiSdkTools, toAnthropicTools, toGeminiTools, toMcpTools, toOpenAITools } from '../../src/index.js';
import type { JsonObject, ToolSpecInput } from '../../src/index.js';

const key = fc.oneof(fc.constantFrom('type', 'properties', 'required', 'description', 'enum', 'items', '$ref', 'anyOf', 'format', 'z', 'a', '__proto__', 'a/b', '~'), fc.string({ maxLength: 6 }));
const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
})).value;
// `type: "object"` first (every provider needs it at the root), then arbitrary keys in arbitrary order.
// (Spread, not Object.assign: a generated "__proto__" key must stay data.)
const schema = fc.dictionary(key, json, { maxKeys: 5 }).map((extra) => {
  const value: JsonObject = { type: 'object', ...(extra as JsonObject) };
  value.type = 'object';
  return value;
});
const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,20}$/);
const specs = fc.uniqueArray(fc.record({ tool_name: name, input_schema: schema }), { selector: (s) => s.tool_name, maxLength: 5 }).map((list) =>
  list.map((s): ToolSpecInput => ({ ...s, description: 'd', output_schema: {} })),
);

const text = (value: unknown): string => JSON.stringify(value);

describe('exporters keep schemas as given', () => {
  it('MCP, OpenAI (not strict), Anthropic, Gemini (json) and the AI SDK', () => {
    fc.assert(
      fc.property(specs, (list) => {
        const byName = new Map(list.map((s) => [s.tool_name, text(s.input_schema)]));
        for (const t of toMcpTools(list, { onIncompatible: 'skip' })) expect(text(t.inputSchema)).toBe(byName.get(t.name));
        // (OpenAI: plus the documented properties: {} at the end of a root without them.)
        const withProperties = new Map(list.map((s) => [s.tool_name, text('properties' in s.input_schema ? s.input_schema : { ...s.input_schema, properties: {} })]));
        for (const t of toOpenAITools(list, { onIncompatible: 'skip' })) expect(text(t.function.parameters)).toBe(withProperties.get(t.function.name));
        for (const t of toAnthropicTools(list, { onIncompatible: 'skip' })) expect(text(t.input_schema)).toBe(byName.get(t.name));
        for (const d of toGeminiTools(list, { onIncompatible: 'skip' }).functionDeclarations) {
          if (d.parametersJsonSchema !== undefined) expect(text(d.parametersJsonSchema)).toBe(byName.get(d.name));
          else expect(byName.has(d.name)).toBe(true);
        }
        const ai = toAiSdkTools(list, { onIncompatible: 'skip' });
        for (const n of Object.keys(ai)) expect(text(ai[n]?.inputSchema)).toBe(byName.get(n));
        // MCP leaves out exactly the tools the SDK's own ListToolsResultSchema refuses or changes (key order and prototypes aside: compared as canonical JSON)
        // (it drops a "__proto__" key at the root and among the root properties).
        const sdkTakes = list.filter((s) => {
          const parsed = ListToolsResultSchema.safeParse({ tools: [{ name: s.tool_name, inputSchema: s.input_schema }] });
          return parsed.success && canonicalJson(parsed.data.tools[0]?.inputSchema) === canonicalJson(s.input_schema);
        });
        expect(toMcpTools(list, { onIncompatible: 'skip' }).map((t) => t.name)).toEqual(sdkTakes.map((s) => s.tool_name));
      }),
      { numRuns: 300 },
    );
  });
});
