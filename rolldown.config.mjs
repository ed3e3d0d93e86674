// The second half of `npm run build`: tsc compiles src/ to dist/, then this bundles the four
// entry points (the library, tool-registry/mcp, tool-registry/server and the command) over
// tsc's output, in place.
// Why: a process that imported the library loaded about 470 files (Kysely alone 263), 0.8 s
// of CPU before it did anything; bundled, about 0.45 s (README.md, "Development"). The
// bundles share their chunks (dist/chunks/), so the command, the library, the MCP and the
// server entries load one copy of every class between them.
import { rmSync } from 'node:fs';
import { defineConfig } from 'rolldown';
import { writeMetaSchemaValidator } from './scripts/json-schema-2020-12.mjs';

// Chunks are named by their content: those of an earlier build would pile up.
rmSync('dist/chunks', { recursive: true, force: true });

// Not a bundle: the draft 2020-12 meta-schema's validator, required by Anthropic's lint on first use.
writeMetaSchemaValidator();

// Left to the user's install: native code (better-sqlite3), objects a user hands us or gets
// from us (a pg.Pool, zod schemas, the MCP SDK's servers and transports), and what builds on
// them (zod-openapi). Everything else is ours to inline.
const EXTERNAL = ['better-sqlite3', 'pg', 'zod', 'zod-openapi', '@modelcontextprotocol/sdk'];

// The entries only re-export: marked free of side effects, a bundle that imports a few names
// from one (the command imports the library through its index, as a user would) gets the
// modules behind those names, not everything the entry lists. Without it the command's `list`
// loaded the whole library (950 kB) and took 0.49 s of CPU instead of 0.44 s.
const BARRELS = ['dist/index.js', 'dist/mcp/index.js', 'dist/server/index.js', 'dist/exports/index.js'];

export default defineConfig({
  input: {
    index: 'dist/index.js',
    'mcp/index': 'dist/mcp/index.js',
    'server/index': 'dist/server/index.js',
    'cli/main': 'dist/cli/main.js',
  },
  platform: 'node',
  treeshake: { moduleSideEffects: (id, external) => external || !BARRELS.some((barrel) => id.endsWith(barrel)) },
  external: (id) => id.startsWith('node:') || EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`)),
  output: {
    dir: 'dist',
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    codeSplitting: {
      groups: [
        // The leaves any layer may ask (packaging, the driver's loader, the Sec-Fetch-Site, cors and lease rules): in
        // one chunk the library loads, so the MCP entry's share of fetch-site is no server code.
        { name: 'package-files', test: /[\\/]dist[\\/](package-files|node-postgres|fetch-site|cors-origin|mcp-description|lease-bound)\.js$/, priority: 7 },
        // The connection-error predicates are pure (no driver): in core, so the command tells a lost
        // connection without loading the PostgreSQL store, which it loads for a PostgreSQL --db only.
        { name: 'core', test: /[\\/]dist[\\/]core[\\/]|[\\/]dist[\\/]stores[\\/]postgres[\\/]connections\.js$|[\\/]node_modules[\\/](kysely|semver|stemmer)[\\/]/, priority: 6 },
        { name: 'sqlite', test: /[\\/]dist[\\/]stores[\\/](sqlite|memory)[\\/]/, priority: 5 },
        { name: 'postgres', test: /[\\/]dist[\\/]stores[\\/]postgres[\\/]/, priority: 4 },
        { name: 'runtime', test: /[\\/]dist[\\/]runtime[\\/]|[\\/]node_modules[\\/](ajv|ajv-formats|fast-uri|fast-deep-equal|json-schema-traverse|require-from-string)[\\/]/, priority: 3 },
        { name: 'exports', test: /[\\/]dist[\\/]exports[\\/]/, priority: 2 },
      ],
    },
    // Documentation comments are for editors, which read the .d.ts files; licences stay.
    comments: { jsdoc: false, legal: true, annotation: true },
  },
});
