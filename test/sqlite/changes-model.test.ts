// Model-based property test for issue 11: random sequences of writes (conditional ones
// included) run against the in-memory store and the SQLite store must give the same results,
// the same errors, the same key order, the same history and the same change feed.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, openSqliteToolRegistry, ToolRegistryError } from '../../src/index.js';
import type { ToolRegistry } from '../../src/index.js';
import { tempFolder } from './helpers.js';

const NAMES = ['a', 'b', 'c'];
const name = fc.constantFrom(...NAMES);
const version = fc.constantFrom<string | null>(null, '1', '2');
const specArb = fc.record({
  tool_name: name,
  version,
  description: fc.constant(null),
  // Equal objects in different key orders: the same spec, stored as first given.
  input_schema: fc.constantFrom<Record<string, unknown>>({ type: 'object', a: 1 }, { a: 1, type: 'object' }, { b: [1, 2] }),
  output_schema: fc.constant({ type: 'object' }),
});
/** The spec with its top-level keys reversed: the same identity, another order. */
const reordered = (spec: Record<string, unknown>) => Object.fromEntries(Object.entries(spec).reverse());

type Op =
  | { op: 'register'; spec: Record<string, unknown>; reverse: boolean; expected?: string | null }
  | { op: 'setEnabled'; name: string; enabled: boolean; expected?: string | null }
  | { op: 'remove'; name: string; expected?: string | null }
  | { op: 'import'; tools: { spec: Record<string, unknown>; enabled: boolean }[]; mode: 'merge' | 'replace' }
  | { op: 'restart' };

const expectedArb = fc.option(version, { nil: undefined });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('register' as const), spec: specArb, reverse: fc.boolean(), expected: expectedArb }, { requiredKeys: ['op', 'spec', 'reverse'] }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('setEnabled' as const), name, enabled: fc.boolean(), expected: expectedArb }, { requiredKeys: ['op', 'name', 'enabled'] }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), name, expected: expectedArb }, { requiredKeys: ['op', 'name'] }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('import' as const),
      tools: fc.uniqueArray(fc.record({ spec: specArb, enabled: fc.boolean() }), { maxLength: 3, selector: (tool) => tool.spec.tool_name }),
      mode: fc.constantFrom('merge' as const, 'replace' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('restart' as const) }) },
);

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; context: unknown };

async function run(registry: ToolRegistry, op: Op): Promise<Outcome> {
  const condition = 'expected' in op && op.expected !== undefined ? { expectedVersion: op.expected } : undefined;
  try {
    switch (op.op) {
      case 'register':
        return { ok: true, value: await registry.register((op.reverse ? reordered(op.spec) : op.spec) as never, condition) };
      case 'setEnabled':
        return { ok: true, value: await registry.setEnabled(op.name, op.enabled, condition) };
      case 'remove':
        return { ok: true, value: await registry.remove(op.name, condition) };
      case 'import': {
        const { revision: _revision, ...report } = await registry.importSnapshot({ tools: op.tools }, { mode: op.mode });
        return { ok: true, value: report };
      }
      case 'restart':
        return { ok: true, value: undefined };
    }
  } catch (error) {
    if (!(error instanceof ToolRegistryError)) throw error;
    return { ok: false, code: error.code, context: error.context };
  }
}

/** Everything issue 11 adds, as text (so key order counts), commit times left out. */
async function observe(registry: ToolRegistry): Promise<string> {
  const { revision, events } = await registry.changes();
  return JSON.stringify({
    revision,
    events: events.map(({ at: _at, ...event }) => event),
    history: await Promise.all(NAMES.map((tool) => registry.history(tool))),
    tools: await registry.listAll({ includeDisabled: true }),
  });
}

const temp = tempFolder();
afterAll(() => temp.cleanup());
let files = 0;
const codesSeen = new Set<string>();

describe('SQLite store against the in-memory store: feed, history, key order, conditional writes', () => {
  it('random sequences give the same results, errors, feed and history', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        let now = Date.parse('2025-01-01T00:00:00.000Z');
        const clock = () => new Date(now);
        const filename = temp.file(`changes-model-${++files}.db`);
        const memory = new InMemoryToolRegistry({ clock });
        let sqlite = await openSqliteToolRegistry({ filename, clock });
        try {
          for (const [step, op] of ops.entries()) {
            now += 1000;
            if (op.op === 'restart') {
              await sqlite.close();
              sqlite = await openSqliteToolRegistry({ filename, clock });
            }
            const expected = await run(memory, op);
            const actual = await run(sqlite, op);
            expect(JSON.stringify(actual), `step ${step}: ${JSON.stringify(op)}`).toBe(JSON.stringify(expected));
            if (!expected.ok) codesSeen.add(expected.code);
          }
          expect(await observe(sqlite)).toBe(await observe(memory));
        } finally {
          await sqlite.close();
          await memory.close();
        }
      }),
      { numRuns: 100 },
    );
    for (const code of ['PRECONDITION_FAILED', 'VERSION_CONFLICT', 'TOOL_NOT_FOUND']) expect(codesSeen).toContain(code);
  });
});
