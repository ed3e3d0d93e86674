// Progress for long imports and exports, on stderr and only when stderr is a terminal:
// pipelines and log files never see it.

/** Below this many tools an operation is quick and shows nothing. */
export const PROGRESS_MIN_TOOLS = 1000;

/** The smallest interval between two redraws. */
const REDRAW_MS = 100;

export interface Progress {
  /** Shows `text` in place of the previous line (throttled). */
  update(text: string, force?: boolean): void;
  /** Clears the line; the final result is printed by the command itself. */
  done(): void;
}

const SILENT: Progress = { update: () => undefined, done: () => undefined };

/** A progress line on `stream` when it is a terminal and the operation has at least `PROGRESS_MIN_TOOLS` tools. */
export function createProgress(
  stream: (NodeJS.WritableStream & { isTTY?: boolean }) | undefined,
  tools: number,
): Progress {
  if (stream === undefined || stream.isTTY !== true || tools < PROGRESS_MIN_TOOLS) return SILENT;
  let last = 0;
  let shown = false;
  return {
    update(text, force = false) {
      const now = Date.now();
      if (!force && shown && now - last < REDRAW_MS) return;
      last = now;
      shown = true;
      stream.write(`\r\x1b[2K${text}`);
    },
    done() {
      if (shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}
