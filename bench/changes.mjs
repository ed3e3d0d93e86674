// Change-feed benchmarks (issue 11): a `changes` page of 1,000 events against a raw SELECT
// of the same rows, and the CPU an idle `watch` costs. Called from bench/run.mjs; also runs
// on its own (`node bench/changes.mjs`, after `npm run build`) and prints its results.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openSqliteToolRegistry } from '../dist/index.js';
import { specFor } from './lib/fixtures.mjs';
import { measureInterleaved } from './lib/measure.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const IDLE_CHILD = fileURLToPath(new URL('./children/idle-watch.mjs', import.meta.url));
/** Events in the log; the page read is the 1,000 after revision 500. */
const EVENTS = 3000;
const PAGE = 1000;
const SINCE = 500;

/** CPU of a child process that sits idle for `seconds`, with a watch or without. */
function idleCpu(store, file, seconds, mode) {
  const output = execFileSync(process.execPath, [IDLE_CHILD, store, file, String(seconds), mode], { encoding: 'utf8' });
  return JSON.parse(output);
}

/**
 * Runs the workloads; `record(id, workload, contender, stats, extra)` stores each result the
 * way bench/run.mjs does; `log(text)` reports progress.
 */
export async function changesWorkloads({ folder, record, log }) {
  const file = join(folder, 'changes.db');
  const registry = await openSqliteToolRegistry({ filename: file });
  // 3,000 events: 1,000 added (one commit), 1,000 disabled, 1,000 enabled.
  const names = [];
  for (let i = 0; i < PAGE; i++) names.push(specFor(i).tool_name);
  await registry.registerMany(Array.from({ length: PAGE }, (_, i) => specFor(i)));
  for (const enabled of [false, true]) for (const name of names) await registry.setEnabled(name, enabled);
  const page = await registry.changes({ since: SINCE, limit: PAGE });
  if (page.events.length !== PAGE || page.revision !== EVENTS) throw new Error(`setup: expected ${EVENTS} events, got revision ${page.revision}`);

  // The baseline: the same rows through one prepared statement on a raw connection.
  const raw = new Database(file, { readonly: true });
  const select = raw.prepare(
    'SELECT revision, tool_name, action, version, at FROM tool_changes WHERE revision > ? AND action IS NOT NULL ORDER BY revision LIMIT ?',
  );
  if (select.all(SINCE, PAGE).length !== PAGE) throw new Error('setup: the raw SELECT does not see the page');
  log('changes: a page of 1,000 events vs a raw SELECT of the same rows');
  const stats = await measureInterleaved(
    [
      ['ours', () => registry.changes({ since: SINCE, limit: PAGE }), { async: true }],
      ['raw', () => select.all(SINCE, PAGE)],
    ],
    { rounds: QUICK ? 2 : 4, time: QUICK ? 200 : 400 },
  );
  record('changes.page1000.ours', '`changes` page of 1,000 events', 'tool-registry changes()', stats.get('ours'));
  record('changes.page1000.raw', '`changes` page of 1,000 events', 'raw prepared SELECT of the same rows', stats.get('raw'));
  raw.close();
  await registry.close();

  // Idle watch: process CPU over a few seconds of nothing happening, in a child of its own.
  const seconds = QUICK ? 2 : 5;
  for (const store of ['sqlite', 'memory']) {
    log(`watch: idle CPU over ${seconds} s (${store})`);
    const watching = idleCpu(store, file, seconds, 'watch');
    const baseline = idleCpu(store, file, seconds, 'none');
    const perSecond = (run) => (run.cpuUs / run.wallUs) * 1_000_000;
    const asStats = (us) => ({ median_us: us, p75_us: us, p99_us: us, mean_us: us, samples: 1 });
    record(`watch.idle.${store}`, `idle \`watch\` (${store}), CPU per second`, 'process CPU with an idle watch', asStats(perSecond(watching)), {
      cpu_share: watching.cpuUs / watching.wallUs,
    });
    record(`watch.idle.${store}.none`, `idle process (${store}), CPU per second`, 'the same process without a watch', asStats(perSecond(baseline)), {
      cpu_share: baseline.cpuUs / baseline.wallUs,
    });
    record(`watch.idle.${store}.second`, 'one second of one core', 'wall clock', asStats(1_000_000));
  }
}

// Standalone: node bench/changes.mjs
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-bench-changes-'));
  const results = [];
  try {
    await changesWorkloads({
      folder,
      log: (text) => process.stderr.write(`${text}\n`),
      record: (id, workload, contender, stats, extra = {}) => {
        const { values_us: _values, ...kept } = stats;
        results.push({ id, workload, contender, ...kept, ...extra });
      },
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  const by = new Map(results.map((result) => [result.id, result]));
  const ratio = (ours, base) => by.get(ours).median_us / by.get(base).median_us;
  for (const result of results) console.log(`${result.id.padEnd(28)} ${result.median_us.toFixed(1).padStart(12)} us  ${result.contender}`);
  console.log(`changes page / raw SELECT:          ${ratio('changes.page1000.ours', 'changes.page1000.raw').toFixed(2)} x (target <= 1.5)`);
  for (const store of ['sqlite', 'memory']) {
    console.log(`idle watch CPU, ${store}: ${(ratio(`watch.idle.${store}`, `watch.idle.${store}.second`) * 100).toFixed(3)} % of one core (target <= 1 %); without a watch ${(ratio(`watch.idle.${store}.none`, `watch.idle.${store}.second`) * 100).toFixed(3)} %`);
  }
}
