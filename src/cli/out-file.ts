// Every file the command writes goes through here (`export --out`, in each format): the
// path is checked first, then the file is written whole (a temporary file beside it, synced,
// renamed into place). A symbolic link is written through (it stays a link, its target
// gets the new content); anything that is not a regular file (a FIFO, a device such as
// /dev/null, a socket, a directory) is refused, never replaced and never opened to wait on.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fstatSync, fsyncSync, lstatSync, openSync, readSync, readlinkSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError, describeSystemError } from './errors.js';

/** Linux's own limit on links followed in one path (ELOOP beyond it). */
const MAX_LINKS = 40;
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** The files SQLite keeps beside a database: replacing the WAL loses the commits it holds that are not in the database yet. */
const SQLITE_COMPANIONS: readonly string[] = ['-wal', '-shm', '-journal'];

/** What a file that is not a regular file is, for a message. */
function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Where writing `path` lands, and the mode of the file it replaces (undefined: a new file). */
export interface OutTarget {
  readonly path: string;
  readonly mode: number | undefined;
}

/**
 * Where `--out path` writes: `path`, or the file its symbolic links lead to (which may not
 * exist yet). Refuses (IO_ERROR) a target that is not a regular file, a SQLite database
 * (`--out tools.db` typed for `--db tools.db` would swap the registry for its JSON), and a
 * loop of links. Never opens anything but a regular file, so a FIFO cannot make it wait.
 */
export function outTarget(path: string): OutTarget {
  let current = path;
  for (let links = 0; ; links++) {
    let stats: Stats;
    try {
      stats = lstatSync(current);
    } catch (error) {
      // Missing (a new file, or a dangling link's target): the write creates it, or says why not.
      if ((error as { code?: unknown }).code === 'ENOENT') return { path: current, mode: undefined };
      throw new CliError('IO_ERROR', `cannot write ${path}: ${describeSystemError(error)}`, { cause: error });
    }
    if (stats.isSymbolicLink()) {
      if (links === MAX_LINKS) throw new CliError('IO_ERROR', `refusing to write ${path}: too many levels of symbolic links`);
      current = resolve(dirname(current), readlinkSync(current));
      continue;
    }
    const shown = current === path ? path : `${path} (a link to ${current})`;
    if (!stats.isFile()) {
      throw new CliError(
        'IO_ERROR',
        `refusing to write ${shown}: it is ${kindOf(stats)}, and --out replaces a regular file (to write to it, leave out --out and redirect the output: > ${path})`,
      );
    }
    if (isSqliteFile(current)) {
      throw new CliError('IO_ERROR', `refusing to write ${shown}: it is a SQLite database file, and --out replaces the file (did you mean --db?)`);
    }
    const companion = SQLITE_COMPANIONS.find((suffix) => current.endsWith(suffix) && isSqliteFile(current.slice(0, -suffix.length)));
    if (companion !== undefined) {
      throw new CliError('IO_ERROR', `refusing to write ${shown}: it belongs to the SQLite database ${current.slice(0, -companion.length)} (its ${companion.slice(1)} file), and --out replaces the file`);
    }
    return { path: current, mode: stats.mode & 0o7777 };
  }
}

/** Whether a regular file begins with SQLite's header; a file that cannot be read is left to the write to report. */
function isSqliteFile(path: string): boolean {
  let fd: number;
  try {
    // O_NONBLOCK and O_NOFOLLOW: should it have become a FIFO or a link since lstat, no wait and no following.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return false;
  }
  try {
    if (!fstatSync(fd).isFile()) return false;
    const header = Buffer.alloc(SQLITE_HEADER.length);
    return readSync(fd, header, 0, header.length, 0) === header.length && header.equals(SQLITE_HEADER);
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

const HELD_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Writes the file whole or not at all, at `outTarget(path)` (checked again: the file may have
 * changed since the command checked it first): a temporary file beside the target, synced,
 * then renamed over it, keeping the replaced file's permissions. Ctrl-C (or SIGTERM, SIGHUP)
 * while it writes would end the process with the temporary file half-written and left
 * behind; the signal is held until the file is renamed into place, then takes effect (the
 * process still ends by it).
 */
export async function writeFileAtomically(path: string, produce: (write: (text: string) => void) => void): Promise<void> {
  const target = outTarget(path);
  let received: NodeJS.Signals | undefined;
  const hold = (signal: NodeJS.Signals): void => {
    received ??= signal;
  };
  for (const signal of HELD_SIGNALS) process.on(signal, hold);
  try {
    writeWhole(path, target, produce);
  } finally {
    // A signal that came during the synchronous write is read in the loop's next poll phase:
    // the first immediate may run before it, the second runs after it.
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    for (const signal of HELD_SIGNALS) process.off(signal, hold);
  }
  if (received !== undefined) process.kill(process.pid, received);
}

function writeWhole(shown: string, target: OutTarget, produce: (write: (text: string) => void) => void): void {
  const temporary = join(dirname(target.path), `.${basename(target.path)}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = openSync(temporary, 'wx');
    const handle = fd;
    if (target.mode !== undefined) fchmodSync(fd, target.mode);
    produce((text) => {
      writeSync(handle, text);
    });
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, target.path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temporary);
    } catch {
      // It was never created, or the rename already moved it.
    }
    throw new CliError('IO_ERROR', `cannot write ${shown}: ${describeSystemError(error)}`, { cause: error });
  }
}
