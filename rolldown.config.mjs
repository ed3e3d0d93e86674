// The second half of `npm run build`: tsc compiles src/ to dist/, then this bundles the three
// entry points (the library, tool-registry/mcp and the command) over tsc's output, in place.
// Why: a process that imported the library loaded about 470 files (Kysely alone 263), 0.8 s
// of CPU before it did anything; bundled, about 0.45 s (README.md, "Development"). The
// bundles share their chunks (dist/chunks/), so the command, the library and the MCP entry
// load one copy of every class between them.
import { rmSync } from 'node:fs';
import { defineConfig } from 'rolldown';

// Chunks are named by their content: those of an earlier build would pile up.
rmSync('dist/chunks', { recursive: true, force: true });

// Left to the user's install: native code (better-sqlite3), objects a user hands us or gets
// from us (a pg.Pool, zod schemas, the MCP SDK's servers and transports), and what builds on
// them (zod-openapi). Everything else is ours to inline.
const EXTERNAL = ['better-sqlite3', 'pg', 'zod', 'zod-openapi', '@modelcontextprotocol/sdk'];

export default defineConfig({
  input: {
    index: 'dist/index.js',
    'mcp/index': 'dist/mcp/index.js',
    'cli/main': 'dist/cli/main.js',
  },
  platform: 'node',
  external: (id) => id.startsWith('node:') || EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`)),
  output: {
    dir: 'dist',
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    // Documentation comments are for editors, which read the .d.ts files; licences stay.
    comments: { jsdoc: false, legal: true, annotation: true },
  },
});
