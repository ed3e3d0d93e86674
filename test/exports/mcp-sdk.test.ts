// The MCP export and the result converters parsed as a client parses them: with the
// official SDK's own zod schemas.
import { CallToolResultSchema, ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { defineTool, toAnthropicToolResult, toMcpCallToolResult, toMcpTools, toOpenAIToolOutput } from '../../src/index.js';
import type { ToolResult } from '../../src/index.js';
import { cleanSchema, tool } from './helpers.js';

describe('toMcpTools through ListToolsResultSchema', () => {
  const specs = [
    tool('get_weather', cleanSchema({ $schema: 'https://json-schema.org/draft/2020-12/schema' }), { output_schema: { type: 'object', properties: { t: { type: 'number' } } } }),
    tool('service.doSomething', { type: 'object' }, { description: null }),
  ];

  for (const revision of ['2025-11-25', '2025-06-18'] as const) {
    it(`parses unchanged (${revision})`, () => {
      const tools = toMcpTools(specs, { revision });
      const parsed = ListToolsResultSchema.parse({ tools });
      expect(parsed.tools).toEqual(tools);
    });
  }

  it('what the lint calls root-type-object is what the SDK rejects', () => {
    const raw = [{ name: 'a', inputSchema: { type: 'string' } }];
    expect(ListToolsResultSchema.safeParse({ tools: raw }).success).toBe(false);
    expect(() => toMcpTools([tool('a', { type: 'string' })])).toThrow(expect.objectContaining({ code: 'PROVIDER_INCOMPATIBLE' }));
  });
});

describe('toMcpTools with runtime tools: title, annotations, a non-object output schema', () => {
  const input = { type: 'object', properties: { q: { type: 'string' } } };
  const titled = defineTool({ name: 'search', title: 'Search', description: 'd', annotations: { readOnlyHint: true, openWorldHint: true }, input_schema: input, handler: () => 1 });
  const listing = defineTool({ name: 'list', input_schema: input, output_schema: { type: 'array', items: { type: 'string' } }, handler: () => [] });

  it('carries title and annotations in the order MCP lists the fields, and the SDK parses them', () => {
    const [tool] = toMcpTools([titled]);
    expect(Object.keys(tool ?? {})).toEqual(['name', 'title', 'description', 'inputSchema', 'annotations']);
    expect(tool).toMatchObject({ title: 'Search', annotations: { readOnlyHint: true, openWorldHint: true } });
    expect(ListToolsResultSchema.parse({ tools: [tool] }).tools).toEqual([tool]);
    expect(Object.keys(toMcpTools([titled.spec])[0] ?? {})).toEqual(['name', 'description', 'inputSchema']);
  });

  it("an output schema that is not an object schema: refused by default, left out with nonObjectOutputSchema 'omit'", () => {
    expect(() => toMcpTools([listing])).toThrow(expect.objectContaining({ code: 'PROVIDER_INCOMPATIBLE' }));
    const [tool] = toMcpTools([listing], { nonObjectOutputSchema: 'omit' });
    expect(tool).toEqual({ name: 'list', inputSchema: input });
    expect(() => toMcpTools([listing], { nonObjectOutputSchema: 'drop' as never })).toThrow(TypeError);
  });
});

describe('result converters', () => {
  const results: Record<string, ToolResult> = {
    object: { success: true, data: { temperature: 21, unit: 'C' }, execution_time_ms: 2 },
    array: { success: true, data: [1, 2], execution_time_ms: 2 },
    text: { success: true, data: 'sunny', execution_time_ms: 2 },
    nothing: { success: true, data: undefined, execution_time_ms: 2 },
    null: { success: true, data: null, execution_time_ms: 2 },
    failure: { success: false, code: 'INVALID_ARGUMENTS', error: "invalid arguments for tool 'get_weather'", issues: [{ path: '/city', message: 'must be string' }], execution_time_ms: 1 },
  };

  for (const [name, result] of Object.entries(results)) {
    it(`toMcpCallToolResult (${name}) parses with CallToolResultSchema`, () => {
      const converted = toMcpCallToolResult(result);
      expect(CallToolResultSchema.parse(converted)).toEqual(converted);
    });
  }

  it('structuredContent only for object data; isError only for failures', () => {
    expect(toMcpCallToolResult(results.object as ToolResult)).toEqual({ content: [{ type: 'text', text: '{"temperature":21,"unit":"C"}' }], structuredContent: { temperature: 21, unit: 'C' } });
    expect(toMcpCallToolResult(results.array as ToolResult)).toEqual({ content: [{ type: 'text', text: '[1,2]' }] });
    expect(toMcpCallToolResult(results.text as ToolResult)).toEqual({ content: [{ type: 'text', text: 'sunny' }] });
    const failure = toMcpCallToolResult(results.failure as ToolResult);
    expect(failure.isError).toBe(true);
    expect(failure.structuredContent).toBeUndefined();
    expect((failure.content[0] as { text: string }).text.startsWith('INVALID_ARGUMENTS')).toBe(true);
  });

  it('structuredContent is an object even when object data serialises to something else (toJSON)', () => {
    for (const data of [{ toJSON: () => 'a string' }, { toJSON: () => [1, 2] }, { toJSON: () => null }]) {
      const converted = toMcpCallToolResult({ success: true, data, execution_time_ms: 1 });
      expect(CallToolResultSchema.safeParse(converted).success).toBe(true);
      expect(converted.structuredContent).toBeUndefined();
    }
  });

  it('Anthropic and OpenAI shapes', () => {
    expect(toAnthropicToolResult(results.text as ToolResult, 'toolu_1')).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' });
    expect(toAnthropicToolResult(results.failure as ToolResult, 'toolu_2').is_error).toBe(true);
    expect(toOpenAIToolOutput(results.object as ToolResult, 'call_1')).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '{"temperature":21,"unit":"C"}' });
    expect(toOpenAIToolOutput(results.text as ToolResult, 'call_2', { api: 'responses' })).toEqual({ type: 'function_call_output', call_id: 'call_2', output: 'sunny' });
  });

  it('misuse is a TypeError', () => {
    expect(() => toMcpCallToolResult({} as never)).toThrow(TypeError);
    expect(() => toAnthropicToolResult(results.text as ToolResult, '')).toThrow(TypeError);
    expect(() => toOpenAIToolOutput(results.text as ToolResult, 'c', { api: 'x' as never })).toThrow(TypeError);
    expect(() => toMcpCallToolResult({ success: true, data: 1n, execution_time_ms: 1 })).toThrow(TypeError);
  });
});
