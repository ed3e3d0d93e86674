// The runtime's tools, sets and results go straight into the exporters (issue 9), in types
// (this file is typechecked) and at run time.
import { describe, expect, it } from 'vitest';
import { ToolSet, defineTool, lintTools, toAiSdkTools, toAnthropicTools, toGeminiTools, toMcpCallToolResult, toMcpTools, toOpenAITools } from '../../src/index.js';
import type { ToolResult } from '../../src/index.js';

describe('runtime and exports together', () => {
  const set = new ToolSet([
    defineTool({ name: 'search', description: 'Search', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, handler: ({ q }) => [q] }),
  ]);

  it('a ToolSet and its Tools export as they are', () => {
    expect(toMcpTools(set).map((tool) => tool.name)).toEqual(['search']);
    expect(toOpenAITools(set.tools())).toHaveLength(1);
  });

  it("a turn's ToolBox exports its current tools, in insertion order, and nothing it dropped", () => {
    const extra = defineTool({ name: 'extra', ephemeral: true, input_schema: { type: 'object' }, handler: () => 1 });
    const hidden = defineTool({ name: 'hidden', input_schema: { type: 'object' }, handler: () => 1 });
    const box = set.forTurn().register(extra).register(hidden);
    box.unregister('hidden');
    expect(toMcpTools(box).map((tool) => tool.name)).toEqual(['search', 'extra']);
    expect(toOpenAITools(box).map((tool) => tool.function.name)).toEqual(['search', 'extra']);
    expect(toAnthropicTools(box).map((tool) => tool.name)).toEqual(['search', 'extra']);
    expect(toGeminiTools(box).functionDeclarations.map((tool) => tool.name)).toEqual(['search', 'extra']);
    expect(Object.keys(toAiSdkTools(box))).toEqual(['search', 'extra']);
    expect(lintTools(box)).toEqual([]);
    box.pruneEphemeral();
    expect(toMcpTools(box).map((tool) => tool.name)).toEqual(['search']);
  });

  it("invoke's ToolResult converts for the model, success and failure", async () => {
    const ok: ToolResult = await set.invoke('search', { q: 'x' });
    const bad: ToolResult = await set.invoke('search', {});
    expect(toMcpCallToolResult(ok).isError ?? false).toBe(false);
    expect(toMcpCallToolResult(bad).isError).toBe(true);
  });
});
