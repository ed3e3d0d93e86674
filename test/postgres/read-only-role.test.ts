// Storage that refuses writes: a role with SELECT only, or a server (a standby) or session
// whose transactions are read-only. Like a SQLite file this process may not write, every
// write is READ_ONLY with the server's error as cause; reads work.
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { createToolRegistryServer, postgresNamespaces } from '../../src/server/index.js';
import { expectCode, minimalSpec } from '../support/registry-helpers.js';
import { uniqueName } from '../support/postgres.js';
import { until } from '../support/waiting.js';
import { SHIPPED, useFileDatabase } from './helpers.js';

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

/** Runs `work` with a new login role (dropped after it) and its URL on this file's database. */
async function withRole(prefix: string, work: (role: string, url: string) => Promise<void>): Promise<void> {
  const role = uniqueName(prefix);
  const admin = db.pool();
  await admin.query(`CREATE ROLE ${role} LOGIN`);
  try {
    const url = new URL(db.url());
    url.username = role;
    await work(role, url.toString());
  } finally {
    await admin.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
  }
}

/** A seeded schema and a new role that may read it (USAGE, SELECT on every table), for `work`. */
async function withReader(prefix: string, work: (schema: string, role: string, url: string) => Promise<void>): Promise<void> {
  const schema = db.schema();
  await seed(schema);
  await withRole(prefix, async (role, url) => {
    await db.pool().query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
    await work(schema, role, url);
  });
}

/** A STORAGE_UNAVAILABLE for want of a right to read: names the schema and the right, the driver's error as cause. */
async function expectReadDenied(promise: Promise<unknown>, schema: string, operation: string, lacks: string): Promise<void> {
  const error = await expectCode(promise, 'STORAGE_UNAVAILABLE');
  expect(error.context).toMatchObject({ operation, driver_code: '42501', schema });
  expect(error.message).toContain(`may not read the registry schema ${schema}: it lacks ${lacks} (`);
  expect((error.cause as { code?: unknown }).code).toBe('42501');
}

/** PostgreSQL's German words (de.po) for the privilege errors the store meets. */
const GERMAN: [RegExp, string][] = [
  [/^permission denied for table /, 'keine Berechtigung für Tabelle '],
  [/^permission denied for schema /, 'keine Berechtigung für Schema '],
  [/^permission denied for database /, 'keine Berechtigung für Datenbank '],
];

/**
 * A TCP proxy to the server at `serverUrl` that rewrites the message (field M) of every
 * ErrorResponse the server sends, as lc_messages = 'de_DE' would; everything else passes as it is.
 */
async function germanProxy(serverUrl: string): Promise<{ host: string; close(): Promise<void> }> {
  const target = new URL(serverUrl);
  const sockets = new Set<Socket>();
  const translate = (body: Buffer): Buffer => {
    const fields: Buffer[] = [];
    for (let at = 0; at < body.length && body[at] !== 0; ) {
      const end = body.indexOf(0, at + 1);
      let text = body.toString('utf8', at + 1, end);
      if (body[at] === 0x4d) for (const [english, german] of GERMAN) text = text.replace(english, german);
      fields.push(Buffer.from([body[at] as number]), Buffer.from(`${text}\0`, 'utf8'));
      at = end + 1;
    }
    return Buffer.concat([...fields, Buffer.from([0])]);
  };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    // Whole messages only: a type byte and a length that counts itself.
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 1 + pending.readUInt32BE(1)) {
        const length = pending.readUInt32BE(1);
        let message = pending.subarray(0, 1 + length);
        pending = pending.subarray(1 + length);
        if (message[0] === 0x45) {
          const body = translate(message.subarray(5));
          const header = Buffer.alloc(5);
          header[0] = 0x45;
          header.writeUInt32BE(body.length + 4, 1);
          message = Buffer.concat([header, body]);
        }
        client.write(message);
      }
    });
    client.on('error', () => upstream.destroy()).on('close', () => upstream.end());
    upstream.on('error', () => client.destroy()).on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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
      // What the role needs, and where: in the message and in context.detail.
      const refused = await openPostgresToolRegistry({ connectionString: url.toString(), schema, cache: false });
      try {
        const write = await expectCode(refused.register(minimalSpec('other')), 'READ_ONLY');
        const needs = `a role that writes to the registry schema ${schema} needs USAGE on it and SELECT, INSERT, UPDATE and DELETE on its tables`;
        expect(write.message).toContain(`(permission denied for table tool_specs); ${needs}`);
        expect(write.context).toMatchObject({ method: 'register', tool_name: 'other', detail: expect.stringContaining(needs) });
      } finally {
        await refused.close();
      }
      // Opening a schema that does not exist yet creates it, a write the role may not make.
      const missing = db.schema();
      const error = await expectCode(openPostgresToolRegistry({ connectionString: url.toString(), schema: missing }), 'READ_ONLY');
      expect(error.context).toMatchObject({ method: 'openPostgresToolRegistry' });
      expect((error.cause as { code?: unknown }).code).toBe('42501');
      expect(error.context.detail).toBe(`the registry schema ${missing} is missing or empty, and this role may not create it`);
      expect((await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [missing])).rowCount).toBe(0);
      // A schema a new release must migrate (here: its last migration not applied yet): the open names what is pending.
      await admin.query(`DELETE FROM ${schema}.schema_migrations WHERE name = $1`, [SHIPPED.at(-1)]);
      const pending = await expectCode(openPostgresToolRegistry({ connectionString: url.toString(), schema }), 'READ_ONLY');
      expect(pending.message).toContain(`the registry schema ${schema} needs migrations ${SHIPPED.at(-1)}, which this role may not apply: run "tool-registry migrate" as the schema's owner`);
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

  it('a role that may not read the schema: the open and every read are STORAGE_UNAVAILABLE naming the schema and the missing right, until a DBA grants it', async () => {
    const schema = db.schema();
    await seed(schema);
    const admin = db.pool();
    await withRole('blind', async (role, url) => {
      // No USAGE on the schema: the open itself (a server answered the bare driver error 500).
      for (const readonly of [false, true]) {
        await expectReadDenied(openPostgresToolRegistry({ connectionString: url, schema, readonly }), schema, 'openPostgresToolRegistry', `USAGE on schema ${schema}`);
      }
      // A database whose CONNECT is not granted to PUBLIC: the login itself (it was a bare driver error too).
      const database = new URL(db.url()).pathname.slice(1);
      await admin.query(`REVOKE CONNECT ON DATABASE ${database} FROM PUBLIC`);
      try {
        await expectReadDenied(openPostgresToolRegistry({ connectionString: url, schema, cache: false }), schema, 'openPostgresToolRegistry', `CONNECT on database ${database}`);
      } finally {
        await admin.query(`GRANT CONNECT ON DATABASE ${database} TO PUBLIC`);
      }
      // USAGE and SELECT on every table but two: the open works, the reads of those two fail.
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      await admin.query(`REVOKE SELECT ON ${schema}.tool_specs, ${schema}.tool_calls FROM ${role}`);
      for (const cache of [false, true]) {
        const registry = await openPostgresToolRegistry({ connectionString: url, schema, cache });
        try {
          await expectReadDenied(registry.get('t'), schema, 'get', `SELECT on table ${schema}.tool_specs`);
          await expectReadDenied(registry.listCalls(), schema, 'listCalls', `SELECT on table ${schema}.tool_calls`);
          if (!cache) await expectReadDenied(registry.status(), schema, 'status', `SELECT on table ${schema}.tool_specs`);
          expect((await registry.listUpstreams()).map((row) => row.name)).toEqual(['gh']);
        } finally {
          await registry.close();
        }
      }
      // Granted: the same registry reads on, without a reopen.
      const registry = await openPostgresToolRegistry({ connectionString: url, schema, cache: false });
      try {
        await expectCode(registry.listAll(), 'STORAGE_UNAVAILABLE');
        await admin.query(`GRANT SELECT ON ${schema}.tool_specs TO ${role}`);
        expect((await registry.listAll()).map((tool) => tool.spec.tool_name)).toEqual(['t']);
      } finally {
        await registry.close();
      }
    });
  });

  // A REVOKE sends no notification: a cached registry read on from memory for as long as its
  // listener stayed up. The heartbeat now checks the rights too (docs/postgres.md, the read cache):
  // the role's own, also when the listener logs in as another (here the superuser).
  it('a right revoked under an open cached registry: its reads are refused (naming the right) within the cache\'s bound, and work again once granted back', async () => {
    const admin = db.pool();
    await withReader('revoked', async (schema, role, url) => {
      const pool = new pg.Pool({ connectionString: url });
      pool.on('error', () => {});
      const registries = [await openPostgresToolRegistry({ pool, schema }), await openPostgresToolRegistry({ pool, schema, listenConnectionString: db.url() })];
      /** Whether every registry answers `t` from memory now. */
      const cached = async (): Promise<boolean> => {
        for (const registry of registries) {
          const before = registry.storeMetrics().cacheHits ?? 0;
          if ((await registry.get('t'))?.spec.tool_name !== 't' || (registry.storeMetrics().cacheHits ?? 0) === before) return false;
        }
        return true;
      };
      const refused = async (): Promise<boolean> => (await Promise.all(registries.map((registry) => registry.get('t').then(() => false, () => true)))).every(Boolean);
      try {
        const cases: [string, string, string][] = [
          [`REVOKE SELECT ON ${schema}.tool_specs FROM ${role}`, `GRANT SELECT ON ${schema}.tool_specs TO ${role}`, `SELECT on table ${schema}.tool_specs`],
          [`REVOKE USAGE ON SCHEMA ${schema} FROM ${role}`, `GRANT USAGE ON SCHEMA ${schema} TO ${role}`, `USAGE on schema ${schema}`],
        ];
        for (const [revoke, grant, lacks] of cases) {
          await until(cached, 'reads answered by the caches');
          await admin.query(revoke);
          // The documented bound is 1 s; the deadline only ends a wait for what never comes (the old code).
          await until(refused, `the refusal after ${revoke}`, { timeoutMs: 10_000 });
          for (const registry of registries) {
            await expectReadDenied(registry.get('t'), schema, 'get', lacks);
            await expectReadDenied(registry.listAll(), schema, 'listAll', lacks);
          }
          await admin.query(grant);
          for (const registry of registries) expect((await registry.listAll()).map((tool) => tool.spec.tool_name)).toEqual(['t']);
        }
        await until(cached, 'the caches answering again after the GRANT');
      } finally {
        for (const registry of registries) await registry.close();
        await pool.end();
      }
    });
  });

  // A reconnect counted as a confirmation before its first heartbeat checked the rights: a right
  // revoked while the listener was down left memory answering for up to a heartbeat after the
  // reconnect. The (re)connect itself now checks them, before the connection counts as confirmed.
  // And the refusal met while the listener was down was answered from memory (staleIfErrorMs).
  it('a right revoked while the listener is down: no read is answered from memory, before the reconnect or after it', async () => {
    const admin = db.pool();
    await withReader('downrevoked', async (schema, role, url) => {
      const registry = await openPostgresToolRegistry({ connectionString: url, schema });
      try {
        const fromMemory = (): number => (registry.storeMetrics().cacheHits ?? 0) + (registry.storeMetrics().staleReads ?? 0);
        await until(async () => {
          const before = fromMemory();
          return (await registry.get('t'))?.spec.tool_name === 't' && fromMemory() > before;
        }, 'a read answered by the cache');
        const { listenerPid } = await registry.status();
        // NOLOGIN holds the listener down (its reconnects are refused; the pool's open
        // connections stay) until the REVOKE has committed: no race with its backoff.
        await admin.query(`ALTER ROLE ${role} NOLOGIN; SELECT pg_terminate_backend(${Number(listenerPid)})`);
        await until(async () => !(await registry.status()).listening, 'the listener to notice its loss');
        await admin.query(`REVOKE SELECT ON ${schema}.tool_specs FROM ${role}; ALTER ROLE ${role} LOGIN`);
        // Read until the new connection's first heartbeat has answered (it checks the rights on
        // the old code too): through the reconnect and the heartbeat's wait after it.
        const heartbeatDone = async (): Promise<boolean> =>
          (
            await admin.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND usename = $1 AND pid <> $2 AND state = 'idle' AND query LIKE 'SELECT w.i, has_schema_privilege%'`,
              [role, listenerPid],
            )
          ).rowCount === 1;
        const answered: string[] = [];
        const before = fromMemory();
        do {
          const tool = await registry.get('t').catch(() => undefined);
          if (tool !== undefined) answered.push(tool.spec.tool_name);
        } while (!(await heartbeatDone()));
        expect({ answered, fromMemory: fromMemory() - before, metrics: registry.storeMetrics() }).toMatchObject({ answered: [], fromMemory: 0 });
        await expectReadDenied(registry.get('t'), schema, 'get', `SELECT on table ${schema}.tool_specs`);
      } finally {
        await registry.close();
      }
    });
  });

  // The embedded server ships no message translations (and this machine has no locale but C),
  // so a proxy between the store and the real server puts into German what a server with
  // lc_messages = 'de_DE' sends: the store named the right by matching the English text, and
  // said "a right the store needs" in any other language.
  it('a role that may not read, on a server that answers in German: the missing right is still named (USAGE, CONNECT, SELECT on which table)', async () => {
    const schema = db.schema();
    await seed(schema);
    const admin = db.pool();
    const proxy = await germanProxy(db.url());
    try {
      await withRole('blind', async (role, direct) => {
        const url = new URL(direct);
        url.host = proxy.host;
        const german = (lacks: string, words: string) => async (promise: Promise<unknown>, operation: string) => {
          const error = await expectCode(promise, 'STORAGE_UNAVAILABLE');
          expect(error.message).toContain(`(keine Berechtigung für ${words}, SQLSTATE 42501)`);
          await expectReadDenied(Promise.reject(error), schema, operation, lacks);
        };
        await german(`USAGE on schema ${schema}`, `Schema ${schema}`)(openPostgresToolRegistry({ connectionString: url.toString(), schema, readonly: true }), 'openPostgresToolRegistry');
        const database = url.pathname.slice(1);
        await admin.query(`REVOKE CONNECT ON DATABASE ${database} FROM PUBLIC`);
        try {
          await german(`CONNECT on database ${database}`, `Datenbank "${database}"`)(openPostgresToolRegistry({ connectionString: url.toString(), schema, cache: false }), 'openPostgresToolRegistry');
        } finally {
          await admin.query(`GRANT CONNECT ON DATABASE ${database} TO PUBLIC`);
        }
        // A login refused for another reason (options a superuser may set) is not CONNECT.
        const options = new URL(url);
        options.searchParams.set('options', '-c session_replication_role=replica');
        await expectReadDenied(openPostgresToolRegistry({ connectionString: options.toString(), schema, cache: false }), schema, 'openPostgresToolRegistry', `a right the login needs (see the server's words)`);
        await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
        await admin.query(`REVOKE SELECT ON ${schema}.tool_specs, ${schema}.tool_calls FROM ${role}`);
        const registry = await openPostgresToolRegistry({ connectionString: url.toString(), schema, cache: false });
        try {
          // Both tables are denied: each read names the one it reads.
          await german(`SELECT on table ${schema}.tool_specs`, 'Tabelle tool_specs')(registry.get('t'), 'get');
          await german(`SELECT on table ${schema}.tool_calls`, 'Tabelle tool_calls')(registry.listCalls(), 'listCalls');
        } finally {
          await registry.close();
        }
      });
    } finally {
      await proxy.close();
    }
  });

  it("a role that may only SELECT follows the change feed: its cache and watch() see the owner's writes", async () => {
    const schema = db.schema();
    await seed(schema);
    await withRole('follower', async (role, url) => {
      await db.pool().query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      const reader = await openPostgresToolRegistry({ connectionString: url, schema });
      const owner = await openPostgresToolRegistry({ connectionString: db.url(), schema });
      const abort = new AbortController();
      try {
        expect(await reader.get('u')).toBeUndefined();
        const events = reader.watch({ signal: abort.signal })[Symbol.asyncIterator]();
        const next = events.next();
        await owner.register(minimalSpec('u'));
        expect((await next).value).toMatchObject({ tool_name: 'u', action: 'added' });
        expect((await reader.get('u'))?.spec.tool_name).toBe('u');
        expect((await reader.status()).listening).toBe(true);
      } finally {
        abort.abort();
        await owner.close();
        await reader.close();
      }
    });
  });

  it("a server whose role may not read a namespace's schema answers it 503 naming the schema and the right, one it may not migrate 409 naming the migrations; never 500", async () => {
    const base = db.schema();
    await seed(base);
    const hidden = `${base}_ns_hidden`;
    await seed(hidden);
    const old = `${base}_ns_old`;
    await seed(old);
    await withRole('server', async (role, url) => {
      // The role reads the base schema (namespace default) only.
      await db.pool().query(`GRANT USAGE ON SCHEMA ${base} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${base} TO ${role}`);
      const server = createToolRegistryServer({ registries: postgresNamespaces({ connectionString: url, schema: base }) });
      try {
        expect((await server.fetch(new Request('http://localhost/v1/tools'))).status).toBe(200);
        const write = await server.fetch(new Request('http://localhost/v1/tools/other', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(minimalSpec('other')) }));
        expect([write.status, ((await write.json()) as { code: string }).code]).toEqual([409, 'READ_ONLY']);
        for (const request of [
          new Request('http://localhost/v1/namespaces/hidden/tools'),
          new Request('http://localhost/v1/namespaces/hidden/tools/t', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(minimalSpec('t')) }),
        ]) {
          const response = await server.fetch(request);
          const body = (await response.json()) as { code: string; detail: string; context: Record<string, unknown> };
          expect([request.method, response.status, body.code]).toEqual([request.method, 503, 'STORAGE_UNAVAILABLE']);
          expect(body.detail).toContain(`may not read the registry schema ${hidden}: it lacks USAGE on schema ${hidden}`);
          expect(body.context).toMatchObject({ driver_code: '42501', schema: hidden });
        }
        // A namespace a new release must migrate first: every route of it says which migrations, as the OpenAPI document lists.
        await db.pool().query(`GRANT USAGE ON SCHEMA ${old} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${old} TO ${role}`);
        await db.pool().query(`DELETE FROM ${old}.schema_migrations WHERE name = $1`, [SHIPPED.at(-1)]);
        const response = await server.fetch(new Request('http://localhost/v1/namespaces/old/tools'));
        const body = (await response.json()) as { code: string; detail: string };
        expect([response.status, body.code]).toEqual([409, 'READ_ONLY']);
        expect(body.detail).toContain(`the registry schema ${old} needs migrations ${SHIPPED.at(-1)}, which this role may not apply`);
        const listed = (server.openapi() as { paths: Record<string, { get: { responses: Record<string, { description: string }> } }> }).paths['/v1/namespaces/{ns}/tools']?.get;
        expect(listed?.responses['409']?.description).toContain('READ_ONLY');
      } finally {
        await server.close();
      }
    });
  });
});

describe('PostgreSQL roles that are no superuser', () => {
  it('a role without EXECUTE on tool_registry_write_if writes with the read cache as without it (the locked way), not READ_ONLY', async () => {
    const schema = db.schema();
    await (await openPostgresToolRegistry({ connectionString: db.url(), schema })).close();
    await withRole('nowriteif', async (role, url) => {
      await db.pool().query(
        `GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}; ` +
          `REVOKE EXECUTE ON FUNCTION ${schema}.tool_registry_write_if(integer, json, json, json, json) FROM PUBLIC`,
      );
      for (const cache of [true, false]) {
        const registry = await openPostgresToolRegistry({ connectionString: url, schema, cache });
        try {
          // With the cache, both go as one statement first (register, setEnabled).
          await registry.register(minimalSpec(`t_${cache}`));
          await registry.setEnabled(`t_${cache}`, false);
        } finally {
          await registry.close();
        }
      }
    });
    const { rows } = await db.pool().query(`SELECT tool_name, enabled FROM ${schema}.tool_registrations ORDER BY 1`);
    expect(rows).toEqual([{ tool_name: 't_false', enabled: false }, { tool_name: 't_true', enabled: false }]);
  });

  it('a role that may not read the change log: search is STORAGE_UNAVAILABLE naming the right once it must read the log, not built anew from the rows at every search', async () => {
    const schema = db.schema();
    const owner = await openPostgresToolRegistry({ connectionString: db.url(), schema, cache: false });
    try {
      await owner.register(minimalSpec('a', { description: 'weather' }));
      await withRole('nolog', async (role, url) => {
        await db.pool().query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}; REVOKE SELECT ON ${schema}.tool_changes FROM ${role}`);
        const reader = await openPostgresToolRegistry({ connectionString: url, schema, cache: false, readonly: true });
        try {
          await reader.search('weather').catch(() => undefined); // builds the index (the log's mark comes with the revision)
          await owner.register(minimalSpec('b', { description: 'weather' }));
          const error = await expectCode(reader.search('weather'), 'STORAGE_UNAVAILABLE');
          expect(error.context).toMatchObject({ driver_code: '42501', schema });
          expect(error.message).toContain(`SELECT on table ${schema}.tool_changes`);
        } finally {
          await reader.close();
        }
      });
    } finally {
      await owner.close();
    }
  });

  // The embedded server ships no message translations (and this machine no locales but C), so
  // the function raises what a server with lc_messages = 'de_DE' sends for a missing EXECUTE
  // right: SQLSTATE 42501 and PostgreSQL's German text. It was READ_ONLY: the English text was matched.
  it('a refused tool_registry_write_if in another language than English is told by its SQLSTATE and name: the locked way writes', async () => {
    const schema = db.schema();
    const registry = await openPostgresToolRegistry({ connectionString: db.url(), schema });
    try {
      await registry.register(minimalSpec('a'));
      await db.pool().query(
        `CREATE OR REPLACE FUNCTION ${schema}.tool_registry_write_if(lock_timeout_ms integer, expected json, specs json, registrations json, policy json) ` +
          `RETURNS TABLE (written boolean, revision bigint, token text) LANGUAGE plpgsql AS $$ BEGIN ` +
          `RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = 'keine Berechtigung für Funktion tool_registry_write_if'; END $$`,
      );
      await registry.register(minimalSpec('b'));
      await registry.setEnabled('b', false);
      expect((await registry.listAll({ includeDisabled: true })).map((tool) => [tool.spec.tool_name, tool.enabled])).toEqual([
        ['a', true],
        ['b', false],
      ]);
    } finally {
      await registry.close();
    }
  });

  it("an owner with CREATE on the database migrates a new schema, its writes and hand edits are logged once each; another role may not apply a migration of the owner's functions: READ_ONLY", async () => {
    const schema = db.schema();
    await withRole('owner', async (role, url) => {
      const database = new URL(db.url()).pathname.slice(1);
      await db.pool().query(`GRANT CREATE ON DATABASE ${database} TO ${role}`);
      // Migration 0008 failed for such a role on PostgreSQL 15 and later: a function's SET clause
      // of a custom parameter ("permission denied to set parameter tool_registry.store_logs").
      const cached = await openPostgresToolRegistry({ connectionString: url, schema });
      const uncached = await openPostgresToolRegistry({ connectionString: url, schema, cache: false });
      try {
        await cached.register(minimalSpec('a')); // one statement, tool_registry_write_if()
        await cached.setEnabled('a', false);
        await uncached.register(minimalSpec('b')); // four round trips, tool_registry_write()
        const hand = db.pool();
        await hand.query(`UPDATE ${schema}.tool_registrations SET enabled = false WHERE tool_name = 'b'`); // the triggers log it
        const { events } = await uncached.changes();
        expect(events.map((event) => [event.tool_name, event.action])).toEqual([['a', 'added'], ['a', 'disabled'], ['b', 'added'], ['b', 'disabled']]);
        const owners = await hand.query(`SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relnamespace = $1::regnamespace`, [schema]);
        expect(owners.rows).toEqual([{ owner: role }]);
      } finally {
        await uncached.close();
        await cached.close();
      }
      // Another role with CREATE on the schema, not the owner, meets a migration that replaces the
      // owner's function: READ_ONLY naming it (it was a MigrationFailedError: a server's 500).
      await withRole('service', async (service, serviceUrl) => {
        const hand = db.pool();
        await hand.query(`GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${service}; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${service}`);
        // 0008 replaces functions (CREATE OR REPLACE); 0009, the last, changes nothing on a schema
        // whose functions have its search_path already.
        const replacing = '0008_write_if_inline';
        expect(SHIPPED).toContain(replacing);
        await hand.query(`DELETE FROM ${schema}.schema_migrations WHERE name = $1`, [replacing]);
        const error = await expectCode(openPostgresToolRegistry({ connectionString: serviceUrl, schema }), 'READ_ONLY');
        expect(error.message).toContain('must be owner of function');
        expect(error.context.detail).toContain(`needs migrations ${replacing}, which this role may not apply: run "tool-registry migrate" as the schema's owner`);
        expect((error.cause as { code?: unknown }).code).toBe('42501');
      });
    });
  });
});
