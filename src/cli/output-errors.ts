// How the bin answers a write error of its standard output or standard error (main.ts installs
// it on the process's streams): one line naming the stream and the system's reason, and exit 1.
import { writeSync } from 'node:fs';
import { EXIT_ERROR, describeSystemError, escapeControls } from './errors.js';

type Stream = 'standard output' | 'standard error';

/**
 * The command whose action runs (set by the program), whether it may change what is stored, and
 * what to add when its output is lost: a command with a note (`token create`) fails on a closed
 * pipe too, since its output was its product.
 */
let running: { name: string; changes: boolean; note?: string } | undefined;

/** What stops a command that runs until stopped (`watch`, `mcp`) when its reader has gone. */
const onReaderGone = new Set<() => void>();

/** While a server owns the process (`serve`): its lost output is handed to it, and it goes on. */
let serving: ((stream: Stream, error: NodeJS.ErrnoException) => void) | undefined;

/** Called by the program before a command's action runs. */
export function commandStarted(name: string, changes: boolean): void {
  running = { name, changes };
}

/** What the line of a lost standard output adds for this command (`token create`: its secret was never shown); a closed pipe is then a failure too. */
export function whenOutputLost(note: string): void {
  if (running !== undefined) running.note = note;
}

/**
 * Calls `stop` when standard output's reader goes away (EPIPE) while the command runs, as a stop
 * signal would: the command ends as it ends then, with its own status. Returns the disposer.
 */
export function stopWhenReaderGone(stop: () => void): () => void {
  onReaderGone.add(stop);
  return () => onReaderGone.delete(stop);
}

/**
 * From now until the process ends, a write error of either stream is `lost`'s to answer and the
 * process goes on: a server's output is a notice (`listening on`) and its log, not its work.
 */
export function serveThroughOutputErrors(lost: (stream: Stream, error: NodeJS.ErrnoException) => void): void {
  serving = lost;
}

/**
 * `error IO_ERROR: cannot write standard output: REASON`; for a command that may change what is
 * stored, that its change stands: exit 1 must not read as "register failed" (it committed before it printed).
 */
export function outputFailureLine(stream: Stream, error: unknown): string {
  const done = running?.changes === true ? `; ${running.name} ran: what it changed stays committed, only its output is lost${running.note === undefined ? '' : `: ${running.note}`}` : '';
  return escapeControls(`error IO_ERROR: cannot write ${stream}: ${describeSystemError(error)}${done}`);
}

/**
 * Standard output: the command stops at the first line it cannot write (exit 1, or the code of a
 * failure it had already), as `ls` does. A closed pipe (`| head`) is no error: the command runs
 * to its end with its output discarded and exits with its own status, 0 when it succeeded and
 * its failure's code when it failed (`verify | head -1` on a damaged database is still 1); one
 * that runs until stopped is stopped; one whose output is its product (`token create`: the
 * secret) fails as on any other write error. Standard error: the command goes on (what failed
 * there was a warning or the error line itself) and ends with exit 1 unless it failed already,
 * its own code kept; the line saying so is tried once, as the process ends. A closed pipe there
 * (`2>&1 | head -1`) leaves the exit code as it is.
 */
export function watchOutputErrors(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (serving !== undefined) return serving('standard output', error);
    // Exiting here (0) ended a command that had failed, or was about to, with success.
    if (error.code === 'EPIPE' && running?.note === undefined) {
      for (const stop of onReaderGone) stop();
      return;
    }
    process.stderr.write(`${outputFailureLine('standard output', error)}\n`);
    const failedAlready = typeof process.exitCode === 'number' && process.exitCode !== 0;
    process.exit(failedAlready ? process.exitCode : EXIT_ERROR);
  });
  let stderrFailure: NodeJS.ErrnoException | undefined;
  process.stderr.on('error', (error: NodeJS.ErrnoException) => {
    if (serving !== undefined) return serving('standard error', error);
    if (error.code === 'EPIPE' || stderrFailure !== undefined) return;
    stderrFailure = error;
    const line = outputFailureLine('standard error', error);
    process.on('exit', () => {
      if (process.exitCode === undefined || process.exitCode === 0) process.exitCode = EXIT_ERROR;
      try {
        writeSync(2, `${line}\n`);
      } catch {
        // The stream that would tell is the one that failed.
      }
    });
  });
}
