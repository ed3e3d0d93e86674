// compareSchemas judged by ajv (issue 38): soundness (compatible verdicts a sampled value
// proves wrong: must be 0) and permissiveness (breaking verdicts a value proves right), on the
// generated pairs of test/support/schema-fuzz.mjs; and, when a corpus is at hand, agreement
// with a schema registry's compatibility cases (COMPAT_CORPUS: a folder or files of JSON
// arrays of { description, original_schema, update_schema, compatible }, as Confluent Schema
// Registry's json-schema-provider/src/test/resources/diff-*.json; not shipped with us).
// `bench/run.mjs` calls compatFuzzWorkloads(); `node bench/compat-fuzz.mjs [--dist DIR] [--pairs N] [--seed S] [--defaults P] [--draft07 P]`
// runs only this (after npm run build); --dist judges another build (the code before a change).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { fuzzCompatibility } from '../test/support/schema-fuzz.mjs';

/** Confluent's files are JSON with trailing commas here and there. */
function parseLenient(text) {
  return JSON.parse(text.replace(/,(\s*[}\]])/g, '$1'));
}

/** The cases of COMPAT_CORPUS, or undefined when it is not set or not there. */
export function loadCorpus(path = process.env.COMPAT_CORPUS) {
  if (path === undefined || path === '') return undefined;
  let files;
  try {
    files = statSync(path).isDirectory() ? readdirSync(path).filter((f) => f.endsWith('.json')).map((f) => join(path, f)) : path.split(',');
  } catch {
    return undefined;
  }
  const cases = [];
  for (const file of files) {
    let list;
    try {
      list = parseLenient(readFileSync(file, 'utf8'));
    } catch {
      continue;
    }
    if (!Array.isArray(list)) continue;
    for (const c of list) {
      if (c && typeof c.compatible === 'boolean' && 'original_schema' in c && 'update_schema' in c) cases.push({ file, ...c });
    }
  }
  return cases;
}

/** How often compareSchemas(original, update).compatible equals the corpus's verdict, and the cases where not. */
export function corpusAgreement(cases, compareSchemas) {
  const disagreements = [];
  for (const c of cases) {
    let verdict;
    try {
      const result = compareSchemas(c.original_schema, c.update_schema);
      verdict = result.compatible;
      if (verdict !== c.compatible) disagreements.push({ description: c.description, expected: c.compatible, differences: result.differences.filter((d) => d.breaking !== false).map((d) => `${d.type} ${d.path} ${d.breaking}`) });
    } catch (error) {
      disagreements.push({ description: c.description, expected: c.compatible, error: String(error) });
    }
  }
  return { cases: cases.length, agree: cases.length - disagreements.length, disagreements };
}

function describe(stats) {
  const side = (s) => `${s.compatible} compatible, ${s.unsoundCount} unsound; ${s.breaking} breaking and ${s.undecidable} undecidable, ${s.confirmed} shown right by a value`;
  return `inputs: ${side(stats.input)}; outputs: ${side(stats.output)}`;
}

/**
 * tsc's unbundled schema-validator.js requires ajv on first use with the `require` the bundle
 * resolves (src/runtime/schema-validator.ts); imported unbundled, as here, it needs one.
 */
function unbundledValidator() {
  globalThis.require ??= createRequire(import.meta.url);
  return import('../dist/runtime/schema-validator.js');
}

export async function compatFuzzWorkloads({ record, log, quick, lib, validator }) {
  const { compareSchemas, compareToolSchemas } = lib ?? (await import('../dist/index.js'));
  // The judge is the runtime's own validator (its ajv options, drafts and, for inputs, defaults).
  const { compileSchema } = validator ?? (await unbundledValidator());
  const defaults = Number(process.env.COMPAT_FUZZ_DEFAULTS ?? 0.15);
  const draft07 = Number(process.env.COMPAT_FUZZ_DRAFT07 ?? 0.2);
  const seed = Number(process.env.COMPAT_FUZZ_SEED ?? 38);
  const pairs = Number(process.env.COMPAT_FUZZ_PAIRS ?? (quick ? 2_000 : 30_000));
  const cpu = process.cpuUsage();
  const stats = fuzzCompatibility({ seed, pairs, variants: 24, compareSchemas, compareToolSchemas, compileSchema, defaults, draft07 });
  const used = process.cpuUsage(cpu);
  const perPair = (used.user + used.system) / stats.pairs;
  const workload = `compareSchemas judged by ajv: ${stats.pairs.toLocaleString('en-US')} generated pairs (seed ${seed}), inputs and outputs`;
  record('versions.fuzz', workload, `CPU per pair (compare both directions, ajv compiles and checks values): ${describe(stats)}`, { median_us: perPair, samples: stats.pairs }, {
    seed,
    pairs: stats.pairs,
    input: { ...stats.input, unsound: stats.input.unsoundCount },
    output: { ...stats.output, unsound: stats.output.unsoundCount },
    compile_ms: Math.round(stats.compileMs),
    compare_ms: Math.round(stats.compareMs),
  });
  for (const unsound of [...stats.input.unsound, ...stats.output.unsound]) log(`UNSOUND ${JSON.stringify(unsound)}`);
  const corpus = loadCorpus();
  if (corpus === undefined) log('compat-fuzz: no corpus (set COMPAT_CORPUS to a folder of schema-registry compatibility cases to measure agreement)');
  else {
    const agreement = corpusAgreement(corpus, compareSchemas);
    log(`compat-fuzz: corpus agreement ${agreement.agree}/${agreement.cases}`);
    record('versions.corpus', `agreement with ${agreement.cases} schema-registry compatibility cases (COMPAT_CORPUS)`, `${agreement.agree} agree (${((100 * agreement.agree) / agreement.cases).toFixed(1)} %)`, { median_us: Number.NaN, samples: agreement.cases }, { agree: agreement.agree });
  }
  return stats;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name) => {
    const i = process.argv.indexOf(name);
    return i === -1 ? undefined : process.argv[i + 1];
  };
  const dist = arg('--dist');
  const lib = await import(dist === undefined ? '../dist/index.js' : pathToFileURL(join(resolve(dist), 'index.js')).href);
  // The judge stays this build's runtime validator, whichever build is judged.
  const validator = await unbundledValidator();
  if (arg('--pairs') !== undefined) process.env.COMPAT_FUZZ_PAIRS = arg('--pairs');
  if (arg('--seed') !== undefined) process.env.COMPAT_FUZZ_SEED = arg('--seed');
  if (arg('--defaults') !== undefined) process.env.COMPAT_FUZZ_DEFAULTS = arg('--defaults');
  if (arg('--draft07') !== undefined) process.env.COMPAT_FUZZ_DRAFT07 = arg('--draft07');
  const started = performance.now();
  const stats = await compatFuzzWorkloads({
    record: (id, workload, contender, s, extra) => process.stdout.write(`${id}: ${workload}\n  ${contender}\n  ${Number.isNaN(s.median_us) ? '' : `${s.median_us.toFixed(0)} us CPU per pair; `}${JSON.stringify(extra)}\n`),
    log: (text) => process.stdout.write(`${text}\n`),
    quick: process.env.BENCH_QUICK === '1',
    lib,
    validator,
  });
  const rate = (n, d) => `${((100 * n) / Math.max(1, d)).toFixed(1)} %`;
  for (const [name, s] of [['inputs', stats.input], ['outputs', stats.output]]) {
    const incompatible = s.breaking + s.undecidable;
    process.stdout.write(`${name}: soundness ${s.unsoundCount} unsound of ${s.compatible} compatible verdicts; permissiveness ${s.confirmed} of ${incompatible} incompatible verdicts shown right by a value (${rate(s.confirmed, incompatible)})\n`);
  }
  const corpus = loadCorpus();
  if (corpus !== undefined) {
    for (const d of corpusAgreement(corpus, lib.compareSchemas).disagreements) process.stdout.write(`  disagrees: ${d.description} (corpus: ${d.expected}) ${d.error ?? d.differences.join('; ')}\n`);
  }
  process.stdout.write(`${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}
