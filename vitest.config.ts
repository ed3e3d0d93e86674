import { defineConfig } from 'vitest/config';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * The longest files, longest first (a quiet run's times in docs/testing.md). Without a cache
 * of earlier durations (a fresh clone, CI) vitest starts the largest files first, and the
 * PostgreSQL conformance files, three lines each, came last: 90 s with one worker busy at the
 * end of the run. Started first, they overlap the rest.
 */
const LONGEST_FIRST = [
  'test/docs/doc-examples.test.ts',
  'test/conformance/conformance-postgres-nocache.test.ts',
  'test/conformance/conformance-postgres.test.ts',
  'test/conformance/conformance.test.ts',
  'test/postgres/change-feed.test.ts',
  'test/cli/demo.test.ts',
  'test/postgres/processes.test.ts',
  'test/sqlite/processes.test.ts',
  'test/browser/console.test.ts',
  'test/conformance/model.test.ts',
];

class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const index = LONGEST_FIRST.findIndex((name) => file.moduleId.endsWith(name));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    // A stable sort: the listed files first, in their order; the rest as vitest orders them.
    return sorted.map((file, order) => ({ file, order })).sort((a, b) => rank(a.file) - rank(b.file) || a.order - b.order).map(({ file }) => file);
  }
}

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

export default defineConfig({
  test: {
    // Files in parallel. Vitest's default is one worker per core less one: a single worker on
    // 2 cores, so every file waited for the one before it while most of them wait on child
    // processes, fsync or a server. Three share 2 cores well (docs/testing.md).
    maxWorkers: 3,
    // it.concurrent tests of one file (the doc examples): a few processes at once, not one per example.
    maxConcurrency: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // STORES=memory,sqlite-memory narrows the conformance run for a quick local loop.
    sequence: { sequencer: LongestFirstSequencer },
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
