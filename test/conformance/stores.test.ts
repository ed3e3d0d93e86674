// The harness record itself: STORES narrowing and the file-backed harness helper.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InMemoryToolRegistry } from '../../src/index.js';
import type { ToolRegistry } from '../../src/index.js';
import { fileBackedHarness, selectedStores, storeHarnesses } from './stores.js';

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
