// Where a PostgreSQL `register` of a new tool goes, phase by phase (issue 39), at 10,000 tools
// on an embedded server with its default durability (fsync on, synchronous_commit on), against
// the raw transaction of bench/postgres.mjs (BEGIN, SELECT check, INSERT, COMMIT; named
// prepared statements). Contenders, alternated call by call (forward, then backward) so that
// drift hits each alike:
//   ours      the store's register (read cache on), timed as a whole;
//   old       the same with another build (PHASE_OLD=path/to/dist/index.js), on its own schema;
//   stmt      the statement ours sends (tool_registry_write_if, named), sent by a bare client
//             with parameters built beforehand: the round trip, the server's work and the commit;
//   raw       the baseline;
//   notify    the baseline with a pg_notify in its transaction, heard by a LISTEN connection of
//             this process (which hears the bare statements' too, as the store's listener hears
//             the store's writes).
// Then, per contender in blocks: WAL bytes a call (pg_current_wal_insert_lsn before and after),
// client CPU a call (process.cpuUsage), the same with synchronous_commit = off (no WAL flush
// wait at commit), and the server's time per statement (pg_stat_statements, track = all).
// Not part of `npm run bench` (bench/postgres.mjs measures the target):
// `npm run build && node bench/postgres-phases.mjs` prints the medians per phase.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { URL, pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import pg from 'pg';
import { canonicalJson } from '../dist/index.js';
import { startTestPostgres } from '../test/support/postgres-server.mjs';
import { CREATED_AT, specFor } from './lib/fixtures.mjs';
import { median } from './lib/measure.mjs';

const TOOLS = Number(process.env.PHASE_TOOLS ?? 10_000);
const CALLS = Number(process.env.PHASE_CALLS ?? 600);
const BLOCK = Number(process.env.PHASE_BLOCK ?? 300);
const ROUNDS = Number(process.env.PHASE_ROUNDS ?? 3);
const OLD = process.env.PHASE_OLD;

const RAW_TABLE = (table) => `CREATE TABLE ${table} (
  tool_name text COLLATE "C" PRIMARY KEY, version text, spec_json text NOT NULL, enabled boolean NOT NULL, created_at text)`;

const us = (ms) => `${(ms * 1000).toFixed(0).padStart(6)} us`;

const libraries = { ours: await import('../dist/index.js') };
if (OLD !== undefined) libraries.old = await import(pathToFileURL(resolve(OLD)).href);

const server = await startTestPostgres({
  durable: true,
  settings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all', 'track_functions=all'],
});
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
const url = new URL(server.url);
url.pathname = '/phases';
await admin.query('CREATE DATABASE phases');
const connectionString = url.toString();
const db = new pg.Client({ connectionString });
await db.connect();
await db.query('CREATE EXTENSION pg_stat_statements');
let fresh = 1_000_000;

try {
  const snapshot = { tools: Array.from({ length: TOOLS }, (_, i) => ({ spec: specFor(i), created_at: CREATED_AT })) };
  /** Registries by contender, each on its own schema; the `async` ones on a pool whose commits do not wait for the WAL flush. */
  const open = async (library, schema, asyncCommit) => {
    const pool = new pg.Pool({ connectionString, max: 4, ...(asyncCommit ? { options: '-c synchronous_commit=off' } : {}) });
    const registry = await library.openPostgresToolRegistry({ pool, schema });
    if ((await registry.status()).tools === 0) await registry.importSnapshot(snapshot);
    return { registry, pool };
  };
  const stores = {
    ours: await open(libraries.ours, 'ours', false),
    oursAsync: await open(libraries.ours, 'ours_async', true),
  };
  // The bare statements' schema: migrated and filled by ours, then closed (an open instance would
  // catch up on every statement's notification, beside the next contender's call).
  const filled = await open(libraries.ours, 'stmt', false);
  await filled.registry.close();
  await filled.pool.end();
  if (libraries.old !== undefined) {
    stores.old = await open(libraries.old, 'old', false);
    stores.oldAsync = await open(libraries.old, 'old_async', true);
  }
  const client = new pg.Client({ connectionString });
  const asyncClient = new pg.Client({ connectionString, options: '-c synchronous_commit=off' });
  const listener = new pg.Client({ connectionString });
  for (const c of [client, asyncClient, listener]) await c.connect();
  // The notify contender's channel, and the bare statements' (as the store's own listener hears its writes).
  await listener.query('LISTEN raw_channel');
  await listener.query('LISTEN tool_registry_changes_stmt');
  await client.query(RAW_TABLE('raw_writes'));

  const raw = (c, notify) => async () => {
    const spec = specFor(fresh++);
    await c.query('BEGIN');
    await c.query({ name: 'raw_check', text: 'SELECT version, spec_json FROM raw_writes WHERE tool_name = $1', values: [spec.tool_name] });
    await c.query({
      name: 'raw_insert',
      text: 'INSERT INTO raw_writes (tool_name, version, spec_json, enabled, created_at) VALUES ($1, $2, $3, true, $4)',
      values: [spec.tool_name, spec.version, JSON.stringify(spec), new Date().toISOString()],
    });
    if (notify) await c.query({ name: 'raw_notify', text: 'SELECT pg_notify($1, $2)', values: ['raw_channel', String(fresh)] });
    await c.query('COMMIT');
  };
  // The statement ours sends for a new tool, its parameters built before the clock starts.
  const statementParameters = () => {
    const spec = specFor(fresh++);
    const text = JSON.stringify(spec);
    const fingerprint = createHash('sha256').update(canonicalJson(spec)).digest('hex');
    const now = new Date().toISOString();
    return [
      5000,
      JSON.stringify([[spec.tool_name, null]]),
      JSON.stringify([[spec.tool_name, fingerprint, spec.version, text, now]]),
      JSON.stringify([[spec.tool_name, fingerprint, true, now]]),
      JSON.stringify({ versionOrder: 'any', compatibility: 'none' }),
    ];
  };
  const statement = (c) => {
    let values = statementParameters();
    return {
      before: () => (values = statementParameters()),
      // Named, as the store sends it: parsed and planned once per connection.
      run: () => c.query({ name: 'write_if', text: 'SELECT written, revision, token FROM "stmt".tool_registry_write_if($1::integer, $2::json, $3::json, $4::json, $5::json)', values }),
    };
  };
  const stmt = statement(client);
  const stmtAsync = statement(asyncClient);

  /** [name, run, before?]: `before` runs outside the clock. */
  const contenders = [
    ['ours', () => stores.ours.registry.register(specFor(fresh++))],
    ...(stores.old !== undefined ? [['old', () => stores.old.registry.register(specFor(fresh++))]] : []),
    ['stmt', stmt.run, stmt.before],
    ['raw', raw(client, false)],
    ['notify', raw(client, true)],
    ['ours async', () => stores.oursAsync.registry.register(specFor(fresh++))],
    ...(stores.old !== undefined ? [['old async', () => stores.oldAsync.registry.register(specFor(fresh++))]] : []),
    ['stmt async', stmtAsync.run, stmtAsync.before],
    ['raw async', raw(asyncClient, false)],
  ];
  // Warm-up: plans cached, connections open.
  for (const [, run, before] of contenders) for (let i = 0; i < 50; i++) { before?.(); await run(); }

  for (let round = 1; round <= ROUNDS; round++) {
    // Wall time a call, alternated call by call.
    const wall = new Map(contenders.map(([name]) => [name, []]));
    for (let i = 0; i < CALLS; i++) {
      // Forward, then backward: no contender always follows the same one.
      for (const [name, run, before] of i % 2 === 0 ? contenders : [...contenders].reverse()) {
        before?.();
        const start = performance.now();
        await run();
        wall.get(name).push(performance.now() - start);
      }
    }
    // WAL bytes and client CPU a call, a block of each contender.
    const wal = new Map();
    const cpu = new Map();
    for (const [name, run, before] of contenders) {
      const [{ lsn: from }] = (await db.query('SELECT pg_current_wal_insert_lsn() AS lsn')).rows;
      const used = process.cpuUsage();
      for (let i = 0; i < BLOCK; i++) { before?.(); await run(); }
      const spent = process.cpuUsage(used);
      const [{ bytes }] = (await db.query('SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1) AS bytes', [from])).rows;
      wal.set(name, Number(bytes) / BLOCK);
      cpu.set(name, (spent.user + spent.system) / 1000 / BLOCK);
    }
    const load = (await import('node:os')).loadavg()[0].toFixed(1);
    console.log(`\nround ${round}/${ROUNDS} (${CALLS} calls each, load ${load}): median wall, WAL bytes a call, client CPU a call`);
    const base = median(wall.get('raw'));
    const baseAsync = median(wall.get('raw async'));
    for (const [name] of contenders) {
      const m = median(wall.get(name));
      const ratio = m / (name.endsWith('async') ? baseAsync : base);
      console.log(`  ${name.padEnd(11)} ${us(m)}  ${ratio.toFixed(2)} x  ${wal.get(name).toFixed(0).padStart(6)} B  ${us(cpu.get(name))} cpu`);
    }
    // The phases these give: the commit's flush (with it minus without), our JavaScript (the
    // register minus the statement alone), the statement alone against the raw transaction.
    const at = (name) => median(wall.get(name));
    console.log(
      `  phases: flush wait ours ${us(at('ours') - at('ours async'))}, raw ${us(at('raw') - at('raw async'))}; ` +
        `our JavaScript ${us(at('ours') - at('stmt'))} wall, ${us(cpu.get('ours') - cpu.get('stmt'))} cpu; ` +
        `the statement alone ${(at('stmt') / base).toFixed(2)} x raw, ${(at('stmt async') / baseAsync).toFixed(2)} x without the flush`,
    );
  }

  // Server time per statement (track = all: the function's own statements too), over BLOCK calls of each.
  await db.query('SELECT pg_stat_statements_reset()');
  await db.query('SELECT pg_stat_reset()');
  for (const [name, run, before] of contenders) {
    if (name.endsWith('async') || name === 'stmt') continue;
    for (let i = 0; i < BLOCK; i++) { before?.(); await run(); }
  }
  const { rows } = await db.query(
    `SELECT calls, round(mean_exec_time::numeric * 1000) AS mean_us, round(min_exec_time::numeric * 1000) AS min_us, round(mean_plan_time::numeric * 1000) AS plan_us, wal_records, wal_bytes, toplevel, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query
     FROM pg_stat_statements WHERE calls >= $1 ORDER BY toplevel DESC, total_exec_time DESC LIMIT 40`,
    [BLOCK],
  );
  console.log(`\nserver time per statement (pg_stat_statements, ${BLOCK} calls of each contender but the statements)`);
  for (const row of rows) {
    console.log(`  ${row.toplevel ? 'top ' : '    '}${String(row.calls).padStart(5)} calls ${String(row.mean_us).padStart(6)} us mean ${String(row.min_us).padStart(6)} us min  ${String(Math.round(Number(row.wal_bytes) / row.calls)).padStart(5)} WAL B  ${row.query}`);
  }
  const functions = await db.query(`SELECT schemaname, funcname, calls, round((self_time / calls)::numeric * 1000) AS self_us, round((total_time / calls)::numeric * 1000) AS total_us FROM pg_stat_user_functions WHERE calls > 0 ORDER BY total_time DESC`);
  console.log('\nfunctions (track_functions = all)');
  for (const row of functions.rows) console.log(`  ${row.schemaname}.${row.funcname}: ${row.calls} calls, ${row.total_us} us total, ${row.self_us} us self`);

  for (const c of [client, asyncClient, listener]) await c.end();
  for (const { registry, pool } of Object.values(stores)) {
    await registry.close();
    await pool.end();
  }
} finally {
  await db.end();
  await admin.query('DROP DATABASE IF EXISTS phases WITH (FORCE)');
  await admin.end();
  await server.stop();
}
