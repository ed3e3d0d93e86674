// The HTTP server under load (issue 23): 64 keep-alive connections over loopback driven by
// autocannon. Reads (GET /v1/tools/{name}) against a bare node:http handler answering the same
// cached JSON, measured in the same run; a 90 % GET / 10 % PUT mix with p50/p99 and errors;
// RSS over a soak of the mix (BENCH_SERVER_SOAK_S seconds, default 60); and the SSE change
// feed's fan-out: 100 clients of GET /v1/changes on one `tool-registry serve`, a PUT, and the
// time until every client has its event, against a bare node:http server writing the same
// event to 100 streams. Each server runs in its own process. `node bench/server.mjs` (after
// npm run build) runs only this.
import { fork } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import autocannon from 'autocannon';
import { openSqliteToolRegistry } from '../dist/index.js';
import { startServe } from './lib/serve.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const CONNECTIONS = 64;
const TOOLS = 1_000;
const SSE_CLIENTS = 100;
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

/**
 * An SSE client of GET /v1/changes on node:http (lighter than fetch: 100 of them share this
 * process): calls `onEvent(key)` with `tool@version` of every change event as its bytes arrive;
 * resolves with `close()` once the stream is open.
 */
function sseClient(base, onEvent) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/v1/changes`, { headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /v1/changes answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let text = '';
      res.on('data', (chunk) => {
        text += chunk;
        let end;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          if (block.includes(': stream open')) resolve({ close: () => req.destroy() });
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data !== undefined) {
            const event = JSON.parse(data);
            onEvent(`${event.tool_name}@${event.version}`);
          }
        }
      });
    });
    req.on('error', (error) => (error.code === 'ECONNRESET' ? undefined : reject(error)));
    req.end();
  });
}

/** One PUT of `spec` to `base`; resolves when its answer is read. */
function put(base, spec) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}/v1/tools/${spec.tool_name}`, { method: 'PUT', headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 || res.statusCode === 201 ? resolve() : reject(new Error(`PUT answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(JSON.stringify(spec));
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

/**
 * The SSE fan-out: SSE_CLIENTS clients on each server, then `writes` PUTs of new versions of
 * one tool, alternating between the servers; for each, the time from sending the PUT until
 * the last client has the event (and from the first client's copy to the last one's: the
 * fan-out alone). Per server: the delays in microseconds, sorted.
 */
async function fanOut(servers, writes) {
  const figures = {};
  const waiting = new Map();
  const clients = [];
  for (const [name, base] of Object.entries(servers)) {
    figures[name] = { all: [], spread: [], answered: [] };
    for (let i = 0; i < SSE_CLIENTS; i++) {
      clients.push(
        await sseClient(base, (key) => {
          const wait = waiting.get(key);
          if (wait === undefined) return;
          const now = performance.now();
          wait.first ??= now;
          if (++wait.count === SSE_CLIENTS) wait.done(now);
        }),
      );
    }
  }
  try {
    // The first writes warm both sides (JIT) and are not counted.
    const warmup = 10;
    let version = 1;
    for (let i = 0; i < warmup + writes; i++) {
      for (const [name, base] of Object.entries(servers)) {
        version++;
        const key = `fanout_tool@${version}`;
        const wait = { count: 0, first: undefined };
        let timer;
        const delivered = new Promise((resolve) => {
          wait.done = resolve;
          timer = setTimeout(resolve, 10_000, undefined);
        });
        waiting.set(key, wait);
        const start = performance.now();
        await put(base, spec('fanout_tool', version));
        const answered = performance.now();
        const last = await delivered;
        clearTimeout(timer);
        waiting.delete(key);
        if (last === undefined) throw new Error(`SSE fan-out: ${wait.count} of ${SSE_CLIENTS} clients of ${name} had the event after 10 s`);
        if (i >= warmup) {
          figures[name].all.push((last - start) * 1000);
          figures[name].spread.push((last - wait.first) * 1000);
          figures[name].answered.push((answered - start) * 1000);
        }
        // Let the servers and the clients settle (GC, the next poll) before the next write.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  } finally {
    for (const client of clients) client.close();
  }
  for (const name of Object.keys(figures)) for (const list of Object.values(figures[name])) list.sort((a, b) => a - b);
  return figures;
}

/**
 * The SSE fan-out row: `tool-registry serve` on `file` and the bare fan-out server, each with
 * SSE_CLIENTS clients, and writes alternating between them (fanOut). Returns its figures.
 */
export async function sseWorkload({ record, log, file, folder }) {
  const figures = {};
  const serve = await startServe(['--db', file], { cwd: folder });
  const fanOutBare = await startChild('bare-sse', file);
  try {
    const writes = QUICK ? 20 : 100;
    const delays = await fanOut({ ours: serve.base, bare: fanOutBare.url }, writes);
    const workload = `HTTP SSE fan-out: a PUT until all ${SSE_CLIENTS} clients of GET /v1/changes on one server have its event`;
    for (const [name, contender] of [
      ['ours', 'tool-registry serve (SQLite), p50 (p99 in the p75 column)'],
      ['bare', `bare node:http writing the same event to ${SSE_CLIENTS} streams (no store), p50 (p99 in the p75 column)`],
    ]) {
      const { all, spread, answered } = delays[name];
      const ms = (list, p) => percentile(list, p) / 1000;
      const figure = { p50_ms: ms(all, 50), p99_ms: ms(all, 99), spread_p50_ms: ms(spread, 50), spread_p99_ms: ms(spread, 99), answered_p50_ms: ms(answered, 50), answered_p99_ms: ms(answered, 99) };
      figures[`sse.${name}`] = figure;
      log(`server SSE fan-out to ${SSE_CLIENTS} clients, ${name}: PUT to the last client p50 ${figure.p50_ms.toFixed(2)} ms, p99 ${figure.p99_ms.toFixed(2)} ms; first to last client p50 ${figure.spread_p50_ms.toFixed(2)} ms, p99 ${figure.spread_p99_ms.toFixed(2)} ms; the PUT answered p50 ${figure.answered_p50_ms.toFixed(2)} ms (${all.length} writes)`);
      record(`server.sse${SSE_CLIENTS}.${name}`, workload, contender, { median_us: percentile(all, 50), p75_us: percentile(all, 99), samples: all.length }, { ...figure, clients: SSE_CLIENTS });
    }
    log(`server SSE fan-out: ${(figures['sse.ours'].p50_ms / figures['sse.bare'].p50_ms).toFixed(2)} x the bare server at p50, ${(figures['sse.ours'].p99_ms / figures['sse.bare'].p99_ms).toFixed(2)} x at p99`);
  } finally {
    await serve.stop();
    await fanOutBare.stop();
  }
  return figures;
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
      // A memory row: no time (bench/lib/report.mjs prints the RSS fields in MiB and their ratio).
      record('server.soak.rss', `HTTP soak ${soakSeconds} s of the 90/10 mix: RSS, max of the last tenth vs of the first tenth`, 'tool-registry serve (SQLite)', { median_us: Number.NaN, samples: samples.length }, { rss_early_bytes: early, rss_late_bytes: late, rss_ratio: late / early, errors: soak.errors, rps: soak.rps });
    } finally {
      await ours.stop();
      await bare.stop();
    }
    // The SSE fan-out, on the real command (the servers above are stopped: they would share the cores).
    Object.assign(figures, await sseWorkload({ record, log, file, folder }));
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
