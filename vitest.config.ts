import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ when src/ is newer, so tests that spawn the built package never run stale code;
    // and one PostgreSQL server per run (embedded, or TOOL_REGISTRY_TEST_PG_URL): files inject its URL.
    globalSetup: ['test/global-setup.ts', 'test/support/postgres-global-setup.ts'],
    // Files in parallel. Vitest's default is one worker per core less one: a single worker on
    // 2 cores, so every file waited for the one before it while most of them wait on child
    // processes, fsync or a server. Three share 2 cores well (docs/testing.md).
    maxWorkers: 3,
    // it.concurrent tests of one file (the doc examples): a few processes at once, not one per example.
    maxConcurrency: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // STORES=memory,sqlite-memory narrows the conformance run for a quick local loop.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-results.json' },
  },
});
