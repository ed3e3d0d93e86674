// SIGINT and SIGTERM for the commands that run until stopped (watch, serve, mcp), caught from the
// first line of their action: they were caught only once the command ran (the database open, the
// server listening), and a signal before that killed the process (exit 143), not exit 0 as documented.
import { stopWhenReaderGone } from './output-errors.js';

/** The stop signals of one command; `dispose` when it ends. */
export interface StopSignals {
  /**
   * The command runs now (its feed, server or session is up): a signal from here aborts the
   * returned AbortSignal and is caught no longer (a second one takes its default action, as
   * `process.once` had it), so the command stops gracefully.
   */
  running(): AbortSignal;
  /** Removes the handlers (the command ended). */
  dispose(): void;
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

let endedBySignal = false;
/** Whether the process is ending because a stop signal came while a command started (its 'exit' listeners must not blame anything else). */
export function endingOnStopSignal(): boolean {
  return endedBySignal;
}

/**
 * Catches SIGINT and SIGTERM now. Until `running()`, a signal ends the process at once with
 * exit 0 when the command owns it (`owned`: its output is the process's): nothing has been
 * printed yet, and what starts may not end by itself (an open waiting on a PostgreSQL server that
 * does not answer). Not owned (in-process use), the signal is only noted for `running()`.
 */
export function catchStopSignals(owned: boolean): StopSignals {
  const controller = new AbortController();
  let started = false;
  // A reader that stopped reading (`watch | head -1`) stops the command as a signal does, exit 0:
  // it ran on for good, printing to nobody.
  const stopReading = owned ? stopWhenReaderGone(() => controller.abort()) : undefined;
  const dispose = (): void => {
    for (const signal of SIGNALS) process.off(signal, onSignal);
    stopReading?.();
  };
  function onSignal(): void {
    if (!started && owned) {
      endedBySignal = true;
      process.exit(0);
    }
    dispose();
    controller.abort();
  }
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    running: () => {
      started = true;
      return controller.signal;
    },
    dispose,
  };
}
