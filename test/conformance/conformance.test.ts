// Runs the one conformance suite against every store in the record (or those in STORES).
import { afterAll, describe } from 'vitest';
import { defineChangesSuite } from './changes-suite.js';
import { defineConformanceSuite } from './conformance-suite.js';
import { defineSearchSuite } from './search-suite.js';
import { selectedStores } from './stores.js';
import { defineVersionsSuite } from './versions-suite.js';

describe.each(selectedStores())('conformance: %s store', (_name, harness) => {
  afterAll(async () => {
    await harness.cleanup?.();
  });
  defineConformanceSuite(harness);
  defineChangesSuite(harness);
  defineSearchSuite(harness);
  defineVersionsSuite(harness);
});
