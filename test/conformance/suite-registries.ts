// What every conformance suite file needs per test: a clock starting at T0, registries
// opened on the harness with that clock, and all of them closed after the test.
import { afterEach, beforeEach } from 'vitest';
import type { ToolRegistry } from '../../src/index.js';
import { manualClock } from '../support/registry-helpers.js';
import type { ManualClock } from '../support/registry-helpers.js';
import type { HarnessOptions, StoreHarness } from './stores.js';

/** The clock's time at the start of every test. */
export const T0 = '2025-01-01T00:00:00.000Z';

export interface SuiteRegistries {
  /** The test's clock (set back to T0 before each test). */
  readonly clock: ManualClock;
  /** A fresh registry whose `created_at` comes from the test's clock (with `options` besides). */
  open(options?: Omit<HarnessOptions, 'clock'>): Promise<ToolRegistry>;
  /** Closes and reopens the same storage (a no-op for memory). */
  restart(registry: ToolRegistry): Promise<ToolRegistry>;
  /** Closes `registry` after the test too (one opened some other way). */
  track(registry: ToolRegistry): void;
}

export function useSuiteRegistries(harness: StoreHarness): SuiteRegistries {
  const clock = manualClock(T0);
  let opened: ToolRegistry[] = [];

  beforeEach(() => {
    clock.set(T0);
  });

  afterEach(async () => {
    const registries = opened;
    opened = [];
    for (const registry of registries) await registry.close();
  });

  return {
    clock,
    async open(options = {}) {
      const registry = await harness.open({ ...options, clock: clock.now });
      opened.push(registry);
      return registry;
    },
    async restart(registry) {
      const next = await harness.restart(registry);
      if (next !== registry) opened.push(next);
      return next;
    },
    track(registry) {
      opened.push(registry);
    },
  };
}
