// MCP workloads (issue 24): tools/list of 1,000 tools (every page) and tools/call of a
// trivial handler over stdio, `tool-registry mcp` against the SDK's own McpServer serving the
// same tools, both measured from the SDK's Client in interleaved rounds; the same two over
// Streamable HTTP (issue 39), `tool-registry serve --tools`'s /mcp against the SDK's McpServer
// behind its StreamableHTTPServerTransport on node:http, from the SDK's Client with
// StreamableHTTPClientTransport on both sides; and how long a
// disable committed by another connection takes to reach a connected client as
// notifications/tools/list_changed (target: under 1 s). `bench/run.mjs` calls mcpWorkloads();
// `node bench/mcp.mjs` runs only these (after npm run build) and prints the ratios.
import { mkdtempSync, rmSync } from 'node:fs';
import { setTimeout } from 'node:timers';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { openSqliteToolRegistry } from '../dist/index.js';
import { measureInterleaved, median } from './lib/measure.mjs';
import { startListening, startServe } from './lib/serve.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const HERE = fileURLToPath(new URL('.', import.meta.url));
const CLI = join(HERE, '..', 'dist', 'cli', 'main.js');

function check(condition, message) {
  if (!condition) throw new Error(`bench sanity check failed: ${message}`);
}

async function connect(args, env) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, env: { ...process.env, ...env }, stderr: 'inherit' }));
  return client;
}

async function connectHttp(url) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function listEvery(client) {
  let count = 0;
  let cursor;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    count += page.tools.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return count;
}

/**
 * The same two workloads over Streamable HTTP: `tool-registry serve --tools` on `db` (the
 * stdio run published the tools into it) against the SDK's McpServer behind its own HTTP
 * transport (bench/children/mcp-sdk-http-server.mjs), each in its own process.
 */
async function httpWorkloads({ record, log, db, env, call, folder }) {
  const serve = await startServe(['--tools', join(HERE, 'children', 'mcp-ours.mjs'), '--db', db], { cwd: folder, env });
  const sdk = await startListening([join(HERE, 'children', 'mcp-sdk-http-server.mjs')], { cwd: folder, env });
  const ours = await connectHttp(`${serve.base}/mcp`);
  const theirs = await connectHttp(sdk.base);
  try {
    check((await listEvery(ours)) === 1000 && (await listEvery(theirs)) === 1000, 'both list 1,000 tools over HTTP');
    const [a, b] = [await ours.callTool(call), await theirs.callTool(call)];
    check(JSON.stringify(a) === JSON.stringify(b), `both answer the same over HTTP (${JSON.stringify(a)} vs ${JSON.stringify(b)})`);
    const lists = await measureInterleaved([
      ['ours', () => listEvery(ours), { async: true, batch: 1 }],
      ['base', () => listEvery(theirs), { async: true, batch: 1 }],
    ], { rounds: QUICK ? 1 : 3, time: QUICK ? 300 : 400 });
    record('mcp.http.list.ours', 'MCP tools/list of 1,000 tools over Streamable HTTP (every page)', 'tool-registry serve --tools, /mcp', lists.get('ours'));
    record('mcp.http.list.base', 'MCP tools/list of 1,000 tools over Streamable HTTP (every page)', "the SDK's McpServer, StreamableHTTPServerTransport on node:http", lists.get('base'));
    const calls = await measureInterleaved([
      ['ours', () => ours.callTool(call), { async: true }],
      ['base', () => theirs.callTool(call), { async: true }],
    ], { rounds: QUICK ? 1 : 3, time: QUICK ? 300 : 400 });
    record('mcp.http.call.ours', 'MCP tools/call of a trivial handler over Streamable HTTP', 'tool-registry serve --tools, /mcp', calls.get('ours'));
    record('mcp.http.call.base', 'MCP tools/call of a trivial handler over Streamable HTTP', "the SDK's McpServer, StreamableHTTPServerTransport on node:http", calls.get('base'));
    const ratio = (map) => map.get('ours').median_us / map.get('base').median_us;
    log(`MCP over Streamable HTTP: tools/list ${ratio(lists).toFixed(2)} x, tools/call ${ratio(calls).toFixed(2)} x the SDK's McpServer`);
  } finally {
    await ours.close();
    await theirs.close();
    await serve.stop();
    await sdk.stop();
  }
}

/** Measures the MCP workloads and hands each to `record(id, workload, contender, stats)`. */
export async function mcpWorkloads({ record, log = () => {} }) {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-bench-mcp-'));
  const db = join(folder, 'tools.db');
  const env = { MCP_BENCH_TOOLS: '1000' };
  const ours = await connect([CLI, 'mcp', '--tools', join(HERE, 'children', 'mcp-ours.mjs'), '--db', db, '--publish'], env);
  const theirs = await connect([join(HERE, 'children', 'mcp-sdk-server.mjs')], env);
  try {
    check((await listEvery(ours)) === 1000 && (await listEvery(theirs)) === 1000, 'both list 1,000 tools');
    const call = { name: 'tool_0007', arguments: { query: 'x', limit: 3 } };
    const [a, b] = [await ours.callTool(call), await theirs.callTool(call)];
    check(JSON.stringify(a) === JSON.stringify(b), `both answer the same (${JSON.stringify(a)} vs ${JSON.stringify(b)})`);

    const rounds = QUICK ? 1 : 4;
    const lists = await measureInterleaved([
      ['ours', () => listEvery(ours), { async: true, batch: 1 }],
      ['base', () => listEvery(theirs), { async: true, batch: 1 }],
    ], { rounds, time: QUICK ? 300 : 1500 });
    record('mcp.list.ours', 'MCP tools/list of 1,000 tools over stdio (every page)', 'tool-registry mcp', lists.get('ours'));
    record('mcp.list.base', 'MCP tools/list of 1,000 tools over stdio (every page)', "the SDK's McpServer", lists.get('base'));

    const calls = await measureInterleaved([
      ['ours', () => ours.callTool(call), { async: true }],
      ['base', () => theirs.callTool(call), { async: true }],
    ], { rounds, time: QUICK ? 300 : 1000 });
    record('mcp.call.ours', 'MCP tools/call of a trivial handler over stdio', 'tool-registry mcp', calls.get('ours'));
    record('mcp.call.base', 'MCP tools/call of a trivial handler over stdio', "the SDK's McpServer", calls.get('base'));

    await httpWorkloads({ record, log, db, env, call, folder });

    // Governance: another connection disables a tool; the time until the client hears list_changed.
    const registry = await openSqliteToolRegistry({ filename: db });
    let heard;
    ours.setNotificationHandler(ToolListChangedNotificationSchema, () => heard?.());
    const delays = [];
    for (let i = 0; i < (QUICK ? 4 : 20); i++) {
      const notified = new Promise((resolve) => {
        heard = resolve;
      });
      const start = performance.now();
      await registry.setEnabled('tool_0001', i % 2 === 1);
      await notified;
      delays.push((performance.now() - start) * 1000);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await registry.close();
    const sorted = delays.sort((x, y) => x - y);
    record('mcp.list_changed', 'MCP list_changed after another connection disables a tool (SQLite file)', 'tool-registry mcp', {
      median_us: median(sorted),
      p75_us: sorted[Math.floor(sorted.length * 0.75)],
      p99_us: sorted[sorted.length - 1],
      mean_us: sorted.reduce((x, y) => x + y, 0) / sorted.length,
      samples: sorted.length,
    });
    log(`list_changed delays (ms): ${sorted.map((value) => (value / 1000).toFixed(0)).join(' ')}`);
  } finally {
    await ours.close();
    await theirs.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

// Standalone: node bench/mcp.mjs
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = new Map();
  await mcpWorkloads({
    record: (id, workload, contender, stats) => {
      rows.set(id, stats);
      process.stdout.write(`${workload} | ${contender}: median ${(stats.median_us / 1000).toFixed(3)} ms, p99 ${(stats.p99_us / 1000).toFixed(3)} ms (${stats.samples} samples)\n`);
    },
    log: (text) => process.stdout.write(`${text}\n`),
  });
  const ratio = (ours, base) => rows.get(ours).median_us / rows.get(base).median_us;
  process.stdout.write(`tools/list: ${ratio('mcp.list.ours', 'mcp.list.base').toFixed(2)} x the SDK's McpServer (target <= 1.2 x)\n`);
  process.stdout.write(`tools/call: ${ratio('mcp.call.ours', 'mcp.call.base').toFixed(2)} x the SDK's McpServer (target <= 1.2 x)\n`);
  process.stdout.write(`over Streamable HTTP: tools/list ${ratio('mcp.http.list.ours', 'mcp.http.list.base').toFixed(2)} x, tools/call ${ratio('mcp.http.call.ours', 'mcp.http.call.base').toFixed(2)} x the SDK's McpServer (no target)\n`);
  process.stdout.write(`list_changed: worst ${(rows.get('mcp.list_changed').p99_us / 1000).toFixed(0)} ms (target < 1000 ms)\n`);
}
