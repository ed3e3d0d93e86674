// The doc examples' `tool-registry` (./cli-socket.ts, test/fixtures/cli-client.mjs): the
// shim sends the commands that run until a signal to the built bin and the others to this
// process, and a command run through the socket gets the client's arguments, working
// folder, environment and standard input, and gives back its output and exit code.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';
import { runToEnd } from '../support/spawned.js';
import { serveCliOverSocket, toolRegistryShim } from './cli-socket.js';
import type { CliSocket } from './cli-socket.js';

const CLIENT = join(ROOT, 'test', 'fixtures', 'cli-client.mjs');

let folder: string;
let socket: CliSocket;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'tool-registry-cli-socket-test-'));
  socket = await serveCliOverSocket();
});

afterAll(async () => {
  await socket.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('the shim', () => {
  it('starts the bin for serve, watch and mcp as the command, and the client for any other', () => {
    // Stand-ins that print which one ran, with what.
    const bin = join(folder, 'bin.cjs');
    const client = join(folder, 'client.cjs');
    writeFileSync(bin, "console.log('bin ' + process.argv.slice(2).join(' '))\n");
    writeFileSync(client, "console.log('client ' + process.argv.slice(2).join(' '))\n");
    const shim = join(folder, 'tool-registry');
    writeFileSync(shim, toolRegistryShim(bin, client));
    chmodSync(shim, 0o755);
    const cases: [string[], string][] = [
      [['list', '--all'], 'client list --all'],
      [['serve', '--port', '0'], 'bin serve --port 0'],
      [['--db', 'x.db', 'watch', '--since', '0'], 'bin --db x.db watch --since 0'],
      [['mcp', '--tools', 'tools.mjs'], 'bin mcp --tools tools.mjs'],
      // A file named like a command is --db's value; a provider named mcp is an argument.
      [['--db', 'watch', 'list'], 'client --db watch list'],
      [['lint', '--provider', 'mcp'], 'client lint --provider mcp'],
      [['get', 'serve'], 'client get serve'],
    ];
    const ran = cases.map(([args]) => spawnSync(shim, args, { encoding: 'utf8' }).stdout.trim());
    expect(ran).toEqual(cases.map(([, expected]) => expected));
  });
});

/** Runs the client without blocking this process, whose event loop answers it. */
function client(args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env, TOOL_REGISTRY_TEST_CLI_SOCKET: socket.path };
  delete env.TOOL_REGISTRY_DB;
  Object.assign(env, options.env);
  return runToEnd(process.execPath, [CLIENT, ...args], { cwd: folder, env, input: options.input ?? '' });
}

describe('a command through the socket', () => {
  it('reads standard input, works in the client folder and gives back output and exit code', async () => {
    const spec = { tool_name: 'echo', version: '1.0.0', input_schema: {}, output_schema: {} };
    const registered = await client(['register', '-'], { input: JSON.stringify(spec) });
    expect([registered.code, registered.stdout, registered.stderr]).toEqual([0, 'added echo 1.0.0\n', '']);
    expect(existsSync(join(folder, 'tool-registry.db'))).toBe(true);

    const listed = await client(['list', '--json']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { spec: { tool_name: string } }[]).map((tool) => tool.spec.tool_name)).toEqual(['echo']);

    const refused = await client(['enable', 'no_such_tool']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^error TOOL_NOT_FOUND: /);
  });

  it("uses the client's environment, not this process's", async () => {
    const other = join(folder, 'other.db');
    const migrated = await client(['migrate'], { env: { TOOL_REGISTRY_DB: other } });
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(existsSync(other)).toBe(true);
  });

  it('fails with the reason when there is no socket to reach', async () => {
    const result = await client(['list'], { env: { TOOL_REGISTRY_TEST_CLI_SOCKET: join(folder, 'nobody.sock') } });
    expect(result.code).toBe(70);
    expect(result.stderr).toMatch(/^cli-client: connect ENOENT/);
  });
});
