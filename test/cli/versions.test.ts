// The commands of issue 27 in real processes: deprecate, undeprecate, policy [set], diff and
// check (exit 0/1/2), and a policy set by one process (the command) binding another (this
// test's registry), on a SQLite file and on PostgreSQL.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresToolRegistry, openSqliteToolRegistry } from '../../src/index.js';
import type { ToolRegistry } from '../../src/index.js';
import { expectCode } from '../support/registry-helpers.js';
import { createTestDatabase, uniqueName } from '../support/postgres.js';
import type { TestDatabase } from '../support/postgres.js';
import { errorCode, runCli, useTempDir, writeJson, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

function tool(version: string, required: string[] = []) {
  return {
    tool_name: 'search',
    version,
    input_schema: { type: 'object', properties: { q: { type: 'string' } }, required, additionalProperties: false },
    output_schema: { type: 'string' },
  };
}

describe('tool-registry deprecate, undeprecate, policy, diff, check (SQLite file)', () => {
  it('deprecates and shows it in list and get; undeprecates; the feed has both', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'r.db');
    writeJson(join(cwd, 'v1.json'), tool('1.0.0'));
    expect((await runCli(['register', 'v1.json', '--db', db], { cwd })).code).toBe(0);
    const deprecated = await runCli(['deprecate', 'search', '--message', 'use find', '--replacement', 'find', '--sunset', '2030-01-01', '--db', db], { cwd });
    expect(deprecated.code).toBe(0);
    const list = (await runCli(['list', '--db', db], { cwd })).stdout;
    expect(list.split('\n')[0]).toMatch(/\bDEPRECATED\b/);
    expect(list).toContain('yes (sunset 2030-01-01)');
    const json = JSON.parse((await runCli(['get', 'search', '--json', '--db', db], { cwd })).stdout) as { deprecation: unknown };
    expect(json.deprecation).toEqual({ message: 'use find', replacement: 'find', sunset: '2030-01-01' });
    expect(errorCode((await runCli(['deprecate', 'search', '--message', 'm', '--sunset', 'soon', '--db', db], { cwd })).stderr)).toBe('VALIDATION_FAILED');
    expect((await runCli(['deprecate', 'search', '--db', db], { cwd })).code).toBe(2);
    expect((await runCli(['undeprecate', 'search', '--db', db], { cwd })).code).toBe(0);
    const changes = JSON.parse((await runCli(['changes', '--json', '--db', db], { cwd })).stdout) as { events: { action: string }[] };
    expect(changes.events.map((event) => event.action)).toEqual(['added', 'deprecated', 'undeprecated']);
  });

  it('policy shows and sets; an unknown value is a usage error and changes nothing; check and diff report without writing', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'r.db');
    writeJson(join(cwd, 'v1.json'), tool('1.0.0'));
    writeJson(join(cwd, 'v2-breaking.json'), tool('1.1.0', ['q']));
    writeJson(join(cwd, 'v2-ok.json'), { ...tool('1.1.0'), description: 'compatible' });
    await runCli(['register', 'v1.json', '--db', db], { cwd });
    expect((await runCli(['policy', 'set', '--compatibility', 'backward', '--db', db], { cwd })).code).toBe(0);
    expect((await runCli(['policy', 'set', '--version-order', 'calver', '--db', db], { cwd })).code).toBe(2);
    expect((await runCli(['policy', 'set', '--db', db], { cwd })).code).toBe(2);
    expect(JSON.parse((await runCli(['policy', '--json', '--db', db], { cwd })).stdout)).toEqual({ versionOrder: 'any', compatibility: 'backward' });
    const refused = await runCli(['check', 'v2-breaking.json', '--json', '--db', db], { cwd });
    expect(refused.code).toBe(1);
    const report = JSON.parse(refused.stdout) as { ok: boolean; results: { action: string; error?: { code: string } }[] };
    expect(report.ok).toBe(false);
    expect(report.results[0]).toMatchObject({ action: 'refused', error: { code: 'COMPATIBILITY_FAILED' } });
    expect((await runCli(['check', 'v2-ok.json', '--db', db], { cwd })).code).toBe(0);
    expect((await runCli(['check', 'missing.json', '--db', db], { cwd })).code).toBe(1);
    expect((await runCli(['check', '--db', db], { cwd })).code).toBe(2);
    // check changed nothing.
    expect(JSON.parse((await runCli(['get', 'search', '--json', '--db', db], { cwd })).stdout).spec.version).toBe('1.0.0');
    await runCli(['policy', 'set', '--compatibility', 'none', '--db', db], { cwd });
    expect((await runCli(['register', 'v2-breaking.json', '--db', db], { cwd })).code).toBe(0);
    const diff = await runCli(['diff', 'search', '--json', '--db', db], { cwd });
    expect(diff.code).toBe(0);
    expect(JSON.parse(diff.stdout)).toMatchObject({ from: { version: '1.0.0' }, to: { version: '1.1.0' }, compatible: false, differences: [{ type: 'required-added', path: '/input_schema/required' }] });
    expect((await runCli(['diff', 'search', '--from', '1.1.0', '--to', '1.0.0', '--db', db], { cwd })).stdout).toMatch(/compatible/);
    expect(errorCode((await runCli(['diff', 'search', '--from', '9.9.9', '--db', db], { cwd })).stderr)).toBe('TOOL_NOT_FOUND');
  });

  it('diff shows the entry that counts an enum place\'s values past the first 100 as that count', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'r.db');
    const picks = (version: string, prefix: string) => ({ tool_name: 'picks', version, input_schema: { enum: Array.from({ length: 130 }, (_, i) => `${prefix}${i}`) }, output_schema: {} });
    writeJson(join(cwd, 'v1.json'), picks('1.0.0', 'v'));
    writeJson(join(cwd, 'v2.json'), picks('2.0.0', 'w'));
    await runCli(['register', 'v1.json', '--db', db], { cwd });
    await runCli(['register', 'v2.json', '--db', db], { cwd });
    const diff = await runCli(['diff', 'picks', '--db', db], { cwd });
    const rows = diff.stdout.split('\n').filter((line) => line.includes('30 more values'));
    expect([diff.code, rows.length]).toEqual([0, 2]);
    expect(rows[0]).toMatch(/^enum-value-removed +\/input_schema\/enum +30 more values +- +yes$/);
    expect(rows[1]).toMatch(/^enum-value-added +\/input_schema\/enum +- +30 more values +no$/);
  });
});

/** A policy set by the command (another process) binds this process's open registry at its next write. */
async function policyBindsAnotherProcess(registry: ToolRegistry, db: string, cwd: string): Promise<void> {
  await registry.register(tool('2.0.0'));
  expect((await runCli(['policy', 'set', '--version-order', 'semver', '--compatibility', 'backward', '--db', db], { cwd })).code).toBe(0);
  await expectCode(registry.register(tool('1.9.0')), 'VERSION_DOWNGRADE');
  await expectCode(registry.register(tool('2.1.0', ['q'])), 'COMPATIBILITY_FAILED');
  expect(await registry.getPolicy()).toEqual({ versionOrder: 'semver', compatibility: 'backward' });
  // And the other way: this process lifts them, the command's register obeys.
  await registry.setPolicy({ versionOrder: 'any', compatibility: 'none' });
  writeJson(join(cwd, 'down.json'), tool('1.0.0', ['q']));
  expect((await runCli(['register', 'down.json', '--db', db], { cwd })).code).toBe(0);
  expect((await registry.get('search'))?.spec.version).toBe('1.0.0');
}

describe('a policy set by one process binds another', () => {
  it('SQLite file', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'shared.db');
    const registry = await openSqliteToolRegistry({ filename: db });
    try {
      await policyBindsAnotherProcess(registry, db, cwd);
    } finally {
      await registry.close();
    }
  });

  describe('PostgreSQL', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase();
    });
    afterAll(async () => {
      await database.drop();
    });

    it('two instances in two processes', async () => {
      const cwd = tempDir();
      const schema = uniqueName('versions');
      const url = new URL(database.url);
      url.searchParams.set('schema', schema);
      const registry = await openPostgresToolRegistry({ connectionString: database.url, schema });
      try {
        await policyBindsAnotherProcess(registry, url.toString(), cwd);
      } finally {
        await registry.close();
      }
    });
  });
});
