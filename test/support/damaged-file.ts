// A SQLite file damaged after it was written, as a failing disk or a stray write leaves it.
import { closeSync, openSync, statSync, writeSync } from 'node:fs';

/**
 * Overwrites 20 pages in the middle of `file`: the header is intact, so the file opens, and
 * reads of those pages then fail with SQLITE_CORRUPT. The file must span well over 20 pages.
 */
export function damagePages(file: string): void {
  const size = statSync(file).size;
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, Buffer.alloc(4096 * 20, 0xff), 0, 4096 * 20, Math.min(4096 * 50, size - 4096 * 20));
  } finally {
    closeSync(fd);
  }
}
