// The command against PostgreSQL (--db postgres://… and TOOL_REGISTRY_DB), on the run's
// server: migrate/status/verify, every kind of command, and snapshots moved unchanged
// SQLite -> PostgreSQL -> export (identical bytes).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, uniqueName } from '../support/postgres.js';
import type { TestDatabase } from '../support/postgres.js';
import { errorCode, runCli, useTempDir } from './helpers.js';

const tempDir = useTempDir();

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

/** A --db URL for a fresh schema of this file's database. */
function pgUrl(schema = uniqueName('cli')): string {
  const url = new URL(database.url);
  url.searchParams.set('schema', schema);
  return url.toString();
}

describe('tool-registry --db postgres://', () => {
  it('read-only commands refuse a schema that does not exist; migrate creates it once; status and verify report it', () => {
    const cwd = tempDir();
    const db = pgUrl('cli_migrate');
    const missing = runCli(['status', '--db', db], { cwd });
    expect(missing.code).toBe(1);
    expect(errorCode(missing.stderr)).toBe('DATABASE_NOT_FOUND');
    const first = runCli(['migrate', '--db', db], { cwd });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^created schema cli_migrate in postgres:\/\/postgres:\*\*\*@/);
    expect(first.stdout).toContain('applied 0001_init');
    expect(first.stdout).toContain('applied 0002_generic_plans');
    expect(first.stdout).toContain('applied 0003_tools_view_nul');
    const again = runCli(['migrate', '--db', db], { cwd });
    expect(again.stdout).toMatch(/0 new/);
    const status = runCli(['status', '--json', '--db', db], { cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ schema: 'cli_migrate', tools: 0, revision: 0, appliedMigrations: ['0001_init', '0002_generic_plans', '0003_tools_view_nul'] });
    expect(runCli(['status', '--db', db], { cwd }).stdout).toMatch(/^schema:\s+cli_migrate$/m);
    const verify = runCli(['verify', '--db', db], { cwd });
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/^ok: 0 tools meet the contracts/);
  });

  it('every kind of command works through TOOL_REGISTRY_DB', () => {
    const cwd = tempDir();
    const env = { TOOL_REGISTRY_DB: pgUrl() };
    const spec = { tool_name: 'search', version: '1', input_schema: { type: 'object', properties: { q: { type: 'string' } } }, output_schema: {} };
    writeFileSync(join(cwd, 'spec.json'), JSON.stringify(spec));
    writeFileSync(join(cwd, 'spec2.json'), JSON.stringify({ ...spec, version: '2' }));
    const ok = (args: string[]) => {
      const result = runCli(args, { cwd, env });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      return result.stdout;
    };
    ok(['register', 'spec.json']);
    ok(['disable', 'search']);
    ok(['register', 'spec2.json']);
    expect(JSON.parse(ok(['get', 'search', '--json'])).spec.input_schema).toEqual(spec.input_schema);
    expect(ok(['list', '--all'])).toContain('search');
    expect(ok(['history', 'search'])).toContain('2');
    expect(ok(['changes', '--json'])).toContain('"disabled"');
    ok(['enable', 'search']);
    ok(['remove', 'search']);
    const conflict = runCli(['register', 'spec.json', '--expect-version', '7'], { cwd, env });
    expect(errorCode(conflict.stderr)).toBe('PRECONDITION_FAILED');
    ok(['verify']);
  });

  it('a snapshot moves SQLite -> PostgreSQL -> export with identical bytes', () => {
    const cwd = tempDir();
    const file = join(cwd, 'source.db');
    const specs = [
      { tool_name: 'zeta', version: '1.0', description: 'Ünïcödé 😀', input_schema: { z: 1, a: { y: [3, 1] } }, output_schema: { type: 'object' }, tags: ['b', 'a', 'b'] },
      { output_schema: {}, input_schema: { type: 'object' }, tool_name: 'alpha' },
    ];
    writeFileSync(join(cwd, 'specs.json'), JSON.stringify(specs));
    expect(runCli(['register', 'specs.json', '--db', file], { cwd }).code).toBe(0);
    expect(runCli(['disable', 'zeta', '--db', file], { cwd }).code).toBe(0);
    const fromSqlite = runCli(['export', '--db', file], { cwd });
    expect(fromSqlite.code, fromSqlite.stderr).toBe(0);
    writeFileSync(join(cwd, 'snapshot.json'), fromSqlite.stdout);
    const db = pgUrl();
    const imported = runCli(['import', 'snapshot.json', '--mode', 'replace', '--db', db], { cwd });
    expect(imported.code, imported.stderr).toBe(0);
    const fromPostgres = runCli(['export', '--db', db], { cwd });
    expect(fromPostgres.code, fromPostgres.stderr).toBe(0);
    expect(fromPostgres.stdout).toBe(readFileSync(join(cwd, 'snapshot.json'), 'utf8'));
    expect(JSON.parse(fromPostgres.stdout).tools).toHaveLength(2);
  });
});
