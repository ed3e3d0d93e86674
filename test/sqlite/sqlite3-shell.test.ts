// The stock sqlite3 shell (Debian 12 ships 3.40; .ci/run installs it) reads a file we wrote.
// These are the operator one-liners of docs/operators.md, run as they are printed there. Without
// the shell they are skipped, and their title says so.
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteToolRegistry } from '../../src/index.js';
import { fullSpec, manualClock, minimalSpec } from '../support/registry-helpers.js';
import { HAS_SQLITE3, NEEDS_SQLITE3, SQLITE3 as SHELL } from '../support/sqlite3-shell.js';
import { SHIPPED, tempFolder } from './helpers.js';

function shell(file: string, ...args: string[]): string {
  return execFileSync(SHELL, [...args, file], { encoding: 'utf8' });
}

function shellJson(file: string, sql: string): unknown {
  const out = execFileSync(SHELL, ['-json', file, sql], { encoding: 'utf8' }).trim();
  return out === '' ? [] : JSON.parse(out);
}

describe.skipIf(!HAS_SQLITE3)(`the sqlite3 shell on a file we wrote${NEEDS_SQLITE3}`, () => {
  const temp = tempFolder();
  const file = temp.file('operator.db');

  beforeAll(async () => {
    const clock = manualClock('2025-01-01T00:00:00.000Z');
    // A registry left open, as a running service would: the shell must cope with the WAL.
    const registry = await openSqliteToolRegistry({ filename: file, clock: clock.now });
    await registry.register(fullSpec('search', '1.0.0'));
    clock.set('2025-02-01T00:00:00.000Z');
    await registry.register(fullSpec('search', '2.0.0'));
    await registry.register(minimalSpec('calc'));
    await registry.setEnabled('calc', false);
    await registry.register(minimalSpec('gone'));
    await registry.remove('gone');
    // The gateway's rows (issue 37): a secret by reference, and two audited calls.
    process.env.GH_TOKEN = 'not-this';
    await registry.putUpstream({ name: 'github', transport: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${GH_TOKEN}' } } });
    delete process.env.GH_TOKEN;
    const call = { at: '2025-02-01T00:00:01.000Z', token: 'ci', persona: null, namespace: 'default', tool: 'search', version: '2.0.0', fingerprint: null, upstream: null, duration_ms: 4, outcome: 'ok' };
    await registry.recordCalls([call, { ...call, at: '2025-02-01T00:00:02.000Z', tool: 'github_issues', upstream: 'github', duration_ms: 35.5, outcome: 'UPSTREAM_UNAVAILABLE' }]);
    await registry.close();
  });
  afterAll(() => temp.cleanup());

  it('is a 3.x shell', () => {
    expect(execFileSync(SHELL, ['-version'], { encoding: 'utf8' })).toMatch(/^3\.\d+/);
  });

  it('lists tools through the view', () => {
    expect(shellJson(file, 'SELECT tool_name, version, enabled, created_at, description, tags FROM tools ORDER BY tool_name;')).toEqual([
      { tool_name: 'calc', version: null, enabled: 0, created_at: '2025-02-01T00:00:00.000Z', description: null, tags: '[]' },
      {
        tool_name: 'search',
        version: '2.0.0',
        enabled: 1,
        created_at: '2025-02-01T00:00:00.000Z',
        description: 'Searches the web (search)',
        tags: '["web","search"]',
      },
    ]);
  });

  it("shows a tool's spec history, and a removed tool's history stays", () => {
    expect(
      shellJson(file, "SELECT version, first_registered_at, fingerprint FROM tool_specs WHERE tool_name = 'search' ORDER BY first_registered_at;"),
    ).toEqual([
      { version: '1.0.0', first_registered_at: '2025-01-01T00:00:00.000Z', fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) },
      { version: '2.0.0', first_registered_at: '2025-02-01T00:00:00.000Z', fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    expect(shellJson(file, "SELECT count(*) AS n FROM tool_specs WHERE tool_name = 'gone';")).toEqual([{ n: 1 }]);
    expect(shellJson(file, "SELECT json_extract(spec_json, '$.input_schema.required') AS required FROM tool_specs WHERE tool_name = 'search' AND version = '2.0.0';")).toEqual([
      { required: '["query"]' },
    ]);
  });

  it("prints a tool's current spec as JSON", () => {
    const [row] = shellJson(
      file,
      "SELECT s.spec_json FROM tool_registrations r JOIN tool_specs s USING (tool_name, fingerprint) WHERE r.tool_name = 'search';",
    ) as { spec_json: string }[];
    expect(JSON.parse(row?.spec_json ?? 'null')).toEqual(fullSpec('search', '2.0.0'));
  });

  it('says ok to PRAGMA integrity_check and finds no foreign key problem', () => {
    expect(shell(file, '-cmd', 'PRAGMA integrity_check;', '-cmd', '.exit').trim()).toBe('ok');
    expect(shell(file, '-cmd', 'PRAGMA foreign_key_check;', '-cmd', '.exit').trim()).toBe('');
  });

  it("lists the upstreams with their transport, a header's ${VAR} unexpanded (docs/operators.md)", () => {
    expect(shellJson(file, "SELECT name, prefix, approve, json_extract(transport, '$.type') AS type, json_extract(transport, '$.url') AS url, updated_at FROM tool_upstreams ORDER BY name;")).toEqual([
      { name: 'github', prefix: 'github_', approve: 'all', type: 'http', url: 'https://api.example.com/mcp', updated_at: '2025-02-01T00:00:00.000Z' },
    ]);
    expect(shellJson(file, "SELECT json_extract(transport, '$.headers.Authorization') AS auth FROM tool_upstreams WHERE name = 'github';")).toEqual([{ auth: 'Bearer ${GH_TOKEN}' }]);
  });

  it('reads the audit log, newest first, and counts failures per tool (docs/operators.md)', () => {
    expect(shellJson(file, 'SELECT id, at, token, tool, upstream, duration_ms, outcome FROM tool_calls ORDER BY id DESC LIMIT 20;')).toEqual([
      { id: 2, at: '2025-02-01T00:00:02.000Z', token: 'ci', tool: 'github_issues', upstream: 'github', duration_ms: 35.5, outcome: 'UPSTREAM_UNAVAILABLE' },
      { id: 1, at: '2025-02-01T00:00:01.000Z', token: 'ci', tool: 'search', upstream: null, duration_ms: 4.0, outcome: 'ok' },
    ]);
    expect(shellJson(file, "SELECT tool, count(*) AS failures FROM tool_calls WHERE outcome <> 'ok' GROUP BY tool ORDER BY failures DESC;")).toEqual([{ tool: 'github_issues', failures: 1 }]);
  });

  it('lists the migrations that ran', () => {
    expect(shellJson(file, 'SELECT name FROM schema_migrations ORDER BY name;')).toEqual(SHIPPED.map((name) => ({ name })));
  });

  it('reads the whole schema (.schema) without error', () => {
    const schema = shell(file, '-cmd', '.schema', '-cmd', '.exit');
    expect(schema).toContain('CREATE TABLE tool_specs');
    expect(schema).toContain('CREATE VIEW tools');
  });
});
