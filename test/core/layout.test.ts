// The layout's arrows (README.md, "Development"): the core imports nothing of ours, each store
// imports the core only (never another store), runtime and exports stand on the core, the index
// (src/index.ts) stands on those, and the server, the MCP layer and the command use the library
// only through the package's entries ('tool-registry', 'tool-registry/server',
// 'tool-registry/mcp'), as a user's service would. Nothing imports the command, and no arrow
// closes a circle. Read from the import statements of src/.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : [],
  );
}

/** Each relative import of a file: the imported module's folder under src/ and whether only types are imported. */
function relativeImports(file: string, text: string): { target: string; typeOnly: boolean }[] {
  const found: { target: string; typeOnly: boolean }[] = [];
  const statement = /^\s*(import|export)\s+(type\s+)?[^'";]*?from\s+'(\.[^']+)'/gm;
  for (const match of text.matchAll(statement)) {
    const target = relative(SRC, resolve(dirname(file), match[3] as string));
    found.push({ target, typeOnly: match[2] !== undefined });
  }
  // Side-effect and dynamic imports count too.
  for (const match of text.matchAll(/(?:^\s*import\s+|import\()\s*'(\.[^']+)'/gm)) {
    found.push({ target: relative(SRC, resolve(dirname(file), match[1] as string)), typeOnly: false });
  }
  return found;
}

/** The layer of a path under src/: core, cli, runtime, exports, stores/<name>, index, package-files, node-postgres, since-instant, fetch-site, cors-origin, mcp-description or lease-bound. */
function layerOf(path: string): string {
  const [top, second] = path.split('/');
  if (top === 'stores') return `stores/${second}`;
  return /^(index|package-files|node-postgres|since-instant|fetch-site|cors-origin|mcp-description|lease-bound)\.[jt]s$/.test(top as string) ? (top as string).replace(/\.[jt]s$/, '') : (top as string);
}

// Any layer may read the package's own files (package.json, migrations/, console/) through
// src/package-files.ts, and load node-postgres on first use through src/node-postgres.ts: both
// import nothing of ours, and are packaging, not use of the library. src/since-instant.ts reads
// the audit log's `since` the same way for the API and the command (both edges read the user's
// text before the library sees it); it imports nothing, so the command's usage errors stay
// free of the core chunk. src/fetch-site.ts is the `Sec-Fetch-Site` rule of the server's routes
// and of the MCP handler used alone, which may not import each other; it imports nothing.
// src/cors-origin.ts is the rule for the `cors` origin of the server's option and of the
// command's --cors (the server entry exports no rule); it imports nothing.
// src/mcp-description.ts is what the MCP endpoint answers, for /openapi.json: the MCP mount
// and the command's lazy mount (which loads the MCP SDK only at the first request) share it.
// src/lease-bound.ts is the rule of a bound and one holder's share of it (half), for the server's
// leases and the MCP handler used alone, which may not import each other; it imports nothing.
const EVERY_LAYER = ['package-files', 'node-postgres', 'since-instant', 'fetch-site', 'cors-origin', 'mcp-description', 'lease-bound'];

/** What each layer may import (besides itself); `types` may be imported for their types only. */
const ALLOWED: Record<string, { values: string[]; types?: string[] }> = {
  core: { values: [] },
  'stores/memory': { values: ['core'] },
  'stores/sqlite': { values: ['core'] },
  'stores/postgres': { values: ['core'] },
  runtime: { values: ['core'] },
  // Exports take the runtime's tools and results as input: their types, never its code.
  exports: { values: ['core'], types: ['runtime'] },
  // The server and the MCP layer use the library only through the index, as a user's service would.
  // The server knows nothing of MCP; the MCP layer's mount implements the server's `Mount`,
  // so it imports the server entry's types (never its code: tool-registry/mcp loads no server).
  server: { values: ['index'] },
  mcp: { values: ['index'], types: ['server'] },
  // The command composes the three entries.
  cli: { values: ['index', 'server', 'mcp'] },
  // The library's public API: nothing above it (no server, no MCP, no command).
  index: { values: ['core', 'stores/memory', 'stores/sqlite', 'stores/postgres', 'runtime', 'exports'] },
  'package-files': { values: [] },
  'node-postgres': { values: [] },
  'since-instant': { values: [] },
  'fetch-site': { values: [] },
  'cors-origin': { values: [] },
  'mcp-description': { values: [] },
  'lease-bound': { values: [] },
};

/** The layers that are package entries of their own: another layer may import only the entry file. */
const ENTRIES: Record<string, string> = { server: 'server/index.js', mcp: 'mcp/index.js' };

describe('layout', () => {
  const files = sourceFiles(SRC);

  it('finds the layers and their imports', () => {
    const layers = new Set(files.map((file) => layerOf(relative(SRC, file))));
    expect([...layers].sort()).toEqual(Object.keys(ALLOWED).sort());
    const imports = relativeImports(join(SRC, 'stores/sqlite/x.ts'), "import type { A } from '../../core/a.js';\nimport { b } from './b.js';\nexport { c } from '../memory/c.js';");
    expect(imports).toEqual([
      { target: 'core/a.js', typeOnly: true },
      { target: 'stores/sqlite/b.js', typeOnly: false },
      { target: 'stores/memory/c.js', typeOnly: false },
    ]);
  });

  it('every import points down: the core imports nothing of ours, a store only the core, nothing imports the command', () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = layerOf(relative(SRC, file));
      const allowed = ALLOWED[from] as { values: string[]; types?: string[] };
      for (const { target, typeOnly } of relativeImports(file, readFileSync(file, 'utf8'))) {
        const to = layerOf(target);
        if (to === from || allowed.values.includes(to) || EVERY_LAYER.includes(to) || (typeOnly && allowed.types?.includes(to))) continue;
        wrong.push(`${relative(SRC, file)} imports ${target}${typeOnly ? ' (types)' : ''}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('the server, the MCP layer and the command reach each other only through the entries (tool-registry/server, tool-registry/mcp)', () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = layerOf(relative(SRC, file));
      for (const { target } of relativeImports(file, readFileSync(file, 'utf8'))) {
        const to = layerOf(target);
        const entry = ENTRIES[to];
        if (to !== from && entry !== undefined && target !== entry) wrong.push(`${relative(SRC, file)} imports ${target}, not ${entry}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('no circle: the layers the imports connect form no cycle (the index imported the server, which imported the index)', () => {
    const edges = new Map<string, Set<string>>();
    for (const file of files) {
      const from = layerOf(relative(SRC, file));
      for (const { target } of relativeImports(file, readFileSync(file, 'utf8'))) {
        const to = layerOf(target);
        if (to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to));
      }
    }
    const circles: string[] = [];
    const visit = (layer: string, path: string[]): void => {
      if (path.includes(layer)) {
        circles.push([...path.slice(path.indexOf(layer)), layer].join(' -> '));
        return;
      }
      for (const next of edges.get(layer) ?? []) visit(next, [...path, layer]);
    };
    for (const layer of edges.keys()) visit(layer, []);
    expect(circles).toEqual([]);
  });
});
