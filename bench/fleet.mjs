// The fleet soak (issue 39): three `tool-registry serve` processes on one PostgreSQL database
// (an embedded server started for the step, fsync on), an SSE client of GET /v1/changes on
// each, and one writer per server sending PUTs of new versions one after another for
// BENCH_FLEET_S seconds (default 30; 5 with BENCH_QUICK=1). Reported: the propagation delay
// from a writer's 201 to each SSE client's event (p50, p99, max; the same clock, this process),
// the writes per second, and a check that every client saw every write exactly once, in
// revision order. `node bench/fleet.mjs` (after npm run build) runs only this.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';
import { TextDecoder } from 'node:util';
import { startTestPostgres } from '../test/support/postgres-server.mjs';
import { startServe } from './lib/serve.mjs';

const { AbortController, fetch } = globalThis;

const QUICK = process.env.BENCH_QUICK === '1';
const SERVERS = 3;
const TOOLS_PER_WRITER = 20;

const spec = (name, version) => ({ tool_name: name, version: String(version), input_schema: { type: 'object' }, output_schema: { type: 'object' } });

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** An SSE client: every event's revision, tool and version, with when it arrived. */
async function subscribe(base, signal) {
  const events = [];
  const response = await fetch(`${base}/v1/changes`, { headers: { accept: 'text/event-stream' }, signal });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let opened;
  const open = new Promise((resolve) => (opened = resolve));
  void (async () => {
    let text = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        let end;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          if (block.includes(': stream open')) opened();
          const id = /^id: (\d+)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id !== undefined && data !== undefined) {
            const event = JSON.parse(data);
            events.push({ revision: Number(id), key: `${event.tool_name}@${event.version}`, at: performance.now() });
          }
        }
      }
    } catch {
      // aborted at the end
    }
  })();
  await open;
  return events;
}

/**
 * Runs the soak; `record(id, workload, contender, stats, extra)` stores the result.
 * @param {{ record: Function, log: (text: string) => void, seconds?: number }} options
 */
export async function fleetWorkloads({ record, log, seconds = Number(process.env.BENCH_FLEET_S ?? (QUICK ? 5 : 30)) }) {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-bench-fleet-'));
  const server = await startTestPostgres({ durable: true });
  const servers = [];
  const stop = new AbortController();
  try {
    servers.push(...(await Promise.all(Array.from({ length: SERVERS }, () => startServe(['--db', server.url], { cwd: folder })))));
    const clients = await Promise.all(servers.map(({ base }) => subscribe(base, stop.signal)));
    const acknowledged = new Map();
    let errors = 0;
    const deadline = performance.now() + seconds * 1000;
    const started = performance.now();
    await Promise.all(
      servers.map(async ({ base }, s) => {
        for (let i = 0; performance.now() < deadline; i++) {
          const name = `fleet_${s}_${i % TOOLS_PER_WRITER}`;
          const version = Math.floor(i / TOOLS_PER_WRITER) + 1;
          const response = await fetch(`${base}/v1/tools/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spec(name, version)) });
          await response.arrayBuffer();
          if (response.status === 200 || response.status === 201) acknowledged.set(`${name}@${version}`, performance.now());
          else errors++;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    // Every client has every acknowledged write (a generous wait; then the check says what is missing).
    const until = performance.now() + 30_000;
    while (clients.some((events) => events.length < acknowledged.size) && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    const delays = [];
    let inOrder = true;
    let exactlyOnce = true;
    for (const events of clients) {
      const keys = events.map((event) => event.key);
      if (new Set(keys).size !== keys.length || keys.length !== acknowledged.size || !keys.every((key) => acknowledged.has(key))) exactlyOnce = false;
      for (let i = 1; i < events.length; i++) if (events[i].revision <= events[i - 1].revision) inOrder = false;
      for (const event of events) {
        const ack = acknowledged.get(event.key);
        if (ack !== undefined) delays.push(Math.max(0, event.at - ack));
      }
    }
    const p50 = percentile(delays, 50);
    const p99 = percentile(delays, 99);
    const max = Math.max(...delays);
    log(
      `fleet: ${acknowledged.size} writes in ${elapsed.toFixed(1)} s (${(acknowledged.size / elapsed).toFixed(0)}/s, ${errors} errors) through ${SERVERS} servers; ` +
        `${delays.length} deliveries: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms; exactly once ${exactlyOnce}, in order ${inOrder}`,
    );
    if (!exactlyOnce || !inOrder) throw new Error('fleet soak: a client missed, repeated or reordered a change');
    record(
      'fleet.propagation',
      `Fleet of ${SERVERS} serve processes on one PostgreSQL: a writer's 201 to each SSE client's event (${seconds} s soak)`,
      'tool-registry serve (PostgreSQL), p50 (p99 in the p75 column)',
      { median_us: p50 * 1000, p75_us: p99 * 1000, samples: delays.length },
      { p50_ms: p50, p99_ms: p99, max_ms: max, writes: acknowledged.size, writes_per_s: acknowledged.size / elapsed, errors },
    );
  } finally {
    stop.abort();
    await Promise.all(servers.map(({ stop: end }) => end()));
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await fleetWorkloads({
    record: (id, workload, contender, stats, extra) => console.log(JSON.stringify({ id, workload, contender, ...stats, ...extra })),
    log: (text) => process.stderr.write(`${text}\n`),
  });
}
