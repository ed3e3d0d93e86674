// Model-based property test: random sequences of operations run against every store of the
// conformance record (test/conformance/stores.ts) and against a tiny reference model of DESIGN.md's rules written here, independently of the
// library's core (its own identity, validation and import plan), so a bug the stores share
// through the core is still caught. Generators include non-ASCII and astral text, and the
// inputs the contracts refuse: lone surrogates, integers beyond 2^53 - 1, empty tags.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ToolRegistryError } from '../../src/index.js';
import type { ToolRegistry } from '../../src/index.js';
import { selectedStores } from './stores.js';
import type { StoreHarness, StoreName } from './stores.js';

// --- generators ------------------------------------------------------------------------

const name = fc.constantFrom('a', 'b', 'c', 'B');
const VALID_TIMES = ['2024-05-01T10:00:00.123456+02:00', '2024-01-01T00:00:00Z'];
/** Spec fields from values the contracts accept and (`bad`) refuse; refused ones are rarer, so batches can be valid. */
function field<T>(good: readonly T[], bad: readonly T[]): fc.Arbitrary<T> {
  return fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...good) }, { weight: 1, arbitrary: fc.constantFrom(...bad) });
}
const specArb = fc.record(
  {
    tool_name: field(['a', 'b', 'c', 'B'], ['bad name!']),
    version: field([null, '1', '2', 'é', '\u{1F600}'], ['1\uD800']),
    description: field([null, 'x', 'Привет', '😀 \u{1D11E}'], ['half \uDC00']),
    // Equal objects with different key orders, and -0 and 0, are the same spec.
    input_schema: field<Record<string, unknown>>(
      [{ type: 'object' }, { a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }, { 'ключ': '✓', '\u{1F600}': ['\u{10FFFF}'] }, { z: -0 }, { z: 0 }],
      [{ big: 2 ** 64 }, { 'k\uDFFF': 1 }],
    ),
    output_schema: fc.constant({ type: 'object' }),
    tags: field<string[]>([[], ['t'], ['t', 'u'], ['😀', 'ü']], [[''], ['\uD83D']]),
  },
  // version, description and tags may be left out (their defaults apply).
  { requiredKeys: ['tool_name', 'input_schema', 'output_schema'] },
);
const entryArb = fc.record(
  { spec: specArb, enabled: fc.boolean(), created_at: fc.constantFrom(null, ...VALID_TIMES, 'yesterday') },
  { requiredKeys: ['spec'] },
);

type Op =
  | { op: 'register'; spec: Spec }
  | { op: 'registerMany'; specs: Spec[] }
  | { op: 'setEnabled'; name: string; enabled: boolean }
  | { op: 'remove'; name: string }
  | { op: 'import'; tools: Entry[]; mode: 'merge' | 'replace'; dryRun: boolean }
  | { op: 'export' }
  | { op: 'listAll'; includeDisabled: boolean }
  | { op: 'get'; name: string }
  | { op: 'has'; name: string }
  | { op: 'restart' };
type Spec = typeof specArb extends fc.Arbitrary<infer T> ? T : never;
type Entry = typeof entryArb extends fc.Arbitrary<infer T> ? T : never;

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
);

// --- the reference model -----------------------------------------------------------------

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface Tool {
  spec: Record<string, Json>;
  /** Identity: keys sorted at every depth (this test's own, not the library's canonicalJson). */
  id: string;
  enabled: boolean;
  created_at: string | null;
}
type Outcome = { ok: true; value: unknown } | { ok: false; code: string };

class Refused extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

const identity = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(identity).join(',')}]`
    : value !== null && typeof value === 'object'
      ? `{${Object.keys(value)
          .sort()
          .map((key) => `${JSON.stringify(key)}:${identity((value as Record<string, unknown>)[key])}`)
          .join(',')}}`
      : JSON.stringify(value);

const wellFormed = (text: string): boolean => !/\p{Cs}/u.test(text);
/** JSON the contracts accept, numbers up to `max`: ±(2^53 - 1) in a new spec, any finite one in a snapshot (issue 28, item 8). */
const jsonOk = (value: unknown, max: number): boolean =>
  typeof value === 'string'
    ? wellFormed(value)
    : typeof value === 'number'
      ? Number.isFinite(value) && Math.abs(value) <= max
      : Array.isArray(value)
        ? value.every((item) => jsonOk(item, max))
        : value !== null && typeof value === 'object'
          ? Object.entries(value).every(([key, item]) => wellFormed(key) && jsonOk(item, max))
          : true;

/** Whether a spec is valid: to register (the default), or in a snapshot (`imported`). */
function specOk(spec: Spec, imported = false): boolean {
  const max = imported ? Infinity : 2 ** 53 - 1;
  return (
    /^[A-Za-z0-9_.-]{1,128}$/.test(spec.tool_name) &&
    (spec.version == null || wellFormed(spec.version)) &&
    (spec.description == null || wellFormed(spec.description)) &&
    (spec.tags ?? []).every((tag) => tag !== '' && wellFormed(tag)) &&
    jsonOk(spec.input_schema, max) &&
    jsonOk(spec.output_schema, max)
  );
}

/** The spec as stored: defaults applied, -0 written as 0 (JSON has no -0). */
const normal = (spec: Spec): Record<string, Json> => JSON.parse(JSON.stringify({ version: null, description: null, tags: [], ...spec }));

class ReferenceModel {
  tools = new Map<string, Tool>();
  constructor(readonly now: () => string) {}

  #registration(tool: Tool) {
    return { spec: tool.spec, enabled: tool.enabled, created_at: tool.created_at, deprecation: null };
  }

  #sorted(): Tool[] {
    return [...this.tools.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, tool]) => tool);
  }

  /** Rules 1-4 on `state`; returns the tool to keep or store. */
  #decide(state: Map<string, Tool>, spec: Spec, createdAt: () => string): Tool {
    const stored = normal(spec);
    const id = identity(stored);
    const current = state.get(spec.tool_name);
    if (current === undefined) return { spec: stored, id, enabled: true, created_at: createdAt() };
    if (current.id === id) return current;
    if (current.spec.version !== stored.version) return { spec: stored, id, enabled: current.enabled, created_at: createdAt() };
    throw new Refused('VERSION_CONFLICT');
  }

  register(spec: Spec) {
    const current = this.tools.get(spec.tool_name);
    if (current !== undefined && current.id === identity(normal(spec))) return this.#registration(current);
    if (!specOk(spec)) throw new Refused('VALIDATION_FAILED');
    const tool = this.#decide(this.tools, spec, this.now);
    this.tools.set(spec.tool_name, tool);
    return this.#registration(tool);
  }

  registerMany(specs: Spec[]) {
    if (!specs.every((spec) => specOk(spec))) throw new Refused('VALIDATION_FAILED');
    if (new Set(specs.map((spec) => spec.tool_name)).size < specs.length) throw new Refused('DUPLICATE_TOOL');
    const next = new Map(this.tools);
    let time: string | undefined;
    const tools = specs.map((spec) => {
      const tool = this.#decide(next, spec, () => (time ??= this.now()));
      next.set(spec.tool_name, tool);
      return tool;
    });
    this.tools = next;
    return tools.map((tool) => this.#registration(tool));
  }

  setEnabled(toolName: string, enabled: boolean) {
    const tool = this.tools.get(toolName);
    if (tool === undefined) throw new Refused('TOOL_NOT_FOUND');
    const next = { ...tool, enabled };
    this.tools.set(toolName, next);
    return this.#registration(next);
  }

  remove(toolName: string) {
    return this.tools.delete(toolName);
  }

  import(entries: Entry[], mode: 'merge' | 'replace', dryRun: boolean) {
    const valid = entries.every((entry) => specOk(entry.spec, true) && (entry.created_at ?? null) !== 'yesterday');
    if (!valid) throw new Refused('SNAPSHOT_INVALID');
    if (new Set(entries.map((entry) => entry.spec.tool_name)).size < entries.length) throw new Refused('DUPLICATE_TOOL');
    const counts = { added: 0, updated: 0, unchanged: 0, removed: 0, conflicts: 0 };
    const next = mode === 'replace' ? new Map<string, Tool>() : new Map(this.tools);
    for (const entry of entries) {
      const spec = normal(entry.spec);
      const tool: Tool = { spec, id: identity(spec), enabled: entry.enabled ?? true, created_at: entry.created_at ?? null };
      const current = this.tools.get(entry.spec.tool_name);
      if (current === undefined) counts.added++;
      else if (current.id === tool.id && current.enabled === tool.enabled && current.created_at === tool.created_at) counts.unchanged++;
      else if (mode === 'merge' && current.id !== tool.id && current.spec.version === spec.version) counts.conflicts++;
      else counts.updated++;
      next.set(entry.spec.tool_name, tool);
    }
    if (mode === 'replace') for (const toolName of this.tools.keys()) if (!next.has(toolName)) counts.removed++;
    if (!dryRun && counts.conflicts > 0) throw new Refused('VERSION_CONFLICT');
    if (!dryRun) this.tools = next;
    return { ...counts, dryRun };
  }

  export() {
    // A snapshot writes `deprecation` only when set (never, here).
    return { tools: this.#sorted().map((tool) => ({ spec: tool.spec, enabled: tool.enabled, created_at: tool.created_at })) };
  }

  listAll(includeDisabled: boolean) {
    return this.#sorted()
      .filter((tool) => includeDisabled || tool.enabled)
      .map((tool) => this.#registration(tool));
  }

  get(toolName: string) {
    const tool = this.tools.get(toolName);
    return tool === undefined ? undefined : this.#registration(tool);
  }
}

function expected(model: ReferenceModel, op: Op): Outcome {
  try {
    switch (op.op) {
      case 'register':
        return { ok: true, value: model.register(op.spec) };
      case 'registerMany':
        return { ok: true, value: model.registerMany(op.specs) };
      case 'setEnabled':
        return { ok: true, value: model.setEnabled(op.name, op.enabled) };
      case 'remove':
        return { ok: true, value: model.remove(op.name) };
      case 'import':
        return { ok: true, value: model.import(op.tools, op.mode, op.dryRun) };
      case 'export':
        return { ok: true, value: model.export() };
      case 'listAll':
        return { ok: true, value: model.listAll(op.includeDisabled) };
      case 'get':
        return { ok: true, value: model.get(op.name) };
      case 'has':
        return { ok: true, value: model.get(op.name) !== undefined };
      case 'restart':
        return { ok: true, value: undefined };
    }
  } catch (error) {
    if (error instanceof Refused) return { ok: false, code: error.code };
    throw error;
  }
}

async function actual(registry: ToolRegistry, op: Op): Promise<Outcome> {
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
      case 'import': {
        // The per-tool plan of a dry run is not modelled; its counts are.
        // The revision is issue 11's (the model keeps none; test/sqlite/changes-model.test.ts compares it across stores).
        const { plan: _plan, revision: _revision, ...report } = await registry.importSnapshot({ tools: op.tools }, { mode: op.mode, dryRun: op.dryRun });
        return { ok: true, value: report };
      }
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
    }
  } catch (error) {
    if (!(error instanceof ToolRegistryError)) throw error;
    return { ok: false, code: error.code };
  }
}

// --- the property ------------------------------------------------------------------------

/** Error codes the sequences reached, so the property cannot pass by never failing. */
const codesSeen = new Set<string>();

async function compare(ops: Op[], harness: StoreHarness): Promise<void> {
  let now = Date.parse('2025-01-01T00:00:00.000Z');
  const clock = () => new Date(now);
  const model = new ReferenceModel(() => clock().toISOString());
  let store: ToolRegistry = await harness.open({ clock });
  try {
    for (const [step, op] of ops.entries()) {
      now += 1000;
      if (op.op === 'restart') store = await harness.restart(store);
      const wanted = expected(model, op);
      const got = await actual(store, op);
      expect(got, `step ${step}: ${JSON.stringify(op)}`).toEqual(wanted);
      if (!wanted.ok) codesSeen.add(wanted.code);
    }
    expect(await store.exportSnapshot()).toEqual(model.export());
  } finally {
    await store.close();
    // PostgreSQL: the schema is emptied and reused by the next run (a fresh one's migrations
    // cost the server more than most runs); the other stores have nothing to recycle.
    await harness.recycle?.();
  }
}

/**
 * Runs per store, and how long their sequences are (fast-check's `size`: 'small' makes 1-12
 * operations, 6 on average; 'medium' 1-111, about 50). A store that is cheap to open runs
 * many short sequences. The PostgreSQL stores, where an open costs the server a connection
 * and the first run a fresh schema's migrations (~0.2-0.3 s of CPU; later runs reuse it,
 * emptied by `recycle`), run fewer, longer ones that explore more operations, from deeper states (more tools, restarts with data): 25 medium runs made
 * 942-1,566 operations (median 1,181) over ten seeds, where 150 small runs made 869-965
 * (median 906), for 25 opens instead of 150. SQLite files: 60 short runs, as before.
 */
const RUNS: Record<StoreName, { numRuns: number; size: 'small' | 'medium' }> = {
  memory: { numRuns: 150, size: 'small' },
  'sqlite-memory': { numRuns: 150, size: 'small' },
  'sqlite-file': { numRuns: 60, size: 'small' },
  'sqlite-file-nocache': { numRuns: 60, size: 'small' },
  postgres: { numRuns: 25, size: 'medium' },
  'postgres-nocache': { numRuns: 25, size: 'medium' },
};

describe.each(selectedStores())('the %s store against the reference model of the rules', (name, harness) => {
  afterAll(async () => {
    await harness.cleanup?.();
  });

  it('gives the same results and the same error codes for random operation sequences', async () => {
    const { numRuns, size } = RUNS[name];
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 120, size }), (ops) => compare(ops, harness)),
      { numRuns },
    );
    for (const code of ['VALIDATION_FAILED', 'VERSION_CONFLICT', 'TOOL_NOT_FOUND', 'SNAPSHOT_INVALID', 'DUPLICATE_TOOL']) {
      expect(codesSeen, `no sequence reached ${code}`).toContain(code);
    }
    // A bound for a machine under load, not an expectation: the PostgreSQL stores took 7-13 s
    // each at load 3 on 2 cores (150 short runs took 36-38 s there, and timed out at 120 s under load).
  }, 300_000);
});
