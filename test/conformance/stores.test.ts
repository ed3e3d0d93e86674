// The harness record itself: STORES narrowing, the file-backed harness helper, the SQLite file harness's template copies, and the PostgreSQL harness's recycle.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry } from '../../src/index.js';
import type { PostgresStatus, SqliteToolRegistry, ToolRegistry } from '../../src/index.js';
import { LATEST } from '../sqlite/helpers.js';
import { fileBackedHarness, postgresHarness, selectedStores, sqliteFileHarness, storeHarnesses } from './stores.js';

describe('selectedStores', () => {
  it('runs every store when STORES is unset or empty', () => {
    const all = Object.keys(storeHarnesses);
    expect(selectedStores(undefined).map(([name]) => name)).toEqual(all);
    expect(selectedStores(' ').map(([name]) => name)).toEqual(all);
  });

  it('narrows to the named stores', () => {
    expect(selectedStores(' memory , ').map(([name]) => name)).toEqual(['memory']);
  });

  it('refuses an unknown name instead of running nothing', () => {
    expect(() => selectedStores('memory,nosuch')).toThrow(/nosuch/);
  });
});

describe('fileBackedHarness', () => {
  it('gives each open() its own file, reopens the same file with the same options, and cleans up', async () => {
    const calls: { filename: string; clock: (() => Date) | undefined }[] = [];
    const closed: ToolRegistry[] = [];
    const harness = fileBackedHarness(async (filename, options) => {
      calls.push({ filename, clock: options.clock });
      const registry = new InMemoryToolRegistry(options);
      const close = registry.close.bind(registry);
      registry.close = async () => {
        closed.push(registry);
        await close();
      };
      return registry;
    });
    const clock = () => new Date(0);
    const one = await harness.open({ clock });
    const two = await harness.open();
    expect(calls[0]?.filename).not.toBe(calls[1]?.filename);
    expect(dirname(calls[0]?.filename ?? '')).toBe(dirname(calls[1]?.filename ?? ''));
    expect(existsSync(dirname(calls[0]?.filename ?? ''))).toBe(true);
    const reopened = await harness.restart(one);
    expect(closed).toEqual([one]);
    expect(reopened).not.toBe(one);
    expect(calls[2]).toEqual({ filename: calls[0]?.filename, clock });
    await expect(harness.restart(new InMemoryToolRegistry())).rejects.toThrow();
    // A peer opens the same file again, with the same options, while the first stays open.
    const peer = await harness.peer(reopened);
    expect(peer).not.toBe(reopened);
    expect(calls[3]).toEqual({ filename: calls[0]?.filename, clock });
    await peer.close();
    await two.close();
    await reopened.close();
    await harness.cleanup?.();
    expect(existsSync(dirname(calls[0]?.filename ?? ''))).toBe(false);
  });
});

describe('postgresHarness', () => {
  it('recycle reuses a case’s schema as fresh, and after cleanup forgets what was opened on the dropped database', async () => {
    const harness = postgresHarness();
    try {
      const first = await harness.open();
      await first.register({ tool_name: 'left_behind', input_schema: {}, output_schema: {} });
      // The harness hands out PostgreSQL registries, whose status() names the schema.
      const schemaOf = async (registry: ToolRegistry) => ((await (registry as unknown as { status(): Promise<PostgresStatus> }).status()).schema);
      const firstSchema = await schemaOf(first);
      await harness.recycle!();
      const second = await harness.open();
      expect(await schemaOf(second)).toBe(firstSchema);
      expect(await second.listAll({ includeDisabled: true })).toEqual([]);
      expect((await second.changes()).revision).toBe(0);
      // The model test opens without recycling, then cleans up (the database is dropped); the
      // harness is shared by the files of a worker, so the next file's recycle must not reach
      // for that schema on the new database.
      await harness.cleanup!();
      const third = await harness.open();
      await harness.recycle!();
      expect(await third.has('anything').catch((error: unknown) => (error as { code?: string }).code)).toBe('REGISTRY_CLOSED');
    } finally {
      await harness.cleanup!();
    }
  });
});

describe('sqliteFileHarness', () => {
  it('opens each registry on a copy of a migrated template that is as a fresh file: empty, migrated, its own change-log generation', async () => {
    const harness = sqliteFileHarness();
    try {
      const one = (await harness.open()) as SqliteToolRegistry;
      await one.register({ tool_name: 'in_one', input_schema: {}, output_schema: {} });
      const two = (await harness.open()) as SqliteToolRegistry;
      const files = [(await one.status()).filename, (await two.status()).filename];
      expect(files[0]).not.toBe(files[1]);
      expect(await two.listAll({ includeDisabled: true })).toEqual([]);
      expect((await two.changes()).revision).toBe(0);
      expect((await two.status()).schemaVersion).toBe(LATEST);
      const generations = files.map((file) => {
        const db = new Database(file, { readonly: true });
        try {
          return db.prepare('SELECT generation FROM tool_changes_generation').all();
        } finally {
          db.close();
        }
      });
      expect(generations[0]).toHaveLength(1);
      expect(generations[1]).toHaveLength(1);
      expect(generations[0]).not.toEqual(generations[1]);
      await one.close();
      await two.close();
    } finally {
      await harness.cleanup?.();
    }
  });
});
