// PostgreSQL benchmarks (issue 10), each against raw node-postgres on the same server in the
// same run: a cached `get` vs a raw prepared SELECT round trip, `register` of a new tool vs a
// raw transaction doing the same check and insert, `importSnapshot` of 100k tools vs a raw
// bulk insert (unnest) of the same rows. The server: TOOL_REGISTRY_TEST_PG_URL, else an
// embedded PostgreSQL started for the run with its default durability (fsync on).
// Called from bench/run.mjs; also runs on its own (`node bench/postgres.mjs`, after `npm run build`).
import { performance } from 'node:perf_hooks';
import { URL, fileURLToPath } from 'node:url';
import pg from 'pg';
import { openPostgresToolRegistry } from '../dist/index.js';
import { startTestPostgres } from '../test/support/postgres-server.mjs';
import { CREATED_AT, specFor, toolName } from './lib/fixtures.mjs';
import { measureInterleaved, median } from './lib/measure.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const READ_TOOLS = 10_000;
const IMPORT_TOOLS = QUICK ? 10_000 : 100_000;
const IMPORT_RUNS = QUICK ? 1 : 3;
/** Concurrent registers in one burst. */
const BURST = 64;
/** BENCH_PG_WRITES=1: the reads and writes only, no imports (a quick A/B of the write path). */
const WRITES_ONLY = process.env.BENCH_PG_WRITES === '1';

const RAW_TABLE = (table) => `CREATE TABLE ${table} (
  tool_name text COLLATE "C" PRIMARY KEY, version text, spec_json text NOT NULL, enabled boolean NOT NULL, created_at text)`;

/** Milliseconds of one call of `fn`. */
async function timeOnce(fn) {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/**
 * Runs the workloads; `record(id, workload, contender, stats, extra)` stores each result the
 * way bench/run.mjs does; `log(text)` reports progress.
 */
export async function postgresWorkloads({ record, log }) {
  const server = await startTestPostgres({ durable: true });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  const name = `bench_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  const connectionString = url.toString();
  const pool = new pg.Pool({ connectionString, max: 4 });
  pool.on('error', () => {});
  try {
    // --- get: cached registry vs a raw prepared SELECT ------------------------------------
    log(`postgres: ${READ_TOOLS.toLocaleString('en-US')} tools for the reads`);
    const registry = await openPostgresToolRegistry({ connectionString, schema: 'reads' });
    await registry.importSnapshot({ tools: Array.from({ length: READ_TOOLS }, (_, i) => ({ spec: specFor(i), created_at: CREATED_AT })) });
    const uncached = await openPostgresToolRegistry({ connectionString, schema: 'reads', cache: false });
    await pool.query(RAW_TABLE('raw_reads'));
    await pool.query(
      `INSERT INTO raw_reads SELECT tool_name, version, spec_json, enabled, created_at FROM reads.tool_registrations JOIN reads.tool_specs USING (tool_name, fingerprint)`,
    );
    const client = await pool.connect();
    let next = 0;
    const pick = () => toolName((next = (next * 7919 + 13) % READ_TOOLS));
    const rawGet = async () => {
      const { rows } = await client.query({ name: 'raw_get', text: 'SELECT tool_name, version, spec_json, enabled, created_at FROM raw_reads WHERE tool_name = $1', values: [pick()] });
      return rows[0];
    };
    if ((await rawGet()) === undefined || (await registry.get(pick())) === undefined) throw new Error('setup: the reads see no tool');
    log('postgres: cached get vs a raw prepared SELECT round trip');
    const gets = await measureInterleaved(
      [
        ['cached', () => registry.get(pick()), { async: true }],
        ['uncached', () => uncached.get(pick()), { async: true }],
        ['raw', rawGet, { async: true }],
      ],
      { rounds: QUICK ? 2 : 4, time: QUICK ? 200 : 400 },
    );
    record('pg.get.cached', 'PostgreSQL `get` (10k tools)', 'tool-registry, read cache on', gets.get('cached'));
    record('pg.get.uncached', 'PostgreSQL `get` (10k tools)', 'tool-registry, cache: false', gets.get('uncached'));
    record('pg.get.raw', 'PostgreSQL `get` (10k tools)', 'raw prepared SELECT round trip', gets.get('raw'));

    // --- register a new tool vs a raw check-and-insert transaction ----------------------
    log('postgres: register a new tool vs a raw transaction (check + insert)');
    await pool.query(RAW_TABLE('raw_writes'));
    let fresh = 1_000_000;
    const rawRegister = async () => {
      const spec = specFor(fresh++);
      await client.query('BEGIN');
      await client.query({ name: 'raw_check', text: 'SELECT version, spec_json FROM raw_writes WHERE tool_name = $1', values: [spec.tool_name] });
      await client.query({
        name: 'raw_insert',
        text: 'INSERT INTO raw_writes (tool_name, version, spec_json, enabled, created_at) VALUES ($1, $2, $3, true, $4)',
        values: [spec.tool_name, spec.version, JSON.stringify(spec), new Date().toISOString()],
      });
      await client.query('COMMIT');
    };
    const writes = await measureInterleaved(
      [
        ['ours', () => registry.register(specFor(fresh++)), { async: true, batch: 1 }],
        ['raw', rawRegister, { async: true, batch: 1 }],
      ],
      { rounds: QUICK ? 2 : 4, time: QUICK ? 200 : 500 },
    );
    record('pg.register.ours', 'PostgreSQL `register` of a new tool', 'tool-registry register()', writes.get('ours'));
    record('pg.register.raw', 'PostgreSQL `register` of a new tool', 'raw transaction: SELECT check + INSERT', writes.get('raw'));

    // --- 64 concurrent registers (one instance; four instances on one schema) vs 64 raw in a row ---
    log('postgres: 64 concurrent registers (1 and 4 instances) vs 64 raw transactions in a row');
    const others = await Promise.all([1, 2, 3].map(() => openPostgresToolRegistry({ connectionString, schema: 'reads' })));
    const fleet = [registry, ...others];
    const burst = (instances) => () => Promise.all(Array.from({ length: BURST }, (_, i) => instances[i % instances.length].register(specFor(fresh++))));
    const rawBurst = async () => {
      for (let i = 0; i < BURST; i++) await rawRegister();
    };
    const bursts = await measureInterleaved(
      [
        ['one', burst([registry]), { async: true, batch: 1 }],
        ['four', burst(fleet), { async: true, batch: 1 }],
        ['raw', rawBurst, { async: true, batch: 1 }],
      ],
      { rounds: QUICK ? 2 : 4, time: QUICK ? 300 : 600 },
    );
    await Promise.all(others.map((other) => other.close()));
    record('pg.register64.ours', `PostgreSQL ${BURST} concurrent \`register\` of new tools`, 'tool-registry, one instance', bursts.get('one'));
    record('pg.register64x4.ours', `PostgreSQL ${BURST} concurrent \`register\` of new tools`, 'tool-registry, four instances on one schema (16 each)', bursts.get('four'));
    record('pg.register64.raw', `PostgreSQL ${BURST} concurrent \`register\` of new tools`, `${BURST} raw transactions in a row (SELECT check + INSERT)`, bursts.get('raw'));
    client.release();
    await uncached.close();
    await registry.close();

    // --- importSnapshot of 100k vs a raw bulk insert ----------------------------------------
    const snapshot = { tools: Array.from({ length: IMPORT_TOOLS }, (_, i) => ({ spec: specFor(i), created_at: CREATED_AT })) };
    const ours = [];
    const raw = [];
    for (let run = 0; run < (WRITES_ONLY ? 0 : IMPORT_RUNS); run++) {
      log(`postgres: importSnapshot of ${IMPORT_TOOLS.toLocaleString('en-US')} tools, run ${run + 1}/${IMPORT_RUNS}`);
      const target = await openPostgresToolRegistry({ connectionString, schema: `import_${run}` });
      ours.push(await timeOnce(() => target.importSnapshot(snapshot)));
      await target.close();
      await pool.query(RAW_TABLE(`raw_import_${run}`));
      raw.push(
        await timeOnce(async () => {
          // What a user would write: the same rows, serialized as the store keeps them, one unnest insert.
          const tools = snapshot.tools;
          await pool.query(
            `INSERT INTO raw_import_${run} SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::text[])`,
            [tools.map((t) => t.spec.tool_name), tools.map((t) => t.spec.version), tools.map((t) => JSON.stringify(t.spec)), tools.map(() => true), tools.map((t) => t.created_at)],
          );
        }),
      );
    }
    if (WRITES_ONLY) return;
    const asStats = (ms) => ({ median_us: median(ms) * 1000, p75_us: Math.max(...ms) * 1000, p99_us: Math.max(...ms) * 1000, mean_us: (ms.reduce((a, b) => a + b, 0) / ms.length) * 1000, samples: ms.length });
    record('pg.import.ours', `PostgreSQL \`importSnapshot\` of ${IMPORT_TOOLS.toLocaleString('en-US')}`, 'tool-registry importSnapshot()', asStats(ours));
    record('pg.import.raw', `PostgreSQL \`importSnapshot\` of ${IMPORT_TOOLS.toLocaleString('en-US')}`, 'raw bulk INSERT … SELECT FROM unnest', asStats(raw));
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await server.stop();
  }
}

/** The targets: [ours, baseline, at most]. */
export const POSTGRES_TARGETS = [
  ['pg.get.cached', 'pg.get.raw', 0.05],
  ['pg.register.ours', 'pg.register.raw', 1.5],
  ['pg.register64.ours', 'pg.register64.raw', 0.3],
  ['pg.register64x4.ours', 'pg.register64.raw', 0.3],
  ['pg.import.ours', 'pg.import.raw', 1.5],
];

// Standalone: node bench/postgres.mjs
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const results = [];
  await postgresWorkloads({
    log: (text) => process.stderr.write(`${text}\n`),
    record: (id, workload, contender, stats, extra = {}) => {
      const { values_us: _values, ...kept } = stats;
      results.push({ id, workload, contender, ...kept, ...extra });
    },
  });
  const by = new Map(results.map((result) => [result.id, result]));
  for (const result of results) console.log(`${result.id.padEnd(20)} ${result.median_us.toFixed(1).padStart(14)} us  ${result.contender}`);
  for (const [ours, base, target] of POSTGRES_TARGETS) {
    if (!by.has(ours)) continue;
    const ratio = by.get(ours).median_us / by.get(base).median_us;
    console.log(`${ours} / ${base}: ${ratio.toFixed(3)} x (target <= ${target}) ${ratio <= target ? 'met' : 'MISSED'}`);
  }
}
