// The doc examples' `tool-registry` commands, run in the test's own process: the shim on the
// examples' PATH is a bash script that hands each command to this process over a TCP
// connection on 127.0.0.1 and prints the answer. Why: the examples run about ninety
// commands, each a `node` process of about half a second of CPU, against milliseconds for
// the same `run()` here; and the shim is bash, not a node client, because even a node that
// only connects costs about 0.1 s of CPU (docs/testing.md). The bin's own process behaviour
// (exit status, signals, pipes) is tested in test/cli with the built bin, by the demo and by
// the packed package.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInProcess } from '../cli/helpers.js';
import type { CliResult } from '../cli/helpers.js';

/** Runs one command as the bin would: `runInProcess` unless a test gives its own. */
export type CliRunner = (argv: string[], cwd: string, stdin: Buffer, env: NodeJS.ProcessEnv) => Promise<CliResult>;

export interface CliServer {
  /** The port on 127.0.0.1: the shim reads it from TOOL_REGISTRY_TEST_CLI_PORT. */
  readonly port: number;
  close(): Promise<void>;
}

/** Resolves with the next newline-terminated line the socket sends. */
function readLine(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      const newline = text.indexOf('\n');
      if (newline < 0) return;
      socket.off('data', onData);
      resolve(text.slice(0, newline));
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('end', () => reject(new Error('the shim closed the connection before its request ended')));
  });
}

/** NUL-separated fields (`printf '%s\0'`, `env -0`), each ended by a NUL. */
function fields(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return text === '' ? [] : text.slice(0, -1).split('\0');
}

/**
 * One command: the shim gets a fresh folder, writes its arguments, working folder and standard
 * input there and says `go PID`; its environment is the shim's own, read from
 * /proc/PID/environ (what `env -0` printed, without the variables bash itself sets: PWD, SHLVL,
 * `_`, which the command reads none of). The command's output goes back as two files and its
 * exit code as a line. The folder goes when the connection closes, that is when the shim exits.
 */
async function answer(socket: Socket, runner: CliRunner): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'tool-registry-cli-'));
  socket.once('close', () => rmSync(folder, { recursive: true, force: true }));
  socket.write(`${folder}\n`);
  let outcome: CliResult;
  try {
    const pid = /^go (\d+)$/.exec(await readLine(socket))?.[1];
    if (pid === undefined) throw new Error('the shim did not say which process it is');
    const env: NodeJS.ProcessEnv = {};
    for (const entry of fields(`/proc/${pid}/environ`)) {
      const equals = entry.indexOf('=');
      if (equals > 0) env[entry.slice(0, equals)] = entry.slice(equals + 1);
    }
    const cwd = readFileSync(join(folder, 'cwd'), 'utf8').replace(/\n$/, '');
    outcome = await runner(fields(join(folder, 'argv')), cwd, readFileSync(join(folder, 'stdin')), env);
  } catch (error) {
    // A fault of this harness, not of the command: the example fails and says so.
    outcome = { code: 70, stdout: '', stderr: `doc-examples CLI server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n` };
  }
  writeFileSync(join(folder, 'stdout'), outcome.stdout);
  writeFileSync(join(folder, 'stderr'), outcome.stderr);
  // Text (no NUL byte, which a bash string cannot hold) the shim prints with bash's builtins.
  const text = !outcome.stdout.includes('\0') && !outcome.stderr.includes('\0');
  socket.write(`${outcome.code ?? 1} ${text ? 'text' : 'bytes'}\n`);
}

/** Listens on 127.0.0.1 and a free port; each connection is one command. */
export async function serveCli(runner: CliRunner = runInProcess): Promise<CliServer> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    void answer(socket, runner);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the CLI server has no port');
  return { port: address.port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * The examples' `tool-registry`: the command (the first argument that is not an option or
 * --db's value) serve, watch or mcp runs the built bin, as it must run until a signal; any
 * other goes to the test's process (serveCli) through bash's /dev/tcp. Exit 70 when that
 * cannot be reached. External programs per command: a `cat` for standard input unless it is
 * /dev/null (and for output holding a NUL byte); the rest is bash's own builtins (a program
 * costs about 10 ms of CPU here, and the examples run about a hundred commands).
 */
export function toolRegistryShim(bin: string): string {
  return `#!/bin/bash
skip=
for arg in "$@"; do
  if [ -n "$skip" ]; then skip=; continue; fi
  case $arg in
    --db) skip=1 ;;
    -*) ;;
    serve|watch|mcp) exec node ${JSON.stringify(bin)} "$@" ;;
    *) break ;;
  esac
done
if [ -z "\${TOOL_REGISTRY_TEST_CLI_PORT:-}" ]; then
  echo 'tool-registry shim: TOOL_REGISTRY_TEST_CLI_PORT is not set' >&2
  exit 70
fi
if ! { exec 3<>"/dev/tcp/127.0.0.1/$TOOL_REGISTRY_TEST_CLI_PORT"; } 2>/dev/null; then
  echo "tool-registry shim: nothing listens on 127.0.0.1:$TOOL_REGISTRY_TEST_CLI_PORT" >&2
  exit 70
fi
if ! IFS= read -r folder <&3; then
  echo 'tool-registry shim: the test process closed the connection' >&2
  exit 70
fi
if [ /dev/stdin -ef /dev/null ]; then : >"$folder/stdin"; else cat >"$folder/stdin"; fi
if [ $# -gt 0 ]; then printf '%s\\0' "$@"; fi >"$folder/argv"
pwd -P >"$folder/cwd"
echo "go $$" >&3
if ! IFS=' ' read -r code how <&3; then
  echo 'tool-registry shim: the test process did not answer' >&2
  exit 70
fi
if [ "$how" = text ]; then
  # A closed pipe ends the printing, not the shim (as it ended cat): the exit code is the command's.
  trap '' PIPE
  mapfile -d '' out <"$folder/stdout"
  printf '%s' "\${out[@]}" 2>/dev/null || true
  mapfile -d '' out <"$folder/stderr"
  printf '%s' "\${out[@]}" >&2 2>/dev/null || true
else
  if [ -s "$folder/stdout" ]; then cat "$folder/stdout"; fi
  if [ -s "$folder/stderr" ]; then cat "$folder/stderr" >&2; fi
fi
exit "$code"
`;
}
