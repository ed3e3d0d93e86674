// The server's PostgreSQL namespaces are schemas `{schema}_ns_{ns}`, and PostgreSQL names have
// at most 63 characters: under a long base schema (`serve --db postgres://…?schema=…`) a name
// the namespace rule allows can make a schema name PostgreSQL cannot hold.
import { describe, expect, it } from 'vitest';
import { openPostgresToolRegistry } from '../../src/index.js';
import { nodePostgres } from '../../src/node-postgres.js';
import { createToolRegistryServer, postgresNamespaces } from '../../src/server/index.js';
import { useFileDatabase } from './helpers.js';

const db = useFileDatabase();

describe("the server's PostgreSQL namespaces", () => {
  it('a namespace whose schema would pass 63 characters is a 400 naming it and the room left; a shorter one is created', async () => {
    // 40 characters: 19 left for a namespace after `_ns_`.
    const base = `${db.schema()}_`.padEnd(40, 'x');
    const server = createToolRegistryServer({ registries: postgresNamespaces({ connectionString: db.url(), schema: base }) });
    try {
      const long = 'a'.repeat(20);
      const refused = await server.fetch(new Request(`http://localhost/v1/namespaces/${long}`, { method: 'PUT' }));
      expect(refused.status).toBe(400);
      const body = (await refused.json()) as { code: string; detail: string; context: unknown };
      expect(body.code).toBe('BAD_REQUEST');
      expect(body.context).toEqual({ namespace: long });
      expect(body.detail).toContain(`"${base}_ns_${long}", 64 characters`);
      expect(body.detail).toContain('a namespace has at most 19 characters');
      const fits = 'a'.repeat(19);
      expect((await server.fetch(new Request(`http://localhost/v1/namespaces/${fits}`, { method: 'PUT' }))).status).toBe(201);
      expect((await server.fetch(new Request(`http://localhost/v1/namespaces/${fits}/tools`))).status).toBe(200);
      // The OpenAPI document says what creating one may answer on PostgreSQL (READ_ONLY, STORAGE_UNAVAILABLE).
      const create = (server.openapi() as { paths: Record<string, { put: { responses: Record<string, { description: string }> } }> }).paths['/v1/namespaces/{ns}']?.put;
      expect(create?.responses['409']?.description).toContain('READ_ONLY');
      expect(create?.responses['503']?.description).toContain('STORAGE_UNAVAILABLE');
    } finally {
      await server.close();
    }
  });

  it('of creations of one namespace at once through several servers (a fleet), exactly one is 201, the others 200', async () => {
    const base = db.schema();
    // Four servers, each with its own pool, as four processes of a fleet.
    const servers = [1, 2, 3, 4].map(() => createToolRegistryServer({ registries: postgresNamespaces({ connectionString: db.url(), schema: base }) }));
    try {
      for (let round = 0; round < 6; round++) {
        const responses = await Promise.all(servers.map((server) => server.fetch(new Request(`http://localhost/v1/namespaces/team_${round}`, { method: 'PUT' }))));
        const statuses = responses.map((response) => response.status).sort();
        expect(statuses, `round ${round}`).toEqual([200, 200, 200, 201]);
        const bodies = await Promise.all(responses.map((response) => response.json() as Promise<{ created: boolean }>));
        expect(bodies.filter((body) => body.created)).toHaveLength(1);
        // Every server serves it, migrated.
        for (const server of servers) expect((await server.fetch(new Request(`http://localhost/v1/namespaces/team_${round}/tools`))).status).toBe(200);
      }
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  it("eleven registries on one pool (a server's namespaces) print no MaxListenersExceededWarning; closed, they leave the bound as it was", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    const pool = new (nodePostgres().Pool)({ connectionString: db.url(), max: 2 });
    // pool.end() resolves before its connections have closed: the file's DROP DATABASE … WITH (FORCE)
    // right after could end one, and a pool without an error handler throws (CI, stop 53).
    pool.on('error', () => {});
    const schema = db.schema();
    try {
      const registries = [];
      for (let i = 0; i < 11; i++) registries.push(await openPostgresToolRegistry({ pool, schema }));
      // A warning is emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(registries.map((registry) => registry.close()));
      expect(pool.getMaxListeners()).toBe(10);
    } finally {
      process.off('warning', onWarning);
      await pool.end();
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('namespaces closed and opened at once on one pool: one query at a time on the shared LISTEN connection (pg warned of overlapping ones)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const pool = new (nodePostgres().Pool)({ connectionString: db.url(), max: 3 });
    pool.on('error', () => {}); // as above
    const schemas = [db.schema(), db.schema(), db.schema(), db.schema()];
    const open = (schema: string) => openPostgresToolRegistry({ pool, schema });
    try {
      const [a, b, c, d] = await Promise.all(schemas.map(open));
      // Two close (UNLISTEN) while two open (LISTEN), as a server's least recently used namespaces do.
      const again = await Promise.all([a?.close(), b?.close(), open(schemas[0] as string), open(schemas[1] as string)]);
      await Promise.all([c, d, again[2], again[3]].map((registry) => registry?.close()));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
      await pool.end();
    }
    expect(warnings.filter((warning) => warning.includes('already executing a query'))).toEqual([]);
  });
});

