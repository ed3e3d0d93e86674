// The gateway's own transport to a stdio upstream, handed to the SDK's client as any Transport.
// The SDK's StdioClientTransport gave no public way to what the gateway needs: its reader (to
// screen answers and drop notifications before its schema) and its child's input (to bound what
// the child leaves unread) were reached through its private `_readBuffer` and `_process`.
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Reads the child's output into messages (the SDK's `ReadBuffer`'s three methods). */
export interface StdioReader {
  append(chunk: Buffer): void;
  readMessage(): JSONRPCMessage | null;
  clear(): void;
}

export interface StdioUpstreamParameters {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly stderr: 'ignore' | 'inherit' | 'pipe';
  readonly reader: StdioReader;
  /** More of the gateway's messages than this left unread by the child: the next send fails, and `onUnread` hears why once. */
  readonly maxUnwrittenBytes: number;
  readonly onUnread: (why: string) => void;
}

/** After its input closes, how long the child has to exit before SIGTERM, and before SIGKILL. */
const TERM_AFTER_MS = 300;
const KILL_AFTER_MS = 800;

/** The children of this process's stdio upstreams not closed yet (their 'close' not heard). */
const living = new Set<ChildProcess>();

/** Whether `child` still runs: on Linux read from /proc (an exited child not yet reaped is a zombie, `Z`); elsewhere assumed. */
function stillRunning(child: ChildProcess): boolean {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return false;
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    return !/\) [ZX] /.test(stat);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT' || !readableProc();
  }
}

let procReadable: boolean | undefined;
function readableProc(): boolean {
  procReadable ??= statSync('/proc/self/stat', { throwIfNoEntry: false }) !== undefined;
  return procReadable;
}

/**
 * The process exits with stdio upstreams still running: no close ran (an uncaught exception,
 * a `process.exit()` anywhere; the commands close their gateways on every other path). As
 * `close()` does, but synchronously, since nothing asynchronous runs after 'exit': each child's
 * input is ended, each has up to TERM_AFTER_MS to exit, and SIGTERM goes to those still running.
 * They saw only their input end, and one that does not exit on it ran on without its parent.
 */
function endLivingChildren(): void {
  const children = [...living];
  for (const child of children) {
    try {
      child.stdin?.destroy();
    } catch {
      // closed already
    }
  }
  // Counted in pauses of 10 ms, not read from a clock (a test's fake clock may stand still).
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; waited < TERM_AFTER_MS && children.some(stillRunning); waited += 10) Atomics.wait(pause, 0, 0, 10);
  for (const child of children) {
    try {
      if (stillRunning(child)) child.kill('SIGTERM');
    } catch {
      // gone already
    }
  }
}

function adopt(child: ChildProcess): void {
  if (living.size === 0) process.on('exit', endLivingChildren);
  living.add(child);
}

function release(child: ChildProcess): void {
  if (living.delete(child) && living.size === 0) process.off('exit', endLivingChildren);
}

/**
 * A child process spoken to over its standard input and output, one JSON-RPC message a line, as
 * the SDK's StdioClientTransport does (its spawn options, no shell, and its default environment;
 * it spawns through cross-spawn, which on Windows also finds `.cmd` shims through PATHEXT, such
 * as `npx.cmd`: here node:child_process's spawn, the same on Linux and macOS, where we run), with
 * the gateway's reader, a bound on what the child leaves unread, one `drain` listener however
 * many writes wait (the SDK's transport added one for each: past 10, Node warned of a leak on
 * the serving process's stderr), and a close whose SIGTERM and SIGKILL come after 0.3 and 0.8 s
 * (the SDK's transport waited 2 s for each: `mcp` and `serve` exit within 2 s of a signal).
 */
export class StdioUpstreamTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #parameters: StdioUpstreamParameters;
  #child: ChildProcess | undefined;
  /** Settles when the child's input drains (or closes): what every write waiting for it waits on. */
  #drained: Promise<void> | undefined;
  /** Why the child's input is refused (it left too much unread), once it is. */
  #unread: string | undefined;
  #started = false;
  /** close() was called: nothing more is written. */
  #closing = false;

  constructor(parameters: StdioUpstreamParameters) {
    this.#parameters = parameters;
  }

  /** The child's pid once started (null before, or when it could not be spawned). */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /** The child's standard error when `stderr` is 'pipe', else null. */
  get stderr(): Readable | null {
    return this.#child?.stderr ?? null;
  }

  start(): Promise<void> {
    if (this.#started) throw new Error('StdioUpstreamTransport already started');
    this.#started = true;
    const { command, args, env, cwd, stderr, reader } = this.#parameters;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', stderr], shell: false, windowsHide: process.platform === 'win32', ...(cwd === undefined ? {} : { cwd }) });
      this.#child = child;
      adopt(child);
      child.on('error', (spawnError) => {
        // Not spawned: no child to end (an error of a running child, a failed kill, leaves it adopted until its close).
        if (child.pid === undefined) release(child);
        // Node names the program when the folder is missing: a row whose cwd was removed said `spawn node ENOENT`.
        const missing = (spawnError as NodeJS.ErrnoException).code === 'ENOENT' && cwd !== undefined && statSync(cwd, { throwIfNoEntry: false })?.isDirectory() !== true;
        const error = missing ? new Error(`its working folder (cwd) ${cwd} is not a folder`, { cause: spawnError }) : spawnError;
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        release(child);
        this.#child = undefined;
        reader.clear();
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          reader.append(chunk);
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close().catch(() => undefined);
          return;
        }
        this.#read();
      });
    });
  }

  #read(): void {
    for (;;) {
      try {
        const message = this.#parameters.reader.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (error) {
        // A line that is not a message: reported, and the next one read (as the SDK's transport does).
        this.onerror?.(error as Error);
      }
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#closing ? undefined : this.#child?.stdin;
    // A destroyed input (the child died, its close not heard yet) would never drain: refused now.
    if (stdin === undefined || stdin === null || stdin.destroyed) return Promise.reject(new Error('Not connected'));
    const { maxUnwrittenBytes, onUnread } = this.#parameters;
    if (this.#unread === undefined && stdin.writableLength > maxUnwrittenBytes) {
      this.#unread = `it left ${stdin.writableLength} bytes of the gateway's messages unread, over the bound of ${maxUnwrittenBytes} (maxUnwrittenBytes): closed as failed`;
      onUnread(this.#unread);
    }
    if (this.#unread !== undefined) return Promise.reject(new Error(this.#unread));
    if (stdin.write(serializeMessage(message))) return Promise.resolve();
    this.#drained ??= new Promise<void>((resolve) => {
      const done = (): void => {
        stdin.off('drain', done);
        stdin.off('close', done);
        this.#drained = undefined;
        resolve();
      };
      stdin.on('drain', done);
      stdin.on('close', done);
    });
    return this.#drained;
  }

  /** Ends the child's input, then SIGTERM after 0.3 s and SIGKILL after 0.8 s; settles when it has closed. */
  async close(): Promise<void> {
    this.#closing = true;
    const child = this.#child;
    if (child === undefined) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    try {
      child.stdin?.end();
    } catch {
      // closed already
    }
    const signal = (name: NodeJS.Signals) => (): void => {
      try {
        child.kill(name);
      } catch {
        // gone already
      }
    };
    const term = setTimeout(signal('SIGTERM'), TERM_AFTER_MS);
    const kill = setTimeout(signal('SIGKILL'), KILL_AFTER_MS);
    try {
      await closed;
    } finally {
      clearTimeout(term);
      clearTimeout(kill);
    }
  }
}
