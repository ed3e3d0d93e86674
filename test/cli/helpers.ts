// Runs the command in throwaway folders: in this process through the CLI's own entry
// (`run(argv, io)`, what the bin calls) for what a command does, and as a subprocess of the
// BUILT package for what only a process shows (exit status, signals, pipes, races).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, vi } from 'vitest';
import { run } from '../../src/cli/program.js';
import { openSqliteToolRegistry } from '../../src/index.js';
import type { SqliteToolRegistry, ToolSpecInput } from '../../src/index.js';
import { runToEnd } from '../support/spawned.js';
import { countWaiter } from '../support/waiting.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'cli', 'main.js');

/**
 * Gives this file's tests 180 s: a test may start several node processes (about half a
 * second each, more on a busy machine); the demo test starts over twenty. Called at the top
 * of each file: with one module graph per worker (vitest.config.ts) this module is evaluated
 * once, and the timeout is set per file.
 */
export function useChildProcessTimeout(): void {
  vi.setConfig({ testTimeout: 180_000 });
}

if (!existsSync(CLI)) {
  throw new Error(`${CLI} is missing: build first (npm run build)`);
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly cwd: string;
  /** Standard input; default empty. */
  readonly input?: string | Buffer;
  /** Added to the environment (TOOL_REGISTRY_DB is removed unless given here). */
  readonly env?: Record<string, string>;
}

/** The environment of a child: ours, without TOOL_REGISTRY_DB, plus `extra`. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.TOOL_REGISTRY_DB;
  return { ...env, ...extra };
}

/** Collects what a command writes to one of its streams. */
class Collected extends Writable {
  readonly #chunks: Buffer[] = [];
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.#chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    done();
  }
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

/** One in-process command at a time: each runs in its own working folder (process.chdir). */
let inProcessQueue: Promise<unknown> = Promise.resolve();

/**
 * Runs the command in this process, as the bin does (`run(argv, io)` with the process's
 * streams), in `cwd`, with exactly the environment `env`. A command costs milliseconds here
 * against about half a second of CPU for a `node` process (docs/testing.md).
 */
export function runInProcess(args: readonly string[], cwd: string, input: string | Buffer, env: NodeJS.ProcessEnv): Promise<CliResult> {
  const running = inProcessQueue.then(async () => {
    const stdout = new Collected();
    const stderr = new Collected();
    const stdin = Readable.from(input.length === 0 ? [] : [Buffer.isBuffer(input) ? input : Buffer.from(input, 'utf8')]);
    const before = process.cwd();
    process.chdir(cwd);
    try {
      const code = await run(args, { stdin, stdout, stderr, env });
      return { code, stdout: stdout.text(), stderr: stderr.text() };
    } finally {
      process.chdir(before);
    }
  });
  inProcessQueue = running.catch(() => {});
  return running;
}

/**
 * Runs the command in this process (`runInProcess`) in `options.cwd`, with the child
 * environment `spawnCli` would give a process; `spawnCli` runs the built bin where the
 * process itself is under test.
 */
export function runCli(args: readonly string[], options: RunOptions): Promise<CliResult> {
  return runInProcess(args, options.cwd, options.input ?? '', childEnv(options.env));
}

/** Runs the BUILT command as a subprocess (stdin from `options.input`) and waits for its exit. */
export function spawnCli(args: readonly string[], options: RunOptions): CliResult {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    input: options.input ?? '',
    env: childEnv(options.env),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (result.error !== undefined) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the BUILT command as a subprocess asynchronously, so several can run at once (standard input empty). */
export function runCliAsync(args: readonly string[], options: Omit<RunOptions, 'input'>): Promise<CliResult> {
  return runToEnd(process.execPath, [CLI, ...args], { cwd: options.cwd, env: childEnv(options.env) });
}

/**
 * Runs the BUILT command once per input, as `ARGS... FIFO` with each input behind a FIFO of
 * its own, and starts them at one moment: opening a FIFO to write waits until the command
 * opens it to read (it has started, loaded the library and parsed its arguments), and the
 * inputs are given only when every command waits for its own. What a command does next
 * (open the database, read, write) then overlaps with what the others do, as in a race of
 * processes started by one deploy. `name` keeps the FIFOs of several races in `cwd` apart.
 */
export async function raceCli(name: string, runs: readonly { readonly args: readonly string[]; readonly input: unknown }[], options: Omit<RunOptions, 'input'>): Promise<CliResult[]> {
  const fifos = runs.map((_, i) => join(options.cwd, `${name}-${i}.fifo`));
  execFileSync('mkfifo', fifos);
  const running = runs.map((run, i) => runCliAsync([...run.args, fifos[i] as string], options));
  // A command that ends before it opens its FIFO fails the race (its open would wait for ever).
  const ended = running.map(async (result, i): Promise<never> => {
    const { code, stderr } = await result;
    throw new Error(`${runs[i]?.args.join(' ')} ended before reading its input (${String(code)}): ${stderr}`);
  });
  for (const one of ended) one.catch(() => {}); // it rejects after the race too, when the command is done
  const opening = fifos.map((fifo) => open(fifo, 'w'));
  const opened = await Promise.allSettled(opening.map((one, i) => Promise.race([one, ended[i] as Promise<never>])));
  const failed = opened.find((one) => one.status === 'rejected');
  if (failed !== undefined) {
    // Ends what waits: an open no command will meet gets a reader of ours (O_NONBLOCK never
    // waits), and every writer closes empty, so the commands that started end too.
    await Promise.all(fifos.map(async (fifo, i) => {
      const reader = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      await (await (opening[i] as Promise<FileHandle>)).close();
      await reader.close();
    }));
    throw failed.reason;
  }
  const writers = opened.map((one) => (one as PromiseFulfilledResult<FileHandle>).value);
  for (const [i, writer] of writers.entries()) await writer.write(JSON.stringify(runs[i]?.input));
  // The end of its input is each command's start.
  await Promise.all(writers.map((writer) => writer.close()));
  return Promise.all(running);
}

/** A command that keeps running (watch): its output so far, a wait for its first lines, its exit. */
export interface RunningCli {
  readonly child: ChildProcess;
  /** Resolves once stdout holds at least `count` non-empty lines, or after `deadlineMs` (default 30 s: the caller's assertions then show what came). */
  lines(count: number, deadlineMs?: number): Promise<void>;
  stdout(): string;
  stderr(): string;
  /** Its exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
}

/** Starts the command and leaves it running; the caller ends it (child.kill). */
export function startCli(args: readonly string[], options: Omit<RunOptions, 'input'>): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: options.cwd, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const lines = countWaiter(() => stdout.split('\n').filter((line) => line !== '').length, 30_000);
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    lines.check();
  });
  return {
    child,
    lines: (count, deadlineMs) => lines.wait(count, deadlineMs),
    stdout: () => stdout,
    stderr: () => stderr,
    exited: new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code))),
  };
}

/**
 * The URL a `serve` child prints (`listening on URL`) once it listens; rejects when the child
 * exits first. Its stdout must be piped and not read elsewhere.
 */
export async function listeningUrl(child: ChildProcess): Promise<string> {
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  let listening = false;
  const exited = once(child, 'exit').then(([code]) => {
    if (!listening) throw new Error(`serve exited (${String(code)}) before listening`);
  });
  exited.catch(() => {});
  while (!/listening on (http:\/\/\S+)/.test(out)) await Promise.race([once(child.stdout as NodeJS.ReadableStream, 'data'), exited]);
  listening = true;
  return (/listening on (http:\/\/\S+)/.exec(out) as RegExpExecArray)[1] as string;
}

/** Stops a `serve` child that may still run (SIGTERM, then waits for its exit). */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** The CODE of the first stderr line `error CODE: message`, or undefined. */
export function errorCode(stderr: string): string | undefined {
  return /^error ([A-Z_]+): \S/.exec(stderr)?.[1];
}

/** The indented `  at PATH: message` lines under an error, as paths. */
export function issuePaths(stderr: string): string[] {
  return stderr
    .split('\n')
    .slice(1)
    .flatMap((line) => /^ {2}at (\S+): /.exec(line)?.[1] ?? []);
}

/** A fresh folder under the OS temp folder per test, removed afterwards. */
export function useTempDir(): () => string {
  let current: string | undefined;
  afterEach(() => {
    if (current !== undefined) rmSync(current, { recursive: true, force: true });
    current = undefined;
  });
  return () => (current ??= mkdtempSync(join(tmpdir(), 'tool-registry-cli-')));
}

export function spec(toolName: string, version: string | null = '1.0.0', extra: Partial<ToolSpecInput> = {}): ToolSpecInput {
  return {
    tool_name: toolName,
    version,
    description: `the ${toolName} tool`,
    input_schema: { type: 'object', properties: { q: { type: 'string' } } },
    output_schema: { type: 'object' },
    tags: [],
    ...extra,
  };
}

export function writeJson(path: string, value: unknown): string {
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

/** Opens the same file with the library, read-only, for comparing. */
export async function withLibrary<T>(filename: string, work: (registry: SqliteToolRegistry) => Promise<T>): Promise<T> {
  const registry = await openSqliteToolRegistry({ filename, readonly: true });
  try {
    return await work(registry);
  } finally {
    await registry.close();
  }
}

/** What the library returns, as the JSON round trip the command's output goes through. */
export function plain<T>(value: T): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

export function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}
