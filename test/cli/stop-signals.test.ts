// SIGTERM while a command that runs until stopped (watch, serve, mcp) is still starting: it was
// caught only once the command ran, and a signal before that was the process's death (exit 143).
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli, useChildProcessTimeout, useTempDir } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

/**
 * Starts `args` against a PostgreSQL URL whose "server" accepts the connection and never answers,
 * and sends SIGTERM when the command connects: the command is then opening its database, a
 * moment the test knows without a timer (the open waits for ever). Returns its exit and stderr.
 */
async function termWhileOpening(args: readonly string[], cwd: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return termWhenConnected((port) => ['--db', `postgres://tool@127.0.0.1:${port}/registry`, ...args], cwd);
}

/** Starts the command `argsOf(port)` gives and sends SIGTERM when it connects to that port, which never answers. */
async function termWhenConnected(argsOf: (port: number) => readonly string[], cwd: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const command = startCli(argsOf((server.address() as AddressInfo).port), { cwd });
  try {
    await once(server, 'connection');
    command.child.kill('SIGTERM');
    const code = await command.exited;
    return { code, signal: command.child.signalCode, stderr: command.stderr() };
  } finally {
    command.child.kill('SIGKILL');
    for (const socket of sockets) socket.destroy();
    server.close();
  }
}

describe('SIGTERM while a long-running command starts', () => {
  it('watch, serve and mcp exit 0 with nothing on stderr when the signal comes while the database opens, or (mcp, serve --tools) while the tools module loads', async () => {
    const cwd = tempDir();
    // A top-level await on a connection that never answers (a module waiting for its service).
    const module = (port: number): string => {
      const file = join(cwd, `waits-${port}.mjs`);
      writeFileSync(file, `import { connect } from 'node:net';\nawait new Promise(() => connect(${port}, '127.0.0.1'));\n`);
      return file;
    };
    // One batch of children: each start costs seconds on a loaded machine.
    const results = await Promise.all([
      ...[['watch'], ['serve', '--port', '0'], ['mcp']].map((args) => termWhileOpening(args, cwd)),
      // These said "error USAGE: the tools module … ended the process while it loaded (process.exit(0))", exit 2.
      ...[['mcp'], ['serve', '--port', '0']].map((args) => termWhenConnected((port) => [...args, '--tools', module(port)], cwd)),
    ]);
    expect(results).toEqual([0, 1, 2, 3, 4].map(() => ({ code: 0, signal: null, stderr: '' })));
  });
});
