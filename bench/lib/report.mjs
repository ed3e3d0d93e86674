// Turns one run's measurements into a table on stdout, bench/results.json and BENCHMARKS.md.
// The previous results.json (when there is one) is kept as a second column: run-to-run noise.
import { URL } from 'node:url';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const RESULTS = new URL('../results.json', import.meta.url);
const MARKDOWN = new URL('../../BENCHMARKS.md', import.meta.url);
const ANALYSIS = new URL('../analysis.md', import.meta.url);

/** The issue's targets: ours / baseline (both medians of this run) must be at most `max`. */
export const TARGETS = [
  { id: 'get-cache', workload: '`get` hit, 10k tools, cache on', ours: 'get.hit.10000.cache', base: 'get.hit.10000.raw', baseline: 'raw prepared SELECT + JSON.parse', max: 0.5 },
  { id: 'get-nocache', workload: '`get` hit, 10k tools, `cache: false`', ours: 'get.hit.10000.nocache', base: 'get.hit.10000.raw', baseline: 'raw prepared SELECT + JSON.parse', max: 1.3 },
  { id: 'get-miss-nocache', workload: '`get` miss, 10k tools, `cache: false`', ours: 'get.miss.10000.nocache', base: 'get.miss.10000.raw', baseline: 'raw prepared SELECT', max: 1.3 },
  { id: 'list-unchanged', workload: '`listAll` 10k, unchanged', ours: 'listAll.10000.cache', base: 'listAll.10000.raw', baseline: 'raw SELECT of all rows + parse', max: 0.05 },
  { id: 'list-after-change', workload: '`listAll` 10k, after one change by another process', ours: 'listAllAfterWrite.10000.cache', base: 'listAllAfterWrite.10000.raw', baseline: 'raw SELECT of all rows + parse', max: 1.2 },
  { id: 'register-new', workload: '`register` new tool', ours: 'register.new.cache', base: 'register.new.plain', baseline: 'plain one-table IMMEDIATE transaction: select, compare, insert', max: 1.3 },
  { id: 'register-concurrent', workload: '64 concurrent `register`s of new tools', ours: 'register.concurrent64.cache', base: 'register.concurrent64.plain', baseline: '64 plain one-table transactions, one after another', max: 0.2 },
  { id: 'set-enabled', workload: '`setEnabled`', ours: 'setEnabled.cache', base: 'setEnabled.raw', baseline: 'raw IMMEDIATE transaction, same check and write', max: 1.3 },
  { id: 'register-identical', workload: '`register` identical spec', ours: 'register.identical.cache', base: 'register.identical.raw', baseline: 'raw IMMEDIATE transaction, same check, no write', max: 0.5 },
  { id: 'import-time', workload: '`importSnapshot` 100k tools, time', ours: 'import.ours', base: 'import.plain', baseline: 'plain one-table bulk insert in one transaction', max: 1.5 },
  { id: 'import-memory', workload: '`importSnapshot` 100k tools, peak memory growth', ours: 'import.ours', base: 'import.ours', baseline: "the snapshot's JSON size", max: 3, memory: true },
  { id: 'keyv-get', workload: 'our `get` (cache on) vs Keyv `get`, 10k', ours: 'keyv.get.ours', base: 'keyv.get', baseline: 'Keyv + @keyv/sqlite get', max: 0.05 },
  { id: 'keyv-set', workload: 'our `register` vs Keyv `set`', ours: 'keyv.set.ours', base: 'keyv.set', baseline: 'Keyv + @keyv/sqlite set', max: 0.5 },
  { id: 'scale', workload: 'scale: `get` at 1,000,000 tools vs at 1,000 (cache on, the same 1,000 names read)', ours: 'get.hot1000.1000000.cache', base: 'get.hot1000.1000.cache', baseline: '`get` at 1,000 tools', max: 1.5 },
  { id: 'memory-get', workload: 'in-memory store `get`', ours: 'memory.get.store', base: 'memory.get.map', baseline: '`await Promise.resolve(map.get(key))`', max: 3 },
  { id: 'runtime-invoke', workload: '`ToolSet.invoke`, 5-property schema', ours: 'runtime.invoke.ours', base: 'runtime.invoke.base', baseline: '`validate(args) && handler(args)`, the same compiled ajv validator', max: 1.5 },
  { id: 'runtime-resolve', workload: '`ToolSet.resolve`, 100 tools', ours: 'runtime.resolve.ours', base: 'runtime.resolve.base', baseline: '`Map.get`', max: 2 },
  { id: 'exports', workload: 'exports: `lintTools` (all 5 providers) + all 6 exports of 1,000 tools', ours: 'exports.all', base: 'exports.clone', baseline: '`JSON.parse(JSON.stringify(tools))`', max: 10 },
  { id: 'changes-page', workload: '`changes` page of 1,000 events', ours: 'changes.page1000.ours', base: 'changes.page1000.raw', baseline: 'raw prepared SELECT of the same rows', max: 1.5 },
  { id: 'watch-idle', workload: 'idle `watch` (SQLite), process CPU per second', ours: 'watch.idle.sqlite', base: 'watch.idle.sqlite.second', baseline: 'one second of one core', max: 0.01 },
  { id: 'catch-up-time', workload: 'cache catch-up (`get` + `listAll`) after another connection added 10% to 100k tools', ours: 'catchUp.100000.cache', base: 'catchUp.100000.reload', baseline: 'a fresh cache loading everything', max: 0.5 },
  { id: 'catch-up-memory', workload: 'cache catch-up after another connection added 10% to 100k tools, heap growth', ours: 'catchUp.100000.memory', base: 'catchUp.100000.memory', baseline: 'the changed rows as read', max: 2, memory: true },
  { id: 'pg-get-cache', workload: 'PostgreSQL `get`, 10k tools, cache on', ours: 'pg.get.cached', base: 'pg.get.raw', baseline: 'raw prepared SELECT round trip (pg)', max: 0.05 },
  { id: 'pg-register-new', workload: 'PostgreSQL `register` new tool', ours: 'pg.register.ours', base: 'pg.register.raw', baseline: 'raw pg transaction: SELECT check + INSERT', max: 1.5 },
  { id: 'pg-register-concurrent', workload: 'PostgreSQL 64 concurrent `register`s of new tools, one instance (group commit)', ours: 'pg.register64.ours', base: 'pg.register64.raw', baseline: '64 raw pg transactions in a row: SELECT check + INSERT', max: 0.3 },
  { id: 'pg-register-concurrent-4', workload: 'PostgreSQL 64 concurrent `register`s of new tools, four instances (16 each)', ours: 'pg.register64x4.ours', base: 'pg.register64.raw', baseline: '64 raw pg transactions in a row: SELECT check + INSERT', max: 0.3 },
  { id: 'pg-import-time', workload: 'PostgreSQL `importSnapshot` 100k tools, time', ours: 'pg.import.ours', base: 'pg.import.raw', baseline: 'raw pg bulk INSERT … SELECT FROM unnest', max: 1.5 },
  { id: 'server-reads', workload: 'HTTP `GET /v1/tools/{name}`, 64 keep-alive clients, time per request at full throughput', ours: 'server.reads.ours', base: 'server.reads.bare', baseline: 'bare node:http handler answering the same cached JSON', max: 2 },
  { id: 'mcp-list', workload: 'MCP `tools/list` of 1,000 tools over stdio (every page)', ours: 'mcp.list.ours', base: 'mcp.list.base', baseline: "the MCP SDK's own McpServer serving the same tools", max: 1.2 },
  { id: 'mcp-call', workload: 'MCP `tools/call` of a trivial handler over stdio', ours: 'mcp.call.ours', base: 'mcp.call.base', baseline: "the MCP SDK's own McpServer serving the same tools", max: 1.2 },
  // Issue 37: the gateway against the SDK's client calling the same upstream (server-everything over stdio) directly.
  { id: 'gateway-call', workload: "MCP `tools/call` through the gateway (server-everything's echo)", ours: 'gateway.call.proxied', base: 'gateway.call.direct', baseline: "the SDK's Client calling the upstream directly", max: 1.3 },
  { id: 'gateway-list', workload: 'MCP `tools/list` through the gateway (server-everything)', ours: 'gateway.list.proxied', base: 'gateway.list.direct', baseline: "the SDK's Client calling the upstream directly", max: 1.2 },
];

/** Further ratios without a target, reported for context. */
export const CONTEXT = [
  { workload: 'scale: `get` at 1,000,000 vs at 1,000, `cache: false`, the same 1,000 names', ours: 'get.hot1000.1000000.nocache', base: 'get.hot1000.1000.nocache' },
  { workload: 'scale: `get` at 1,000,000 vs at 1,000, cache on, 10,000 random names (all 1,000 at 1k)', ours: 'get.hit.1000000.cache', base: 'get.hit.1000.cache' },
  { workload: 'scale, raw better-sqlite3: `get` at 1,000,000 vs at 1,000, the same 1,000 names', ours: 'get.hot1000.1000000.raw', base: 'get.hot1000.1000.raw' },
  { workload: '`get` hit, 1,000,000 tools, cache on', ours: 'get.hit.1000000.cache', base: 'get.hit.1000000.raw' },
  { workload: '`get` after another process wrote, 10k, cache on', ours: 'getAfterWrite.10000.cache', base: 'getAfterWrite.10000.raw' },
  { workload: '`listAll` 10k after one change, `cache: false`', ours: 'listAllAfterWrite.10000.nocache', base: 'listAllAfterWrite.10000.raw' },
  { workload: '`register` new tool vs raw on our schema (check, history row, registration)', ours: 'register.new.cache', base: 'register.new.raw' },
  { workload: 'raw on our schema vs plain one-table, `register` new tool (what the schema costs)', ours: 'register.new.raw', base: 'register.new.plain' },
  { workload: '`register` new tool, `cache: false`, vs plain', ours: 'register.new.nocache', base: 'register.new.plain' },
  { workload: '64 concurrent `register`s vs 64 raw transactions on our schema', ours: 'register.concurrent64.cache', base: 'register.concurrent64.raw' },
  { workload: '`importSnapshot` 100k vs raw bulk insert into our schema', ours: 'import.ours', base: 'import.raw' },
  { workload: 'raw bulk insert into our schema vs plain one-table (what canonical JSON, hashing and the schema cost)', ours: 'import.raw', base: 'import.plain' },
  { workload: '`register` new version, cache on', ours: 'register.version.cache', base: 'register.version.raw' },
  { workload: '`register` identical spec, `cache: false`', ours: 'register.identical.nocache', base: 'register.identical.raw' },
  { workload: '`setEnabled`, `cache: false`', ours: 'setEnabled.nocache', base: 'setEnabled.raw' },
  { workload: '`importSnapshot` 100k, `cache: false`', ours: 'import.ours.nocache', base: 'import.raw' },
  { workload: 'raw bulk insert 100k: with the change log triggers vs without', ours: 'import.rawlog', base: 'import.raw' },
  { workload: '`exportSnapshot` 100k, cache on', ours: 'export.ours.cache', base: 'export.raw' },
  { workload: 'open a file of 100k tools', ours: 'open.ours', base: 'open.raw' },
  { workload: '`ToolSet.invoke` vs the same required work by hand (structuredClone copy, validate, handler, two `performance.now()`, frozen result)', ours: 'runtime.invoke.ours', base: 'runtime.invoke.byhand' },
  { workload: 'exports: `lintTools` + all 6 exports of 1,000 plain, unfrozen tools (validated on every call)', ours: 'exports.all.plain', base: 'exports.clone' },
  { workload: 'exports: `lintTools`, all 5 providers, 1,000 tools', ours: 'exports.lint', base: 'exports.clone' },
  ...['mcp', 'openai', 'openai-responses', 'anthropic', 'gemini', 'ai-sdk'].map((format) => ({ workload: `exports: ${format} export of 1,000 tools (requests of 100)`, ours: `exports.${format}`, base: 'exports.clone' })),
  { workload: 'core, per spec: `parseSpec` (validate, canonical JSON, SHA-256, registered text, frozen spec: a new tool\'s `register` without the store) vs `JSON.stringify(spec)`', ours: 'core.parseSpec', base: 'core.stringify' },
  { workload: 'core, per entry: `parseSnapshot` vs `JSON.stringify(spec)`', ours: 'core.parseSnapshot', base: 'core.stringify' },
  { workload: 'core, per spec: `canonicalJson` vs `JSON.stringify(spec)`', ours: 'core.canonicalJson', base: 'core.stringify' },
  { workload: 'idle `watch` (memory), process CPU per second vs one core', ours: 'watch.idle.memory', base: 'watch.idle.memory.second' },
  { workload: 'idle process without a watch (SQLite store open), CPU per second vs one core', ours: 'watch.idle.sqlite.none', base: 'watch.idle.sqlite.second' },
  // Issue 39: MCP over Streamable HTTP, the server's SSE change feed and its memory under load.
  { workload: "MCP `tools/list` of 1,000 tools over Streamable HTTP (every page), `serve --tools`'s /mcp vs the SDK's McpServer on its StreamableHTTPServerTransport", ours: 'mcp.http.list.ours', base: 'mcp.http.list.base' },
  { workload: "MCP `tools/call` of a trivial handler over Streamable HTTP, `serve --tools`'s /mcp vs the SDK's McpServer on its StreamableHTTPServerTransport", ours: 'mcp.http.call.ours', base: 'mcp.http.call.base' },
  { workload: 'HTTP SSE fan-out: a PUT until all 100 clients of `GET /v1/changes` have its event (p50), vs a bare node:http server writing the same event to 100 streams', ours: 'server.sse100.ours', base: 'server.sse100.bare' },
  { workload: 'HTTP soak of the 90/10 mix: RSS, max of the last tenth vs max of the first tenth', ours: 'server.soak.rss', base: 'server.soak.rss', rss: true },
];

function formatTime(us) {
  if (us === undefined || us === null || !Number.isFinite(us)) return 'n/a';
  if (us >= 1_000_000) return `${(us / 1_000_000).toFixed(2)} s`;
  if (us >= 1000) return `${(us / 1000).toFixed(2)} ms`;
  if (us >= 10) return `${us.toFixed(1)} us`;
  return `${us.toFixed(2)} us`;
}

function formatRatio(ratio) {
  if (ratio === undefined || !Number.isFinite(ratio)) return 'n/a';
  return ratio < 0.1 ? `${ratio.toFixed(4)} x` : `${ratio.toFixed(2)} x`;
}

function mib(bytes) {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * A result's median (or p75) column: its time, or for an RSS row (the server's soak: the
 * largest RSS of the last tenth of the samples, beside the first tenth's) its memory.
 */
function figure(result, column = 'median') {
  if (result?.rss_late_bytes !== undefined) return column === 'median' ? mib(result.rss_late_bytes) : 'n/a';
  // The search step's rows without a time (bench/search.mjs): ToolE's recall@5, the index's memory.
  if (result?.recall_at_5 !== undefined) return column === 'median' ? `R@5 ${fraction(result.recall_at_5)}` : 'n/a';
  if (result?.indexBytes !== undefined) return column === 'median' ? mib(result.indexBytes) : 'n/a';
  return formatTime(column === 'median' ? result?.median_us : result?.p75_us);
}

/** What an RSS row's contender column adds: the first tenth's figure and the ratio. */
function rssNote(result) {
  return result.rss_late_bytes === undefined ? '' : `, RSS max of the last tenth (first tenth ${mib(result.rss_early_bytes)}: ${formatRatio(result.rss_late_bytes / result.rss_early_bytes)})`;
}

/** A recall or MRR as docs/search.md writes it: `.6247`. */
function fraction(value) {
  return value.toFixed(4).replace(/^0/, '');
}

/** What a ToolE row or an index-memory row's contender column adds: every figure the row has (issue 26). */
function searchNote(result) {
  if (result.recall_at_5 !== undefined) {
    return `: R@1 ${fraction(result.recall_at_1)}, R@5 ${fraction(result.recall_at_5)}, R@10 ${fraction(result.recall_at_10)}, MRR@10 ${fraction(result.mrr_at_10)}`;
  }
  if (result.indexBytes !== undefined) {
    return `: ${mib(result.indexBytes)} built at the first search, ${formatRatio(result.ratio)}; grown tool by tool ${mib(result.grownBytes)}, ${formatRatio(result.grown_ratio)}; spec JSON ${mib(result.jsonBytes)}`;
  }
  return '';
}

const NOT_SAME_RUN = 'n/a (not measured in the same run)';

/** Whether two results were measured in the same run (neither or both carried over). */
function sameRun(ours, base) {
  return Boolean(ours.carriedOver) === Boolean(base.carriedOver);
}

/** Evaluates the targets against one run's measurements. */
export function evaluate(results) {
  const byId = new Map(results.map((result) => [result.id, result]));
  const targets = TARGETS.map((target) => {
    const ours = byId.get(target.ours);
    const base = byId.get(target.base);
    if (ours === undefined || base === undefined) return { ...target, ratio: undefined, met: undefined };
    // A partial run that writes carries the other steps' figures over: never a ratio of one
    // run's figure over another's.
    if (!sameRun(ours, base)) return { ...target, oursText: NOT_SAME_RUN, baseText: NOT_SAME_RUN, ratio: undefined, met: undefined };
    if (target.memory) {
      const ratio = ours.peak_growth_bytes / ours.json_bytes;
      return { ...target, oursText: mib(ours.peak_growth_bytes), baseText: mib(ours.json_bytes), ratio, met: ratio <= target.max };
    }
    const ratio = ours.median_us / base.median_us;
    return { ...target, oursText: formatTime(ours.median_us), baseText: formatTime(base.median_us), ratio, met: ratio <= target.max };
  });
  const context = CONTEXT.map((entry) => {
    const ours = byId.get(entry.ours);
    const base = byId.get(entry.base);
    if (entry.rss) {
      // Last tenth against first tenth of one soak: both figures live on the one result.
      const ratio = ours?.rss_late_bytes === undefined ? undefined : ours.rss_late_bytes / ours.rss_early_bytes;
      return { ...entry, oursText: ratio === undefined ? 'n/a' : mib(ours.rss_late_bytes), baseText: ratio === undefined ? 'n/a' : mib(ours.rss_early_bytes), ratio };
    }
    const ratio = ours && base && sameRun(ours, base) ? ours.median_us / base.median_us : undefined;
    return { ...entry, oursText: formatTime(ours?.median_us), baseText: formatTime(base?.median_us), ratio };
  });
  return { targets, context };
}

function rawOf(results, result) {
  // The raw better-sqlite3 figure of the same workload, when there is one.
  const raw = results.find((other) => other.workload === result.workload && /^raw/.test(other.contender));
  return raw === undefined || raw === result || !sameRun(result, raw) ? undefined : result.median_us / raw.median_us;
}

function table(rows) {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  return rows.map((row) => row.map((cell, column) => String(cell).padEnd(widths[column])).join('  ')).join('\n');
}

export function writeReports(env, results, { dryRun = false } = {}) {
  const previous = existsSync(RESULTS) ? JSON.parse(readFileSync(RESULTS, 'utf8')) : undefined;
  const comparable = previous !== undefined && previous.env?.cpu === env.cpu && previous.env?.quick === env.quick;
  const { targets } = evaluate(results);

  const stdout = [['workload', 'contender', 'median', 'p75', 'samples', 'vs raw']];
  for (const result of results) {
    stdout.push([result.workload, `${result.contender}${rssNote(result)}${searchNote(result)}`, figure(result), figure(result, 'p75'), result.samples, formatRatio(rawOf(results, result))]);
  }
  process.stdout.write(`\n${table(stdout)}\n\n`);
  const targetRows = [['target', 'ours', 'baseline', 'ratio', 'limit', 'met']];
  for (const t of targets) targetRows.push([t.workload.replaceAll('`', ''), t.oursText ?? 'n/a', t.baseText ?? 'n/a', formatRatio(t.ratio), `<= ${t.max} x`, t.met === undefined ? 'n/a' : t.met ? 'yes' : 'NO']);
  process.stdout.write(`${table(targetRows)}\n`);
  if (dryRun) {
    process.stdout.write('\n(quick or partial run: bench/results.json and BENCHMARKS.md not written; BENCH_WRITE=1 writes them)\n');
    return;
  }
  const previousRun = comparable
    ? {
        env: previous.env,
        results: previous.results.map(({ id, median_us, peak_growth_bytes, json_bytes, rss_early_bytes, rss_late_bytes, recall_at_5, indexBytes }) => ({ id, median_us, peak_growth_bytes, json_bytes, rss_early_bytes, rss_late_bytes, recall_at_5, indexBytes })),
      }
    : undefined;
  const doc = { env, targets: targets.map(({ id, workload, ours, base, max, ratio, met }) => ({ id, workload, ours, base, max, ratio, met })), results, previousRun };
  writeFileSync(RESULTS, `${JSON.stringify(doc, null, 2)}\n`);
  writeMarkdown(doc);
  process.stdout.write('\nwrote bench/results.json and BENCHMARKS.md\n');
}

/** Writes BENCHMARKS.md again from bench/results.json (after editing bench/analysis.md): `node bench/run.mjs --render`. */
export function renderMarkdown() {
  writeMarkdown(JSON.parse(readFileSync(RESULTS, 'utf8')));
  process.stdout.write('wrote BENCHMARKS.md from bench/results.json\n');
}

function writeMarkdown({ env, results, previousRun }) {
  const { targets, context } = evaluate(results);
  const prior = previousRun === undefined ? undefined : evaluate(previousRun.results);
  const previousById = new Map((previousRun?.results ?? []).map((result) => [result.id, result]));
  const md = [];
  md.push('# Benchmarks', '');
  md.push('Generated by `npm run bench` (`bench/run.mjs`); do not edit by hand: the numbers come from `bench/results.json`,');
  md.push('the analysis from `bench/analysis.md`. Every figure is a median and every ratio is against a baseline');
  md.push('measured in the same process and run, with the same durability settings (file database, WAL, `synchronous=FULL`).', '');
  md.push(`Machine: ${env.cpu} (${env.cpus} CPUs), ${env.platform}, Node ${env.node}, SQLite ${env.sqlite} (better-sqlite3 ${env.betterSqlite3}), keyv ${env.keyv} with @keyv/sqlite ${env.keyvSqlite} (sqlite3 package). Run ${env.date}, ${env.seconds} s in all; load average (1, 5, 15 min) ${env.loadAverageAtStart.join(' / ')} at the start and ${env.loadAverageAtEnd.join(' / ')} at the end (other work on the machine adds noise).`);
  if (env.steps !== undefined) {
    // A partial run that wrote (BENCH_ONLY=... BENCH_WRITE=1): say which figures it measured.
    md.push('', `This was a partial run of the steps ${env.steps.map((step) => `\`${step}\``).join(', ')} only. Every other figure is carried over from the run of ${previousRun?.env.date ?? 'before'} (marked "this step was not run" below), so its "previous run" column repeats it.`);
  }
  if (previousRun !== undefined) {
    md.push('', `The "previous run" columns are the run of ${previousRun.env.date} on the same machine (load average ${previousRun.env.loadAverageAtStart.join(' / ')} at its start): the difference between the two is run-to-run noise.`);
  }
  md.push('', '## Targets', '');
  md.push(`| workload | ours | baseline | ratio | target | met |${prior ? ' previous run: ratio, met |' : ''}`);
  md.push(`| --- | ---: | --- | ---: | ---: | :---: |${prior ? ' ---: |' : ''}`);
  targets.forEach((t, i) => {
    const before = prior?.targets[i];
    const was = before === undefined ? '' : ` ${formatRatio(before.ratio)}, ${before.met === undefined ? 'n/a' : before.met ? 'yes' : 'no'} |`;
    md.push(`| ${t.workload} | ${t.oursText ?? 'n/a'} | ${t.baseText ?? 'n/a'} (${t.baseline}) | ${formatRatio(t.ratio)} | <= ${t.max} x | ${t.met === undefined ? 'n/a' : t.met ? 'yes' : '**no**'} |${was}`);
  });
  md.push('', '## Further ratios (no target)', '');
  md.push(`| workload | ours | baseline | ratio |${prior ? ' previous run |' : ''}`, `| --- | ---: | ---: | ---: |${prior ? ' ---: |' : ''}`);
  context.forEach((c, i) => {
    md.push(`| ${c.workload} | ${c.oursText} | ${c.baseText} | ${formatRatio(c.ratio)} |${prior ? ` ${formatRatio(prior.context[i]?.ratio)} |` : ''}`);
  });
  md.push('', '## Every measurement', '');
  md.push(`| workload | contender | median | p75 | samples | vs raw |${prior ? ' previous run |' : ''}`);
  md.push(`| --- | --- | ---: | ---: | ---: | ---: |${prior ? ' ---: |' : ''}`);
  for (const result of results) {
    const memory = result.peak_growth_bytes === undefined ? '' : `, peak memory growth ${mib(result.peak_growth_bytes)}`;
    const was = prior ? ` ${figure(previousById.get(result.id))} |` : '';
    const carried = result.carriedOver ? ' (previous run: this step was not run)' : '';
    md.push(`| ${result.workload} | ${result.contender}${memory}${rssNote(result)}${searchNote(result)}${carried} | ${figure(result)} | ${figure(result, 'p75')} | ${result.samples} | ${formatRatio(rawOf(results, result))} |${was}`);
  }
  if (existsSync(ANALYSIS)) md.push('', readFileSync(ANALYSIS, 'utf8').trim());
  writeFileSync(MARKDOWN, `${md.join('\n')}\n`);
}
