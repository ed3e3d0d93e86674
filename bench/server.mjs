// The HTTP server under load (issue 23): 64 keep-alive connections over loopback driven by
// autocannon. Reads (GET /v1/tools/{name}) against a bare node:http handler answering the same
// cached JSON, measured in the same run; a 90 % GET / 10 % PUT mix with p50/p99 and errors;
// and RSS over a soak of the mix (BENCH_SERVER_SOAK_S seconds, default 60). Each server runs
// in its own process. `node bench/server.mjs` (after npm run build) runs only this.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { clearInterval, setInterval } from 'node:timers';
import autocannon from 'autocannon';
import { openSqliteToolRegistry } from '../dist/index.js';

const QUICK = process.env.BENCH_QUICK === '1';
const CONNECTIONS = 64;
const TOOLS = 1_000;
const CHILD = fileURLToPath(new URL('./children/http-server.mjs', import.meta.url));

const spec = (name, version) => ({
  tool_name: name,
  version: String(version),
  description: `Tool ${name}`,
  input_schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 14 } }, required: ['city'] },
  output_schema: { type: 'object' },
  tags: ['bench'],
});
const nameOf = (i) => `tool_${String(i).padStart(5, '0')}`;

async function populate(file) {
  const registry = await openSqliteToolRegistry({ filename: file });
  await registry.registerMany(Array.from({ length: TOOLS }, (_, i) => spec(nameOf(i), 1)));
  await registry.close();
}

async function startChild(kind, file) {
  const child = fork(CHILD, [kind, file, String(TOOLS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [{ url }] = await new Promise((resolve, reject) => {
    child.once('message', (message) => resolve([message]));
    child.once('exit', (code) => reject(new Error(`${kind} server exited ${code}`)));
  });
  const rss = () => new Promise((resolve) => {
    child.once('message', (message) => resolve(message.rss));
    child.send('rss');
  });
  const stop = async () => {
    child.send('exit');
    await new Promise((resolve) => child.once('exit', resolve));
  };
  return { url, rss, stop };
}

/** One autocannon run; `mix`: every tenth request of a connection is a PUT of a new version. */
function load(url, seconds, mix) {
  let counter = 0;
  let versions = 1;
  const requests = [
    {
      setupRequest: (request) => {
        counter++;
        const i = (counter * 7919) % TOOLS;
        if (mix && counter % 10 === 0) {
          versions++;
          return { ...request, method: 'PUT', path: `/v1/tools/${nameOf(i)}`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec(nameOf(i), versions)) };
        }
        return { ...request, method: 'GET', path: `/v1/tools/${nameOf(i)}`, body: undefined };
      },
    },
  ];
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: seconds, pipelining: 1, requests }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

function summary(result) {
  const errors = result.errors + result.timeouts + result.non2xx;
  return { rps: result.requests.average, p50_ms: result.latency.p50, p99_ms: result.latency.p99, errors, total: result.requests.total };
}

/**
 * Runs the server workloads and hands each to `record(id, workload, contender, stats, extra)`;
 * `median_us` is the time per request at the measured throughput (1e6 / requests per second),
 * so ours/bare <= 2 is "reads at least 0.5x the bare handler's throughput".
 */
export async function serverWorkloads({ record, log, soakSeconds = Number(process.env.BENCH_SERVER_SOAK_S ?? (QUICK ? 5 : 60)) }) {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-bench-server-'));
  const seconds = QUICK ? 3 : 10;
  const rounds = QUICK ? 1 : 3;
  const figures = {};
  try {
    const file = join(folder, 'server.db');
    await populate(file);
    const ours = await startChild('ours', file);
    const bare = await startChild('bare', file);
    try {
      // Warm both (JIT, the read cache), then interleave rounds so drift hits both alike.
      await load(ours.url, 1, false);
      await load(bare.url, 1, false);
      const reads = { ours: [], bare: [] };
      for (let round = 0; round < rounds; round++) {
        for (const [name, server] of [['ours', ours], ['bare', bare]]) {
          const s = summary(await load(server.url, seconds, false));
          reads[name].push(s);
          log(`server reads ${name} round ${round + 1}: ${s.rps.toFixed(0)} req/s, p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms, errors ${s.errors}`);
        }
      }
      const best = (list) => list.slice().sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)];
      for (const name of ['ours', 'bare']) {
        const s = best(reads[name]);
        figures[`reads.${name}`] = s;
        record(`server.reads.${name}`, 'HTTP GET /v1/tools/{name}, 64 keep-alive clients', name === 'ours' ? 'tool-registry serve (SQLite)' : 'bare node:http, cached JSON', { median_us: 1e6 / s.rps, p75_us: s.p99_ms * 1000, samples: s.total }, { rps: s.rps, p50_ms: s.p50_ms, p99_ms: s.p99_ms, errors: s.errors });
      }
      const mixed = summary(await load(ours.url, seconds, true));
      figures.mixed = mixed;
      log(`server mix 90/10: ${mixed.rps.toFixed(0)} req/s, p50 ${mixed.p50_ms} ms, p99 ${mixed.p99_ms} ms, errors ${mixed.errors}`);
      record('server.mix90.ours', 'HTTP 90 % GET / 10 % PUT (new version), 64 keep-alive clients', 'tool-registry serve (SQLite)', { median_us: 1e6 / mixed.rps, p75_us: mixed.p99_ms * 1000, samples: mixed.total }, { rps: mixed.rps, p50_ms: mixed.p50_ms, p99_ms: mixed.p99_ms, errors: mixed.errors });
      // The soak: the mix for soakSeconds, RSS sampled every second.
      const samples = [];
      const sampler = setInterval(async () => samples.push(await ours.rss()), 1000);
      const soak = summary(await load(ours.url, soakSeconds, true));
      clearInterval(sampler);
      const mib = (bytes) => bytes / 1024 / 1024;
      const tenth = Math.max(1, Math.floor(samples.length / 10));
      const early = Math.max(...samples.slice(0, tenth));
      const late = Math.max(...samples.slice(-tenth));
      figures.soak = { seconds: soakSeconds, ...soak, rss_first_mib: mib(samples[0]), rss_early_max_mib: mib(early), rss_late_max_mib: mib(late), rss_max_mib: mib(Math.max(...samples)) };
      log(`server soak ${soakSeconds} s: ${soak.rps.toFixed(0)} req/s, errors ${soak.errors}, RSS ${mib(samples[0]).toFixed(1)} -> max ${mib(Math.max(...samples)).toFixed(1)} MiB (first tenth max ${mib(early).toFixed(1)}, last tenth max ${mib(late).toFixed(1)})`);
      record('server.soak.rss', `HTTP soak ${soakSeconds} s of the 90/10 mix: RSS last tenth vs first tenth`, 'tool-registry serve (SQLite)', { median_us: late, samples: samples.length }, { rss_early_bytes: early, rss_late_bytes: late, errors: soak.errors, rps: soak.rps });
    } finally {
      await ours.stop();
      await bare.stop();
    }
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const figures = await serverWorkloads({ record: () => {}, log: (text) => process.stderr.write(`${text}\n`) });
  const ratio = figures['reads.ours'].rps / figures['reads.bare'].rps;
  console.log(JSON.stringify({ ...figures, reads_ratio: ratio }, null, 2));
  console.log(`reads: ${ratio.toFixed(2)} x the bare handler's throughput (target >= 0.5)`);
}
