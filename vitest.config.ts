import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Files that need a module graph of their own: they replace a module (`vi.mock`), a global
 * (`vi.stubGlobal`) or the timers (`vi.useFakeTimers` in the watch harness) for the whole file.
 */
const ISOLATED = [
  'test/sqlite/watch-poll.test.ts',
  'test/sqlite/watch-poll-fallback.test.ts',
  'test/sqlite/watch-poll-silent.test.ts',
  'test/exports/oracle-gemini.test.ts',
];

/**
 * Node parses the certificate bundle that NODE_EXTRA_CA_CERTS names at every start: on these
 * machines, where it is set, `node -e 0` costs 0.11 s of CPU with it and 0.07 s without,
 * and the suite starts hundreds of node processes (the command, workers, doc examples). No
 * test makes a TLS connection, so the run's processes start without it; the one step that
 * may reach the npm registry, the packed-package test's `npm install`, gets it back.
 */
if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
  process.env.TOOL_REGISTRY_TEST_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  delete process.env.NODE_EXTRA_CA_CERTS;
}

/**
 * Files started before the rest when vitest has no durations of an earlier run (a fresh clone),
 * where it starts the largest files first: the PostgreSQL conformance files are three lines
 * each, so they started last, and their server round trips then ran nearly alone. A fresh-clone
 * run of 380 s started them 297 and 300 s in; for its last 45 s the no-cache file (83 s) was the
 * only one running. With durations cached vitest starts the longest first, as here.
 */
const START_FIRST = ['test/conformance/conformance-postgres-nocache.test.ts', 'test/conformance/conformance-postgres.test.ts'];

class StartFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = START_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return index === -1 ? START_FIRST.length : index;
    };
    // A stable sort: the rest keep vitest's order.
    return sorted.map((file, index) => ({ file, index })).sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index).map(({ file }) => file);
  }
}

export default defineConfig({
  test: {
    // Files in parallel. Vitest's default is one worker per core less one: a single worker on
    // 2 cores, so every file waited for the one before it while most of them wait on child
    // processes, fsync or a server. With five the 2 cores were saturated (99 % busy in 2-s
    // samples of a whole run), and the fifth added contention, not throughput: `npm test` 319,
    // 306, 300 and 309 s with four against 322, 356 and 328 s with five (three interleaved
    // pairs, four winning each; docs/testing.md, thirteenth round).
    maxWorkers: 4,
    // it.concurrent tests of one file (the doc examples): a few processes at once, not one per example.
    maxConcurrency: 3,
    sequence: { sequencer: StartFirstSequencer },
    // A test's timeout only catches a hang, so it is generous: on a loaded CI machine a test
    // runs 2-5 times slower than on a quiet one (a 6.7 s test took over 30 s), and a tight
    // bound made slowness a failure. A test that promises a bound asserts it itself.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // STORES=memory,sqlite-memory narrows the conformance run for a quick local loop.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-results.json' },
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: ISOLATED,
          // One module graph per worker, not per file: importing the library, zod, Kysely and
          // ajv again for each of ~110 files cost more than the in-process tests themselves
          // (docs/testing.md). A file must leave no global change behind (the rules there).
          isolate: false,
          // Builds dist/ when src/ is newer, so tests that spawn the built package never run stale code;
          // and one PostgreSQL server per run (embedded, or TOOL_REGISTRY_TEST_PG_URL): files inject its URL.
          globalSetup: ['test/global-setup.ts', 'test/support/postgres-global-setup.ts'],
        },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
