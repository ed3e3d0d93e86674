// The same tool set through ToolSet.invoke and the result converters: what a client lists
// is what the set answers to, and every result parses as the protocol's own schema.
import { CallToolResultSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { ToolSet, defineTool, lintTools, toAnthropicToolResult, toMcpCallToolResult, toMcpTools, toOpenAIToolOutput } from '../../src/index.js';

const weather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  output_schema: { type: 'object', properties: { city: { type: 'string' }, temperature: { type: 'number' } }, required: ['city', 'temperature'] },
  handler: (args: { city: string }) => ({ city: args.city, temperature: 21 }),
});
const explode = defineTool({
  name: 'explode',
  input_schema: { type: 'object', properties: {} },
  handler: () => {
    throw new Error('boom');
  },
});
const set = new ToolSet([weather, explode]);

describe('ToolSet.invoke -> toMcpCallToolResult', () => {
  it('lists what the set answers to, and every result parses with CallToolResultSchema', async () => {
    expect(lintTools(set)).toEqual([]);
    const listed = ListToolsResultSchema.parse({ tools: toMcpTools(set) });
    expect(listed.tools.map((t) => t.name)).toEqual(set.list());
    for (const t of listed.tools) expect(set.resolve(t.name)).not.toBeNull();

    const ok = await set.invoke('get_weather', { city: 'Oslo' });
    expect(ok.success).toBe(true);
    const result = CallToolResultSchema.parse(toMcpCallToolResult(ok));
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ city: 'Oslo', temperature: 21 });
    // structuredContent matches the outputSchema the client was given.
    const outputSchema = listed.tools.find((t) => t.name === 'get_weather')?.outputSchema;
    expect(new Ajv2020().compile(outputSchema ?? {})(result.structuredContent)).toBe(true);

    for (const [name, args, code] of [
      ['get_weather', { city: 7 }, 'INVALID_ARGUMENTS'],
      ['explode', {}, 'TOOL_FAILED'],
      ['missing', {}, 'TOOL_NOT_FOUND'],
    ] as const) {
      const failed = await set.invoke(name, args);
      expect(failed.success).toBe(false);
      const converted = CallToolResultSchema.parse(toMcpCallToolResult(failed));
      expect(converted.isError).toBe(true);
      expect(converted.content[0]).toMatchObject({ type: 'text' });
      expect((converted.content[0] as { text: string }).text.startsWith(`${code}: `)).toBe(true);
      expect(toAnthropicToolResult(failed, 'toolu_1').is_error).toBe(true);
      expect(toOpenAIToolOutput(failed, 'call_1').content).toBe((converted.content[0] as { text: string }).text);
    }
  });
});
