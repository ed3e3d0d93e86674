// The core's CPU per spec (issue 12): what every write pays before the store sees it, against
// the one JSON.stringify of the same spec that the plain baseline of the write workloads pays.
// The specs are the write workloads' own (bench/lib/fixtures.mjs `specFor`, about 450 bytes).
// The functions measured are internal (dist/core/validation.js): register, registerMany and
// importSnapshot call them once per spec. `bench/run.mjs` calls coreWorkloads();
// `node bench/core.mjs` runs only these (after npm run build) and prints the ratios.
import { fileURLToPath } from 'node:url';
import { canonicalJson } from '../dist/index.js';
import { parseSnapshot, parseSpec } from '../dist/core/validation.js';
import { CREATED_AT, specFor } from './lib/fixtures.mjs';
import { measureInterleaved } from './lib/measure.mjs';

/** Specs per sample: a sample is one pass over all of them, reported per spec. */
const SPECS = 1000;

function check(condition, message) {
  if (!condition) throw new Error(`bench sanity check failed: ${message}`);
}

/** Measures the core's per-spec work and hands each to `record(id, workload, contender, stats)`. */
export async function coreWorkloads({ record, rounds = 4 }) {
  const specs = Array.from({ length: SPECS }, (_, i) => specFor(i));
  const snapshot = { tools: specs.map((spec) => ({ spec, enabled: true, created_at: CREATED_AT })) };
  check(parseSpec(specs[0]).json === JSON.stringify(specs[0]), 'the registered text of a spec in contract order is its JSON');
  check(parseSnapshot(snapshot).length === SPECS, 'every snapshot entry is prepared');
  let sink = 0;
  const perSpec = (fn) => () => {
    for (const spec of specs) sink += fn(spec);
  };
  const contenders = [
    ['core.stringify', perSpec((spec) => JSON.stringify(spec).length)],
    ['core.canonicalJson', perSpec((spec) => canonicalJson(spec).length)],
    // What `register` of a new tool does on the CPU before the store: validate, prepare, copy the frozen spec.
    ['core.parseSpec', perSpec((spec) => parseSpec(spec).spec.tags.length)],
    ['core.parseSnapshot', () => { sink += parseSnapshot(snapshot).length; }],
  ];
  const pooled = await measureInterleaved(contenders.map(([key, fn]) => [key, fn, { batch: 1 }]), { rounds, time: 300 });
  check(sink > 0, 'work was done');
  const names = {
    'core.stringify': '`JSON.stringify(spec)` (the plain baseline\'s only per-spec work)',
    'core.canonicalJson': '`canonicalJson(spec)`',
    'core.parseSpec': '`parseSpec`: validation, canonical JSON, SHA-256, the registered text and frozen spec',
    'core.parseSnapshot': '`parseSnapshot`, per entry',
  };
  for (const [key] of contenders) {
    const stats = pooled.get(key);
    // Per spec: a sample was one pass over SPECS specs.
    const perSpecStats = Object.fromEntries(Object.entries(stats).map(([name, value]) => [name, name.endsWith('_us') ? value / SPECS : value]));
    record(key, `core, per spec (${SPECS.toLocaleString('en-US')} specs of about 450 bytes)`, names[key], perSpecStats);
  }
}

// Standalone: `npm run build && node bench/core.mjs` prints the medians and ratios.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = [];
  await coreWorkloads({
    record: (id, workload, contender, stats) => results.push({ id, contender, median_us: stats.median_us, samples: stats.samples }),
    rounds: process.env.BENCH_QUICK === '1' ? 1 : 4,
  });
  const base = results.find((r) => r.id === 'core.stringify').median_us;
  for (const r of results) {
    process.stdout.write(`${r.id.padEnd(20)} ${r.median_us.toFixed(2).padStart(7)} us  ${(r.median_us / base).toFixed(2).padStart(6)} x JSON.stringify  (${r.samples} samples)  ${r.contender}\n`);
  }
}
