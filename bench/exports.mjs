// Exports (issue 9): lintTools over 1,000 realistic tools for every provider, and exporting
// them to each format, against a JSON.parse(JSON.stringify(...)) of the same tools measured
// in the same run. The tools are registrations as a registry hands them out (deeply frozen).
// bench/run.mjs calls exportsWorkloads; `node bench/exports.mjs` runs it alone (after a build).
import { pathToFileURL } from 'node:url';
import {
  InMemoryToolRegistry,
  lintTools,
  toAiSdkTools,
  toAnthropicTools,
  toGeminiTools,
  toMcpTools,
  toOpenAITools,
} from '../dist/index.js';
import { measureInterleaved } from './lib/measure.mjs';

export const EXPORT_TOOLS = 1000;
/** OpenAI takes at most 128 tools per request: every format is exported in requests of 100. */
const REQUEST_SIZE = 100;
const ALL_PROVIDERS = ['mcp', 'openai', 'anthropic', 'gemini', 'gemini-openapi'];

/** A tool as services write them: 2-9 parameters, enums, formats, nested objects, arrays, descriptions. */
export function realisticSpec(i) {
  const properties = {
    query: { type: 'string', description: `What to look for in collection ${i % 97}` },
    limit: { type: 'integer', description: 'At most this many results', minimum: 1, maximum: 100, default: 10 },
  };
  const required = ['query'];
  if (i % 2 === 0) properties.since = { type: 'string', format: 'date-time', description: 'Only results after this time' };
  if (i % 3 === 0) properties.sort = { type: 'string', enum: ['newest', 'oldest', 'relevance'], description: 'Result order' };
  if (i % 4 === 0) {
    properties.filter = {
      type: 'object',
      description: 'Field filters',
      properties: { owner: { type: 'string' }, status: { type: 'string', enum: ['open', 'closed', 'draft'] }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['owner'],
    };
    required.push('filter');
  }
  if (i % 5 === 0) properties.fields = { type: 'array', description: 'Fields to return', items: { type: 'string', enum: ['id', 'title', 'body', 'author', 'created'] } };
  if (i % 7 === 0) properties.page = { type: 'object', properties: { cursor: { type: 'string' }, size: { type: 'integer' } } };
  return {
    tool_name: `svc_${i % 31}_search_${i}`,
    version: `1.${i % 5}.0`,
    description: `Searches collection ${i % 97} of service ${i % 31} and returns the matching records, newest first unless sort says otherwise.`,
    input_schema: { type: 'object', properties, required, ...(i % 2 === 0 ? { additionalProperties: false } : {}) },
    output_schema: { type: 'object', properties: { results: { type: 'array', items: { type: 'object' } }, total: { type: 'integer' } } },
    tags: ['search', `service-${i % 31}`],
  };
}

function chunks(list, size) {
  const out = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

function check(condition, message) {
  if (!condition) throw new Error(`benchmark check failed: ${message}`);
}

/** Runs the workloads; `record(id, workload, contender, stats, extra)` as in run.mjs. */
export async function exportsWorkloads({ record, log = () => {}, rounds = 4 }) {
  const registry = new InMemoryToolRegistry();
  for (let i = 0; i < EXPORT_TOOLS; i++) await registry.register(realisticSpec(i));
  const tools = await registry.listAll();
  await registry.close();
  const requests = chunks(tools, REQUEST_SIZE);
  // The same tools as plain, unfrozen objects: validated on every call (no cache can apply).
  const plainRequests = chunks(JSON.parse(JSON.stringify(tools)), REQUEST_SIZE);
  const plainTools = plainRequests.flat();
  const exporters = {
    mcp: (part) => toMcpTools(part),
    openai: (part) => toOpenAITools(part),
    'openai-responses': (part) => toOpenAITools(part, { api: 'responses' }),
    anthropic: (part) => toAnthropicTools(part),
    gemini: (part) => toGeminiTools(part),
    'ai-sdk': (part) => toAiSdkTools(part),
  };
  // Every export must carry every tool, so the bench measures real work.
  for (const [format, exporter] of Object.entries(exporters)) {
    const count = requests.reduce((sum, part) => {
      const out = exporter(part);
      return sum + (Array.isArray(out) ? out.length : out.functionDeclarations?.length ?? Object.keys(out).length);
    }, 0);
    check(count === EXPORT_TOOLS, `${format} exported ${count} tools`);
  }
  check(lintTools(tools, { providers: ALL_PROVIDERS }).length > 0, 'lint finds the gemini-openapi findings');
  log(`exports: ${EXPORT_TOOLS} tools, ${JSON.stringify(tools).length} bytes of JSON`);

  let sink = 0;
  const contenders = [
    ['exports.clone', () => { sink += JSON.parse(JSON.stringify(tools)).length; }],
    ['exports.lint', () => { sink += lintTools(tools, { providers: ALL_PROVIDERS }).length; }],
    ...Object.entries(exporters).map(([format, exporter]) => [`exports.${format}`, () => { for (const part of requests) sink += exporter(part) === undefined ? 0 : 1; }]),
    ['exports.all', () => {
      sink += lintTools(tools, { providers: ALL_PROVIDERS }).length;
      for (const exporter of Object.values(exporters)) for (const part of requests) sink += exporter(part) === undefined ? 0 : 1;
    }],
    ['exports.all.plain', () => {
      sink += lintTools(plainTools, { providers: ALL_PROVIDERS }).length;
      for (const exporter of Object.values(exporters)) for (const part of plainRequests) sink += exporter(part) === undefined ? 0 : 1;
    }],
  ];
  const pooled = await measureInterleaved(contenders.map(([key, fn]) => [key, fn, { batch: 1 }]), { rounds, time: 300 });
  check(sink > 0, 'work was done');
  const label = `${EXPORT_TOOLS.toLocaleString('en-US')} tools`;
  const names = {
    'exports.clone': 'JSON.parse(JSON.stringify(tools))',
    'exports.lint': 'lintTools, all 5 providers',
    'exports.all': 'lintTools (all providers) + all 6 exports',
    'exports.all.plain': 'the same, of plain unfrozen copies (validated every call)',
  };
  for (const [key] of contenders) {
    record(key, `exports, ${label}`, names[key] ?? `${key.slice('exports.'.length)} export (requests of ${REQUEST_SIZE})`, pooled.get(key));
  }
}

// Standalone: `npm run build && node bench/exports.mjs` prints the medians and ratios.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const results = [];
  await exportsWorkloads({
    record: (id, workload, contender, stats) => results.push({ id, contender, median_us: stats.median_us, samples: stats.samples }),
    log: (text) => process.stderr.write(`${text}\n`),
    rounds: process.env.BENCH_QUICK === '1' ? 1 : 4,
  });
  const base = results.find((r) => r.id === 'exports.clone').median_us;
  for (const r of results) {
    process.stdout.write(`${r.id.padEnd(26)} ${(r.median_us / 1000).toFixed(2).padStart(9)} ms  ${(r.median_us / base).toFixed(2).padStart(6)} x clone  (${r.samples} samples)  ${r.contender}\n`);
  }
}
