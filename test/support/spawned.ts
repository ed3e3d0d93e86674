// Runs a process to its end and collects its output as text, without blocking the event loop
// (several can run at once); the one place the tests' asynchronous spawns read their streams.
import { spawn } from 'node:child_process';
import type { SpawnOptions } from 'node:child_process';

export interface Finished {
  /** The exit code, or null when a signal (or the timeout) ended the process. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Spawns `command` with standard input closed (or holding `input`) and resolves when it has
 * exited and its streams closed.
 */
export function runToEnd(command: string, args: readonly string[], options: Omit<SpawnOptions, 'stdio'> & { input?: string }): Promise<Finished> {
  const { input, ...spawnOptions } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...spawnOptions, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    // A process that exits without reading its input must not fail the test with EPIPE.
    child.stdin?.on('error', () => {});
    child.stdin?.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
