// Test data and the raw better-sqlite3 baseline: hand-written prepared statements on the
// store's own schema (migrations/sqlite/0001_init.sql) with the store's pragmas.
import { URL } from 'node:url';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { canonicalJson, fingerprintOf, openSqliteToolRegistry } from '../../dist/index.js';

/** The fixed `created_at` of populated tools, so every contender holds the same rows. */
export const CREATED_AT = '2026-01-01T00:00:00.000Z';

/** The store's own pragmas for files it opens (see src/stores/sqlite/sqlite-tool-registry.ts). */
export function applyStorePragmas(db) {
  db.pragma('busy_timeout = 10');
  db.pragma('foreign_keys = ON');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('journal_size_limit = 16777216');
  db.pragma('wal_autocheckpoint = 1000');
}

export function toolName(i) {
  return `tool_${String(i).padStart(7, '0')}`;
}

/** A realistic MCP-style tool spec (about 450 bytes of canonical JSON), every field given. */
export function specFor(i, version = '1.0.0') {
  return {
    tool_name: toolName(i),
    version,
    description: `Searches collection ${i % 97} and returns the matching records, newest first.`,
    input_schema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Free-text query' },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        since: { type: 'string', format: 'date-time' },
      },
      required: ['query'],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: { results: { type: 'array', items: { type: 'object' } }, total: { type: 'integer' } },
    },
    tags: ['search', `group-${i % 17}`],
  };
}

/** Creates a file with the store's full schema (by opening the store once) and `count` tools. */
export async function populateStoreFile(filename, count) {
  const registry = await openSqliteToolRegistry({ filename });
  await registry.close();
  const db = new Database(filename);
  applyStorePragmas(db);
  insertTools(db, count);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** Creates a file with only 0001_init.sql applied (no change log): the raw baseline's schema. */
export function createRawFile(filename, count = 0) {
  const db = new Database(filename);
  applyStorePragmas(db);
  db.exec(readFileSync(new URL('../../migrations/sqlite/0001_init.sql', import.meta.url), 'utf8'));
  if (count > 0) insertTools(db, count);
  db.pragma('wal_checkpoint(TRUNCATE)');
  return db;
}

/** Inserts tools 0..count-1 in one transaction with raw statements (fast setup for 1,000,000). */
export function insertTools(db, count) {
  const spec = db.prepare(
    'INSERT INTO tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES (?, ?, ?, ?, ?)',
  );
  const registration = db.prepare('INSERT INTO tool_registrations (tool_name, fingerprint, enabled, created_at) VALUES (?, ?, 1, ?)');
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const canonical = canonicalJson(specFor(i));
      const fingerprint = fingerprintOf(canonical);
      spec.run(toolName(i), fingerprint, '1.0.0', canonical, CREATED_AT);
      registration.run(toolName(i), fingerprint, CREATED_AT);
    }
  })();
}

/** A snapshot of `count` tools, as exportSnapshot would write it. */
export function snapshotOf(count) {
  const tools = new Array(count);
  for (let i = 0; i < count; i++) tools[i] = { spec: specFor(i), enabled: i % 10 !== 0, created_at: CREATED_AT };
  return { tools };
}

/** Runs `work` in one BEGIN IMMEDIATE transaction, rolled back if it throws (both baselines' writes). */
function immediateTransaction(db) {
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  return (work) => {
    begin.run();
    try {
      const result = work();
      commit.run();
      return result;
    } catch (error) {
      if (db.inTransaction) rollback.run();
      throw error;
    }
  };
}

/**
 * The raw baseline: what a careful hand-written better-sqlite3 registry does for each
 * operation on the same schema, with no validation layer and no cache. It stores canonical
 * JSON and its SHA-256 as the schema requires (and as "identical spec" needs: key order must
 * not matter), using the package's canonicalJson, a few microseconds per spec.
 */
export function rawRegistry(db) {
  const select = db.prepare(
    `SELECT s.spec_json, r.enabled, r.created_at FROM tool_registrations AS r
     JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
     WHERE r.tool_name = ?`,
  );
  const selectCheck = db.prepare(
    `SELECT s.version, r.fingerprint, s.spec_json, r.enabled, r.created_at FROM tool_registrations AS r
     JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
     WHERE r.tool_name = ?`,
  );
  const selectAll = db.prepare(
    `SELECT s.spec_json, r.enabled, r.created_at FROM tool_registrations AS r
     JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
     ORDER BY r.tool_name`,
  );
  const selectEnabled = db.prepare(
    `SELECT s.spec_json, r.enabled, r.created_at FROM tool_registrations AS r
     JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
     WHERE r.enabled = 1 ORDER BY r.tool_name`,
  );
  const insertSpec = db.prepare(
    `INSERT INTO tool_specs (tool_name, fingerprint, version, spec_json, first_registered_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (tool_name, fingerprint) DO NOTHING`,
  );
  const upsert = db.prepare(
    `INSERT INTO tool_registrations (tool_name, fingerprint, enabled, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (tool_name) DO UPDATE SET fingerprint = excluded.fingerprint, enabled = excluded.enabled, created_at = excluded.created_at`,
  );
  const update = db.prepare('UPDATE tool_registrations SET enabled = ? WHERE tool_name = ?');
  const toRegistration = (row) => ({ spec: JSON.parse(row.spec_json), enabled: row.enabled === 1, created_at: row.created_at });
  const immediate = immediateTransaction(db);
  return {
    get(name) {
      const row = select.get(name);
      return row === undefined ? undefined : toRegistration(row);
    },
    listAll(includeDisabled = false) {
      return (includeDisabled ? selectAll : selectEnabled).all().map(toRegistration);
    },
    /** The registration rule in one IMMEDIATE transaction: check, then write (or not). */
    register(spec) {
      const json = canonicalJson(spec);
      const fingerprint = createHash('sha256').update(json).digest('hex');
      return immediate(() => {
        const current = selectCheck.get(spec.tool_name);
        if (current !== undefined && current.fingerprint === fingerprint) return toRegistration(current);
        if (current !== undefined && current.version === spec.version) throw new Error('version conflict');
        const createdAt = new Date().toISOString();
        const enabled = current === undefined ? 1 : current.enabled;
        insertSpec.run(spec.tool_name, fingerprint, spec.version, json, createdAt);
        upsert.run(spec.tool_name, fingerprint, enabled, createdAt);
        return { spec, enabled: enabled === 1, created_at: createdAt };
      });
    },
    setEnabled(name, enabled) {
      return immediate(() => {
        const current = select.get(name);
        if (current === undefined) throw new Error('not found');
        if ((current.enabled === 1) !== enabled) update.run(enabled ? 1 : 0, name);
        return { spec: JSON.parse(current.spec_json), enabled, created_at: current.created_at };
      });
    },
    /** A bulk insert of a snapshot in one transaction (what importSnapshot does into an empty file). */
    importAll(snapshot) {
      const now = new Date().toISOString();
      return immediate(() => {
        for (const { spec, enabled, created_at: createdAt } of snapshot.tools) {
          const json = canonicalJson(spec);
          const fingerprint = createHash('sha256').update(json).digest('hex');
          insertSpec.run(spec.tool_name, fingerprint, spec.version, json, now);
          upsert.run(spec.tool_name, fingerprint, enabled ? 1 : 0, createdAt);
        }
        return snapshot.tools.length;
      });
    },
    exportAll() {
      return { tools: selectAll.all().map(toRegistration) };
    },
  };
}

/**
 * The plainest registry a user would write by hand, for the write targets of issue 12: one
 * table, the store's pragmas, the spec as JSON.stringify text, no history, no change log,
 * no validation. `register` is one BEGIN IMMEDIATE transaction: select, compare, write.
 */
export const PLAIN_SCHEMA = `CREATE TABLE IF NOT EXISTS tools (
  name TEXT PRIMARY KEY,
  version TEXT,
  spec TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  created_at TEXT
)`;

/** Creates a file with the plain one-table schema and `count` tools. */
export function createPlainFile(filename, count = 0) {
  const db = new Database(filename);
  applyStorePragmas(db);
  db.exec(PLAIN_SCHEMA);
  if (count > 0) {
    const insert = db.prepare('INSERT INTO tools (name, version, spec, enabled, created_at) VALUES (?, ?, ?, 1, ?)');
    db.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(toolName(i), '1.0.0', JSON.stringify(specFor(i)), CREATED_AT);
    })();
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  return db;
}

export function plainRegistry(db) {
  const select = db.prepare('SELECT version, spec, enabled, created_at FROM tools WHERE name = ?');
  const insert = db.prepare('INSERT INTO tools (name, version, spec, enabled, created_at) VALUES (?, ?, ?, 1, ?)');
  const replace = db.prepare('UPDATE tools SET version = ?, spec = ?, created_at = ? WHERE name = ?');
  const toggle = db.prepare('UPDATE tools SET enabled = ? WHERE name = ?');
  const insertRow = db.prepare('INSERT INTO tools (name, version, spec, enabled, created_at) VALUES (?, ?, ?, ?, ?)');
  const immediate = immediateTransaction(db);
  const toRegistration = (row) => ({ spec: JSON.parse(row.spec), enabled: row.enabled === 1, created_at: row.created_at });
  return {
    get(name) {
      const row = select.get(name);
      return row === undefined ? undefined : toRegistration(row);
    },
    register(spec) {
      const text = JSON.stringify(spec);
      return immediate(() => {
        const row = select.get(spec.tool_name);
        if (row !== undefined && row.spec === text) return toRegistration(row);
        if (row !== undefined && row.version === spec.version) throw new Error('version conflict');
        const createdAt = new Date().toISOString();
        if (row === undefined) insert.run(spec.tool_name, spec.version, text, createdAt);
        else replace.run(spec.version, text, createdAt, spec.tool_name);
        return { spec, enabled: row === undefined ? true : row.enabled === 1, created_at: createdAt };
      });
    },
    setEnabled(name, enabled) {
      return immediate(() => {
        const row = select.get(name);
        if (row === undefined) throw new Error('not found');
        if ((row.enabled === 1) !== enabled) toggle.run(enabled ? 1 : 0, name);
        return { ...toRegistration(row), enabled };
      });
    },
    /** A bulk insert of a snapshot in one transaction. */
    importAll(snapshot) {
      return immediate(() => {
        for (const { spec, enabled, created_at: createdAt } of snapshot.tools) {
          insertRow.run(spec.tool_name, spec.version, JSON.stringify(spec), enabled ? 1 : 0, createdAt);
        }
        return snapshot.tools.length;
      });
    },
  };
}
