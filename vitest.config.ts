import { defineConfig } from 'vitest/config';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

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
 * The longest files of a run, longest first (seconds of a fresh-clone run on 2 cores, 2026-11-29).
 * Vitest starts the files it has timed before longest first, but a fresh clone has no timings,
 * and then it starts the largest files first: the three conformance files and the demo are
 * small files that run 22-44 s, so they started last and ran on after the rest had ended (a
 * 4-worker schedule of that run's file times ends 5 s later in that order than longest first).
 */
const LONGEST_FIRST = [
  'test/browser/console.test.ts', // 67
  'test/docs/doc-examples.test.ts', // 47
  'test/conformance/conformance.test.ts', // 44
  'test/sqlite/processes.test.ts', // 44
  'test/cli/demo.test.ts', // 39
  'test/postgres/write-if.test.ts', // 29
  'test/mcp/http-load.test.ts', // 29
  'test/conformance/conformance-postgres-nocache.test.ts', // 27
  'test/postgres/processes.test.ts', // 26
  'test/conformance/conformance-postgres.test.ts', // 22
  'test/cli/import-export.test.ts', // 22
];

/** Vitest's order (projects in turn, timed files longest first), with LONGEST_FIRST ahead of the rest of their project. */
class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const order = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    const project = (file: TestSpecification): number => order.findIndex((other) => other.project === file.project);
    return order
      .map((file, position) => ({ file, position }))
      .sort((a, b) => project(a.file) - project(b.file) || rank(a.file) - rank(b.file) || a.position - b.position)
      .map(({ file }) => file);
  }
}

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
    sequence: { sequencer: LongestFirstSequencer },
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
