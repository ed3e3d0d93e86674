// Every example in README.md and docs/ that is marked to run is run here, as a user would
// run it: fenced blocks whose info string is `js test` run as ES modules importing the
// package by its name (`tool-registry`, the built dist/ via the package's self-reference),
// blocks marked `sh test` run in bash with a `tool-registry` command on PATH. Each block
// runs on its own in a fresh, empty working folder and must exit 0; examples check their
// own claims with node:assert. That `tool-registry` is a bash shim (./cli-socket.ts) that
// runs a one-shot command in this test's process, through the CLI's own run(): about ninety
// commands, half a second of CPU each as processes. serve, watch and mcp, which run until a
// signal, start the built bin.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToEnd } from '../support/spawned.js';
import { skipWithoutSqlite3 } from '../support/sqlite3-shell.js';
import { createTestDatabase } from '../support/postgres.js';
import type { TestDatabase } from '../support/postgres.js';
import { serveCli, toolRegistryShim } from './cli-socket.js';
import type { CliServer } from './cli-socket.js';

/** The DBA's examples need the psql client: skipped, with the reason, where there is none. */
const psqlProbe = spawnSync('psql', ['--version'], { encoding: 'utf8' });
const psqlMissing = psqlProbe.status === 0 ? undefined : 'no psql client; install postgresql-client to run this example';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Inside the package folder, so that `import 'tool-registry'` resolves to this package.
const SCRIPTS = join(ROOT, '.tmp', 'doc-examples');
const BIN = join(SCRIPTS, 'bin');

export interface DocExample {
  readonly file: string;
  readonly line: number;
  readonly kind: 'js' | 'sh';
  readonly code: string;
}

/** The runnable blocks of one Markdown text: fences opened with ```js test or ```sh test. */
export function extractExamples(file: string, text: string): DocExample[] {
  const examples: DocExample[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(js|sh) test\s*$/.exec(lines[i] as string);
    if (open === null) continue;
    const fence = open[1] as string;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !(lines[end] as string).startsWith(fence)) end++;
    if (end === lines.length) throw new Error(`${file}:${i + 1}: unclosed code block`);
    examples.push({ file, line: i + 1, kind: open[2] as 'js' | 'sh', code: lines.slice(start, end).join('\n') + '\n' });
    i = end;
  }
  return examples;
}

function markdownFiles(): string[] {
  const files = [join(ROOT, 'README.md')];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return files.sort();
}

/** Runs a command to its end (killed after 240 s), as spawnSync would, without blocking the other examples. */
function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv) {
  return runToEnd(command, args, { cwd, env, timeout: 240_000 });
}

const examples = markdownFiles().flatMap((path) => extractExamples(relative(ROOT, path), readFileSync(path, 'utf8')));
const folders: string[] = [];
let cliServer: CliServer | undefined;

beforeAll(async () => {
  mkdirSync(BIN, { recursive: true });
  const shim = join(BIN, 'tool-registry');
  writeFileSync(shim, toolRegistryShim(join(ROOT, 'dist', 'cli', 'main.js')));
  chmodSync(shim, 0o755);
  cliServer = await serveCli();
});

const databases: TestDatabase[] = [];

afterAll(async () => {
  await cliServer?.close();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  await Promise.all(databases.map((database) => database.drop()));
});

describe('extractExamples', () => {
  it('finds only blocks marked to run, with their line numbers', () => {
    const text = ['# t', '```js', 'skip()', '```', '```js test', 'run(1)', '```', '```sh test', 'echo hi', '```'].join('\n');
    expect(extractExamples('x.md', text)).toEqual([
      { file: 'x.md', line: 5, kind: 'js', code: 'run(1)\n' },
      { file: 'x.md', line: 8, kind: 'sh', code: 'echo hi\n' },
    ]);
  });
});

describe('documentation examples', () => {
  it('there is at least one runnable example', () => {
    expect(examples.length).toBeGreaterThan(0);
  });

  // bash -e does not stop at a failure left of && (or ||): `test "$status" = 1 && grep ...`
  // checked only the grep. A check stands on a line of its own.
  it('no shell example chains commands with &&, where a failure before the last one goes unnoticed', () => {
    const chained = examples
      .filter((example) => example.kind === 'sh')
      .flatMap((example) =>
        example.code
          .split('\n')
          .map((line, index) => ({ line: line.replace(/(^|\s)#.*$/, ''), at: `${example.file}:${example.line + 1 + index}` }))
          .filter(({ line }) => line.includes('&&'))
          .map(({ at, line }) => `${at}: ${line.trim()}`),
      );
    expect(chained).toEqual([]);
  });

  // Concurrent: each example runs in its own process and folder, and most of their time is
  // process start-up and fsync, so a few at once share the two cores well.
  it.concurrent.for(examples.map((example) => [`${example.file}:${example.line}`, example] as const))(
    '%s runs',
    { timeout: 300_000 },
    async ([, example], context) => {
      // Operator one-liners need the sqlite3 shell: skipped, with the reason, where there is none.
      if (example.kind === 'sh' && /(^|[\s;|&(])sqlite3\s/m.test(example.code)) skipWithoutSqlite3(context);
      // So do the DBA's (docs/postgres.md, "Roles and rights"): the psql client.
      if (example.kind === 'sh' && /(^|[\s;|&(])psql\s/m.test(example.code) && psqlMissing !== undefined) context.skip(psqlMissing);
      const cwd = mkdtempSync(join(tmpdir(), 'tool-registry-doc-'));
      folders.push(cwd);
      const name = `${example.file.replace(/[^A-Za-z0-9]+/g, '-')}-${example.line}`;
      // NODE_PATH: an example may find a package the project installs (docs/gateway.md's MCP server) with require.resolve.
      const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, TOOL_REGISTRY_TEST_CLI_PORT: String(cliServer?.port), NODE_PATH: join(ROOT, 'node_modules') };
      delete env.TOOL_REGISTRY_DB;
      // An example that uses PostgreSQL gets an empty database of its own on the run's server.
      if (example.code.includes('DATABASE_URL')) {
        const database = await createTestDatabase();
        databases.push(database);
        env.DATABASE_URL = database.url;
      }
      let result;
      if (example.kind === 'js') {
        const script = join(SCRIPTS, `${name}.mjs`);
        writeFileSync(script, example.code);
        result = await run(process.execPath, [script], cwd, env);
      } else {
        result = await run('bash', ['-euo', 'pipefail', '-c', example.code], cwd, env);
      }
      context.expect(result.code, `${example.file}:${example.line}\n${result.stdout}\n${result.stderr}`).toBe(0);
    },
  );
});
