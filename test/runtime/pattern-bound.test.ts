// A caller's arguments (a model's, any MCP client's) are checked against a tool's `pattern`s on
// the calling thread: a backtracking pattern against a crafted value held the process for hours
// (ajv tested it with no bound). Every check now has 100 ms for its pattern tests; past it the
// call is refused (INVALID_ARGUMENTS, or INVALID_OUTPUT for a result), naming the place and
// the pattern, never a hang and never valid. On the old code each of these tests hangs its worker.
import { describe, expect, it } from 'vitest';
import { ToolBox, ToolSet, defineTool } from '../../src/index.js';
import type { ToolResult } from '../../src/index.js';

const hostile = `${'a'.repeat(40)}b`;
const words = `${'a'.repeat(40)}!`;
// The pattern as ajv's own message shows it (`must match pattern "^(a+)+$"`).
const refusal = (pattern: string): string => `could not be checked against pattern "${pattern}" within 100 ms`;

const spell = defineTool({
  name: 'spell',
  input_schema: {
    type: 'object',
    properties: {
      word: { type: 'string', pattern: '^(a+)+$' },
      // Common in real schemas: the tool's author is not the attacker.
      phrases: { type: 'array', items: { type: 'string', pattern: '^(\\w+\\s?)+$' } },
      id: { type: 'string', pattern: '^[a-z]+-[0-9]+$' },
    },
    additionalProperties: false,
  },
  handler: (args) => args,
});

function issuesOf(result: ToolResult): unknown {
  expect(result.success).toBe(false);
  return result.success ? undefined : { code: result.code, issues: result.issues };
}

describe('pattern tests of a call are bounded (100 ms per check)', () => {
  it('a backtracking pattern against a crafted argument: INVALID_ARGUMENTS naming the place and the pattern; ordinary calls unchanged', async () => {
    const set = new ToolSet([spell]);
    expect(issuesOf(await set.invoke('spell', { word: hostile }))).toEqual({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/word', message: refusal('^(a+)+$') }] });
    expect(issuesOf(await set.invoke('spell', { phrases: ['fine words', words] }))).toEqual({
      code: 'INVALID_ARGUMENTS',
      issues: [{ path: '/phrases/1', message: refusal('^(\\w+\\s?)+$') }],
    });
    // ToolBox invokes the same way.
    expect(issuesOf(await new ToolBox([spell]).invoke('spell', { word: hostile }))).toEqual({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/word', message: refusal('^(a+)+$') }] });
    // What the patterns decide in time is as before: valid, or ajv's own issue.
    const ok = await set.invoke('spell', { word: 'aaaa', phrases: ['two words', 'one'], id: 'ab-12' });
    expect(ok).toMatchObject({ success: true, data: { word: 'aaaa', phrases: ['two words', 'one'], id: 'ab-12' } });
    expect(issuesOf(await set.invoke('spell', { word: 'aab', id: 'AB' }))).toEqual({
      code: 'INVALID_ARGUMENTS',
      issues: [
        { path: '/word', message: 'must match pattern "^(a+)+$"' },
        { path: '/id', message: 'must match pattern "^[a-z]+-[0-9]+$"' },
      ],
    });
  });

  it('one budget per call: 1,000 crafted values are refused as one, not after 1,000 timeouts; the next call has its own', async () => {
    const set = new ToolSet([spell]);
    const refused = await set.invoke('spell', { phrases: Array.from({ length: 1000 }, () => words) });
    expect(issuesOf(refused)).toEqual({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/phrases/0', message: refusal('^(\\w+\\s?)+$') }] });
    // 1,000 ordinary values under the same pattern pass.
    const many = Array.from({ length: 1000 }, (_, i) => `phrase number ${i}`);
    expect(await set.invoke('spell', { phrases: many })).toMatchObject({ success: true });
  });

  it('never valid past the budget: under `not`, as a property name (patternProperties), through a $ref, in a result', async () => {
    const tools = [
      defineTool({ name: 'negated', input_schema: { type: 'object', properties: { word: { not: { pattern: '^(a+)+$' } } } }, handler: () => 'ran' }),
      defineTool({ name: 'keys', input_schema: { type: 'object', patternProperties: { '^(a+)+$': { type: 'string' } } }, handler: () => 'ran' }),
      defineTool({
        name: 'referred',
        input_schema: { type: 'object', properties: { word: { $ref: '#/$defs/word' } }, $defs: { word: { type: 'string', pattern: '^(a+)+$' } } },
        handler: () => 'ran',
      }),
      defineTool({
        name: 'answer',
        input_schema: { type: 'object' },
        output_schema: { type: 'object', properties: { word: { type: 'string', pattern: '^(a+)+$' } } },
        handler: () => ({ word: hostile }),
      }),
    ];
    const set = new ToolSet(tools);
    expect(issuesOf(await set.invoke('negated', { word: hostile }))).toEqual({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/word', message: refusal('^(a+)+$') }] });
    expect(issuesOf(await set.invoke('keys', { [hostile]: 'x' }))).toEqual({ code: 'INVALID_ARGUMENTS', issues: [{ path: `/${hostile}`, message: refusal('^(a+)+$') }] });
    expect(issuesOf(await set.invoke('referred', { word: hostile }))).toEqual({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/word', message: refusal('^(a+)+$') }] });
    expect(issuesOf(await set.invoke('answer', {}))).toEqual({ code: 'INVALID_OUTPUT', issues: [{ path: '/word', message: refusal('^(a+)+$') }] });
    // In time, each decides as ajv does.
    expect(await set.invoke('negated', { word: 'ab' })).toMatchObject({ success: true, data: 'ran' });
    expect(issuesOf(await set.invoke('negated', { word: 'aa' }))).toMatchObject({ code: 'INVALID_ARGUMENTS' });
  });

  it('a pattern whose shape bounds it: a long value is tested in time, and many long values share the budget', async () => {
    const set = new ToolSet([
      defineTool({ name: 'ids', input_schema: { type: 'object', properties: { ids: { type: 'array', items: { type: 'string', pattern: '[a-z]+[0-9]+' } } } }, handler: () => 'ran' }),
    ]);
    expect(issuesOf(await set.invoke('ids', { ids: ['a'.repeat(1000)] }))).toEqual({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/ids/0', message: 'must match pattern "[a-z]+[0-9]+"' }] });
    expect(await set.invoke('ids', { ids: [`${'a'.repeat(1000)}1`, 'ab12'] })).toMatchObject({ success: true });
    // Each of these costs milliseconds (cubic backtracking): 2,000 of them are refused once the budget is spent.
    const refused = await set.invoke('ids', { ids: Array.from({ length: 2000 }, () => 'a'.repeat(500)) });
    expect(issuesOf(refused)).toEqual({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/ids/0', message: refusal('[a-z]+[0-9]+') }] });
  });

  it("a spent budget is the check's alone: a schema compiled after a refused call is checked against the meta-schema's patterns in full", async () => {
    // The budget a refused call spent was left over, and ajv checks a new schema's `$id` and
    // `$anchor` against the meta-schema's patterns with the same engine: a valid `$id` was
    // refused ("data/$id must match pattern") until the next call reset the budget. Seen as a
    // flaky define-tool test whenever this file had run before it in the same worker.
    const set = new ToolSet([spell]);
    for (const word of [hostile, `${'a'.repeat(41)}b`]) {
      expect(issuesOf(await set.invoke('spell', { word }))).toEqual({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/word', message: refusal('^(a+)+$') }] });
      const tool = defineTool({ name: 'later', input_schema: { $id: 'https://example.com/later.json', $anchor: 'args', type: 'object' }, handler: () => 'ran' });
      expect(tool.spec.input_schema).toMatchObject({ $id: 'https://example.com/later.json' });
    }
    // The same after a bounded check that spent the budget on many long values.
    const ids = new ToolSet([defineTool({ name: 'ids', input_schema: { type: 'array', items: { type: 'string', pattern: '[a-z]+[0-9]+' } }, handler: () => 'ran' })]);
    expect(issuesOf(await ids.invoke('ids', Array.from({ length: 2000 }, () => 'a'.repeat(500))))).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(defineTool({ name: 'later', input_schema: { $id: 'https://example.com/again.json', type: 'object' }, handler: () => 'ran' }).name).toBe('later');
  });
});
