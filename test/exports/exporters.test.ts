// The exporters: shapes, key order, the documented fix-ups, disabled tools, the inputs they
// take, PROVIDER_INCOMPATIBLE and onIncompatible: 'skip'.
import { describe, expect, it } from 'vitest';
import {
  InMemoryToolRegistry,
  ProviderIncompatibleError,
  ToolRegistryError,
  lintTools,
  toAiSdkTools,
  toAnthropicTools,
  toGeminiTools,
  toMcpTools,
  toOpenAITools,
} from '../../src/index.js';
import type { ExportItems, JsonObject, LintFinding } from '../../src/index.js';
import { cleanSchema, many, tool } from './helpers.js';

const weather = tool('get_weather', {
  type: 'object',
  required: ['city'],
  properties: { unit: { enum: ['C', 'F'], type: 'string' }, city: { type: 'string' } },
});

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof ToolRegistryError ? error.code : `not a ToolRegistryError: ${String(error)}`;
  }
  return undefined;
}

function caught(run: () => unknown): ToolRegistryError {
  try {
    run();
  } catch (error) {
    if (error instanceof ToolRegistryError) return error;
    throw error;
  }
  throw new Error('expected a throw');
}

describe('shapes', () => {
  it('MCP: { name, description, inputSchema, outputSchema? } with the schema key order kept', () => {
    const [entry] = toMcpTools([weather]);
    expect(entry).toEqual({ name: 'get_weather', description: 'the get_weather tool', inputSchema: weather.input_schema });
    expect(Object.keys(entry ?? {})).toEqual(['name', 'description', 'inputSchema']);
    expect(JSON.stringify(entry?.inputSchema)).toBe(JSON.stringify(weather.input_schema));
    const withOutput = toMcpTools([tool('a', cleanSchema(), { output_schema: { type: 'object', properties: { t: { type: 'number' } } }, description: null })]);
    expect(withOutput).toEqual([{ name: 'a', inputSchema: cleanSchema(), outputSchema: { type: 'object', properties: { t: { type: 'number' } } } }]);
  });

  it('OpenAI chat and responses, strict always a boolean', () => {
    expect(toOpenAITools([weather])).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'the get_weather tool', parameters: weather.input_schema, strict: false } },
    ]);
    expect(toOpenAITools([weather], { api: 'responses' })).toEqual([
      { type: 'function', name: 'get_weather', description: 'the get_weather tool', parameters: weather.input_schema, strict: false },
    ]);
    expect(toOpenAITools([tool('a')], { api: 'responses', strict: true })[0]?.strict).toBe(true);
  });

  it('OpenAI strict adds properties: {} to an object without them, and nothing else', () => {
    const schema = cleanSchema({ properties: { q: { type: 'object', additionalProperties: false } } });
    const [exported] = toOpenAITools([tool('a', schema)], { strict: true });
    expect(exported?.function.parameters).toEqual(cleanSchema({ properties: { q: { type: 'object', additionalProperties: false, properties: {} } } }));
    // Without strict nothing is added below the root.
    expect(toOpenAITools([tool('a', schema)])[0]?.function.parameters).toEqual(schema);
  });

  it('OpenAI without strict adds properties: {} to a root without them ("object schema missing properties"), at the end, and nothing else', () => {
    const schema = { type: 'object', description: 'takes nothing', additionalProperties: { type: 'object' } };
    const expected = JSON.stringify({ ...schema, properties: {} });
    expect(JSON.stringify(toOpenAITools([tool('ping', schema)])[0]?.function.parameters)).toBe(expected);
    expect(JSON.stringify(toOpenAITools([tool('ping', schema)], { api: 'responses', deferLoading: false })[0]?.parameters)).toBe(expected);
    expect(schema).not.toHaveProperty('properties');
  });

  it('Anthropic: { name, description, input_schema }, strict: true only when asked', () => {
    expect(toAnthropicTools([weather])).toEqual([{ name: 'get_weather', description: 'the get_weather tool', input_schema: weather.input_schema }]);
    expect(toAnthropicTools([tool('a')], { strict: true })).toEqual([{ name: 'a', description: 'the a tool', input_schema: cleanSchema(), strict: true }]);
  });

  it('Gemini: one { functionDeclarations } object; parametersJsonSchema, or parameters for openapi; none for a tool without parameters', () => {
    const noParams = tool('ping', { type: 'object', properties: {} });
    expect(toGeminiTools([weather, noParams])).toEqual({
      functionDeclarations: [
        { name: 'get_weather', description: 'the get_weather tool', parametersJsonSchema: weather.input_schema },
        { name: 'ping', description: 'the ping tool' },
      ],
    });
    expect(toGeminiTools([weather, noParams], { schema: 'openapi' })).toEqual({
      functionDeclarations: [
        { name: 'get_weather', description: 'the get_weather tool', parameters: weather.input_schema },
        { name: 'ping', description: 'the ping tool' },
      ],
    });
    // An object schema with a description is not "no parameters": it is kept.
    expect(toGeminiTools([tool('d', { type: 'object', description: 'x' })]).functionDeclarations[0]?.parametersJsonSchema).toEqual({ type: 'object', description: 'x' });
  });

  it('AI SDK: a record by name with plain JSON Schema; __proto__ stays a key', () => {
    const tools = toAiSdkTools([weather, tool('__proto__', cleanSchema(), { description: null })]);
    expect(Object.keys(tools)).toEqual(['get_weather', '__proto__']);
    expect(Object.getPrototypeOf(tools)).toBe(Object.prototype);
    expect(tools.get_weather).toEqual({ description: 'the get_weather tool', inputSchema: weather.input_schema });
    expect(Object.getOwnPropertyDescriptor(tools, '__proto__')?.value).toEqual({ inputSchema: cleanSchema() });
    expect(JSON.parse(JSON.stringify(tools))).toEqual({ get_weather: tools.get_weather, ['__proto__']: { inputSchema: cleanSchema() } });
  });

  it('exports are plain, mutable JSON that shares nothing with the input', () => {
    const spec = tool('a');
    const [mcp] = toMcpTools([spec]);
    expect(mcp?.inputSchema).not.toBe(spec.input_schema);
    expect(Object.isFrozen(mcp?.inputSchema)).toBe(false);
    expect(JSON.parse(JSON.stringify(mcp))).toEqual(mcp);
  });

  it('never renames: a name a provider cannot carry is refused, not changed', () => {
    const error = caught(() => toOpenAITools([tool('service.doSomething')]));
    expect(error.code).toBe('PROVIDER_INCOMPATIBLE');
    expect(toMcpTools([tool('service.doSomething')])[0]?.name).toBe('service.doSomething');
  });
});

describe('inputs', () => {
  it("leaves the caller's schemas as they are: not frozen by an annotated export, not judged by what they held before", () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } } };
    const deprecated = { spec: { tool_name: 'old', version: null, description: null, tags: [], input_schema: schema, output_schema: {} }, enabled: true, created_at: null, deprecation: { message: 'Gone soon', replacement: null, sunset: null } };
    expect(toOpenAITools([deprecated], { deprecated: 'annotate' })[0]?.function.description).toBe('Deprecated: Gone soon');
    // deepFreeze froze the caller's own objects in place.
    expect([Object.isFrozen(schema), Object.isFrozen(schema.properties.q)]).toEqual([false, false]);
    // Frozen at the top only, a schema may still change below: its findings were kept by the top object.
    const list: JsonObject = { type: 'array' };
    const shallow = Object.freeze({ type: 'object', properties: { list } });
    const spec = { tool_name: 'lists', input_schema: shallow, output_schema: {} };
    expect(lintTools([spec], { providers: ['openai'] }).map((f) => f.rule)).toEqual(['array-items']);
    list.items = { type: 'string' };
    expect(lintTools([spec], { providers: ['openai'] })).toEqual([]);
  });

  it('takes specs, registrations (disabled ones left out), runtime-shaped tools and tool sets', async () => {
    const registry = new InMemoryToolRegistry();
    await registry.register(tool('a'));
    await registry.register(tool('b'));
    await registry.setEnabled('b', false);
    const registrations = await registry.listAll({ includeDisabled: true });
    expect(toMcpTools(registrations).map((t) => t.name)).toEqual(['a']);
    expect(lintTools([...registrations, tool('b', { type: 'string' })], { providers: ['mcp'] }).map((f) => f.tool_name)).toEqual(['b']);
    const runtimeTool = { name: 'c', spec: tool('c'), handler: () => 1 };
    expect(toAnthropicTools([runtimeTool]).map((t) => t.name)).toEqual(['c']);
    const toolSet: ExportItems = { tools: () => [runtimeTool, { name: 'd', spec: tool('d'), handler: () => 2 }] };
    expect(Object.keys(toAiSdkTools(toolSet))).toEqual(['c', 'd']);
    await registry.close();
  });

  it('a disabled registration stays out with a handler joined to it, for every exporter and the lint', async () => {
    const registry = new InMemoryToolRegistry();
    await registry.register(tool('a'));
    await registry.register(tool('b'));
    await registry.setEnabled('b', false);
    // What a service builds when it joins the registry's rows with the handlers in code.
    const joined = (await registry.listAll({ includeDisabled: true })).map((registration) => ({ ...registration, handler: () => 1 })) as unknown as ExportItems;
    expect(toMcpTools(joined).map((t) => t.name)).toEqual(['a']);
    expect(toOpenAITools(joined).map((t) => t.function.name)).toEqual(['a']);
    expect(toAnthropicTools(joined).map((t) => t.name)).toEqual(['a']);
    expect(toGeminiTools(joined).functionDeclarations.map((t) => t.name)).toEqual(['a']);
    expect(Object.keys(toAiSdkTools(joined))).toEqual(['a']);
    expect(new Set(lintTools([...(joined as unknown[]), tool('b', { type: 'string' })] as ExportItems, { providers: ['mcp'] }).map((f) => f.tool_name))).toEqual(new Set(['b']));
    expect(lintTools(joined, { providers: ['mcp'] })).toEqual([]);
    await registry.close();
  });

  it('applies the ToolSpec defaults (missing description is left out)', () => {
    expect(toMcpTools([{ tool_name: 'x', input_schema: { type: 'object' }, output_schema: {} }])).toEqual([{ name: 'x', inputSchema: { type: 'object' } }]);
  });

  it('a bad spec is VALIDATION_FAILED naming the path', () => {
    const error = caught(() => toMcpTools([tool('a'), { ...tool('b'), input_schema: 'no' as never }]));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.context.path).toBe('[1].input_schema');
    expect(error.context.tool_name).toBe('b');
    const inRegistration = caught(() => lintTools([{ spec: { ...tool('c'), extra: 1 } as never, enabled: true, created_at: null, deprecation: null }]));
    expect(inRegistration.code).toBe('VALIDATION_FAILED');
    expect(inRegistration.context.path).toBe('[0].spec');
  });

  it('misuse is a TypeError', () => {
    expect(() => toMcpTools('nope' as never)).toThrow(TypeError);
    expect(() => toOpenAITools([], { api: 'assistants' as never })).toThrow(TypeError);
    expect(() => toOpenAITools([], { strict: 'yes' as never })).toThrow(TypeError);
    expect(() => toGeminiTools([], { schema: 'yaml' as never })).toThrow(TypeError);
    expect(() => toMcpTools([], { revision: '2024-11-05' as never })).toThrow(TypeError);
    expect(() => toMcpTools([], { onIncompatible: 'drop' as never })).toThrow(TypeError);
    expect(() => lintTools([], { providers: ['bedrock' as never] })).toThrow(TypeError);
  });
});

describe('PROVIDER_INCOMPATIBLE', () => {
  const bad = [tool('ok'), tool('svc.do'), tool('long', cleanSchema(), { description: 'd'.repeat(2000) })];

  it('carries every error finding in context.findings and the first tool in context.tool_name', () => {
    const error = caught(() => toOpenAITools(bad));
    expect(error).toBeInstanceOf(ProviderIncompatibleError);
    expect(error.code).toBe('PROVIDER_INCOMPATIBLE');
    expect(error.context.tool_name).toBe('svc.do');
    const findings = error.context.findings as LintFinding[];
    expect(findings.map((f) => [f.tool_name, f.rule, f.severity])).toEqual([
      ['svc.do', 'name-pattern', 'error'],
      ['long', 'description-length', 'error'],
    ]);
    // The same findings lintTools gives.
    expect(findings).toEqual(lintTools(bad, { providers: ['openai'] }).filter((f) => f.severity === 'error'));
  });

  it("onIncompatible: 'skip' leaves those tools out", () => {
    expect(toOpenAITools(bad, { onIncompatible: 'skip' }).map((t) => t.function.name)).toEqual(['ok']);
    expect(toAnthropicTools(bad, { onIncompatible: 'skip' }).map((t) => t.name)).toEqual(['ok', 'long']);
  });

  it('warnings never refuse an export', () => {
    expect(toGeminiTools([tool('g'.repeat(100))]).functionDeclarations).toHaveLength(1);
    expect(toMcpTools([tool('-a')])).toHaveLength(1);
  });

  it('a request-level error is thrown even with skip; it is counted after skipped tools are left out', () => {
    const error = caught(() => toOpenAITools(many(129), { onIncompatible: 'skip' }));
    expect(error.code).toBe('PROVIDER_INCOMPATIBLE');
    expect((error.context.findings as LintFinding[]).map((f) => [f.tool_name, f.path, f.rule])).toEqual([[null, '', 'max-tools']]);
    expect(error.context.tool_name).toBeUndefined();
    const fits = [...many(128), tool('bad.name')];
    expect(toOpenAITools(fits, { onIncompatible: 'skip' })).toHaveLength(128);
  });

  it('a name given twice: the later one is refused, or skipped', () => {
    expect(codeOf(() => toAiSdkTools([tool('a'), tool('a')]))).toBe('PROVIDER_INCOMPATIBLE');
    const error = caught(() => toMcpTools([tool('a'), tool('a', cleanSchema(), { version: '2' })]));
    expect((error.context.findings as LintFinding[]).map((f) => f.rule)).toEqual(['duplicate-name']);
    expect(toMcpTools([tool('a'), tool('a', cleanSchema(), { version: '2' })], { onIncompatible: 'skip' })).toHaveLength(1);
  });

  it('Anthropic strict: a request over the limits is refused', () => {
    expect(codeOf(() => toAnthropicTools(many(21), { strict: true }))).toBe('PROVIDER_INCOMPATIBLE');
    expect(toAnthropicTools(many(20), { strict: true })).toHaveLength(20);
  });

  it('Gemini openapi refuses what the JSON Schema mode accepts', () => {
    const spec = tool('a', cleanSchema());
    expect(toGeminiTools([spec]).functionDeclarations).toHaveLength(1);
    const error = caught(() => toGeminiTools([spec], { schema: 'openapi' }));
    expect((error.context.findings as LintFinding[]).map((f) => [f.provider, f.path])).toEqual([['gemini-openapi', '/input_schema/additionalProperties']]);
  });
});

describe('validation', () => {
  it('a mutable spec is validated on every call (a change between calls is seen)', () => {
    const spec = tool('a');
    expect(toMcpTools([spec])).toHaveLength(1);
    (spec.input_schema as { type: string }).type = 'string';
    expect(codeOf(() => toMcpTools([spec]))).toBe('PROVIDER_INCOMPATIBLE');
    spec.input_schema = 'no' as never;
    expect(codeOf(() => toMcpTools([spec]))).toBe('VALIDATION_FAILED');
  });

  it('a deeply frozen spec (as registries hand out) exports the same every time', async () => {
    const registry = new InMemoryToolRegistry();
    const registration = await registry.register(tool('a'));
    expect(Object.isFrozen(registration.spec.input_schema)).toBe(true);
    const first = toOpenAITools([registration]);
    expect(toOpenAITools([registration])).toEqual(first);
    expect(lintTools([registration.spec, registration.spec], { providers: ['mcp'] }).map((f) => f.rule)).toEqual(['duplicate-name']);
    await registry.close();
  });
});
