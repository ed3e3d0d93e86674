// The doc examples' `tool-registry` (./cli-socket.ts): the shim sends the commands that run
// until a signal to the built bin and the others to this process, and a command run through
// the connection gets the shim's arguments, working folder, environment and standard input,
// and gives back its output and exit code.
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';
import { runToEnd } from '../support/spawned.js';
import { freePort } from '../support/postgres-server.mjs';
import { serveCli, toolRegistryShim } from './cli-socket.js';
import type { CliServer } from './cli-socket.js';

let folder: string;
let shim: string;
let server: CliServer;

beforeAll(async () => {
  folder = realpathSync(mkdtempSync(join(tmpdir(), 'tool-registry-cli-socket-test-')));
  shim = join(folder, 'tool-registry');
  writeFileSync(shim, toolRegistryShim(join(ROOT, 'dist', 'cli', 'main.js')));
  chmodSync(shim, 0o755);
  server = await serveCli();
});

afterAll(async () => {
  await server.close();
  rmSync(folder, { recursive: true, force: true });
});

/** Runs `shim` without blocking this process, whose event loop answers it. */
function runShim(path: string, args: string[], options: { input?: string; env?: Record<string, string>; port?: number } = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env, TOOL_REGISTRY_TEST_CLI_PORT: String(options.port ?? server.port) };
  delete env.TOOL_REGISTRY_DB;
  Object.assign(env, options.env);
  return runToEnd(path, args, { cwd: folder, env, input: options.input ?? '' });
}

describe('the shim', () => {
  it('starts the bin for serve, watch and mcp as the command, and hands any other to the test process, arguments intact', async () => {
    // A stand-in bin and a server whose runner prints what it got.
    const bin = join(folder, 'bin.cjs');
    writeFileSync(bin, "console.log('bin ' + JSON.stringify(process.argv.slice(2)))\n");
    const echoShim = join(folder, 'echo-shim');
    writeFileSync(echoShim, toolRegistryShim(bin));
    chmodSync(echoShim, 0o755);
    const echo = await serveCli(async (argv) => ({ code: 0, stdout: `client ${JSON.stringify(argv)}\n`, stderr: '' }));
    try {
      const cases: [string[], 'bin' | 'client'][] = [
        [['list', '--all'], 'client'],
        [['serve', '--port', '0'], 'bin'],
        [['--db', 'x.db', 'watch', '--since', '0'], 'bin'],
        [['mcp', '--tools', 'tools.mjs'], 'bin'],
        // A file named like a command is --db's value; a provider named mcp is an argument.
        [['--db', 'watch', 'list'], 'client'],
        [['lint', '--provider', 'mcp'], 'client'],
        [['get', 'serve'], 'client'],
        // Spaces, quotes, a newline, an empty argument and non-ASCII arrive as they were.
        [['get', 'a b', "it's \"x\"", 'two\nlines', '', 'ünïcödé ✓'], 'client'],
        [[], 'client'],
      ];
      const ran = await Promise.all(cases.map(([args]) => runShim(echoShim, args, { port: echo.port })));
      expect(ran.map((result) => [result.code, result.stdout, result.stderr])).toEqual(
        cases.map(([args, where]) => [0, `${where} ${JSON.stringify(args)}\n`, '']),
      );
    } finally {
      await echo.close();
    }
  });
});

describe('a command through the connection', () => {
  it('reads standard input, works in the shell folder and gives back output and exit code', async () => {
    const spec = { tool_name: 'echo', version: '1.0.0', input_schema: {}, output_schema: {} };
    const registered = await runShim(shim, ['register', '-'], { input: JSON.stringify(spec) });
    expect([registered.code, registered.stdout, registered.stderr]).toEqual([0, 'added echo 1.0.0\n', '']);
    expect(existsSync(join(folder, 'tool-registry.db'))).toBe(true);

    const listed = await runShim(shim, ['list', '--json']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { spec: { tool_name: string } }[]).map((tool) => tool.spec.tool_name)).toEqual(['echo']);

    const refused = await runShim(shim, ['enable', 'no_such_tool']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^error TOOL_NOT_FOUND: /);
  });

  it('prints the output byte for byte (text, NUL bytes, none), keeps the exit code when a pipe closes early, reads /dev/null as empty input', async () => {
    const big = `${'x'.repeat(200_000)}\n`;
    const outputs: Record<string, [number, string, string]> = { nul: [3, 'a\0b\n', 'e\0\n'], text: [0, big, 'warn ✓\n'], none: [1, '', ''] };
    const fake = await serveCli(async (argv, _cwd, stdin) => {
      const [code, stdout, stderr] = outputs[argv[0] as string] ?? [0, `stdin ${stdin.length}\n`, ''];
      return { code, stdout, stderr };
    });
    try {
      const ran = await Promise.all(Object.keys(outputs).map((name) => runShim(shim, [name], { port: fake.port })));
      expect(ran.map((result) => [result.code, result.stdout, result.stderr])).toEqual(Object.values(outputs));
      const env = { ...process.env, TOOL_REGISTRY_TEST_CLI_PORT: String(fake.port) };
      const piped = await runToEnd('bash', ['-o', 'pipefail', '-c', '"$0" text | head -c 1', shim], { cwd: folder, env });
      expect([piped.code, piped.stdout, piped.stderr]).toEqual([0, 'x', 'warn ✓\n']);
      const empty = await runToEnd(shim, ['stdin'], { cwd: folder, env });
      expect([empty.code, empty.stdout]).toEqual([0, 'stdin 0\n']);
    } finally {
      await fake.close();
    }
  });

  it("uses the shell's environment, not this process's", async () => {
    const other = join(folder, 'other.db');
    const migrated = await runShim(shim, ['migrate'], { env: { TOOL_REGISTRY_DB: other } });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(existsSync(other)).toBe(true);
  });

  it('fails with the reason when nothing listens on the port, or no port is set', async () => {
    const port = await freePort();
    const unreachable = await runShim(shim, ['list'], { port });
    expect([unreachable.code, unreachable.stdout, unreachable.stderr]).toEqual([70, '', `tool-registry shim: nothing listens on 127.0.0.1:${port}\n`]);
    const unset = await runShim(shim, ['list'], { env: { TOOL_REGISTRY_TEST_CLI_PORT: '' } });
    expect([unset.code, unset.stderr]).toEqual([70, 'tool-registry shim: TOOL_REGISTRY_TEST_CLI_PORT is not set\n']);
  });
});
