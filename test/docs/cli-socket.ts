// The doc examples' `tool-registry` commands, run in the test's own process: the shim on
// the examples' PATH starts test/fixtures/cli-client.mjs, which sends one request over a
// Unix socket and prints the answer. Why: the examples run about ninety commands, each a
// `node` process of about half a second of CPU, against milliseconds for the same `run()`
// here (docs/testing.md). The bin's own process behaviour (exit status, signals, pipes) is
// tested in test/cli with the built bin, by the demo and by the packed package.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess } from '../cli/helpers.js';

/** What the client sends: one JSON line. Standard input is base64, read whole by the client. */
interface CliRequest {
  readonly argv: string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly stdin: string;
}

/** What it gets back: one JSON line; the client writes the two streams and exits with `code`. */
interface CliAnswer {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliSocket {
  /** The socket's path: the client reads it from TOOL_REGISTRY_TEST_CLI_SOCKET. */
  readonly path: string;
  close(): Promise<void>;
}

/** Reads one newline-terminated JSON request from the socket. */
function readRequest(socket: Socket): Promise<CliRequest> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      if (!chunk.includes(0x0a)) return;
      socket.off('data', onData);
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as CliRequest);
      } catch (error) {
        reject(error as Error);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('end', () => reject(new Error('the client closed the socket before its request ended')));
  });
}

async function answer(socket: Socket): Promise<void> {
  let reply: CliAnswer;
  try {
    const request = await readRequest(socket);
    const result = await runInProcess(request.argv, request.cwd, Buffer.from(request.stdin, 'base64'), request.env);
    reply = { code: result.code ?? 1, stdout: result.stdout, stderr: result.stderr };
  } catch (error) {
    // A fault of this harness, not of the command: the example fails and says so.
    reply = { code: 70, stdout: '', stderr: `doc-examples CLI socket: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n` };
  }
  socket.end(`${JSON.stringify(reply)}\n`);
}

/** Listens on a fresh socket under the system temp folder (a Unix socket path must stay short). */
export async function serveCliOverSocket(): Promise<CliSocket> {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-cli-socket-'));
  const path = join(folder, 'cli.sock');
  const server = createServer((socket) => {
    socket.on('error', () => {});
    void answer(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          rmSync(folder, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}

/**
 * The examples' `tool-registry`: the command (the first argument that is not an option or
 * --db's value) serve, watch or mcp runs the built bin, as it must run until a signal; any
 * other goes to this process through the client.
 */
export function toolRegistryShim(bin: string, client: string): string {
  return [
    '#!/bin/sh',
    'skip=',
    'for arg in "$@"; do',
    '  if [ -n "$skip" ]; then skip=; continue; fi',
    '  case $arg in',
    '    --db) skip=1 ;;',
    '    -*) ;;',
    `    serve|watch|mcp) exec node ${JSON.stringify(bin)} "$@" ;;`,
    '    *) break ;;',
    '  esac',
    'done',
    `exec node ${JSON.stringify(client)} "$@"`,
    '',
  ].join('\n');
}
