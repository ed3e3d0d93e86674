// Search (issue 26): quality on MetaTool's ToolE against a plain BM25 over the same text, and
// speed: search over 10,000 and 100,000 tools, one write's index update, the index's memory.
// ToolE is not in the repository: give its file with `--data PATH` or TOOL_REGISTRY_TOOLE=PATH
// (see TOOLE_ORIGIN); without it the quality figures are skipped with a message.
// `bench/run.mjs` calls searchWorkloads() (and passes `--data` through);
// `npm run build && node bench/search.mjs [--data PATH]` runs only these and prints every figure.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { InMemoryToolRegistry } from '../dist/index.js';
import { SearchIndex } from '../dist/core/search/search-index.js';
import { measure } from './lib/measure.mjs';
import { random } from './lib/random.mjs';
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { loadavg } from 'node:os';

/** Where ToolE comes from: what a user needs to build the file the quality figures read. */
export const TOOLE_ORIGIN =
  "MetaTool's ToolE (https://github.com/HowieHwong/MetaTool at commit 35e81bb7576826e980c80fed8f8c0a2b4a1e6fbb, " +
  'MIT; arXiv:2310.03128): its 199 tools (dataset/plugin_des.json) and 21,047 queries (dataset/data/all_clean_data.csv ' +
  'and multi_tool_query_golden.json) as one JSON file { tools: [{ name, description, input_schema }], queries: [{ query, relevant }] } ' +
  '(docs/search.md, "Figures")';

function check(condition, message) {
  if (!condition) throw new Error(`bench sanity check failed: ${message}`);
}

/** The ToolE file given: `--data PATH` (or `--data=PATH`) in `argv`, else TOOL_REGISTRY_TOOLE; undefined if neither. */
export function toolEPath(argv = process.argv.slice(2), env = process.env) {
  const at = argv.findIndex((arg) => arg === '--data' || arg.startsWith('--data='));
  if (at >= 0) {
    const path = argv[at] === '--data' ? argv[at + 1] : argv[at].slice('--data='.length);
    if (path === undefined || path === '') throw new Error('--data needs a path: --data /path/to/metatool-toole.json');
    return path;
  }
  return env.TOOL_REGISTRY_TOOLE || undefined;
}

// --- the plain BM25 baseline, as the data set's README defines it ------------------------

/** Lower-cased alphanumeric tokens; the name split on `_ . -` and camelCase. No stop words, no stemming. */
function plainTokens(text, isName) {
  const spaced = isName ? text.replace(/[_.-]+/g, ' ').replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2') : text;
  return spaced.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** Okapi BM25 (k1 1.2, b 0.75) over name + description; every tool ranked, ties by pool order. */
function plainBm25(tools) {
  const docs = tools.map((tool) => [...plainTokens(tool.name, true), ...plainTokens(tool.description ?? '', false)]);
  const average = docs.reduce((sum, doc) => sum + doc.length, 0) / docs.length;
  const df = new Map();
  const tfs = docs.map((doc) => {
    const tf = new Map();
    for (const term of doc) tf.set(term, (tf.get(term) ?? 0) + 1);
    for (const term of tf.keys()) df.set(term, (df.get(term) ?? 0) + 1);
    return tf;
  });
  const n = docs.length;
  return (query) => {
    // Each query term once (the README's figures are reproduced exactly so).
    const terms = [...new Set(plainTokens(query, false))];
    const scores = tfs.map((tf, index) => {
      let score = 0;
      for (const term of terms) {
        const f = tf.get(term);
        if (f === undefined) continue;
        const d = df.get(term);
        const idf = Math.log(1 + (n - d + 0.5) / (d + 0.5));
        score += (idf * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * docs[index].length) / average));
      }
      return score;
    });
    return tools.map((tool, index) => index).sort((a, b) => scores[b] - scores[a] || a - b).map((index) => tools[index].name);
  };
}

/** recall@1, @5, @10 (share of a query's relevant tools in the top k, averaged) and MRR@10. */
function score(queries, rank) {
  let r1 = 0;
  let r5 = 0;
  let r10 = 0;
  let mrr = 0;
  for (const query of queries) {
    const ranked = rank(query.query).slice(0, 10);
    const relevant = new Set(query.relevant);
    const within = (k) => ranked.slice(0, k).filter((name) => relevant.has(name)).length / relevant.size;
    r1 += within(1);
    r5 += within(5);
    r10 += within(10);
    const first = ranked.findIndex((name) => relevant.has(name));
    if (first >= 0) mrr += 1 / (first + 1);
  }
  const n = queries.length;
  return { recall_at_1: r1 / n, recall_at_5: r5 / n, recall_at_10: r10 / n, mrr_at_10: mrr / n };
}

/** ToolE: our search against the plain BM25, over every query. */
export async function toolEQuality({ log = () => {}, data: path = toolEPath() } = {}) {
  if (path === undefined) {
    log(`ToolE quality skipped: no data given (--data PATH or TOOL_REGISTRY_TOOLE=PATH). The data: ${TOOLE_ORIGIN}`);
    return undefined;
  }
  if (!existsSync(path)) {
    log(`ToolE quality skipped: ${path} does not exist. The data: ${TOOLE_ORIGIN}`);
    return undefined;
  }
  const data = JSON.parse(readFileSync(path, 'utf8'));
  log(`ToolE read from ${path}: ${TOOLE_ORIGIN}`);
  check(data.tools.length === 199 && data.queries.length === 21_047, 'ToolE has 199 tools and 21,047 queries');
  const registry = new InMemoryToolRegistry();
  await registry.registerMany(data.tools.map((tool) => ({ tool_name: tool.name, description: tool.description, input_schema: tool.input_schema, output_schema: {} })));
  const ours = new Map();
  for (const query of data.queries) {
    const page = await registry.search(query.query, { limit: 10 });
    ours.set(query.query, page.results.map((result) => result.registration.spec.tool_name));
  }
  await registry.close();
  const plain = plainBm25(data.tools);
  const result = {
    path,
    queries: data.queries.length,
    plain: score(data.queries, plain),
    ours: score(data.queries, (query) => ours.get(query)),
    // Where ours has no result at all (no query term in any tool) the plain ranking still lists 199 tools.
    ours_empty: data.queries.filter((query) => ours.get(query.query).length === 0).length,
  };
  return result;
}

// --- speed -----------------------------------------------------------------------------


const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'po', 'da', 'fe', 'gu', 'hi', 'jo', 'be', 'cu', 'ri', 'wa', 'xo'];
/** A vocabulary of 5,000 made-up words, drawn by a Zipf law (s = 1): a few words are very common. */
function vocabulary(next) {
  const words = [];
  const seen = new Set();
  while (words.length < 5000) {
    const length = 2 + Math.floor(next() * 3);
    let word = '';
    for (let i = 0; i < length; i++) word += SYLLABLES[Math.floor(next() * SYLLABLES.length)];
    if (!seen.has(word)) {
      seen.add(word);
      words.push(word);
    }
  }
  const cumulative = [];
  let total = 0;
  for (let rank = 1; rank <= words.length; rank++) cumulative.push((total += 1 / rank));
  return () => {
    const target = next() * total;
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (cumulative[middle] < target) low = middle + 1;
      else high = middle;
    }
    return words[low];
  };
}

/** `count` specs of realistic shape: a 2-3 word name, a 8-24 word description, 1-4 described properties, tags. */
export function syntheticSpecs(count, seed = 26) {
  const next = random(seed);
  const word = vocabulary(next);
  const words = (min, max) => Array.from({ length: min + Math.floor(next() * (max - min + 1)) }, word);
  return Array.from({ length: count }, (_, i) => {
    const properties = {};
    for (const name of words(1, 4)) properties[`${name}_${words(1, 1)[0]}`] = { type: 'string', description: words(3, 8).join(' ') };
    return {
      tool_name: `${words(2, 3).join('_')}_${i}`,
      version: '1.0.0',
      description: `${words(8, 24).join(' ')}.`,
      input_schema: { type: 'object', properties, additionalProperties: false },
      output_schema: { type: 'object' },
      tags: words(0, 3),
    };
  });
}

/** Queries of 2-5 words from the same law. */
function syntheticQueries(count, seed = 62) {
  const next = random(seed);
  const word = vocabulary(random(26));
  const mixed = () => (next() < 0.5 ? word() : word());
  return Array.from({ length: count }, () => Array.from({ length: 2 + Math.floor(next() * 4) }, mixed).join(' '));
}

/**
 * The index's memory for `count` specs, measured in children with --expose-gc: built in one go
 * as the first search builds it, and grown tool by tool by `set`; and the specs' JSON bytes.
 */
function indexMemory(count) {
  const child = (mode) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--memory', String(count), mode], { encoding: 'utf8' }));
  const built = child('build');
  const grown = child('set');
  return { count, jsonBytes: built.jsonBytes, indexBytes: built.bytes, heapBytes: built.heapBytes, grownBytes: grown.bytes, grownHeapBytes: grown.heapBytes };
}

/**
 * The JS heap and the ArrayBuffer memory (the posting lists' typed arrays live outside the
 * heap once past a few dozen bytes) that the index adds.
 */
async function memoryChild(count, mode) {
  const specs = syntheticSpecs(count);
  const jsonBytes = specs.reduce((sum, spec) => sum + Buffer.byteLength(JSON.stringify(spec)), 0);
  globalThis.gc();
  globalThis.gc();
  const before = process.memoryUsage();
  const index = new SearchIndex();
  if (mode === 'build') index.build(specs.map((spec) => ({ name: spec.tool_name, item: spec, spec })));
  else for (const spec of specs) index.set(spec.tool_name, spec, spec);
  globalThis.gc();
  globalThis.gc();
  const after = process.memoryUsage();
  // Read after the measurement, so that neither is collected before it.
  check(index.size === count && specs.length === count, 'every spec indexed');
  const heapBytes = after.heapUsed - before.heapUsed;
  process.stdout.write(JSON.stringify({ jsonBytes, heapBytes, bytes: heapBytes + after.arrayBuffers - before.arrayBuffers }));
}

/** Every search workload; `record(id, workload, contender, stats, extra)` as bench/run.mjs takes it. */
export async function searchWorkloads({ record, log = () => {}, quick = false, data = toolEPath() }) {
  const quality = await toolEQuality({ log, data });
  if (quality !== undefined) {
    for (const [key, label] of [['plain', 'plain BM25 (no stop words, no stemming; name + description)'], ['ours', 'registry.search']]) {
      const q = quality[key];
      record(`search.toole.${key}`, `ToolE (MetaTool), ${quality.queries.toLocaleString('en-US')} queries, 199 tools`, label, { median_us: Number.NaN, samples: quality.queries }, q);
      log(`ToolE ${label}: R@1 ${q.recall_at_1.toFixed(4)}, R@5 ${q.recall_at_5.toFixed(4)}, R@10 ${q.recall_at_10.toFixed(4)}, MRR@10 ${q.mrr_at_10.toFixed(4)}`);
    }
    log(`ToolE: ${quality.ours_empty} queries with no result from search (no query term in any tool)`);
  }
  const queries = syntheticQueries(500);
  for (const count of quick ? [10_000] : [10_000, 100_000]) {
    const label = count.toLocaleString('en-US');
    const specs = syntheticSpecs(count);
    const registry = new InMemoryToolRegistry();
    for (let start = 0; start < specs.length; start += 5000) await registry.registerMany(specs.slice(start, start + 5000));
    // Wall time, and the process's CPU time (all its threads, GC included): on a shared machine
    // the wall time of one build swings with the load, its CPU time much less.
    let started = performance.now();
    const cpuAtStart = process.cpuUsage();
    await registry.search('warm up');
    const buildMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuAtStart);
    const buildCpuMs = (cpu.user + cpu.system) / 1000;
    log(`search index of ${label} tools built in ${buildMs.toFixed(0)} ms (first search; ${buildCpuMs.toFixed(0)} ms of CPU; load ${loadavg()[0].toFixed(2)})`);
    let q = 0;
    let found = 0;
    const search = async () => {
      found += (await registry.search(queries[q++ % queries.length])).results.length;
    };
    record(`search.query.${count}`, `search, ${label} tools (2-5 word queries, limit 10)`, 'registry.search (memory store)', await measure(search, { async: true, batch: 1, time: quick ? 300 : 2000 }), { index_build_ms: buildMs, index_build_cpu_ms: buildCpuMs });
    check(found > 0, 'searches found tools');
    // The baseline of the same run: listing every tool (what a caller without search reads).
    record(`search.listAll.${count}`, `search, ${label} tools (2-5 word queries, limit 10)`, 'baseline: listAll() (memory store)', await measure(() => registry.listAll(), { async: true, batch: 1, time: quick ? 300 : 1000 }));
    // One write's index update: a new version with a new description, then a search (which applies it), against the search alone.
    let version = 1;
    const target = specs[Math.floor(count / 2)];
    const writeThenSearch = async () => {
      version++;
      await registry.register({ ...target, version: String(version), description: `${target.description} revision ${version}` });
      await registry.search(queries[q++ % queries.length]);
    };
    const writeOnly = async () => {
      version++;
      await registry.register({ ...target, version: String(version), description: `${target.description} revision ${version}` });
    };
    record(`search.write-search.${count}`, `one write then a search, ${label} tools`, 'register(new version) + search', await measure(writeThenSearch, { async: true, batch: 1, time: quick ? 300 : 1000 }));
    record(`search.write-only.${count}`, `one write then a search, ${label} tools`, 'baseline: register(new version) alone', await measure(writeOnly, { async: true, batch: 1, time: quick ? 300 : 1000 }));
    await registry.close();
    // The index update itself: SearchIndex.set replacing one tool in an index of `count`.
    const index = new SearchIndex();
    for (const spec of specs) index.set(spec.tool_name, spec, spec);
    let n = 0;
    const replace = () => {
      const spec = specs[n++ % specs.length];
      index.set(spec.tool_name, spec, { ...spec, description: `${spec.description} changed ${n}` });
    };
    record(`search.index-set.${count}`, `one write's index update, ${label} tools`, 'SearchIndex.set (re-index one tool)', await measure(replace, { time: quick ? 300 : 1000 }));
    const memory = indexMemory(count);
    record(`search.memory.${count}`, `index memory, ${label} tools`, 'heap + ArrayBuffers of the index / JSON of the specs', { median_us: Number.NaN, samples: 1 }, { ...memory, ratio: memory.indexBytes / memory.jsonBytes, grown_ratio: memory.grownBytes / memory.jsonBytes });
    const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
    log(
      `index memory, ${label} tools (heap + ArrayBuffers): built at the first search ${mb(memory.indexBytes)} (heap alone ${mb(memory.heapBytes)}), ` +
        `grown tool by tool ${mb(memory.grownBytes)} (heap alone ${mb(memory.grownHeapBytes)}), for ${mb(memory.jsonBytes)} of spec JSON ` +
        `(${(memory.indexBytes / memory.jsonBytes).toFixed(2)}x, ${(memory.grownBytes / memory.jsonBytes).toFixed(2)}x)`,
    );
  }
}

// Standalone: `npm run build && node bench/search.mjs` prints every figure.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === '--memory') {
    await memoryChild(Number(process.argv[3]), process.argv[4]);
  } else {
    await searchWorkloads({
      record: (id, workload, contender, stats, extra = {}) => {
        const median = Number.isNaN(stats.median_us) ? '' : ` median ${stats.median_us.toFixed(1)} us, p99 ${stats.p99_us?.toFixed(1)} us (${stats.samples} samples)`;
        process.stdout.write(`${id} | ${workload} | ${contender}:${median} ${JSON.stringify(extra)}\n`);
      },
      log: (text) => process.stderr.write(`${text}\n`),
      quick: process.env.BENCH_QUICK === '1',
    });
  }
}
