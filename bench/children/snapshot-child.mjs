// One importSnapshot or exportSnapshot of N tools in a fresh process, reporting time and
// peak RSS growth over the RSS just before the call (after a GC, snapshot already in memory).
// Usage: node --expose-gc snapshot-child.mjs <ours-import|raw-import|raw-log-import|plain-import|ours-export|raw-export> <file> <count> [nocache]
// raw-log-import is the raw bulk insert into the store's full schema (with the change log's triggers).
import { performance } from 'node:perf_hooks';
import { Buffer } from 'node:buffer';
import { URL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { raisePeak } from '../lib/peak.mjs';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { openSqliteToolRegistry } from '../../dist/index.js';
import { applyStorePragmas, createPlainFile, createRawFile, plainRegistry, rawRegistry, snapshotOf } from '../lib/fixtures.mjs';

const [mode, file, countText, cacheFlag] = process.argv.slice(2);
const count = Number(countText);
const cache = cacheFlag !== 'nocache';
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');

const peak = new Int32Array(new SharedArrayBuffer(4));
const sampler = new Worker(new URL('./rss-sampler.mjs', import.meta.url), { workerData: { buffer: peak.buffer } });

let snapshot;
let snapshotBytes = 0;
let run;
let cleanup = async () => {};
if (mode === 'ours-import' || mode === 'raw-import' || mode === 'raw-log-import' || mode === 'plain-import') {
  snapshot = snapshotOf(count);
  // The JSON size, summed tool by tool: one 60 MB string would leave the heap grown before
  // the baseline RSS is taken, and hide the call's own growth.
  snapshotBytes = '{"tools":[]}'.length + Math.max(0, count - 1);
  for (const tool of snapshot.tools) snapshotBytes += Buffer.byteLength(JSON.stringify(tool));
  if (mode === 'ours-import') {
    const registry = await openSqliteToolRegistry({ filename: file, cache });
    run = () => registry.importSnapshot(snapshot);
    cleanup = () => registry.close();
  } else if (mode === 'raw-log-import') {
    await (await openSqliteToolRegistry({ filename: file })).close();
    const db = new Database(file);
    applyStorePragmas(db);
    const raw = rawRegistry(db);
    run = async () => raw.importAll(snapshot);
    cleanup = async () => db.close();
  } else if (mode === 'plain-import') {
    const db = createPlainFile(file);
    const plain = plainRegistry(db);
    run = async () => plain.importAll(snapshot);
    cleanup = async () => db.close();
  } else {
    const db = createRawFile(file);
    const raw = rawRegistry(db);
    run = async () => raw.importAll(snapshot);
    cleanup = async () => db.close();
  }
} else if (mode === 'ours-export') {
  const registry = await openSqliteToolRegistry({ filename: file, cache });
  run = () => registry.exportSnapshot();
  cleanup = () => registry.close();
} else if (mode === 'raw-export') {
  const db = new Database(file);
  applyStorePragmas(db);
  const raw = rawRegistry(db);
  run = async () => raw.exportAll();
  cleanup = async () => db.close();
} else {
  throw new Error(`unknown mode ${mode}`);
}

await sleep(20);
globalThis.gc();
globalThis.gc();
await sleep(20);
const before = Math.round(process.memoryUsage.rss() / 1024);
Atomics.store(peak, 0, before);
const start = performance.now();
const result = await run();
const ms = performance.now() - start;
raisePeak(peak, Math.round(process.memoryUsage.rss() / 1024));
await sleep(5);
const exported = mode.endsWith('export') ? result.tools.length : undefined;
if (mode.endsWith('export') && exported !== count) throw new Error(`exported ${exported} tools, expected ${count}`);
const exportBytes = mode.endsWith('export') ? Buffer.byteLength(JSON.stringify(result)) : undefined;
await cleanup();
await sampler.terminate();
process.stdout.write(
  JSON.stringify({
    mode,
    ms,
    rss_before_kib: before,
    peak_growth_kib: Atomics.load(peak, 0) - before,
    json_bytes: snapshotBytes || exportBytes,
  }) + '\n',
);
