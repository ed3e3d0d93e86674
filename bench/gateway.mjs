// The gateway's overhead (issue 37): a tools/call and a tools/list through the gateway
// (an MCP session of createMcpServer over gatewayToolSet, the SDK's Client on the other end
// of an in-process transport, the upstream a stdio child) against the SDK's Client calling the
// same upstream program directly over stdio. Upstream: the official server-everything, its
// `echo` tool. Targets: a proxied tools/call at most 1.3 x the direct one, tools/list at most
// 1.2 x. `bench/run.mjs` calls gatewayWorkloads(); `node bench/gateway.mjs` runs only these
// (after npm run build) and prints the ratios with their spread (the ratio of each round).
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { InMemoryToolRegistry } from '../dist/index.js';
import { connectUpstream, createMcpServer, gatewayToolSet, upstreamToolSpec } from '../dist/mcp/index.js';
import { performance } from 'node:perf_hooks';
import { median } from './lib/measure.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const HERE = fileURLToPath(new URL('.', import.meta.url));
const EVERYTHING = join(HERE, '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const COMMAND = [process.execPath, EVERYTHING, 'stdio'];

function check(condition, message) {
  if (!condition) throw new Error(`bench sanity check failed: ${message}`);
}

/** Measures the gateway workloads and hands each to `record(id, workload, contender, stats)`; returns each round's ratios. */
export async function gatewayWorkloads({ record, log = () => {} }) {
  const registry = new InMemoryToolRegistry();
  const row = await registry.putUpstream({ name: 'everything', prefix: '', transport: { type: 'stdio', command: COMMAND, env: {}, cwd: null } });
  const setup = await connectUpstream(row, { capabilities: { sampling: {}, elicitation: {} } });
  for (const tool of (await setup.client.listTools()).tools) await registry.register(upstreamToolSpec(row, tool, '1.0.0'));
  await setup.close();

  const gateway = await gatewayToolSet(registry, [], { onWarning: (message) => log(`gateway: ${message}`) });
  const server = createMcpServer(gateway);
  const proxied = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  await proxied.connect(b);
  const direct = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } });
  await direct.connect(new StdioClientTransport({ command: COMMAND[0], args: COMMAND.slice(1), stderr: 'ignore' }));
  try {
    const call = { name: 'echo', arguments: { message: 'hello' } };
    const [viaGateway, straight] = [await proxied.callTool(call), await direct.callTool(call)];
    check(JSON.stringify(viaGateway) === JSON.stringify(straight), `both answer the same (${JSON.stringify(viaGateway)} vs ${JSON.stringify(straight)})`);
    const names = async (client) => (await client.listTools()).tools.map((tool) => tool.name).sort().join();
    check((await names(proxied)) === (await names(direct)), 'both list the same tools');

    // Alternating single operations (gateway, direct, gateway, ...) so that the noise of a
    // shared machine hits both alike; each round of `perRound` pairs gives one ratio of medians.
    const rounds = QUICK ? 2 : 8;
    const ratios = { call: [], work: [], list: [] };
    const samples = { call: { gateway: [], direct: [] }, work: { gateway: [], direct: [] }, list: { gateway: [], direct: [] } };
    // A call whose upstream works 5 ms (a timer in trigger-long-running-operation): the overhead in proportion to a real tool's.
    const working = { name: 'trigger-long-running-operation', arguments: { duration: 0.005, steps: 1 } };
    for (const [kind, run, perRound] of [
      ['call', (client) => client.callTool(call), QUICK ? 100 : 500],
      ['work', (client) => client.callTool(working), QUICK ? 20 : 60],
      ['list', (client) => client.listTools(), QUICK ? 30 : 150],
    ]) {
      for (let i = 0; i < perRound; i++) await Promise.all([run(proxied), run(direct)]); // warm-up
      for (let round = 0; round < rounds; round++) {
        const times = { gateway: [], direct: [] };
        for (let i = 0; i < perRound; i++) {
          for (const [key, client] of i % 2 === 0 ? [['gateway', proxied], ['direct', direct]] : [['direct', direct], ['gateway', proxied]]) {
            const start = performance.now();
            await run(client);
            times[key].push((performance.now() - start) * 1000);
          }
        }
        ratios[kind].push(median(times.gateway) / median(times.direct));
        for (const key of ['gateway', 'direct']) for (const value of times[key]) samples[kind][key].push(value);
      }
    }
    const merge = (values) => {
      const sorted = values.sort((x, y) => x - y);
      const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
      return { median_us: median(sorted), p75_us: at(0.75), p99_us: at(0.99), mean_us: sorted.reduce((x, y) => x + y, 0) / sorted.length, samples: sorted.length, rounds };
    };
    const pooled = { call: { gateway: merge(samples.call.gateway), direct: merge(samples.call.direct) }, work: { gateway: merge(samples.work.gateway), direct: merge(samples.work.direct) }, list: { gateway: merge(samples.list.gateway), direct: merge(samples.list.direct) } };
    record('gateway.call.proxied', "MCP tools/call of server-everything's echo (stdio upstream)", 'through the gateway', pooled.call.gateway);
    record('gateway.call.direct', "MCP tools/call of server-everything's echo (stdio upstream)", "the SDK's Client, direct", pooled.call.direct);
    record('gateway.work.proxied', "MCP tools/call of a server-everything tool working 5 ms (stdio upstream)", 'through the gateway', pooled.work.gateway);
    record('gateway.work.direct', "MCP tools/call of a server-everything tool working 5 ms (stdio upstream)", "the SDK's Client, direct", pooled.work.direct);
    record('gateway.list.proxied', "MCP tools/list of server-everything's tools (stdio upstream)", 'through the gateway', pooled.list.gateway);
    record('gateway.list.direct', "MCP tools/list of server-everything's tools (stdio upstream)", "the SDK's Client, direct", pooled.list.direct);
    return ratios;
  } finally {
    await proxied.close();
    await direct.close();
    await gateway.close();
  }
}

// Standalone: node bench/gateway.mjs
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = new Map();
  const ratios = await gatewayWorkloads({
    record: (id, workload, contender, stats) => {
      rows.set(id, stats);
      process.stdout.write(`${workload} | ${contender}: median ${(stats.median_us / 1000).toFixed(3)} ms, p99 ${(stats.p99_us / 1000).toFixed(3)} ms (${stats.samples} samples)\n`);
    },
    log: (text) => process.stdout.write(`${text}\n`),
  });
  const spread = (values) => `median ${median(values).toFixed(2)} x, rounds ${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)} x`;
  process.stdout.write(`tools/call through the gateway: ${spread(ratios.call)} a direct call (target <= 1.3 x)\n`);
  process.stdout.write(`tools/call of a tool working 5 ms through the gateway: ${spread(ratios.work)} a direct call\n`);
  process.stdout.write(`tools/list through the gateway: ${spread(ratios.list)} a direct list (target <= 1.2 x)\n`);
}
