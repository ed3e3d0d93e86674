// Storage that refuses writes: a role with SELECT only, or a server (a standby) or session
// whose transactions are read-only. Like a SQLite file this process may not write, every
// write is READ_ONLY with the server's error as cause; reads work.
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { expectCode, minimalSpec } from '../support/registry-helpers.js';
import { uniqueName } from '../support/postgres.js';
import { useFileDatabase } from './helpers.js';

const db = useFileDatabase();

const CALL = { at: '2025-01-01T00:00:00.000Z', token: null, persona: null, namespace: 'default', tool: 't', version: null, fingerprint: null, upstream: null, duration_ms: 1, outcome: 'ok' };

/** A schema with a tool `t`, an upstream `gh` and one audit row, written by its owner. */
async function seed(schema: string): Promise<void> {
  const owner = await openPostgresToolRegistry({ connectionString: db.url(), schema, clock: () => new Date(CALL.at) });
  await owner.register(minimalSpec('t'));
  await owner.putUpstream({ name: 'gh', transport: { type: 'http', url: 'https://example.com/mcp', headers: {} } });
  await owner.recordCalls([CALL]);
  await owner.close();
}

async function expectWritesReadOnly(connectionString: string, schema: string, readonly = false): Promise<void> {
  const registry = await openPostgresToolRegistry({ connectionString, schema, readonly });
  try {
    expect((await registry.listAll()).map((tool) => tool.spec.tool_name)).toEqual(['t']);
    // A write that names one tool says which (context.tool_name), as on SQLite.
    expect((await expectCode(registry.register(minimalSpec('other')), 'READ_ONLY')).context).toMatchObject({ method: 'register', tool_name: 'other' });
    await expectCode(registry.registerMany([minimalSpec('other')]), 'READ_ONLY');
    expect((await expectCode(registry.setEnabled('t', false), 'READ_ONLY')).context).toMatchObject({ method: 'setEnabled', tool_name: 't' });
    expect((await expectCode(registry.remove('t'), 'READ_ONLY')).context).toMatchObject({ method: 'remove', tool_name: 't' });
    await expectCode(registry.importSnapshot({ tools: [] }, { mode: 'replace' }), 'READ_ONLY');
    // The gateway's rows (issue 37): read, never written.
    expect((await expectCode(registry.putUpstream({ name: 'gh', transport: { type: 'stdio', command: ['x'], env: {}, cwd: null } }), 'READ_ONLY')).context).toMatchObject({ method: 'putUpstream' });
    await expectCode(registry.removeUpstream('gh'), 'READ_ONLY');
    await expectCode(registry.recordCalls([{ ...CALL, tool: 'x' }]), 'READ_ONLY');
    expect((await registry.listAll()).map((tool) => [tool.spec.tool_name, tool.enabled])).toEqual([['t', true]]);
    expect((await registry.listUpstreams()).map((row) => [row.name, row.transport.type])).toEqual([['gh', 'http']]);
    expect((await registry.listCalls()).map((row) => row.tool)).toEqual(['t']);
  } finally {
    await registry.close();
  }
}

describe('PostgreSQL storage that refuses writes', () => {
  it('a role that may only SELECT: every write is READ_ONLY, nothing changes', async () => {
    const schema = db.schema();
    await seed(schema);
    const role = uniqueName('reader');
    const admin = db.pool();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'reader'`);
    try {
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      const url = new URL(db.url());
      url.username = role;
      url.password = 'reader';
      await expectWritesReadOnly(url.toString(), schema);
      // Opening a schema that does not exist yet creates it, a write the role may not make.
      const missing = db.schema();
      const error = await expectCode(openPostgresToolRegistry({ connectionString: url.toString(), schema: missing }), 'READ_ONLY');
      expect(error.context).toMatchObject({ method: 'openPostgresToolRegistry' });
      expect((error.cause as { code?: unknown }).code).toBe('42501');
      expect((await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [missing])).rowCount).toBe(0);
    } finally {
      await admin.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
    }
  });

  it('a registry opened with readonly: true: every write is READ_ONLY and names its tool, nothing changes', async () => {
    const schema = db.schema();
    await seed(schema);
    await expectWritesReadOnly(db.url(), schema, true);
  });

  it('read-only transactions (default_transaction_read_only, as on a standby): every write is READ_ONLY', async () => {
    const schema = db.schema();
    await seed(schema);
    const url = new URL(db.url());
    url.searchParams.set('options', '-c default_transaction_read_only=on');
    await expectWritesReadOnly(url.toString(), schema);
    const error = await expectCode(openPostgresToolRegistry({ connectionString: url.toString(), schema: db.schema() }), 'READ_ONLY');
    expect((error.cause as { code?: unknown }).code).toBe('25006');
  });
});
