// The SQLite read cache catching up after another connection wrote (issue 13, item 4).
// - time: after another connection adds 10% of the tools, the cached registry's next get()
//   plus listAll() (the catch-up), against a full reload of the same file by a fresh cached
//   registry (its first get() plus listAll()). Target: at most 0.5 x.
// - memory: the heap growth of that catch-up (measured in a child with --expose-gc, heap
//   collected before, not after) against the size of the changed rows: the heap the same
//   rows take when read with a plain better-sqlite3 statement (and, for context, their text
//   bytes). Target: at most 2 x. Also one 1 MB tool toggled 1,000 times: fetched once.
// Standalone: `npm run build && node bench/catch-up.mjs` (BENCH_QUICK=1 for a smoke run).
// bench/run.mjs imports catchUpWorkloads().
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openSqliteToolRegistry } from '../dist/index.js';
import { populateStoreFile, specFor, toolName } from './lib/fixtures.mjs';
import { median } from './lib/measure.mjs';

const SELF = fileURLToPath(import.meta.url);

/** The `count` tools another connection adds: new names spread between the existing ones. */
function addedSpecs(size, count) {
  const step = size / count;
  return Array.from({ length: count }, (_, i) => {
    const near = Math.floor(i * step);
    return { ...specFor(near), tool_name: `${toolName(near)}_added` };
  });
}

async function addFromAnotherConnection(file, specs) {
  const other = await openSqliteToolRegistry({ filename: file, cache: false });
  await other.importSnapshot({ tools: specs.map((spec) => ({ spec, created_at: null })) });
  await other.close();
}

async function timed(work) {
  const started = performance.now();
  await work();
  return (performance.now() - started) * 1000;
}

/** One round: a primed cache catches up on `added` new tools; a fresh cache reloads everything. */
async function round(base, file, size) {
  copyFileSync(base, file);
  const cached = await openSqliteToolRegistry({ filename: file });
  await cached.listAll({ includeDisabled: true });
  await addFromAnotherConnection(file, addedSpecs(size, size / 10));
  const probe = toolName(Math.floor(size / 2));
  const catchUp = await timed(async () => {
    await cached.get(probe);
    await cached.listAll({ includeDisabled: true });
  });
  const fresh = await openSqliteToolRegistry({ filename: file });
  const reload = await timed(async () => {
    await fresh.get(probe);
    await fresh.listAll({ includeDisabled: true });
  });
  const same = (await cached.listAll({ includeDisabled: true })).length === (await fresh.listAll({ includeDisabled: true })).length;
  await cached.close();
  await fresh.close();
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  if (!same) throw new Error('catch-up bench: the caught-up cache and the reloaded one disagree');
  return { catchUp, reload };
}

function stats(values) {
  return { median_us: median(values), samples: values.length, min_us: Math.min(...values), max_us: Math.max(...values) };
}

/** The memory measurements, in a child with --expose-gc (see childMemory below). */
function memoryInChild(file, size) {
  const out = execFileSync(process.execPath, ['--expose-gc', SELF, '--memory', file, String(size)], { encoding: 'utf8' });
  return JSON.parse(out);
}

/**
 * Runs the catch-up workloads; returns results in bench/run.mjs's record shape
 * ({ id, workload, contender, median_us, samples, ... }).
 */
export async function catchUpWorkloads({ size = 100_000, rounds = 3, log = () => {} } = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-catch-up-'));
  try {
    const label = size.toLocaleString('en-US');
    const base = join(folder, 'base.db');
    await populateStoreFile(base, size);
    const catchUps = [];
    const reloads = [];
    for (let i = 0; i < rounds; i++) {
      const { catchUp, reload } = await round(base, join(folder, `round-${i}.db`), size);
      catchUps.push(catchUp);
      reloads.push(reload);
      log(`catch-up round ${i + 1}: ${(catchUp / 1000).toFixed(1)} ms, full reload ${(reload / 1000).toFixed(1)} ms`);
    }
    const workload = `get + listAll after another connection added 10% to ${label} tools`;
    const results = [
      { id: `catchUp.${size}.cache`, workload, contender: 'ours, cache catching up', ...stats(catchUps) },
      { id: `catchUp.${size}.reload`, workload, contender: 'a fresh cache loading everything', ...stats(reloads) },
    ];
    copyFileSync(base, join(folder, 'memory.db'));
    const memory = memoryInChild(join(folder, 'memory.db'), size);
    results.push({
      id: `catchUp.${size}.memory`,
      workload: `catch-up after another connection added 10% to ${label} tools: heap growth`,
      contender: 'ours, cache catching up',
      peak_growth_bytes: memory.added.growth,
      json_bytes: memory.added.changedBytes,
      text_bytes: memory.added.changedTextBytes,
      median_us: memory.added.ms * 1000,
      samples: 1,
    });
    results.push({
      id: 'catchUp.toggled1MB.memory',
      workload: 'catch-up after one 1 MB tool was toggled 1,000 times: heap growth',
      contender: 'ours, cache catching up',
      peak_growth_bytes: memory.toggled.growth,
      json_bytes: memory.toggled.changedBytes,
      text_bytes: memory.toggled.changedTextBytes,
      median_us: memory.toggled.ms * 1000,
      samples: 1,
    });
    return results;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Heap growth of one catch-up: collected before, not after (what it allocated stays counted). */
async function heapOf(work) {
  globalThis.gc();
  const before = process.memoryUsage().heapUsed;
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  return { growth: process.memoryUsage().heapUsed - before, ms };
}

const ROW = `SELECT r.tool_name, s.version, r.fingerprint, r.enabled, r.created_at, s.spec_json
  FROM tool_registrations r JOIN tool_specs s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
  WHERE r.tool_name = ?`;

/** The heap the current rows of `names` take when read plainly, and their text bytes. */
function rowsSize(file, names) {
  const db = new Database(file, { readonly: true });
  const statement = db.prepare(ROW);
  globalThis.gc();
  const before = process.memoryUsage().heapUsed;
  const rows = names.map((name) => statement.get(name));
  globalThis.gc();
  const heap = process.memoryUsage().heapUsed - before;
  const text = rows.reduce((sum, row) => sum + Object.values(row).reduce((n, value) => n + String(value ?? '').length, 0), 0);
  db.close();
  return { heap, text };
}

async function childMemory(file, size) {
  const cached = await openSqliteToolRegistry({ filename: file });
  await cached.listAll({ includeDisabled: true });
  const specs = addedSpecs(size, size / 10);
  await addFromAnotherConnection(file, specs);
  // has(): the catch-up alone (get() would also build the frozen spec of the tool it reads).
  const added = await heapOf(() => cached.has(toolName(0)));
  const rows = rowsSize(file, specs.map((spec) => spec.tool_name));
  added.changedBytes = rows.heap;
  added.changedTextBytes = rows.text;

  const big = { tool_name: 'big_tool', description: 'x'.repeat(1024 * 1024), input_schema: { type: 'object' }, output_schema: { type: 'object' } };
  await cached.register(big);
  await cached.listAll({ includeDisabled: true });
  const db = new Database(file);
  const flip = db.prepare('UPDATE tool_registrations SET enabled = 1 - enabled WHERE tool_name = ?');
  db.transaction(() => {
    for (let i = 0; i < 1000; i++) flip.run('big_tool');
  })();
  db.close();
  const toggled = await heapOf(() => cached.has('big_tool'));
  const bigRow = rowsSize(file, ['big_tool']);
  toggled.changedBytes = bigRow.heap;
  toggled.changedTextBytes = bigRow.text;
  await cached.close();
  return { added, toggled };
}

if (process.argv[2] === '--memory') {
  process.stdout.write(`${JSON.stringify(await childMemory(process.argv[3], Number(process.argv[4])))}\n`);
} else if (process.argv[1] === SELF) {
  const quick = process.env.BENCH_QUICK === '1';
  const results = await catchUpWorkloads({
    size: quick ? 10_000 : 100_000,
    rounds: quick ? 2 : 3,
    log: (text) => process.stderr.write(`${text}\n`),
  });
  const byId = new Map(results.map((result) => [result.id, result]));
  const size = quick ? 10_000 : 100_000;
  const time = byId.get(`catchUp.${size}.cache`).median_us / byId.get(`catchUp.${size}.reload`).median_us;
  const memory = byId.get(`catchUp.${size}.memory`);
  const toggled = byId.get('catchUp.toggled1MB.memory');
  const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  for (const result of results) process.stdout.write(`${JSON.stringify(result)}\n`);
  process.stdout.write(
    [
      `catch-up / full reload (time, median of ${byId.get(`catchUp.${size}.cache`).samples}): ${time.toFixed(2)} x (target <= 0.5)`,
      `catch-up heap growth / changed rows as read: ${mib(memory.peak_growth_bytes)} / ${mib(memory.json_bytes)} = ${(memory.peak_growth_bytes / memory.json_bytes).toFixed(2)} x (target <= 2); / their text ${mib(memory.text_bytes)} = ${(memory.peak_growth_bytes / memory.text_bytes).toFixed(2)} x`,
      `1 MB tool toggled 1,000 times, heap growth / the row as read: ${mib(toggled.peak_growth_bytes)} / ${mib(toggled.json_bytes)} = ${(toggled.peak_growth_bytes / toggled.json_bytes).toFixed(2)} x`,
      '',
    ].join('\n'),
  );
}
