// Runtime workloads (issue 8): `invoke` against a hand-written `validate(args) && handler(args)`
// with the same compiled ajv validator, and `ToolSet.resolve` against `Map.get`; both
// baselines run in the same process and run. `bench/run.mjs` calls runtimeWorkloads();
// `node bench/runtime.mjs` runs only these (after npm run build) and prints the ratios.
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ToolSet, defineTool } from '../dist/index.js';
import { measureInterleaved } from './lib/measure.mjs';

const QUICK = process.env.BENCH_QUICK === '1';

const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1 },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    offset: { type: 'integer', minimum: 0 },
    lang: { type: 'string', enum: ['en', 'de', 'fr'] },
    exact: { type: 'boolean' },
  },
  required: ['query'],
  additionalProperties: false,
};

function check(condition, message) {
  if (!condition) throw new Error(`bench sanity check failed: ${message}`);
}

/**
 * Measures the runtime workloads and hands each to `record(id, workload, contender, stats)`
 * (the runner's recorder). The contenders run in interleaved rounds.
 */
export async function runtimeWorkloads(record) {
  const handler = async (args) => args.limit;
  const tool = defineTool({ name: 'search', input_schema: INPUT_SCHEMA, handler });
  const others = Array.from({ length: 99 }, (_, i) =>
    defineTool({ name: `tool_${String(i).padStart(2, '0')}`, input_schema: {}, handler: () => i }),
  );
  const set = new ToolSet([tool, ...others]);
  // The baseline: the same ajv options the runtime uses, the same schema, compiled once.
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false, useDefaults: true });
  addFormats.default(ajv);
  const validate = ajv.compile(INPUT_SCHEMA);
  const argsOf = (i) => ({ query: `q${i & 7}`, offset: i & 15, lang: 'en', exact: (i & 1) === 0 });

  let a = 0;
  let b = 0;
  let e = 0;
  const ours = await set.invoke('search', argsOf(0));
  check(ours.success && ours.data === 10, 'invoke succeeds with the default applied');
  const raw = argsOf(0);
  check(validate(raw) && (await handler(raw)) === 10, 'baseline validates and applies the default');

  const invokePooled = await measureInterleaved([
    ['ours', () => set.invoke('search', argsOf(a++)), { async: true }],
    ['base', async () => {
      const args = argsOf(b++);
      return validate(args) && (await handler(args));
    }, { async: true }],
    // Attribution, not a target: what invoke must do anyway (a private copy of the arguments,
    // a monotonic time, a frozen result), written by hand.
    ['byhand', async () => {
      const started = performance.now();
      const args = globalThis.structuredClone(argsOf(e++));
      const data = validate(args) && (await handler(args));
      return Object.freeze({ success: true, data, execution_time_ms: performance.now() - started });
    }, { async: true }],
  ], { rounds: QUICK ? 1 : 4 });
  record('runtime.invoke.ours', 'invoke a tool with a 5-property schema', 'ToolSet.invoke', invokePooled.get('ours'));
  record('runtime.invoke.base', 'invoke a tool with a 5-property schema', 'validate(args) && handler(args), same ajv validator', invokePooled.get('base'));
  record('runtime.invoke.byhand', 'invoke a tool with a 5-property schema', 'by hand: structuredClone, validate, handler, timing, frozen result', invokePooled.get('byhand'));

  const names = set.list();
  const map = new Map(set.tools().map((t) => [t.name, t]));
  check(set.resolve(names[3]) === map.get(names[3]), 'resolve finds what Map.get finds');
  let c = 0;
  let d = 0;
  let sink = 0;
  const resolvePooled = await measureInterleaved([
    ['ours', () => { sink += set.resolve(names[c++ % 100]) === null ? 1 : 0; }, {}],
    ['base', () => { sink += map.get(names[d++ % 100]) === undefined ? 1 : 0; }, {}],
  ], { rounds: QUICK ? 1 : 4 });
  check(sink === 0, 'every name resolved');
  record('runtime.resolve.ours', 'resolve a name among 100 tools', 'ToolSet.resolve', resolvePooled.get('ours'));
  record('runtime.resolve.base', 'resolve a name among 100 tools', 'Map.get', resolvePooled.get('base'));
}

// Standalone: node bench/runtime.mjs
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = new Map();
  await runtimeWorkloads((id, workload, contender, stats) => {
    rows.set(id, stats);
    process.stdout.write(`${workload} | ${contender}: median ${stats.median_us.toFixed(3)} us (${stats.samples} samples)\n`);
  });
  const ratio = (ours, base) => rows.get(ours).median_us / rows.get(base).median_us;
  process.stdout.write(`invoke / validate+handler: ${ratio('runtime.invoke.ours', 'runtime.invoke.base').toFixed(2)} x (target <= 1.5 x)\n`);
  process.stdout.write(`invoke / the same work by hand: ${ratio('runtime.invoke.ours', 'runtime.invoke.byhand').toFixed(2)} x (no target)\n`);
  process.stdout.write(`resolve / Map.get: ${ratio('runtime.resolve.ours', 'runtime.resolve.base').toFixed(2)} x (target <= 2 x)\n`);
}
