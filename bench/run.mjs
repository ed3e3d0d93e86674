// The benchmark suite (npm run bench; never part of npm test). Every figure is a median and
// every ratio is against a baseline measured in this same process and run (each step runs in
// a process of its own: `runStep`). Plain ESM over
// the built package (dist/), as a user imports it: no second TypeScript build to keep in step.
// BENCH_QUICK=1 shrinks sizes and time budgets for a smoke run, BENCH_ONLY=writes,snapshots
// runs only those steps (see STEPS); neither writes results unless BENCH_WRITE=1. Bench-only
// baselines (Keyv) are installed on demand into bench/.deps/ (bench/deps.mjs). The search
// step's ToolE quality reads `--data PATH` (`npm run bench -- --data PATH`) or
// TOOL_REGISTRY_TOOLE=PATH, and is skipped with a message without it (bench/search.mjs).
import { URL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import Database from 'better-sqlite3';
import { InMemoryToolRegistry, canonicalJson, openSqliteToolRegistry } from '../dist/index.js';
import { CREATED_AT, applyStorePragmas, createPlainFile, createRawFile, plainRegistry, populateStoreFile, rawRegistry, specFor, toolName } from './lib/fixtures.mjs';
import { measure, measureInterleaved, median } from './lib/measure.mjs';
import { exportsWorkloads } from './exports.mjs';
import { changesWorkloads } from './changes.mjs';
import { renderMarkdown, writeReports } from './lib/report.mjs';
import { baselineVersions, ensureBaselines, importBaseline } from './deps.mjs';
import { catchUpWorkloads } from './catch-up.mjs';
import { postgresWorkloads } from './postgres.mjs';
import { runtimeWorkloads } from './runtime.mjs';
import { coreWorkloads } from './core.mjs';
import { searchWorkloads, toolEPath } from './search.mjs';
import { random } from './lib/random.mjs';
import { serverWorkloads } from './server.mjs';
import { fleetWorkloads } from './fleet.mjs';
import { versionsWorkloads } from './versions.mjs';
import { compatFuzzWorkloads } from './compat-fuzz.mjs';
import { mcpWorkloads } from './mcp.mjs';
import { gatewayWorkloads } from './gateway.mjs';
import { writeScaleWorkloads } from './write-scale.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const SIZES = QUICK ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000];
const SNAPSHOT_SIZE = QUICK ? 10_000 : 100_000;
const SNAPSHOT_RUNS = QUICK ? 1 : 3;
const WORKING_SET = 10_000;
const folder = mkdtempSync(join(tmpdir(), 'tool-registry-bench-'));
const results = [];
// A step's process (BENCH_STEP) logs on the run's clock.
const started = performance.now() - Number(process.env.BENCH_LOG_OFFSET_MS ?? 0);

function log(text) {
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1)}s] ${text}\n`);
}

/** Records one measurement: `id` is stable across runs (results.json, ratios). */
function record(id, workload, contender, stats, extra = {}) {
  const { values_us: _values, ...kept } = stats;
  results.push({ id, workload, contender, ...kept, ...extra });
  log(`${workload} | ${contender}: median ${stats.median_us.toFixed(2)} us (${stats.samples} samples)`);
}


/** A cycling sequence of names: `size` random picks out of `count` tools. */
function cycle(names) {
  let i = 0;
  return () => names[i++ % names.length];
}

function workingSet(count, seed = 1) {
  const next = random(seed);
  const size = Math.min(count, WORKING_SET);
  return Array.from({ length: size }, () => toolName(Math.floor(next() * count)));
}

function assert(condition, message) {
  if (!condition) throw new Error(`bench sanity check failed: ${message}`);
}

// --- reads at every size ---------------------------------------------------------------

async function readWorkloads(count) {
  const label = count.toLocaleString('en-US');
  const file = join(folder, `reads-${count}.db`);
  log(`populating ${label} tools (raw inserts in one transaction)`);
  await populateStoreFile(file, count);
  const cached = await openSqliteToolRegistry({ filename: file });
  const uncached = await openSqliteToolRegistry({ filename: file, cache: false });
  const db = new Database(file);
  applyStorePragmas(db);
  const raw = rawRegistry(db);
  const names = workingSet(count);
  const misses = names.map((_, i) => `missing_${i}`);
  assert((await cached.get(names[0]))?.spec.tool_name === names[0], 'cached get finds a tool');
  // Steady state: every contender has read each name once (our cache, SQLite's page cache).
  for (const name of names) {
    await cached.get(name);
    await uncached.get(name);
    raw.get(name);
  }
  assert(canonicalJson((await uncached.get(names[0])).spec) === canonicalJson(raw.get(names[0]).spec), 'same spec');

  for (const [contender, registry] of [
    ['ours, cache on', cached],
    ['ours, cache off', uncached],
  ]) {
    const hit = cycle(names);
    record(`get.hit.${count}.${contender.includes('on') ? 'cache' : 'nocache'}`, `get hit, ${label} tools`, contender,
      await measure(() => registry.get(hit()), { async: true }));
    const miss = cycle(misses);
    record(`get.miss.${count}.${contender.includes('on') ? 'cache' : 'nocache'}`, `get miss, ${label} tools`, contender,
      await measure(() => registry.get(miss()), { async: true }));
  }
  // The scale target compares sizes at the same access pattern: 1,000 distinct names each time.
  const fixed = names.slice(0, 1000);
  for (const [key, contender, read] of [
    ['cache', 'ours, cache on', (name) => cached.get(name)],
    ['nocache', 'ours, cache off', (name) => uncached.get(name)],
    ['raw', 'raw better-sqlite3', (name) => raw.get(name)],
  ]) {
    const next = cycle(fixed);
    record(`get.hot1000.${count}.${key}`, `get hit, ${label} tools, 1,000 distinct names`, contender,
      await measure(() => read(next()), key === 'raw' ? {} : { async: true }));
  }
  const hit = cycle(names);
  record(`get.hit.${count}.raw`, `get hit, ${label} tools`, 'raw better-sqlite3', await measure(() => raw.get(hit())));
  const miss = cycle(misses);
  record(`get.miss.${count}.raw`, `get miss, ${label} tools`, 'raw better-sqlite3', await measure(() => raw.get(miss())));

  if (count <= 10_000) {
    assert((await cached.listAll()).length === count, 'listAll lists every tool');
    record(`listAll.${count}.cache`, `listAll, ${label} tools, unchanged`, 'ours, cache on',
      await measure(() => cached.listAll(), { async: true }));
    record(`listAll.${count}.nocache`, `listAll, ${label} tools, unchanged`, 'ours, cache off', await measure(() => uncached.listAll()));
    record(`listAll.${count}.raw`, `listAll, ${label} tools, unchanged`, 'raw better-sqlite3', await measure(() => raw.listAll()));
    await afterAnotherProcessWrote(count, file, cached, uncached, raw);
  }
  if (count === 10_000) await inMemoryWorkload(count, names);
  await cached.close();
  await uncached.close();
  db.close();
  if (count >= 100_000) rmSync(file, { force: true });
}

/** Another process (a forked writer) flips one tool before every sample; the sample is the next read. */
async function afterAnotherProcessWrote(count, file, cached, uncached, raw) {
  const label = count.toLocaleString('en-US');
  const writer = fork(new URL('./children/writer.mjs', import.meta.url), [file], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [ready] = await once(writer, 'message');
  assert(ready === 'ready', 'writer started');
  const target = toolName(Math.floor(count / 2));
  let enabled = true;
  const write = async () => {
    enabled = !enabled;
    writer.send({ name: target, enabled });
    await once(writer, 'message');
  };
  const includeDisabled = { includeDisabled: true };
  for (const [contender, key, registry] of [
    ['ours, cache on', 'cache', cached],
    ['ours, cache off', 'nocache', uncached],
  ]) {
    record(`getAfterWrite.${count}.${key}`, `get after another process wrote, ${label} tools`, contender,
      await measure(async () => assert((await registry.get(target)).enabled === enabled, 'the other process\'s write is seen'),
        { beforeEach: write, async: true }));
    record(`listAllAfterWrite.${count}.${key}`, `listAll after one change by another process, ${label} tools`, contender,
      await measure(async () => assert((await registry.listAll(includeDisabled)).length === count, 'all listed'),
        { beforeEach: write, async: true }));
  }
  record(`getAfterWrite.${count}.raw`, `get after another process wrote, ${label} tools`, 'raw better-sqlite3',
    await measure(() => assert(raw.get(target).enabled === enabled, 'seen'), { beforeEach: write }));
  record(`listAllAfterWrite.${count}.raw`, `listAll after one change by another process, ${label} tools`, 'raw better-sqlite3',
    await measure(() => assert(raw.listAll(true).length === count, 'all listed'), { beforeEach: write }));
  // Leave the tool enabled, as populated.
  if (!enabled) await write();
  writer.send('exit');
  await once(writer, 'exit');
}

async function inMemoryWorkload(count, names) {
  const memory = new InMemoryToolRegistry();
  const map = new Map();
  for (let i = 0; i < count; i++) {
    const registration = await memory.register(specFor(i));
    map.set(registration.spec.tool_name, registration);
  }
  const a = cycle(names);
  record('memory.get.map', `in-memory get, ${count.toLocaleString('en-US')} tools`, 'await Promise.resolve(map.get(key))',
    await measure(() => Promise.resolve(map.get(a())), { async: true }));
  const b = cycle(names);
  record('memory.get.store', `in-memory get, ${count.toLocaleString('en-US')} tools`, 'InMemoryToolRegistry.get',
    await measure(() => memory.get(b()), { async: true }));
  await memory.close();
}

// --- writes on a file of 10,000 tools --------------------------------------------------

/** Each contender writes to its own file of 10,000 tools; workloads run in interleaved rounds. */
async function writeWorkloads() {
  const count = 10_000;
  const names = workingSet(count, 7);
  const contenders = [];
  for (const [key, contender, cache] of [
    ['cache', 'ours, cache on', true],
    ['nocache', 'ours, cache off', false],
  ]) {
    const file = join(folder, `writes-${key}.db`);
    await populateStoreFile(file, count);
    const registry = await openSqliteToolRegistry({ filename: file, cache });
    contenders.push({ key, contender, isAsync: true, register: (spec) => registry.register(spec), setEnabled: (name, on) => registry.setEnabled(name, on), get: (name) => registry.get(name), close: () => registry.close() });
  }
  const db = createRawFile(join(folder, 'writes-raw.db'), count);
  const raw = rawRegistry(db);
  contenders.push({ key: 'raw', contender: 'raw better-sqlite3', isAsync: false, register: (spec) => raw.register(spec), setEnabled: (name, on) => raw.setEnabled(name, on), get: (name) => raw.get(name), close: () => db.close() });
  // The plainest thing a user would write: one table, the same pragmas (issue 12's baseline).
  const plainDb = createPlainFile(join(folder, 'writes-plain.db'), count);
  const plain = plainRegistry(plainDb);
  contenders.push({ key: 'plain', contender: 'plain one-table better-sqlite3', isAsync: false, register: (spec) => plain.register(spec), setEnabled: (name, on) => plain.setEnabled(name, on), get: (name) => plain.get(name), close: () => plainDb.close() });
  // Warm every contender on the names it will write (the cache, SQLite's page cache).
  for (const { get } of contenders) for (const name of names) await get(name);

  const index = (name) => Number(name.slice(5));
  const series = {
    'register.new': ['register a new tool', (c) => {
      let fresh = 0;
      return () => c.register(specFor(1_000_000 + fresh++));
    }],
    'register.identical': ['register an identical spec (no-op)', (c) => {
      const next = cycle(names);
      return () => c.register(specFor(index(next())));
    }],
    'register.version': ['register a new version', (c) => {
      const next = cycle(names);
      let version = 0;
      return () => c.register(specFor(index(next()), `2.${version++}`));
    }],
    setEnabled: ['setEnabled (flip)', (c) => {
      const next = cycle(names);
      const enabled = new Map();
      return () => {
        const name = next();
        const on = !(enabled.get(name) ?? true);
        enabled.set(name, on);
        return c.setEnabled(name, on);
      };
    }],
  };
  for (const [id, [workload, make]] of Object.entries(series)) {
    const pooled = await measureInterleaved(contenders.map((c) => [c.key, make(c), { async: c.isAsync }]), { rounds: QUICK ? 1 : 4 });
    for (const c of contenders) record(`${id}.${c.key}`, workload, c.contender, pooled.get(c.key));
  }
  // 64 callers at once: ours are started in the same turn and awaited together (group
  // commit); the baselines make the same 64 one-transaction calls one after another.
  let fresh = 0;
  const batchOf = () => Array.from({ length: 64 }, () => specFor(3_000_000 + fresh++));
  const concurrent = await measureInterleaved(
    contenders.map((c) => [
      c.key,
      c.isAsync
        ? async () => {
            await Promise.all(batchOf().map((spec) => c.register(spec)));
          }
        : () => {
            for (const spec of batchOf()) c.register(spec);
          },
      { async: c.isAsync, batch: 1 },
    ]),
    { rounds: QUICK ? 1 : 4 },
  );
  for (const c of contenders) record(`register.concurrent64.${c.key}`, '64 concurrent registers of new tools', c.contender, concurrent.get(c.key));
  for (const c of contenders) await c.close();
}

// --- Keyv + @keyv/sqlite ---------------------------------------------------------------

async function keyvWorkloads() {
  const count = 10_000;
  const { Keyv } = await importBaseline('keyv');
  const { KeyvSqlite } = await importBaseline('@keyv/sqlite');
  const file = join(folder, 'keyv.db');
  const store = new KeyvSqlite({ uri: `sqlite://${file}`, busyTimeout: 5000 });
  const keyv = new Keyv({ store });
  // The same durability settings as ours: WAL, synchronous=FULL.
  await store.query('PRAGMA journal_mode = WAL');
  await store.query('PRAGMA synchronous = FULL');
  const registrationOf = (i) => ({ spec: specFor(i), enabled: true, created_at: CREATED_AT });
  await keyv.set(toolName(0), registrationOf(0));
  // Bulk-load the rest in one transaction, in exactly the format Keyv wrote the first one.
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  const first = db.prepare('SELECT key, value FROM keyv').get();
  assert(first.key === `keyv:${toolName(0)}` && first.value === JSON.stringify({ value: registrationOf(0) }), 'keyv row format');
  const insert = db.prepare('INSERT INTO keyv (key, value) VALUES (?, ?)');
  db.transaction(() => {
    for (let i = 1; i < count; i++) insert.run(`keyv:${toolName(i)}`, JSON.stringify({ value: registrationOf(i) }));
  })();
  db.close();
  const names = workingSet(count);
  assert((await keyv.get(names[0])).spec.tool_name === names[0], 'keyv get finds a tool');
  // Ours on the same tools, measured here (the targets pair these, never figures of another
  // step's process), cache warm as in the reads step, interleaved with Keyv.
  const ourFile = join(folder, 'keyv-ours.db');
  await populateStoreFile(ourFile, count);
  const ours = await openSqliteToolRegistry({ filename: ourFile });
  for (const name of names) await ours.get(name);
  assert((await ours.get(names[0]))?.spec.tool_name === names[0], 'our get finds a tool');
  const rounds = QUICK ? 1 : 4;
  const hitOurs = cycle(names);
  const hitKeyv = cycle(names);
  const gets = await measureInterleaved([
    ['ours', () => ours.get(hitOurs()), { async: true }],
    ['keyv', () => keyv.get(hitKeyv()), { async: true }],
  ], { rounds, time: 1000 });
  record('keyv.get.ours', 'get hit, 10,000 tools, beside Keyv', 'ours, cache on', gets.get('ours'));
  record('keyv.get', 'get hit, 10,000 tools, beside Keyv', 'Keyv + @keyv/sqlite', gets.get('keyv'));
  let freshOurs = 0;
  let fresh = 0;
  const sets = await measureInterleaved([
    ['ours', () => ours.register(specFor(1_000_000 + freshOurs++)), { async: true }],
    ['keyv', () => keyv.set(toolName(1_000_000 + fresh++), registrationOf(fresh)), { async: true }],
  ], { rounds, time: 400 });
  record('keyv.set.ours', 'register a new tool, beside Keyv', 'ours, cache on (register)', sets.get('ours'));
  record('keyv.set', 'register a new tool, beside Keyv', 'Keyv + @keyv/sqlite set', sets.get('keyv'));
  await ours.close();
  await keyv.disconnect();
}

// --- snapshots and opening -------------------------------------------------------------

function runChild(mode, file, count, cacheFlag = 'cache') {
  const output = execFileSync(process.execPath, ['--expose-gc', new URL('./children/snapshot-child.mjs', import.meta.url).pathname, mode, file, String(count), cacheFlag], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 20,
  });
  return JSON.parse(output.trim().split('\n').at(-1));
}

function summarize(runs) {
  const ms = runs.map((run) => run.ms);
  return {
    median_us: median(ms) * 1000,
    p75_us: Math.max(...ms) * 1000,
    p99_us: Math.max(...ms) * 1000,
    mean_us: (ms.reduce((a, b) => a + b, 0) / ms.length) * 1000,
    samples: runs.length,
    batch: 1,
    peak_growth_bytes: median(runs.map((run) => run.peak_growth_kib)) * 1024,
    json_bytes: runs[0].json_bytes,
  };
}

async function snapshotWorkloads() {
  const label = SNAPSHOT_SIZE.toLocaleString('en-US');
  const imports = [
    ['ours-import', 'cache', 'import.ours', 'ours, cache on'],
    ['ours-import', 'nocache', 'import.ours.nocache', 'ours, cache off'],
    ['raw-import', 'cache', 'import.raw', 'raw bulk insert, one transaction'],
    ['raw-log-import', 'cache', 'import.rawlog', 'raw bulk insert into our schema with the change log'],
    ['plain-import', 'cache', 'import.plain', 'plain one-table bulk insert, one transaction'],
  ];
  const runs = new Map(imports.map(([, , id]) => [id, []]));
  // Interleaved, like the write workloads: each round runs every contender once.
  for (let i = 0; i < SNAPSHOT_RUNS; i++) {
    for (const [mode, cacheFlag, id] of imports) {
      const file = join(folder, `import-${i}.db`);
      runs.get(id).push(runChild(mode, file, SNAPSHOT_SIZE, cacheFlag));
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    }
  }
  for (const [, , id, contender] of imports) record(id, `importSnapshot, ${label} tools, into an empty file`, contender, summarize(runs.get(id)));
  const file = join(folder, `snapshot-${SNAPSHOT_SIZE}.db`);
  await populateStoreFile(file, SNAPSHOT_SIZE);
  for (const [mode, cacheFlag, id, contender] of [
    ['ours-export', 'cache', 'export.ours.cache', 'ours, cache on'],
    ['ours-export', 'nocache', 'export.ours.nocache', 'ours, cache off'],
    ['raw-export', 'cache', 'export.raw', 'raw SELECT of all rows + parse'],
  ]) {
    const runs = [];
    for (let i = 0; i < SNAPSHOT_RUNS; i++) runs.push(runChild(mode, file, SNAPSHOT_SIZE, cacheFlag));
    record(id, `exportSnapshot, ${label} tools`, contender, summarize(runs));
  }
  record('open.ours', `open a file holding ${label} tools (and close it)`, 'ours',
    await measure(async () => (await openSqliteToolRegistry({ filename: file })).close(), { time: 1500, async: true }));
  record('open.raw', `open a file holding ${label} tools (and close it)`, 'raw better-sqlite3 (pragmas + prepare)',
    await measure(() => {
      const db = new Database(file);
      applyStorePragmas(db);
      rawRegistry(db);
      db.close();
    }, { time: 1500 }));
}

// --- main ------------------------------------------------------------------------------

function environment() {
  const db = new Database(':memory:');
  const sqlite = db.prepare('select sqlite_version() AS v').get().v;
  db.close();
  const version = (name) => JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
  return {
    date: new Date().toISOString(),
    cpu: cpus()[0]?.model ?? 'unknown',
    cpus: cpus().length,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    sqlite,
    betterSqlite3: version('better-sqlite3'),
    keyv: baselineVersions().keyv,
    keyvSqlite: baselineVersions()['@keyv/sqlite'],
    quick: QUICK,
    loadAverageAtStart: loadavg().map((load) => Number(load.toFixed(2))),
  };
}

function previousResults() {
  const file = new URL('./results.json', import.meta.url);
  try {
    return JSON.parse(readFileSync(file, 'utf8')).results ?? [];
  } catch {
    return [];
  }
}

if (process.argv.includes('--render')) {
  rmSync(folder, { recursive: true, force: true });
  renderMarkdown();
  process.exit(0);
}

/**
 * The workloads, in order. To add a module (bench/runtime.mjs and the like): export an
 * async function taking `{ record, log, folder, quick }` and add one line here.
 */
const STEPS = [
  // ToolSet.invoke and resolve against their hand-written baselines (bench/runtime.mjs).
  ['runtime', () => runtimeWorkloads(record)],
  // The core's CPU per spec (validation, canonical JSON, hashing) against JSON.stringify (bench/core.mjs).
  ['core', ({ quick }) => coreWorkloads({ record, rounds: quick ? 1 : 4 })],
  // compareSchemas of 200-property schemas, and register under compatibility 'backward' (bench/versions.mjs).
  ['versions', ({ quick }) => versionsWorkloads({ record, rounds: quick ? 1 : 4 })],
  // compareSchemas judged by ajv on generated pairs: soundness and permissiveness; agreement with COMPAT_CORPUS when set (bench/compat-fuzz.mjs).
  ['compat-fuzz', ({ quick }) => compatFuzzWorkloads({ record, log, quick })],
  ['reads', async () => { for (const size of SIZES) await readWorkloads(size); }],
  ['writes', writeWorkloads],
  // 64 concurrent registers on files of 100, 10,000 and 100,000 tools against 64 plain transactions (bench/write-scale.mjs).
  ['write-scale', ({ quick }) => writeScaleWorkloads({ record, folder, rounds: quick ? 1 : 4 })],
  ['keyv', keyvWorkloads],
  ['snapshots', snapshotWorkloads],
  ['exports', ({ quick }) => exportsWorkloads({ record, log, rounds: quick ? 1 : 4 })],
  ['changes', () => changesWorkloads({ folder, record, log })],
  // The read cache catching up after another connection wrote (bench/catch-up.mjs).
  ['catch-up', async () => {
    for (const result of await catchUpWorkloads({ size: QUICK ? 10_000 : 100_000, rounds: QUICK ? 2 : 3, log })) {
      results.push(result);
      log(`${result.workload} | ${result.contender}: ${result.peak_growth_bytes === undefined ? `median ${(result.median_us / 1000).toFixed(1)} ms` : `heap growth ${result.peak_growth_bytes} bytes`}`);
    }
  }],
  // Search (issue 26): ToolE quality against plain BM25, search and index-update speed, index memory (bench/search.mjs).
  ['search', ({ quick }) => searchWorkloads({ record, log, quick, data: toolEPath() })],
  // PostgreSQL against raw pg on an embedded server started for the step (bench/postgres.mjs).
  ['postgres', () => postgresWorkloads({ record, log })],
  // The HTTP server under 64 keep-alive clients vs a bare node:http handler, an RSS soak, and the SSE fan-out to 100 clients vs a bare node:http fan-out (bench/server.mjs).
  ['server', () => serverWorkloads({ record, log })],
  // tool-registry mcp against the SDK's McpServer over stdio, serve --tools's /mcp against it over Streamable HTTP, and list_changed latency (bench/mcp.mjs).
  ['mcp', () => mcpWorkloads({ record, log })],
  // A tools/call and tools/list through the gateway against the SDK's Client calling server-everything directly (bench/gateway.mjs).
  ['gateway', async () => {
    const ratios = await gatewayWorkloads({ record, log });
    log(`gateway ratios per round: call ${ratios.call.map((ratio) => ratio.toFixed(2)).join(' ')}; work ${ratios.work.map((ratio) => ratio.toFixed(2)).join(' ')}; list ${ratios.list.map((ratio) => ratio.toFixed(2)).join(' ')}`);
  }],
  // Three serve processes on one PostgreSQL: a write's propagation to every server's SSE clients (bench/fleet.mjs).
  ['fleet', () => fleetWorkloads({ record, log })],
];
const ONLY = process.env.BENCH_ONLY?.split(',').filter(Boolean);
/** Set in the process that runs one step for the run (below). */
const STEP = process.env.BENCH_STEP;

/**
 * Each step runs in a process of its own, forked from this one with BENCH_STEP, which sends its
 * results back: what one step leaves behind (a heap grown by 100,000-tool snapshots and the
 * search index, timers, children) must not weigh on the next one's contenders. Measured: the
 * gateway's in-process calls were 1.36 x in a full run in one process and 1.10-1.19 x in runs
 * of the step alone; a 5 ms tool through the gateway 1.07-1.12 x against 1.02-1.05 x.
 */
async function runStep(name) {
  const child = fork(new URL(import.meta.url), process.argv.slice(2), {
    env: { ...process.env, BENCH_STEP: name, BENCH_LOG_OFFSET_MS: String(performance.now() - started) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let sent;
  child.on('message', (message) => (sent = message));
  const [code, signal] = await once(child, 'exit');
  if (code !== 0 || sent === undefined) throw new Error(`bench step ${name} failed (exit ${code ?? signal})`);
  results.push(...sent.results);
}

if (STEP !== undefined) {
  const step = STEPS.find(([name]) => name === STEP);
  if (step === undefined) throw new Error(`no bench step ${STEP}`);
  try {
    await step[1]({ record, log, folder, quick: QUICK });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  // Exits once the results are sent: a step may leave a handle open (the PostgreSQL step's
  // pools kept its process alive), which a run in one process never noticed.
  process.send({ results }, () => process.exit(0));
} else try {
  const unknown = ONLY?.filter((name) => !STEPS.some(([step]) => step === name)) ?? [];
  // A misspelt step would run nothing, and with BENCH_WRITE=1 write a report of no measurement.
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: no step ${unknown.join(', ')} (the steps: ${STEPS.map(([step]) => step).join(', ')})`);
  ensureBaselines({ log });
  const env = environment();
  log(`${env.cpu} x${env.cpus}, Node ${env.node}, SQLite ${env.sqlite}${QUICK ? ' (QUICK)' : ''}`);
  for (const [name] of STEPS) {
    if (ONLY !== undefined && !ONLY.includes(name)) continue;
    log(`--- ${name}`);
    await runStep(name);
  }
  env.seconds = Math.round((performance.now() - started) / 1000);
  env.loadAverageAtEnd = loadavg().map((load) => Number(load.toFixed(2)));
  if (ONLY !== undefined && !QUICK && process.env.BENCH_WRITE === '1') {
    // A partial run that writes: the steps not run keep the previous run's figures, marked.
    env.steps = ONLY;
    const measured = new Set(results.map((result) => result.id));
    for (const result of previousResults()) if (!measured.has(result.id)) results.push({ ...result, carriedOver: true });
  }
  // A quick or partial (BENCH_ONLY) run prints its table but keeps the recorded results.
  if ((!QUICK && ONLY === undefined) || process.env.BENCH_WRITE === '1') writeReports(env, results);
  else writeReports(env, results, { dryRun: true });
} finally {
  rmSync(folder, { recursive: true, force: true });
}
