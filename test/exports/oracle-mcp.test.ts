// MCP against the official TypeScript SDK: what the lint accepts is exactly what a client's
// ListToolsResultSchema parses, and the export parses back unchanged. Tool names against the
// SDK's own validateToolName (SEP-986).
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { validateToolName } from '@modelcontextprotocol/sdk/shared/toolNameValidation.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, lintTools, toMcpTools } from '../../src/index.js';
import type { JsonObject, ToolSpecInput } from '../../src/index.js';
import { rootSchema } from './schema-arbitrary.js';

const spec = (input_schema: JsonObject, output_schema: JsonObject = {}): ToolSpecInput => ({ tool_name: 't', input_schema, output_schema });
const errors = (item: ToolSpecInput): string[] => lintTools([item], { providers: ['mcp'] }).filter((f) => f.severity === 'error').map((f) => `${f.rule} ${f.path}`);
/** The SDK parses the entry and keeps it as it was, as JSON (its parse drops a "__proto__" key at the root and among root properties). */
const sdkTakes = (item: ToolSpecInput): boolean => {
  const entry = { name: item.tool_name, inputSchema: item.input_schema, ...(Object.keys(item.output_schema).length > 0 ? { outputSchema: item.output_schema } : {}) };
  const parsed = ListToolsResultSchema.safeParse({ tools: [entry] });
  return parsed.success && canonicalJson(parsed.data.tools[0]) === canonicalJson(entry);
};
const parsedJson = (text: string): JsonObject => JSON.parse(text) as JsonObject;

describe('MCP: lintTools agrees with the SDK ListToolsResultSchema', () => {
  const cases: [string, ToolSpecInput, string[]][] = [
    ['boolean property schema', spec({ type: 'object', properties: { a: true } }), ['root-properties /input_schema/properties/a']],
    ['properties as an array', spec({ type: 'object', properties: [] }), ['root-properties /input_schema/properties']],
    ['required as a string', spec({ type: 'object', required: 'a' as never }), ['root-required /input_schema/required']],
    ['required with a number', spec({ type: 'object', properties: { a: {} }, required: ['a', 1 as never] }), ['root-required /input_schema/required/1']],
    ['outputSchema property null', spec({ type: 'object' }, { type: 'object', properties: { a: null } }), ['output-root-properties /output_schema/properties/a']],
    ['outputSchema required object', spec({ type: 'object' }, { type: 'object', required: {} }), ['output-root-required /output_schema/required']],
    // The SDK's parse drops these keys (JSON.parse makes "__proto__" an own key, as a client receives it).
    ['a root key named __proto__', spec(parsedJson('{"type":"object","__proto__":{"x":1}}')), ['root-proto-key /input_schema/__proto__']],
    ['a root property named __proto__', spec(parsedJson('{"type":"object","properties":{"__proto__":{"type":"string"},"b":{}}}')), ['root-proto-key /input_schema/properties/__proto__']],
    ['a root property __proto__: null', spec(parsedJson('{"type":"object","properties":{"__proto__":null}}')), ['root-proto-key /input_schema/properties/__proto__']],
    ['a nested __proto__ key is kept', spec(parsedJson('{"type":"object","properties":{"a":{"type":"string","__proto__":{"q":1}}}}')), []],
    // Nested booleans are fine: the SDK checks only the root's properties.
    ['nested boolean schema', spec({ type: 'object', properties: { a: { type: 'object', properties: { b: true } } } }), []],
    ['required naming an undeclared property', spec({ type: 'object', required: ['x'] }), []],
  ];
  for (const [name, item, expected] of cases) {
    it(name, () => {
      expect(errors(item)).toEqual(expected);
      expect(sdkTakes(item)).toBe(expected.length === 0);
    });
  }

  it('property: no error exactly when the SDK parses the entry unchanged; the export parses back unchanged', () => {
    fc.assert(
      fc.property(rootSchema, rootSchema, fc.boolean(), (input, output, withOutput) => {
        const item = spec(input, withOutput ? output : {});
        const ok = errors(item).length === 0;
        expect(ok).toBe(sdkTakes(item));
        if (ok) {
          const tools = toMcpTools([item]);
          expect(ListToolsResultSchema.parse({ tools }).tools).toEqual(tools);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('MCP tool names: the lint agrees with the SDK validateToolName', () => {
  // From the SDK's test/shared/toolNameValidation.test.ts: valid names, and those it warns about.
  const valid = ['getUser', 'get_user_profile', 'user-profile-update', 'admin.tools.list', 'DATA_EXPORT_v2.1', 'a', 'a'.repeat(128)];
  const warned = ['-get-user', 'get-user-', '.get.user', 'get.user.'];
  it('valid names have no finding; edge dashes and dots are warnings, as the SDK warns', () => {
    for (const name of valid) {
      expect(validateToolName(name)).toEqual({ isValid: true, warnings: [] });
      expect(lintTools([{ ...spec({ type: 'object' }), tool_name: name }], { providers: ['mcp'] })).toEqual([]);
    }
    for (const name of warned) {
      const sdk = validateToolName(name);
      expect(sdk.isValid).toBe(true);
      expect(sdk.warnings.length).toBeGreaterThan(0);
      expect(lintTools([{ ...spec({ type: 'object' }), tool_name: name }], { providers: ['mcp'] }).map((f) => [f.rule, f.severity])).toEqual([['name-edge-character', 'warning']]);
    }
  });
  it('property: a name the ToolSpec contract takes is one the SDK calls valid, and warns exactly when the lint does', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_.-]{1,128}$/), (name) => {
        const sdk = validateToolName(name);
        expect(sdk.isValid).toBe(true);
        const found = lintTools([{ ...spec({ type: 'object' }), tool_name: name }], { providers: ['mcp'] });
        expect(found.length > 0).toBe(sdk.warnings.length > 0);
      }),
      { numRuns: 500 },
    );
  });
});
