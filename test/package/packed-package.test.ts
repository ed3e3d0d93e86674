// Installs the packed tarball into a fresh project, as a user would, and drives it from
// there: the exports map, the shipped migrations and the bin must all work outside the repo.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
let project: string;
let files: string[];

function run(command: string, args: string[], cwd: string, input?: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** `npm install` in the project, given back the certificates the run took from its processes (vitest.config.ts): it may reach the registry. */
function npmInstall(args: string[]): void {
  const certificates = process.env.TOOL_REGISTRY_TEST_EXTRA_CA_CERTS;
  const env = certificates === undefined ? process.env : { ...process.env, NODE_EXTRA_CA_CERTS: certificates };
  execFileSync('npm', ['install', ...args], { cwd: project, env, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** The files of the installed package that loading `entry` loads: its static relative imports, followed. */
function staticClosure(packageDir: string, entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(join(packageDir, file), 'utf8');
    for (const match of text.matchAll(/^(?:import|export)\b[^'"]*?(?:from\s*)?["'](\.[^"']+)["']/gm)) visit(join(dirname(file), match[1]!));
  };
  visit(entry);
  return seen;
}

/**
 * The consumer's lock: our own lock's production packages (no `dev` flag), the versions this
 * checkout tests against, each with the registry address of its tarball (npm here is set to
 * leave the addresses out of our lock: omit-lockfile-registry-resolved). Why: `npm ci` leaves the tarballs
 * in npm's cache, but not the registry documents `npm install` resolves a version range or a
 * tarball's address from, so without this lock `npm install --offline` failed on a fresh
 * machine and the fallback below fetched them all (34 s and 22 CPU-s in a whole run). With it
 * the install reads only the cache. A dependency only our devDependencies bring stays out, so
 * a missing runtime dependency (or @types package) still fails the tests below; one the lock
 * lacks fails the offline install, and the fallback resolves it from the registry.
 */
function consumerLock(): object {
  const ours = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; dev?: boolean; link?: boolean }> };
  const packages: Record<string, object> = { '': { name: 'consumer' } };
  for (const [path, entry] of Object.entries(ours.packages)) {
    if (!path.startsWith('node_modules/') || entry.dev === true || entry.link === true) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const resolved = `https://registry.npmjs.org/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    packages[path] = { ...entry, resolved };
  }
  return { name: 'consumer', lockfileVersion: 3, requires: true, packages };
}

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), 'tool-registry-pack-'));
  // dist/ was built by `pretest`; --ignore-scripts keeps pack from rebuilding it under other tests' feet.
  const packed = JSON.parse(
    run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', project], root),
  ) as { filename: string; files: { path: string }[] }[];
  const tarball = join(project, packed[0]!.filename);
  files = packed[0]!.files.map((file) => file.path);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(consumerLock()));
  // Dependencies come from the npm cache that `npm ci` filled; the native addon is copied
  // from this checkout instead of being compiled again (minutes on a 2-core machine).
  try {
    npmInstall(['--offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball]);
  } catch {
    npmInstall(['--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball]);
  }
  const addon = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
  mkdirSync(dirname(join(project, addon)), { recursive: true });
  copyFileSync(join(root, addon), join(project, addon));
}, 180_000);

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('the packed npm package', () => {
  it('ships dist, the migrations, README, docs and CHANGELOG, and no sources or tests', () => {
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('migrations/sqlite/0001_init.sql');
    expect(files).toContain('README.md');
    expect(files).toContain('CHANGELOG.md');
    // README links into docs/: they ship with it, so the links work in an installed package.
    expect(files).toContain('docs/contract.md');
    // The console's static files, served by `tool-registry serve` from the installed package.
    for (const file of ['index.html', 'app.js', 'api.js', 'dom.js', 'diff.js', 'schema.js', 'console.css']) expect(files).toContain(`console/${file}`);
    expect(files.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);
  });

  it('every relative link in the shipped Markdown resolves to a file the package ships', () => {
    // The docs travel with the package (npm shows README.md; docs/ is installed): a link to a
    // file of the repository that the package leaves out is dead for every user of it.
    const shipped = new Set(files);
    const dead: string[] = [];
    for (const file of files.filter((path) => path.endsWith('.md'))) {
      const text = readFileSync(join(project, 'node_modules', 'tool-registry', file), 'utf8')
        .replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1/gm, '')
        .replace(/`[^`\n]*`/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s#]*)(?:#[^)\s]*)?\)/g)) {
        if (target === undefined || target === '' || /^[a-z]+:/i.test(target)) continue;
        const path = join(dirname(file), decodeURIComponent(target)).replace(/\/$/, '');
        if (!shipped.has(path) && !files.some((shippedFile) => shippedFile.startsWith(`${path}/`))) dead.push(`${file} -> ${target}`);
      }
    }
    expect(dead).toEqual([]);
  });

  it('every module the shipped declarations import has its types installed with the package', () => {
    // A strict TypeScript consumer (skipLibCheck off, the default) type-checks our .d.ts files:
    // a dependency without types of its own needs its @types package as a dependency, not a
    // devDependency, or the consumer gets TS7016 (and the option's type silently becomes any).
    // Resolved as TypeScript does, and only types inside the consumer's project count.
    const installed = join(project, 'node_modules');
    const options = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
    const untyped = new Set<string>();
    for (const file of files.filter((path) => path.endsWith('.d.ts'))) {
      const containing = join(installed, 'tool-registry', file);
      for (const [, specifier] of readFileSync(containing, 'utf8').matchAll(/from '([^'.][^']*)'/g)) {
        if (specifier === undefined || specifier.startsWith('node:')) continue;
        const resolved = ts.resolveModuleName(specifier, containing, options, ts.sys, undefined, undefined, ts.ModuleKind.ESNext).resolvedModule;
        const typed = resolved !== undefined && resolved.extension.startsWith('.d.') && ts.sys.realpath!(resolved.resolvedFileName).startsWith(ts.sys.realpath!(installed));
        if (!typed) untyped.add(`${file}: ${specifier}`);
      }
    }
    expect([...untyped]).toEqual([]);
  });

  it('its entry points are bundles: they import only the dependencies left external, and load none of the inlined ones', () => {
    // rolldown.config.mjs inlines Kysely, hono, ajv and the rest: a process that imported the
    // library used to load about 470 files before it did anything (README, "Development").
    const external = ['better-sqlite3', 'pg', 'zod', 'zod-openapi', '@modelcontextprotocol/sdk'];
    const shipped = join(project, 'node_modules', 'tool-registry');
    const bundled = files.filter((path) => /^dist\/(index\.js|mcp\/index\.js|server\/index\.js|cli\/main\.js|chunks\/.*\.js)$/.test(path));
    expect(bundled.length).toBeGreaterThan(3);
    const imported = new Set<string>();
    for (const file of bundled) {
      // Static imports (`from "x"`), dynamic ones (`import("x")`) and bare `import "x"`, of packages.
      const statements = /(?:^|[\s}])from\s*["']([@a-z][\w@/.:-]*)["']|\bimport\s*\(\s*["']([@a-z][\w@/.:-]*)["']\s*\)|^import\s*["']([@a-z][\w@/.:-]*)["']/gm;
      for (const match of readFileSync(join(shipped, file), 'utf8').matchAll(statements)) {
        const specifier = (match[1] ?? match[2] ?? match[3])!;
        if (!specifier.startsWith('node:')) imported.add(specifier.replace(/^((@[^/]+\/)?[^/]+).*$/, '$1'));
      }
    }
    expect([...imported].filter((name) => !external.includes(name))).toEqual([]);
    // And at run time: the files a process loads to open a SQLite store and list it.
    writeFileSync(
      join(project, 'loaded.mjs'),
      `import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
// A module hook that reports each ES module loaded, and require() reports the CommonJS ones.
// The hook answers "flush" after every URL it sent before (one port keeps the order), so the
// list is whole when the answer comes.
const { port1, port2 } = new MessageChannel();
const loaded = new Set();
let flushed;
port1.on('message', (message) => (message === 'flushed' ? flushed() : loaded.add(message)));
const hook = 'let port; export function initialize(data) { port = data.port; port.on("message", () => port.postMessage("flushed")); port.unref(); } export async function load(url, context, next) { port.postMessage(url); return next(url, context); }';
register('data:text/javascript,' + encodeURIComponent(hook), { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
const { openSqliteToolRegistry } = await import('tool-registry');
const registry = await openSqliteToolRegistry({ filename: 'loaded.db' });
await registry.listAll();
await registry.close();
await new Promise((resolve) => { flushed = resolve; port1.postMessage('flush'); });
port1.close();
const { createRequire } = await import('node:module');
const required = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify([...loaded, ...required]));
`,
    );
    const loaded = JSON.parse(run('node', ['loaded.mjs'], project)) as string[];
    const packages = new Set(loaded.map((url) => /node_modules\/((@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name) => name !== undefined));
    const dependencies = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    const inlined = dependencies.filter((name) => !external.includes(name) && !name.startsWith('@types/'));
    expect(inlined).toContain('kysely');
    expect([...packages].filter((name) => inlined.includes(name!))).toEqual([]);
    expect(packages.has('tool-registry') && packages.has('better-sqlite3')).toBe(true);
    // node-postgres is loaded by the first PostgreSQL store, not by the import (src/node-postgres.ts).
    expect(packages.has('pg')).toBe(false);
    // The server is an entry of its own (tool-registry/server): the library loads none of its
    // code, nor zod-openapi, which only the server's OpenAPI document needs.
    expect(packages.has('zod-openapi')).toBe(false);
    const ours = new Set(loaded.filter((url) => url.includes('/node_modules/tool-registry/dist/')).map((url) => url.replace(/^.*\/node_modules\/tool-registry\//, '')));
    const serverOnly = [...staticClosure(shipped, 'dist/server/index.js')].filter((file) => !staticClosure(shipped, 'dist/index.js').has(file));
    expect(serverOnly.length).toBeGreaterThan(1);
    expect(serverOnly.filter((file) => ours.has(file))).toEqual([]);
    // tool-registry/mcp implements the server's Mount with types only: its bundle loads no server code.
    expect([...staticClosure(shipped, 'dist/mcp/index.js')].filter((file) => serverOnly.includes(file))).toEqual([]);
  });

  it('serves the HTTP API from "tool-registry/server"; "tool-registry" no longer exports the server', () => {
    writeFileSync(
      join(project, 'server.mjs'),
      `import * as library from 'tool-registry';
import { createToolRegistryServer, listen, createToken, DEFAULT_NAMESPACE } from 'tool-registry/server';
import { mcpMount } from 'tool-registry/mcp';
const registry = new library.InMemoryToolRegistry();
await registry.register({ tool_name: 'search', input_schema: {}, output_schema: {} });
const server = createToolRegistryServer({ registries: registry, mounts: { mcp: mcpMount(new library.ToolSet([])) } });
const listening = await listen(server, { port: 0 });
const tools = await (await fetch(listening.url + '/v1/tools')).json();
await listening.close();
const moved = ['createToolRegistryServer', 'listen', 'createToken', 'defaultConsoleRoot', 'sqliteNamespaces'].filter((name) => name in library);
console.log(JSON.stringify({ names: tools.tools.map((t) => t.spec.tool_name), moved, token: typeof createToken, namespace: DEFAULT_NAMESPACE }));
`,
    );
    expect(JSON.parse(run('node', ['server.mjs'], project))).toEqual({ names: ['search'], moved: [], token: 'function', namespace: 'default' });
  });

  it('imports InMemoryToolRegistry and the contracts from "tool-registry"', () => {
    writeFileSync(
      join(project, 'memory.mjs'),
      `import { InMemoryToolRegistry, ToolSpec, VersionConflictError, ToolRegistryError } from 'tool-registry';
const registry = new InMemoryToolRegistry({ clock: () => new Date('2025-01-01T00:00:00Z') });
const registration = await registry.register({ tool_name: 'search', input_schema: {}, output_schema: {} });
let code;
try { await registry.register({ tool_name: 'search', input_schema: { type: 'object' }, output_schema: {} }); }
catch (error) { code = error instanceof VersionConflictError && error instanceof ToolRegistryError ? error.code : 'wrong class'; }
console.log(JSON.stringify({ registration, code, parsed: ToolSpec.parse({ tool_name: 'x', input_schema: {}, output_schema: {} }) }));
`,
    );
    const out = JSON.parse(run('node', ['memory.mjs'], project)) as Record<string, unknown>;
    expect(out).toEqual({
      registration: {
        spec: { tool_name: 'search', version: null, description: null, input_schema: {}, output_schema: {}, tags: [] },
        enabled: true,
        created_at: '2025-01-01T00:00:00.000Z',
        deprecation: null,
      },
      code: 'VERSION_CONFLICT',
      parsed: { tool_name: 'x', version: null, description: null, input_schema: {}, output_schema: {}, tags: [] },
    });
  });

  // Node 20.19+ loads an ES module from require(); the exports map must then offer a
  // condition that require() matches, or a CommonJS service cannot use the package at all.
  it.runIf(process.features.require_module)('loads with require() from a CommonJS project', () => {
    writeFileSync(
      join(project, 'memory.cjs'),
      `const { InMemoryToolRegistry, VersionConflictError } = require('tool-registry');
new InMemoryToolRegistry().register({ tool_name: 'search', input_schema: {}, output_schema: {} })
  .then((registration) => console.log(JSON.stringify([registration.spec.tool_name, typeof VersionConflictError])));
`,
    );
    expect(JSON.parse(run('node', ['--no-warnings', 'memory.cjs'], project))).toEqual(['search', 'function']);
  });

  it('exports tools to the providers from "tool-registry" (no provider SDK installed), and lints with the shipped meta-schema validator', () => {
    writeFileSync(
      join(project, 'exports.mjs'),
      `import { lintTools, toMcpTools, toOpenAITools, ProviderIncompatibleError } from 'tool-registry';
const specs = [{ tool_name: 'svc.lookup', input_schema: { type: 'object' }, output_schema: {} }];
let code;
try { toOpenAITools(specs); } catch (error) { code = error instanceof ProviderIncompatibleError ? error.code : 'wrong class'; }
// Anthropic's schema-invalid requires the generated meta-schema validator, and it ajv's runtime, from the install.
const invalid = lintTools([{ tool_name: 'find', input_schema: { type: 'object', properties: { q: { type: 'strin' } } }, output_schema: {} }], { providers: ['anthropic'] });
console.log(JSON.stringify({ mcp: toMcpTools(specs), rules: lintTools(specs).map((f) => f.provider + ':' + f.rule), code, invalid: invalid.map((f) => f.rule + ' ' + f.path) }));
`,
    );
    expect(JSON.parse(run('node', ['exports.mjs'], project))).toEqual({
      mcp: [{ name: 'svc.lookup', inputSchema: { type: 'object' } }],
      rules: ['openai:name-pattern', 'anthropic:name-pattern'],
      code: 'PROVIDER_INCOMPATIBLE',
      invalid: ['schema-invalid /input_schema/properties/q/type'],
    });
  });

  it('opens a SQLite file with the migrations shipped in the package', () => {
    writeFileSync(
      join(project, 'sqlite.mjs'),
      `import { openSqliteToolRegistry } from 'tool-registry';
const registry = await openSqliteToolRegistry({ filename: 'installed.db' });
await registry.register({ tool_name: 'fetch', version: '1', input_schema: {}, output_schema: {} });
await registry.close();
const again = await openSqliteToolRegistry({ filename: 'installed.db', readonly: true });
console.log(JSON.stringify((await again.listAll()).map((r) => r.spec.tool_name)));
await again.close();
`,
    );
    expect(JSON.parse(run('node', ['sqlite.mjs'], project))).toEqual(['fetch']);
    expect(existsSync(join(project, 'installed.db'))).toBe(true);
  });

  it('runs the README library example as written', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const example = /```js(?: test)?\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("from 'tool-registry'");
    writeFileSync(join(project, 'readme-example.mjs'), `${example}\nconsole.log(JSON.stringify(snapshot));\n`);
    const snapshot = JSON.parse(run('node', ['readme-example.mjs'], project)) as { tools: { enabled: boolean }[] };
    expect(snapshot.tools.map((tool) => tool.enabled)).toEqual([false]);
  });

  it('runs the runtime with its dependencies (ajv, ajv-formats) installed from the package', () => {
    writeFileSync(
      join(project, 'runtime.mjs'),
      `import { defineTool, ToolSet } from 'tool-registry';
const mail = defineTool({ name: 'mail', input_schema: { type: 'object', properties: { to: { type: 'string', format: 'email' } }, required: ['to'] }, handler: ({ to }) => 'sent to ' + to });
const set = new ToolSet([mail]);
console.log(JSON.stringify([await set.invoke('mail', { to: 'a@example.com' }), (await set.invoke('mail', { to: 'nobody' })).code]));
`,
    );
    const [ok, code] = JSON.parse(run('node', ['runtime.mjs'], project)) as [{ success: boolean; data: string }, string];
    expect(ok).toMatchObject({ success: true, data: 'sent to a@example.com' });
    expect(code).toBe('INVALID_ARGUMENTS');
  });

  it('installs the tool-registry command', () => {
    const bin = join(project, 'node_modules/.bin/tool-registry');
    const out = run(bin, ['--db', join(project, 'installed.db'), 'list', '--json'], project);
    expect((JSON.parse(out) as { spec: { tool_name: string } }[]).map((r) => r.spec.tool_name)).toEqual(['fetch']);
  });

  it('the command loads the PostgreSQL store and the provider exports only for the commands that use them', () => {
    // A module hook (its own thread) that appends each ES module's URL to a file before the
    // module is evaluated: the file is whole when the command exits, however it exits.
    const hook = 'import { appendFileSync } from "node:fs"; let out; export function initialize(data) { out = data.out; } export async function load(url, context, next) { appendFileSync(out, url + "\\n"); return next(url, context); }';
    writeFileSync(join(project, 'record-loads.mjs'), `import { register } from 'node:module';\nregister('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}), { parentURL: import.meta.url, data: { out: process.env.LOADED_LIST } });\n`);
    const bin = join(project, 'node_modules/tool-registry/dist/cli/main.js');
    const database = join(project, 'loads.db');
    run('node', [bin, '--db', database, 'migrate'], project);
    const chunksLoadedBy = (args: string[]): string[] => {
      const list = join(project, `loaded-${args.join('-')}.txt`);
      writeFileSync(list, '');
      execFileSync('node', ['--import', './record-loads.mjs', bin, '--db', database, ...args], { cwd: project, env: { ...process.env, LOADED_LIST: list }, stdio: ['ignore', 'pipe', 'pipe'] });
      // dist/chunks/postgres-HASH.js -> postgres
      return [...new Set(readFileSync(list, 'utf8').split('\n').flatMap((url) => /\/tool-registry\/dist\/chunks\/(.+)-[\w-]{8}\.js$/.exec(url)?.[1] ?? []))].sort();
    };
    // About 145 kB a SQLite command does not run: 0.03 CPU-s of each start (docs/testing.md).
    const list = chunksLoadedBy(['list']);
    expect(list).toContain('sqlite');
    expect(list.filter((chunk) => chunk === 'postgres' || chunk === 'exports')).toEqual([]);
    expect(chunksLoadedBy(['export', '--format', 'openai'])).toContain('exports');
  });

  it('serves the console from the installed package at /', async () => {
    const bin = join(project, 'node_modules/.bin/tool-registry');
    const child = spawn(bin, ['serve', '--db', join(project, 'installed.db'), '--port', '0'], { cwd: project, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const url = await new Promise<string>((found, failed) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          const match = /^listening on (\S+)\n/.exec(out);
          if (match) found(match[1] as string);
        });
        child.on('exit', (code) => failed(new Error(`serve exited with ${String(code)}`)));
      });
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe(readFileSync(join(project, 'node_modules/tool-registry/console/index.html'), 'utf8'));
      expect((await fetch(`${url}/app.js`)).headers.get('content-type')).toContain('text/javascript');
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGTERM');
        await exited;
      }
    }
  });
});
