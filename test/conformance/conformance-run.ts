// Runs the one conformance suite against the given stores (those of them that STORES selects).
// The stores are split over three files (conformance*.test.ts) so that vitest runs them in
// parallel: the PostgreSQL stores, a server round trip per statement, take most of the time.
import { afterAll, afterEach, describe, it } from 'vitest';
import { defineChangesSuite } from './changes-suite.js';
import { defineConformanceSuite } from './conformance-suite.js';
import { defineGatewaySuite } from './gateway-suite.js';
import { defineSearchSuite } from './search-suite.js';
import { selectedStores } from './stores.js';
import type { StoreName } from './stores.js';
import { defineVersionsSuite } from './versions-suite.js';

export function runConformance(stores: readonly StoreName[]): void {
  const selected = selectedStores().filter(([name]) => stores.includes(name));
  if (selected.length === 0) {
    // STORES left this file's stores out: a skipped placeholder (a file without tests fails).
    describe.skip(`conformance: ${stores.join(', ')} (not selected by STORES)`, () => {
      it('is not run', () => {});
    });
    return;
  }
  describe.each(selected)('conformance: %s store', (_name, harness) => {
    afterEach(async () => {
      await harness.recycle?.();
    });
    afterAll(async () => {
      await harness.cleanup?.();
    });
    defineConformanceSuite(harness);
    defineChangesSuite(harness);
    defineSearchSuite(harness);
    defineVersionsSuite(harness);
    defineGatewaySuite(harness);
  });
}
