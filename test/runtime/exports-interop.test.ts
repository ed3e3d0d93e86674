// The runtime's tools, sets and results go straight into the exporters (issue 9), in types
// (this file is typechecked) and at run time.
import { describe, expect, it } from 'vitest';
import { ToolSet, defineTool, toMcpCallToolResult, toMcpTools, toOpenAITools } from '../../src/index.js';
import type { ToolResult } from '../../src/index.js';

describe('runtime and exports together', () => {
  const set = new ToolSet([
    defineTool({ name: 'search', description: 'Search', input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }, handler: ({ q }) => [q] }),
  ]);

  it('a ToolSet and its Tools export as they are', () => {
    expect(toMcpTools(set).map((tool) => tool.name)).toEqual(['search']);
    expect(toOpenAITools(set.tools())).toHaveLength(1);
  });

  it("invoke's ToolResult converts for the model, success and failure", async () => {
    const ok: ToolResult = await set.invoke('search', { q: 'x' });
    const bad: ToolResult = await set.invoke('search', {});
    expect(toMcpCallToolResult(ok).isError ?? false).toBe(false);
    expect(toMcpCallToolResult(bad).isError).toBe(true);
  });
});
