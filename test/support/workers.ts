// Child processes for the multi-process tests: a script (test/fixtures/*-worker.mjs) gets its
// job as JSON in argv, or job after job on stdin (a pooled worker), and prints one JSON line
// per event ({"event":"ready"}, {"event":"done",...}).
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
  /** Resolves with the first message of this event that `where` accepts (rejects if the job ends first). */
  next(event: WorkerMessage['event'], where?: (message: WorkerMessage) => boolean): Promise<WorkerMessage>;
  /** Resolves when the process has exited, with its exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when the job is over: its "done" message came, or the process exited. */
  readonly finished: Promise<void>;
  readonly stderr: () => string;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** The messages of one job, and the test's waits for them. */
class JobMessages {
  readonly #messages: WorkerMessage[] = [];
  readonly #waiters: { event: string; where: (m: WorkerMessage) => boolean; resolve: (m: WorkerMessage) => void; reject: (e: Error) => void }[] = [];
  #ended: string | undefined;
  #finish!: () => void;
  readonly finished = new Promise<void>((resolve) => (this.#finish = resolve));

  add(message: WorkerMessage): void {
    this.#messages.push(message);
    if (message.event === 'done') this.#finish();
    this.#flush();
  }

  /** No more messages will come: `why` is told to every wait not yet met. */
  end(why: string): void {
    this.#ended = why;
    this.#finish();
    this.#flush();
  }

  next(event: string, where: (m: WorkerMessage) => boolean = () => true): Promise<WorkerMessage> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ event, where, resolve, reject });
      this.#flush();
    });
  }

  #flush(): void {
    // A job's "done" is its last message: what it has not said by then it never will (a job
    // that failed before "ready" left a race waiting for ever, and the run hung).
    const done = this.#messages.find((m) => m.event === 'done');
    for (const waiter of [...this.#waiters]) {
      const found = this.#messages.find((m) => m.event === waiter.event && waiter.where(m));
      if (found !== undefined) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.resolve(found);
      } else if (done !== undefined) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.reject(new Error(`the job was done before "${waiter.event}": ${JSON.stringify(done)}`));
      } else if (this.#ended !== undefined) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        waiter.reject(new Error(`worker ended before "${waiter.event}": ${this.#ended}`));
      }
    }
  }
}

/** Calls `line` with each JSON line the process prints, and collects its stderr. */
function readLines(child: ChildProcess, line: (message: WorkerMessage) => void): () => string {
  let stderr = '';
  let buffer = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      line(JSON.parse(buffer.slice(0, newline)) as WorkerMessage);
      buffer = buffer.slice(newline + 1);
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return () => stderr;
}

const exitOf = (child: ChildProcess): Promise<Exit> => new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));

/** Runs `node script '<job as JSON>'`, a process of its own; `nodeFlags` go to node itself (such as a heap limit). */
export function spawnScript(script: string, job: Record<string, unknown>, nodeFlags: readonly string[] = []): Worker {
  const child = spawn(process.execPath, [...nodeFlags, script, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const messages = new JobMessages();
  const stderr = readLines(child, (message) => messages.add(message));
  const exited = exitOf(child).then((exit) => {
    messages.end(`exited (${exit.signal ?? exit.code}); stderr: ${stderr()}`);
    return exit;
  });
  return { child, exited, finished: messages.finished, stderr, next: (event, where) => messages.next(event, where) };
}

/**
 * A worker process that runs job after job: started as `node script --serve`, it reads one
 * job per line on stdin (test/fixtures/worker-protocol.mjs, `runJobs`) and exits when stdin
 * ends, so a test run that ends takes its idle workers with it.
 */
interface PooledProcess {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  readonly exited: Promise<Exit>;
  /** The job it runs now, if any. */
  job: JobMessages | undefined;
}

/** Idle worker processes, by script. */
const idle = new Map<string, PooledProcess[]>();

/** Starts a worker that joins `idleList` after each job's "done", and leaves it when it exits. */
function startPooled(script: string, idleList: PooledProcess[]): PooledProcess {
  const child = spawn(process.execPath, [script, '--serve'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const pooled: PooledProcess = {
    child,
    job: undefined,
    // No output comes after 'close', so a "done" here is always of a live process.
    stderr: readLines(child, (message) => {
      const job = pooled.job;
      job?.add(message);
      if (message.event === 'done' && job !== undefined) {
        pooled.job = undefined;
        idleList.push(pooled);
      }
    }),
    exited: exitOf(child).then((exit) => {
      if (idleList.includes(pooled)) idleList.splice(idleList.indexOf(pooled), 1);
      pooled.job?.end(`exited (${exit.signal ?? exit.code}); stderr: ${pooled.stderr()}`);
      return exit;
    }),
  };
  // Idle workers must not keep a test process alive.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr] as unknown as ({ unref?: () => void } | null)[]) stream?.unref?.();
  return pooled;
}

/**
 * Runs `job` on a worker process of `script` that earlier jobs may have used: an idle one, or
 * a new one. Starting node and the library costs about half a second of CPU, most of what a
 * race of six processes costs; the race is the same between live processes. A job still
 * running when its test ends is killed with its process (killWorkersAfterEach).
 */
export function runPooled(script: string, job: Record<string, unknown>): Worker {
  if (!idle.has(script)) idle.set(script, []);
  const idleList = idle.get(script)!;
  const pooled = idleList.pop() ?? startPooled(script, idleList);
  const messages = new JobMessages();
  pooled.job = messages;
  pooled.child.stdin!.write(`${JSON.stringify(job)}\n`);
  return { child: pooled.child, exited: pooled.exited, finished: messages.finished, stderr: pooled.stderr, next: (event, where) => messages.next(event, where) };
}

/**
 * Starts `script` once per job, each on a pooled worker process (runPooled), waits until every
 * one is ready, then releases them at once through a start file, and returns each one's "done"
 * message in job order. `onStart` sees each worker as it starts (so a caller can kill what is
 * left when a test fails).
 */
export async function raceScripts(
  script: string,
  goFile: string,
  jobs: readonly Record<string, unknown>[],
  onStart: (worker: Worker) => void = () => {},
): Promise<WorkerMessage[]> {
  const workers = jobs.map((job) => runPooled(script, { ...job, go: goFile }));
  workers.forEach(onStart);
  await Promise.all(workers.map((worker) => worker.next('ready')));
  writeFileSync(goFile, 'go');
  return Promise.all(workers.map((worker) => worker.next('done')));
}


/**
 * For a test file whose tests must not leave processes behind: returns `track`, which the
 * file passes each worker it starts; after each test, the process of every tracked job still
 * running is killed (SIGKILL).
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
    void worker.finished.then(() => running.delete(worker));
    return worker;
  };
}
