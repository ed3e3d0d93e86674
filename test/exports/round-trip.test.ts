// A registry's tools -> lintTools clean -> each export -> read back as a client reads it.
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { lintTools, openSqliteToolRegistry, toAiSdkTools, toAnthropicTools, toGeminiTools, toMcpTools, toOpenAITools } from '../../src/index.js';
import type { OpenAIChatTool, ToolRegistration } from '../../src/index.js';
import { cleanSchema, tool } from './helpers.js';

const specs = [
  tool('get_weather', {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'the city' },
      unit: { type: ['string', 'null'], enum: ['C', 'F', null] },
      when: { type: 'string', format: 'date-time' },
    },
    required: ['city', 'unit', 'when'],
    additionalProperties: false,
  }),
  tool('search_docs', cleanSchema(), { output_schema: { type: 'object', properties: { hits: { type: 'array', items: { type: 'string' } } } } }),
  tool('ping', { type: 'object', properties: {}, required: [], additionalProperties: false }, { description: null }),
  tool('retired', cleanSchema()),
];

async function registered(): Promise<ToolRegistration[]> {
  const registry = await openSqliteToolRegistry({ filename: ':memory:' });
  try {
    for (const spec of specs) await registry.register(spec);
    await registry.setEnabled('retired', false);
    return await registry.listAll({ includeDisabled: true });
  } finally {
    await registry.close();
  }
}

describe('round trip', () => {
  it('registry -> lint clean (strict too) -> every export -> parsed back', async () => {
    const registrations = await registered();
    const enabled = registrations.filter((r) => r.enabled).map((r) => r.spec);
    expect(enabled.map((s) => s.tool_name)).toEqual(['get_weather', 'ping', 'search_docs']);
    expect(lintTools(registrations)).toEqual([]);
    expect(lintTools(registrations, { strict: true })).toEqual([]);

    const mcp = ListToolsResultSchema.parse(JSON.parse(JSON.stringify({ tools: toMcpTools(registrations) })));
    expect(mcp.tools.map((t) => [t.name, t.description, t.inputSchema])).toEqual(enabled.map((s) => [s.tool_name, s.description ?? undefined, s.input_schema]));
    expect(mcp.tools.find((t) => t.name === 'search_docs')?.outputSchema).toEqual(enabled.find((s) => s.tool_name === 'search_docs')?.output_schema);

    for (const strict of [false, true]) {
      const chat = JSON.parse(JSON.stringify(toOpenAITools(registrations, { strict }))) as OpenAIChatTool[];
      expect(chat.map((t) => [t.function.name, t.function.parameters, t.function.strict])).toEqual(enabled.map((s) => [s.tool_name, s.input_schema, strict]));
      const responses = toOpenAITools(registrations, { api: 'responses', strict });
      expect(responses.map((t) => t.name)).toEqual(enabled.map((s) => s.tool_name));
      const anthropic = toAnthropicTools(registrations, { strict });
      expect(anthropic.map((t) => [t.name, t.input_schema])).toEqual(enabled.map((s) => [s.tool_name, s.input_schema]));
    }
    const gemini = toGeminiTools(registrations);
    expect(gemini.functionDeclarations.map((d) => [d.name, d.parametersJsonSchema])).toEqual([
      ['get_weather', enabled[0]?.input_schema],
      ['ping', undefined],
      ['search_docs', enabled[2]?.input_schema],
    ]);
    expect(Object.keys(toAiSdkTools(registrations))).toEqual(enabled.map((s) => s.tool_name));
  });
});
