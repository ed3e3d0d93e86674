// Child processes for the multi-process tests: a script (test/fixtures/*-worker.mjs) gets its
// job as JSON in argv and prints one JSON line per event ({"event":"ready"}, {"event":"done",...}).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { afterEach } from 'vitest';

export interface WorkerMessage {
  /** 'ready', 'done', or a step a worker reports on the way (such as 'importing'). */
  readonly event: string;
  readonly ok?: boolean;
  /** Which one of a repeated event this is (such as the file a loop starts). */
  readonly index?: number;
  readonly result?: unknown;
  readonly error?: { name?: string; code?: string; context?: Record<string, unknown>; message: string; causeCode?: string };
}

export interface Worker {
  readonly child: ChildProcess;
  /** Resolves with the first message of this event that `where` accepts (rejects if the child exits first). */
  next(event: WorkerMessage['event'], where?: (message: WorkerMessage) => boolean): Promise<WorkerMessage>;
  /** Resolves when the process has exited, with its exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly stderr: () => string;
}

/** Runs `node script '<job as JSON>'`; `nodeFlags` go to node itself (such as a heap limit). */
export function spawnScript(script: string, job: Record<string, unknown>, nodeFlags: readonly string[] = []): Worker {
  const child = spawn(process.execPath, [...nodeFlags, script, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const messages: WorkerMessage[] = [];
  const waiters: { event: string; where: (m: WorkerMessage) => boolean; resolve: (m: WorkerMessage) => void; reject: (e: Error) => void }[] = [];
  let stderr = '';
  let buffer = '';
  let ended = false;
  const flush = () => {
    for (const waiter of [...waiters]) {
      const found = messages.find((m) => m.event === waiter.event && waiter.where(m));
      if (found !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(found);
      } else if (ended) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.reject(new Error(`worker exited before "${waiter.event}"; stderr: ${stderr}`));
      }
    }
  };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      messages.push(JSON.parse(buffer.slice(0, newline)) as WorkerMessage);
      buffer = buffer.slice(newline + 1);
    }
    flush();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      ended = true;
      flush();
      resolve({ code, signal });
    });
  });
  return {
    child,
    exited,
    stderr: () => stderr,
    next: (event, where = () => true) =>
      new Promise((resolve, reject) => {
        waiters.push({ event, where, resolve, reject });
        flush();
      }),
  };
}

/**
 * Starts `script` once per job as a child process, waits until every one is ready, then releases them at
 * once through a start file, and returns each one's "done" message in job order. `onSpawn` sees each
 * worker as it starts (so a caller can kill what is left when a test fails).
 */
export async function raceScripts(
  script: string,
  goFile: string,
  jobs: readonly Record<string, unknown>[],
  onSpawn: (worker: Worker) => void = () => {},
): Promise<WorkerMessage[]> {
  const workers = jobs.map((job) => spawnScript(script, { ...job, go: goFile }));
  workers.forEach(onSpawn);
  await Promise.all(workers.map((worker) => worker.next('ready')));
  writeFileSync(goFile, 'go');
  const done = await Promise.all(workers.map((worker) => worker.next('done')));
  await Promise.all(workers.map((worker) => worker.exited));
  return done;
}


/**
 * For a test file whose tests must not leave processes behind: returns `track`, which the
 * file passes each worker it starts; after each test, every tracked worker still running is
 * killed (SIGKILL).
 */
export function killWorkersAfterEach(): (worker: Worker) => Worker {
  const running = new Set<Worker>();
  afterEach(async () => {
    const left = [...running];
    running.clear();
    for (const worker of left) worker.child.kill('SIGKILL');
    await Promise.all(left.map((worker) => worker.exited));
  });
  return (worker) => {
    running.add(worker);
    void worker.exited.then(() => running.delete(worker));
    return worker;
  };
}
