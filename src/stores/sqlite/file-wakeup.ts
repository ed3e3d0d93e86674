// Wake-ups from the file system for the watch poller. A commit by any process writes the
// database file, its -wal or its -journal with write(2), which inotify (fs.watch on the folder:
// the -wal file comes and goes) reports without a timer. The poller still looks on a timer, more
// rarely, in case an event never comes (a file system that does not report writes).
import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface DatabaseFilesWatch {
  /** False once the watcher failed (and closed itself): the poller must not count on it. */
  readonly active: boolean;
  close(): void;
}

/**
 * Calls `onWrite` whenever the database file at the absolute `path` or one of its journals is
 * written or replaced; `undefined` when its folder cannot be watched (no inotify instances
 * left, say).
 */
export function watchDatabaseFiles(path: string, onWrite: () => void): DatabaseFilesWatch | undefined {
  const base = basename(path);
  const names = new Set([base, `${base}-wal`, `${base}-journal`]);
  let active = true;
  let watcher: FSWatcher;
  try {
    // Not persistent: an idle watch must not keep the process alive, as its timer does not.
    watcher = watch(dirname(path), { persistent: false }, (_event, name) => {
      // Some platforms give no name: look anyway.
      if (name === null || names.has(name)) onWrite();
    });
  } catch {
    return undefined;
  }
  watcher.on('error', () => {
    active = false;
    watcher.close();
  });
  return {
    get active() {
      return active;
    },
    close() {
      active = false;
      watcher.close();
    },
  };
}
