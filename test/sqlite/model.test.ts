// Model-based property test: random sequences of operations run against the in-memory
// store (the model) and the SQLite store must give identical results and identical errors.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { InMemoryToolRegistry, openSqliteToolRegistry, ToolRegistryError } from '../../src/index.js';
import type { ToolRegistry } from '../../src/index.js';
import { tempFolder } from './helpers.js';

const name = fc.constantFrom('a', 'b', 'c', 'd');
const specArb = fc.record({
  tool_name: fc.oneof({ weight: 12, arbitrary: name }, { weight: 1, arbitrary: fc.constant('bad name!') }),
  version: fc.constantFrom(null, '1', '2'),
  description: fc.constantFrom(null, 'x', 'y'),
  // Equal objects with different key orders are the same spec.
  input_schema: fc.constantFrom<Record<string, unknown>>({ type: 'object' }, { a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }),
  output_schema: fc.constant({ type: 'object' }),
  tags: fc.constantFrom<string[]>([], ['t'], ['t', 'u'], ['']),
});
const entryArb = fc.record(
  {
    spec: specArb,
    enabled: fc.boolean(),
    created_at: fc.constantFrom(null, '2024-05-01T10:00:00.123456+02:00', '2024-01-01T00:00:00Z', 'yesterday'),
  },
  { requiredKeys: ['spec'] },
);

type Op =
  | { op: 'register'; spec: unknown }
  | { op: 'registerMany'; specs: unknown[] }
  | { op: 'setEnabled'; name: string; enabled: boolean }
  | { op: 'remove'; name: string }
  | { op: 'import'; tools: unknown[]; mode: 'merge' | 'replace'; dryRun: boolean }
  | { op: 'export' }
  | { op: 'listAll'; includeDisabled: boolean }
  | { op: 'get'; name: string }
  | { op: 'has'; name: string }
  | { op: 'restart' }
  | { op: 'registerIf'; spec: unknown; expected: string | null }
  | { op: 'setEnabledIf'; name: string; enabled: boolean; expected: string | null }
  | { op: 'removeIf'; name: string; expected: string | null }
  | { op: 'history'; name: string }
  | { op: 'changes'; since: number };

const expectedArb = fc.constantFrom<string | null>(null, '1', '2');

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('register' as const), spec: specArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('registerMany' as const), specs: fc.array(specArb, { maxLength: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('setEnabled' as const), name, enabled: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), name }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('import' as const),
      tools: fc.array(entryArb, { maxLength: 4 }),
      mode: fc.constantFrom('merge' as const, 'replace' as const),
      dryRun: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('export' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('listAll' as const), includeDisabled: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('get' as const), name }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('has' as const), name }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('restart' as const) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('registerIf' as const), spec: specArb, expected: expectedArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('setEnabledIf' as const), name, enabled: fc.boolean(), expected: expectedArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('removeIf' as const), name, expected: expectedArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('history' as const), name }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('changes' as const), since: fc.integer({ min: 0, max: 8 }) }) },
);

/** The change feed without commit times (wall clock, not the test's clock). */
async function feed(registry: ToolRegistry, since: number) {
  const page = await registry.changes({ since });
  return { revision: page.revision, events: page.events.map(({ at: _at, ...event }) => event) };
}

type Outcome = { ok: true; value: unknown } | { ok: false; name: string; code: unknown; context: unknown };

async function run(registry: ToolRegistry, op: Op): Promise<Outcome> {
  try {
    switch (op.op) {
      case 'register':
        return { ok: true, value: await registry.register(op.spec as never) };
      case 'registerMany':
        return { ok: true, value: await registry.registerMany(op.specs as never) };
      case 'setEnabled':
        return { ok: true, value: await registry.setEnabled(op.name, op.enabled) };
      case 'remove':
        return { ok: true, value: await registry.remove(op.name) };
      case 'import':
        return { ok: true, value: await registry.importSnapshot({ tools: op.tools }, { mode: op.mode, dryRun: op.dryRun }) };
      case 'export':
        return { ok: true, value: await registry.exportSnapshot() };
      case 'listAll':
        return { ok: true, value: await registry.listAll({ includeDisabled: op.includeDisabled }) };
      case 'get':
        return { ok: true, value: await registry.get(op.name) };
      case 'has':
        return { ok: true, value: await registry.has(op.name) };
      case 'restart':
        return { ok: true, value: undefined };
      case 'registerIf':
        return { ok: true, value: await registry.register(op.spec as never, { expectedVersion: op.expected }) };
      case 'setEnabledIf':
        return { ok: true, value: await registry.setEnabled(op.name, op.enabled, { expectedVersion: op.expected }) };
      case 'removeIf':
        return { ok: true, value: await registry.remove(op.name, { expectedVersion: op.expected }) };
      case 'history':
        return { ok: true, value: await registry.history(op.name) };
      case 'changes':
        return { ok: true, value: await feed(registry, op.since) };
    }
  } catch (error) {
    if (!(error instanceof ToolRegistryError)) throw error;
    return { ok: false, name: error.name, code: error.code, context: error.context };
  }
}

const temp = tempFolder();
afterAll(() => temp.cleanup());
let files = 0;
/** Error codes the sequences reached, so the property cannot pass by never failing. */
const codesSeen = new Set<unknown>();

async function compare(ops: Op[], where: 'memory' | 'file'): Promise<void> {
  let now = Date.parse('2025-01-01T00:00:00.000Z');
  const clock = () => new Date(now);
  const model = new InMemoryToolRegistry({ clock });
  const filename = where === 'memory' ? ':memory:' : temp.file(`model-${++files}.db`);
  let sqlite = await openSqliteToolRegistry({ filename, clock });
  try {
    for (const [step, op] of ops.entries()) {
      now += 1000;
      if (op.op === 'restart' && where === 'file') {
        await sqlite.close();
        sqlite = await openSqliteToolRegistry({ filename, clock });
      }
      const expected = await run(model, op);
      const actual = await run(sqlite, op);
      expect(actual, `step ${step}: ${JSON.stringify(op)}`).toStrictEqual(expected);
      // Key order too (toStrictEqual ignores it): specs come back as registered in both.
      expect(JSON.stringify(actual), `step ${step}: key order`).toBe(JSON.stringify(expected));
      if (!expected.ok) codesSeen.add(expected.code);
    }
    expect(await sqlite.exportSnapshot()).toStrictEqual(await model.exportSnapshot());
    expect(await feed(sqlite, 0)).toStrictEqual(await feed(model, 0));
    for (const tool of ['a', 'b', 'c', 'd']) {
      expect(JSON.stringify(await sqlite.history(tool))).toBe(JSON.stringify(await model.history(tool)));
    }
    expect((await sqlite.verify()).ok).toBe(true);
  } finally {
    await sqlite.close();
    await model.close();
  }
}

describe('SQLite store against the in-memory model', () => {
  it("':memory:' gives identical results and identical errors for random operation sequences", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => compare(ops, 'memory')),
      { numRuns: 200 },
    );
    for (const code of ['VALIDATION_FAILED', 'VERSION_CONFLICT', 'TOOL_NOT_FOUND', 'SNAPSHOT_INVALID', 'DUPLICATE_TOOL', 'PRECONDITION_FAILED']) {
      expect(codesSeen, `no sequence reached ${code}`).toContain(code);
    }
  });

  it('a file, closed and reopened at random points, gives identical results and identical errors', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 30 }), (ops) => compare(ops, 'file')),
      { numRuns: 40 },
    );
  });
});
