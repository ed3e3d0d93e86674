// Where a SQLite `register` of a new tool goes, phase by phase (issue 39), at 10,000 tools with
// the store's durability (WAL, synchronous=FULL), against the plainest one-table transaction:
//   ours      the store's register (cache on), timed as a whole;
//   schema    the same statements a register runs, by hand on a file with the store's whole schema
//             (its triggers: change log, pruning check, foreign key), each statement timed;
//   plain     the baseline of bench/run.mjs's `writes` step, each statement timed.
// Then 64 concurrent registers (one group commit) against 64 plain transactions, and the same 64
// inserts by hand in one transaction on the store's schema. The three contenders alternate call
// by call, so drift (other work, checkpoints) hits each alike; `ROUNDS` runs give the spread.
// Not part of `npm run bench` (the `writes` and `write-scale` steps measure the targets):
// `npm run build && node bench/sqlite-phases.mjs` prints the medians per phase.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { canonicalJson, openSqliteToolRegistry } from '../dist/index.js';
import { applyStorePragmas, createPlainFile, populateStoreFile, specFor } from './lib/fixtures.mjs';
import { median } from './lib/measure.mjs';

const TOOLS = 10_000;
const CALLS = Number(process.env.PHASE_CALLS ?? 1500);
const BURSTS = Number(process.env.PHASE_BURSTS ?? 60);

/** Times each step of `steps` ([name, fn]) into `into[name]`; returns the total. */
function timed(into, steps) {
  let total = 0;
  for (const [name, fn] of steps) {
    const start = performance.now();
    fn();
    const ms = performance.now() - start;
    (into[name] ??= []).push(ms);
    total += ms;
  }
  return total;
}

const us = (ms) => `${(ms * 1000).toFixed(1)} us`;

export async function sqlitePhases() {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-phases-'));
  try {
    const oursFile = join(folder, 'ours.db');
    await populateStoreFile(oursFile, TOOLS);
    const registry = await openSqliteToolRegistry({ filename: oursFile, cache: true });
    const schemaFile = join(folder, 'schema.db');
    await populateStoreFile(schemaFile, TOOLS);
    const schemaDb = new Database(schemaFile);
    applyStorePragmas(schemaDb);
    const plainDb = createPlainFile(join(folder, 'plain.db'), TOOLS);

    const s = {
      begin: schemaDb.prepare('BEGIN IMMEDIATE'),
      commit: schemaDb.prepare('COMMIT'),
      check: schemaDb.prepare(
        `SELECT s.version, r.fingerprint, s.spec_json, r.enabled, r.created_at FROM tool_registrations AS r
         JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint WHERE r.tool_name = ?`,
      ),
      spec: schemaDb.prepare(
        `INSERT INTO tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (tool_name, fingerprint) DO NOTHING`,
      ),
      registration: schemaDb.prepare(
        `INSERT INTO tool_registrations (tool_name, fingerprint, enabled, created_at) VALUES (?, ?, 1, ?)
         ON CONFLICT (tool_name) DO UPDATE SET fingerprint = excluded.fingerprint, enabled = excluded.enabled, created_at = excluded.created_at`,
      ),
    };
    const p = {
      begin: plainDb.prepare('BEGIN IMMEDIATE'),
      commit: plainDb.prepare('COMMIT'),
      check: plainDb.prepare('SELECT version, spec, enabled, created_at FROM tools WHERE name = ?'),
      insert: plainDb.prepare('INSERT INTO tools (name, version, spec, enabled, created_at) VALUES (?, ?, ?, 1, ?)'),
    };

    let fresh = 2_000_000;
    const ours = [];
    const schema = {};
    const plain = {};
    const schemaTotal = [];
    const plainTotal = [];
    for (let i = 0; i < CALLS + 100; i++) {
      const keep = i >= 100; // the first 100 of each warm up
      const a = specFor(fresh++);
      const start = performance.now();
      await registry.register(a);
      if (keep) ours.push(performance.now() - start);

      const b = specFor(fresh++);
      let json;
      let fingerprint;
      const into = keep ? schema : {};
      const t1 = timed(into, [
        ['canonical JSON + SHA-256', () => {
          json = canonicalJson(b);
          fingerprint = createHash('sha256').update(json).digest('hex');
        }],
        ['BEGIN IMMEDIATE', () => s.begin.run()],
        ['read the current row', () => s.check.get(b.tool_name)],
        ['insert the spec (history) row', () => s.spec.run(b.tool_name, fingerprint, b.version, json, new Date().toISOString())],
        ['insert the registration (triggers: log, prune check, foreign key)', () => s.registration.run(b.tool_name, fingerprint, new Date().toISOString())],
        ['COMMIT (fsync)', () => s.commit.run()],
      ]);
      if (keep) schemaTotal.push(t1);

      const c = specFor(fresh++);
      let text;
      const intoPlain = keep ? plain : {};
      const t2 = timed(intoPlain, [
        ['JSON.stringify', () => (text = JSON.stringify(c))],
        ['BEGIN IMMEDIATE', () => p.begin.run()],
        ['read the current row', () => p.check.get(c.tool_name)],
        ['insert the row', () => p.insert.run(c.tool_name, c.version, text, new Date().toISOString())],
        ['COMMIT (fsync)', () => p.commit.run()],
      ]);
      if (keep) plainTotal.push(t2);
    }

    // 64 at once: ours in one group commit; the same 64 by hand in one transaction on our schema; 64 plain transactions.
    const burstOurs = [];
    const burstSchema = {};
    const burstSchemaTotal = [];
    const burstPlain = [];
    for (let i = 0; i < BURSTS + 5; i++) {
      const keep = i >= 5;
      const specs = Array.from({ length: 64 }, () => specFor(fresh++));
      let start = performance.now();
      await Promise.all(specs.map((spec) => registry.register(spec)));
      if (keep) burstOurs.push(performance.now() - start);

      const byHand = Array.from({ length: 64 }, () => specFor(fresh++));
      let prepared;
      const total = timed(keep ? burstSchema : {}, [
        ['canonical JSON + SHA-256 (64)', () => {
          prepared = byHand.map((spec) => {
            const json = canonicalJson(spec);
            return { spec, json, fingerprint: createHash('sha256').update(json).digest('hex') };
          });
        }],
        ['BEGIN IMMEDIATE', () => s.begin.run()],
        ['64 reads, 64 spec rows, 64 registrations', () => {
          const now = new Date().toISOString();
          for (const { spec, json, fingerprint } of prepared) {
            s.check.get(spec.tool_name);
            s.spec.run(spec.tool_name, fingerprint, spec.version, json, now);
            s.registration.run(spec.tool_name, fingerprint, now);
          }
        }],
        ['COMMIT (fsync)', () => s.commit.run()],
      ]);
      if (keep) burstSchemaTotal.push(total);

      const plainSpecs = Array.from({ length: 64 }, () => specFor(fresh++));
      start = performance.now();
      for (const spec of plainSpecs) {
        const text = JSON.stringify(spec);
        p.begin.run();
        p.check.get(spec.tool_name);
        p.insert.run(spec.tool_name, spec.version, text, new Date().toISOString());
        p.commit.run();
      }
      if (keep) burstPlain.push(performance.now() - start);
    }
    await registry.close();
    schemaDb.close();
    plainDb.close();
    return {
      register: { ours: median(ours), schema: median(schemaTotal), plain: median(plainTotal), schemaPhases: mapMedians(schema), plainPhases: mapMedians(plain) },
      burst: { ours: median(burstOurs), schema: median(burstSchemaTotal), plain: median(burstPlain), schemaPhases: mapMedians(burstSchema) },
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

function mapMedians(phases) {
  return Object.fromEntries(Object.entries(phases).map(([name, values]) => [name, median(values)]));
}

const result = await sqlitePhases();
const { register, burst } = result;
console.log(`register of a new tool, ${TOOLS.toLocaleString('en-US')} tools, FULL (${CALLS} calls each, alternating):`);
console.log(`  ours ${us(register.ours)} (${(register.ours / register.plain).toFixed(2)} x plain); by hand on our schema ${us(register.schema)} (${(register.schema / register.plain).toFixed(2)} x); plain ${us(register.plain)}`);
for (const [name, ms] of Object.entries(register.schemaPhases)) console.log(`  schema  ${name.padEnd(66)} ${us(ms)}`);
for (const [name, ms] of Object.entries(register.plainPhases)) console.log(`  plain   ${name.padEnd(66)} ${us(ms)}`);
console.log(`64 concurrent registers (${BURSTS} bursts):`);
console.log(`  ours ${us(burst.ours)} (${(burst.ours / burst.plain).toFixed(3)} x 64 plain); by hand in one transaction on our schema ${us(burst.schema)} (${(burst.schema / burst.plain).toFixed(3)} x); 64 plain ${us(burst.plain)}`);
for (const [name, ms] of Object.entries(burst.schemaPhases)) console.log(`  schema  ${name.padEnd(66)} ${us(ms)}`);
console.log(JSON.stringify(result));
