// Versions with meaning (issue 27): compareSchemas of two 200-property schemas (target: at
// most 1 ms), and register under the policy compatibility 'backward' against the same
// register without a policy (target: at most 1.2 x), both measured in this run.
// `bench/run.mjs` calls versionsWorkloads(); `node bench/versions.mjs` runs only these (after npm run build).
import { fileURLToPath } from 'node:url';
import { canonicalJson, compareSchemas, openSqliteToolRegistry } from '../dist/index.js';
import { measureInterleaved } from './lib/measure.mjs';

function check(condition, message) {
  if (!condition) throw new Error(`bench sanity check failed: ${message}`);
}

/** An input schema of `count` properties of every kind, as a large tool has them. */
function wideSchema(count, widen = 0) {
  const properties = {};
  for (let i = 0; i < count; i++) {
    const kind = i % 5;
    properties[`p${i}`] =
      kind === 0 ? { type: 'string', maxLength: 100 + (i < widen ? 10 : 0), description: `field ${i}` }
      : kind === 1 ? { type: 'integer', minimum: 0, maximum: 1000 + (i < widen ? 1 : 0) }
      : kind === 2 ? { type: 'string', enum: ['a', 'b', 'c'] }
      : kind === 3 ? { type: 'array', items: { type: 'string' }, maxItems: 10 }
      : { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x'], additionalProperties: false };
  }
  return { type: 'object', properties, required: ['p0', 'p1'], additionalProperties: false };
}

/** A tool of `count` input properties at version `n`: each version loosens one more bound, up to all of them (compatible). */
function toolVersion(count, n) {
  return { tool_name: 'wide', version: `1.${n}.0`, input_schema: wideSchema(count, Math.min(n, count)), output_schema: { type: 'string' } };
}

export async function versionsWorkloads({ record, rounds = 4 }) {
  const before = wideSchema(200);
  const after = { ...wideSchema(200, 40), properties: { ...wideSchema(200, 40).properties, extra: { type: 'string' } } };
  const verdict = compareSchemas(before, after);
  check(verdict.compatible && verdict.differences.length === 17, `the 200-property pair has 17 compatible differences (got ${verdict.differences.length})`);
  let sink = 0;
  const compare = await measureInterleaved(
    [
      // The baseline: the canonical JSON of both schemas, what any comparison of their text would cost.
      ['versions.canonical', () => { sink += canonicalJson(before).length + canonicalJson(after).length; }, { batch: 1 }],
      ['versions.compareSchemas', () => { sink += compareSchemas(before, after).differences.length; }, { batch: 1 }],
    ],
    { rounds, time: 300 },
  );
  record('versions.canonical', 'compareSchemas, two 200-property input schemas (17 differences)', '`canonicalJson` of both schemas (baseline)', compare.get('versions.canonical'));
  record('versions.compareSchemas', 'compareSchemas, two 200-property input schemas (17 differences)', '`compareSchemas(before, after)`', compare.get('versions.compareSchemas'));

  // register of a new (compatible) version of a 20-property tool, SQLite in memory, with and without the policy.
  const plain = await openSqliteToolRegistry({ filename: ':memory:' });
  const judged = await openSqliteToolRegistry({ filename: ':memory:' });
  await judged.setPolicy({ compatibility: 'backward' });
  let n = 0;
  let m = 0;
  await plain.register(toolVersion(20, 0));
  await judged.register(toolVersion(20, 0));
  const register = await measureInterleaved(
    [
      ['versions.register', async () => { sink += (await plain.register(toolVersion(20, ++n))).spec.tool_name.length; }, { async: true, batch: 20 }],
      ['versions.register.backward', async () => { sink += (await judged.register(toolVersion(20, ++m))).spec.tool_name.length; }, { async: true, batch: 20 }],
    ],
    { rounds, time: 400 },
  );
  check((await judged.get('wide')).spec.version === `1.${m}.0`, 'every judged register was accepted');
  await plain.close();
  await judged.close();
  check(sink > 0, 'work was done');
  record('versions.register', 'register a new version of a 20-property tool (SQLite :memory:)', 'no policy (baseline)', register.get('versions.register'));
  record('versions.register.backward', 'register a new version of a 20-property tool (SQLite :memory:)', "compatibility 'backward'", register.get('versions.register.backward'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = new Map();
  await versionsWorkloads({ record: (id, _workload, contender, stats) => results.set(id, { contender, ...stats }), rounds: process.env.BENCH_QUICK === '1' ? 1 : 4 });
  for (const [id, r] of results) process.stdout.write(`${id.padEnd(28)} ${r.median_us.toFixed(2).padStart(9)} us  (${r.samples} samples)  ${r.contender}\n`);
  const ratio = (a, b) => (results.get(a).median_us / results.get(b).median_us).toFixed(2);
  process.stdout.write(`compareSchemas: ${(results.get('versions.compareSchemas').median_us / 1000).toFixed(3)} ms (target <= 1 ms); ${ratio('versions.compareSchemas', 'versions.canonical')} x canonicalJson of both\n`);
  process.stdout.write(`register with compatibility 'backward': ${ratio('versions.register.backward', 'versions.register')} x without (target <= 1.2 x)\n`);
}
