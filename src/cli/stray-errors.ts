// What a tools module's careless work raises where nothing can catch it, heard by the commands
// that serve it (`mcp`, `serve --tools`) while they own the process.
import { escapeControls } from './errors.js';

/** A reason or exception in one line (an Error's name and message, controls escaped), whatever it is. */
export function reasonText(reason: unknown): string {
  let text: string;
  try {
    text = reason instanceof Error ? `${reason.name}: ${reason.message}` : (JSON.stringify(reason) ?? String(reason));
  } catch {
    return 'a value that cannot be shown';
  }
  return escapeControls(text);
}

/**
 * From now until the process exits (the caller owns it, and ends it at the latest a grace after
 * its calls were aborted): a promise that rejects with nothing to handle it (a handler's work
 * never awaited) is `warn`ed and `goesOn` goes on; Node's default ended the process (exit 1, a
 * stack) with every call in flight. Never released before the exit: the shutdown aborts the
 * calls, and work that rejects on its abort signal then fell to that default where a stop
 * exits 0. An exception thrown where nothing can catch it (in a timer) still ends the process,
 * as Node advises (its state is unknown after one), but as one line given to `fail` and exit 1,
 * not a stack.
 */
export function catchStrayErrors(goesOn: string, warn: (text: string) => void, fail: (text: string) => void): void {
  const rejected = (reason: unknown): void => warn(`a promise rejected and nothing handled it (a tool handler's work not awaited?); ${goesOn} goes on: ${reasonText(reason)}`);
  const thrown = (error: unknown): void => {
    try {
      fail(`an exception was thrown where nothing could catch it (in a timer or callback of the tools module?); the process ends, as Node advises: ${reasonText(error)}`);
    } finally {
      process.exit(1);
    }
  };
  process.on('unhandledRejection', rejected);
  process.on('uncaughtException', thrown);
}
