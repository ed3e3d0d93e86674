import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One PostgreSQL server per run (embedded, or TOOL_REGISTRY_TEST_PG_URL); files inject its URL.
    globalSetup: ['test/support/postgres-global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // STORES=memory,sqlite-memory narrows the conformance run for a quick local loop.
    reporters: ['default', 'json'],
    outputFile: { json: '.tmp/vitest-results.json' },
  },
});
