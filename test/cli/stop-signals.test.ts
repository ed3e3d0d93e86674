// SIGTERM while a command that runs until stopped (watch, serve, mcp) is still starting: it was
// caught only once the command ran, and a signal before that was the process's death (exit 143).
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
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
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const db = `postgres://tool@127.0.0.1:${(server.address() as AddressInfo).port}/registry`;
  const command = startCli(['--db', db, ...args], { cwd });
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
  it('watch, serve and mcp exit 0 with nothing on stderr when the signal comes while the database opens', async () => {
    const cwd = tempDir();
    const results = await Promise.all([['watch'], ['serve', '--port', '0'], ['mcp']].map((args) => termWhileOpening(args, cwd)));
    expect(results).toEqual([0, 1, 2].map(() => ({ code: 0, signal: null, stderr: '' })));
  });
});
