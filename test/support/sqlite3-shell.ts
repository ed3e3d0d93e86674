// The stock sqlite3 shell (Debian 12 ships 3.40; .ci/run installs it). Tests that need it
// are skipped, and say why in their title, on a machine without it.
import { spawnSync } from 'node:child_process';

/** The shell to run: $SQLITE3, else `sqlite3` on PATH. */
export const SQLITE3 = process.env.SQLITE3 ?? 'sqlite3';

/** Whether the shell runs here. */
export const HAS_SQLITE3 = spawnSync(SQLITE3, ['-version'], { encoding: 'utf8' }).status === 0;

/** Appended to the title of a test that needs the shell: empty when it is installed. */
export const NEEDS_SQLITE3 = HAS_SQLITE3 ? '' : ` [SKIPPED: the sqlite3 shell (${SQLITE3}) is not installed]`;
