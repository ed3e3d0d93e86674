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
import { measureInterleaved, median } from './lib/measure.mjs';

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

    const rounds = QUICK ? 1 : 6;
    const time = QUICK ? 300 : 1000;
    const ratios = { call: [], list: [] };
    const pooled = { call: { gateway: [], direct: [] }, list: { gateway: [], direct: [] } };
    // One interleaved pair per round, so each round gives a ratio: the spread is theirs.
    for (let round = 0; round < rounds; round++) {
      for (const [kind, run] of [
        ['call', (client) => client.callTool(call)],
        ['list', (client) => client.listTools()],
      ]) {
        const stats = await measureInterleaved(
          [
            ['gateway', () => run(proxied), { async: true, batch: 1 }],
            ['direct', () => run(direct), { async: true, batch: 1 }],
          ],
          { rounds: 1, time },
        );
        ratios[kind].push(stats.get('gateway').median_us / stats.get('direct').median_us);
        pooled[kind].gateway.push(stats.get('gateway'));
        pooled[kind].direct.push(stats.get('direct'));
      }
    }
    const merge = (list) => ({
      median_us: median(list.map((stats) => stats.median_us)),
      p75_us: median(list.map((stats) => stats.p75_us)),
      p99_us: Math.max(...list.map((stats) => stats.p99_us)),
      mean_us: list.reduce((sum, stats) => sum + stats.mean_us, 0) / list.length,
      samples: list.reduce((sum, stats) => sum + stats.samples, 0),
      rounds,
    });
    record('gateway.call.proxied', "MCP tools/call of server-everything's echo (stdio upstream)", 'through the gateway', merge(pooled.call.gateway));
    record('gateway.call.direct', "MCP tools/call of server-everything's echo (stdio upstream)", "the SDK's Client, direct", merge(pooled.call.direct));
    record('gateway.list.proxied', "MCP tools/list of server-everything's tools (stdio upstream)", 'through the gateway', merge(pooled.list.gateway));
    record('gateway.list.direct', "MCP tools/list of server-everything's tools (stdio upstream)", "the SDK's Client, direct", merge(pooled.list.direct));
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
  process.stdout.write(`tools/list through the gateway: ${spread(ratios.list)} a direct list (target <= 1.2 x)\n`);
}
