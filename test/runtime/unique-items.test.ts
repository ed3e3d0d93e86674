// `uniqueItems` on a caller's array: ajv compared every pair of items unless `items` declared
// scalar types, so 100,000 small objects (1.2 MB of arguments, which any model or MCP client
// may send) held the process for minutes. The runtime's keyword keys each item instead; it
// decides what ajv's did and names the pair ajv's pairwise loop named. On the old code the last
// test runs for minutes.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { ToolSet, defineTool } from '../../src/index.js';

const schemaOf = (items?: object): object => ({ type: 'object', properties: { xs: { type: 'array', uniqueItems: true, ...(items === undefined ? {} : { items }) } } });
const oracle = new Ajv2020({ allErrors: true, strict: false });

async function issuesOf(xs: unknown[], items?: object): Promise<unknown> {
  const set = new ToolSet([defineTool({ name: 'unique', input_schema: schemaOf(items) as never, handler: () => 'ran' })]);
  const result = await set.invoke('unique', { xs });
  return result.success ? undefined : result.issues;
}

describe('uniqueItems', () => {
  it("decides as ajv's deep equality does (object keys in any order), with ajv's message", async () => {
    const cases: unknown[][] = [
      [{ a: 1, b: 2 }, 3, '3', { b: 2, a: 1 }],
      [[1, 2], [2, 1], { a: [1, { c: null }] }, { a: [1, { c: null }] }],
      [1, true, 'true', null, 'null', 1.5, [], {}],
      ['x', 'y', 'x', 'y'],
      [0, -0],
      [{ a: 1 }, { a: 1, b: 2 }],
    ];
    for (const xs of cases) {
      const validate = oracle.compile(schemaOf());
      const expected = validate({ xs }) ? undefined : (validate.errors ?? []).map((error) => ({ path: error.instancePath, message: error.message }));
      expect(await issuesOf(xs)).toEqual(expected);
    }
    expect(await issuesOf(['x', 'y', 'x'], { type: 'string' })).toEqual([{ path: '/xs', message: 'must NOT have duplicate items (items ## 0 and 2 are identical)' }]);
  });

  it('100,000 objects are checked in one pass: a duplicate at the end is found, all distinct pass', async () => {
    const xs = Array.from({ length: 100_000 }, (_, i) => ({ id: i, name: `item ${i}` }));
    expect(await issuesOf(xs)).toBeUndefined();
    expect(await issuesOf([...xs, { name: 'item 7', id: 7 }])).toEqual([{ path: '/xs', message: 'must NOT have duplicate items (items ## 7 and 100000 are identical)' }]);
  });
});

describe('uniqueItems on values that are not JSON', () => {
  // Such items (a handler's output before its JSON check) fall back to ajv's deep equality,
  // which the runtime loads at its first use: this is that first use in a fresh module graph.
  it("a handler's duplicate Dates are found by ajv's deep equality", async () => {
    const outputSchema = { type: 'object', properties: { xs: { type: 'array', uniqueItems: true } } };
    const set = new ToolSet([defineTool({ name: 'dates', input_schema: { type: 'object' }, output_schema: outputSchema as never, handler: () => ({ xs: [new Date(0), new Date(1), new Date(0)] }) })]);
    const result = await set.invoke('dates', {});
    expect(result.success).toBe(false);
    expect(result.success ? undefined : result.issues).toEqual([{ path: '/xs', message: 'must NOT have duplicate items (items ## 0 and 2 are identical)' }]);
  });
});
