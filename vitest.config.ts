import { existsSync } from 'node:fs';
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
 * The longest files, longest first, started before the rest. On a fresh clone vitest has no
 * durations of an earlier run and starts the largest files first, so a short file that runs a
 * long shared suite started last: the PostgreSQL conformance files (three lines each) started
 * 297 and 300 s into a run of 380 s, and after that fix the in-process conformance file (835
 * bytes, 26-38 s) and the demo (2 KB, 32-37 s) still started 276 and 268 s into a fresh run of
 * 308 s, so its last 25 s ran them nearly alone. Started first, a long file overlaps the
 * others and the short ones fill the end (longest-first scheduling). The order is that of
 * measured runs (`.tmp/vitest-results.json`, docs/testing.md); a file missing from it only
 * starts in vitest's order; a path that no longer exists stops the run (below).
 */
const START_FIRST = [
  'test/browser/console.test.ts',
  'test/sqlite/processes.test.ts',
  'test/docs/doc-examples.test.ts',
  'test/conformance/conformance-postgres-nocache.test.ts',
  'test/conformance/conformance.test.ts',
  'test/conformance/conformance-postgres.test.ts',
  'test/cli/demo.test.ts',
  'test/cli/import-export.test.ts',
  'test/postgres/processes.test.ts',
  'test/mcp/http-load.test.ts',
  'test/package/packed-package.test.ts',
  'test/postgres/bounded-waits.test.ts',
  'test/postgres/dropped-connection.test.ts',
  'test/cli/postgres.test.ts',
  'test/mcp/stdio-edges.test.ts',
  'test/cli/changes.test.ts',
  'test/conformance/model.test.ts',
  'test/postgres/change-feed.test.ts',
];
// A renamed or removed file would silently leave the order: say so instead.
for (const path of START_FIRST) if (!existsSync(new URL(path, import.meta.url))) throw new Error(`vitest.config.ts: START_FIRST names ${path}, which does not exist`);

class StartFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      // Isolated files last: vitest stops a shared worker that finishes a file while an
      // isolated one heads the queue, and a new worker imports the whole module graph again
      // (in the middle of a run, three of the four were replaced that way).
      if (ISOLATED.some((path) => file.moduleId.endsWith(path))) return START_FIRST.length + 1;
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
