// Search sees other processes' writes (issue 26): one child process registers, replaces and
// removes tools in a SQLite file and a PostgreSQL schema; this process's registries (cache on
// and off, each store) had already built their search index, and must find the child's tools
// as soon as get() sees them, with no rebuild asked for.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresToolRegistry, openSqliteToolRegistry } from '../../src/index.js';
import type { ToolRegistry } from '../../src/index.js';
import { createTestDatabase, uniqueName } from '../support/postgres.js';
import type { TestDatabase } from '../support/postgres.js';
import { CATALOGUE } from '../conformance/search-suite.js';

const DIST = new URL('../../dist/index.js', import.meta.url).href;

/** Runs one child that writes to both stores, and resolves when it exited cleanly. */
function runChild(file: string, connectionString: string, schema: string): Promise<void> {
  const script = `
    import { openSqliteToolRegistry, openPostgresToolRegistry } from ${JSON.stringify(DIST)};
    const tool = (name, description, version) => ({ tool_name: name, version, description, input_schema: { type: 'object' }, output_schema: {} });
    for (const registry of [
      await openSqliteToolRegistry({ filename: ${JSON.stringify(file)} }),
      await openPostgresToolRegistry({ connectionString: ${JSON.stringify(connectionString)}, schema: ${JSON.stringify(schema)} }),
    ]) {
      await registry.register(tool('star_gazer', 'Point the telescope at a star.', '1'));
      await registry.register(tool('send_email', 'Dispatch a carrier pigeon.', '2'));
      await registry.remove('book_flight');
      await registry.close();
    }
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`child exited with ${code}: ${stderr}`))));
  });
}

async function names(registry: ToolRegistry, query: string): Promise<string[]> {
  return (await registry.search(query)).results.map((result) => result.registration.spec.tool_name);
}

describe('search across processes', () => {
  let folder: string;
  let database: TestDatabase;
  const registries: [string, ToolRegistry][] = [];

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'tool-registry-search-'));
    database = await createTestDatabase();
  });

  afterAll(async () => {
    for (const [, registry] of registries) await registry.close();
    await database?.drop();
    await rm(folder, { recursive: true, force: true });
  });

  it('finds a tool another process registered once get() sees it, and forgets what it replaced or removed', async () => {
    const file = join(folder, 'shared.db');
    const schema = uniqueName('search');
    const sqlite = await openSqliteToolRegistry({ filename: file });
    await sqlite.registerMany(CATALOGUE);
    const postgres = await openPostgresToolRegistry({ connectionString: database.url, schema });
    await postgres.registerMany(CATALOGUE);
    registries.push(
      ['sqlite', sqlite],
      ['sqlite, cache off', await openSqliteToolRegistry({ filename: file, cache: false })],
      ['postgres', postgres],
      ['postgres, cache off', await openPostgresToolRegistry({ connectionString: database.url, schema, cache: false })],
    );
    // Every index is built before the child writes.
    for (const [label, registry] of registries) {
      expect(await names(registry, 'telescope'), label).toEqual([]);
      expect(await names(registry, 'flight'), label).toEqual(['book_flight']);
      expect(await names(registry, 'email'), label).toContain('send_email');
    }
    await runChild(file, database.url, schema);
    for (const [label, registry] of registries) {
      // Committed before the child exited; a cache kept coherent by notification may lag a little.
      const deadline = Date.now() + 10_000;
      while ((await registry.get('star_gazer')) === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      while ((await registry.has('book_flight')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      while ((await registry.get('send_email'))?.spec.version !== '2' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await names(registry, 'telescope'), label).toEqual(['star_gazer']);
      expect(await names(registry, 'flight'), label).toEqual([]);
      expect(await names(registry, 'pigeon'), label).toEqual(['send_email']);
      expect((await names(registry, 'email')).sort(), label).toEqual(['search_emails', 'send_email']);
    }
  });
});
