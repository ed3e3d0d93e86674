// The exports assigned to the providers' own TypeScript types (devDependencies only).
// `npm run typecheck` (tsconfig.check.json includes test/) is what checks this file; the
// runtime assertions keep it a real test when vitest runs it.
import type Anthropic from '@anthropic-ai/sdk';
import type { ChatCompletionTool, ChatCompletionToolMessageParam } from 'openai/resources/chat/completions';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import { jsonSchema, tool as aiTool } from 'ai';
import type { ToolSet as AiToolSet } from 'ai';
import { describe, expect, it } from 'vitest';
import { toAiSdkTools, toAnthropicToolResult, toAnthropicTools, toOpenAITools, toOpenAIToolOutput } from '../../src/index.js';
import type { ToolResult } from '../../src/index.js';
import { tool } from './helpers.js';

const specs = [tool('get_weather'), tool('search', { type: 'object', properties: {} }, { description: null })];
const ok: ToolResult = { success: true, data: { temperature: 21 }, execution_time_ms: 3 };

describe('the exports fit the SDK types', () => {
  it('OpenAI Chat Completions: ChatCompletionTool[] and the tool message', () => {
    const tools: ChatCompletionTool[] = toOpenAITools(specs);
    const strictTools: ChatCompletionTool[] = toOpenAITools(specs, { api: 'chat', strict: true, onIncompatible: 'skip' });
    const message: ChatCompletionToolMessageParam = toOpenAIToolOutput(ok, 'call_1');
    expect(tools.map((t) => t.type)).toEqual(['function', 'function']);
    expect(strictTools).toHaveLength(1);
    expect(message.role).toBe('tool');
  });

  it('OpenAI Responses: FunctionTool[] and the function_call_output item', () => {
    const tools: FunctionTool[] = toOpenAITools(specs, { api: 'responses' });
    const item: ResponseInputItem = toOpenAIToolOutput(ok, 'call_1', { api: 'responses' });
    expect(tools.every((t) => typeof t.strict === 'boolean')).toBe(true);
    expect(item.type).toBe('function_call_output');
  });

  it("Anthropic: Tool[] and the tool_result block", () => {
    const tools: Anthropic.Messages.Tool[] = toAnthropicTools(specs);
    const strict: Anthropic.Messages.Tool[] = toAnthropicTools([specs[0] as never], { strict: true });
    const block: Anthropic.Messages.ToolResultBlockParam = toAnthropicToolResult(ok, 'toolu_1');
    expect(tools.map((t) => t.input_schema.type)).toEqual(['object', 'object']);
    expect(strict[0]?.strict).toBe(true);
    expect(block.tool_use_id).toBe('toolu_1');
  });

  it('AI SDK: each entry wraps into tool({ description, inputSchema: jsonSchema(...) }) of an AI SDK ToolSet', () => {
    const tools: AiToolSet = Object.fromEntries(
      Object.entries(toAiSdkTools(specs)).map(([name, t]) => [name, aiTool({ description: t.description, inputSchema: jsonSchema(t.inputSchema) })]),
    );
    expect(Object.keys(tools)).toEqual(['get_weather', 'search']);
    expect(tools.search?.description).toBeUndefined();
  });
});
