// The stock `sqlite3` shell, for the operator tests. A machine without it skips those tests
// and says why; CI (.ci/run installs the shell and sets TOOL_REGISTRY_REQUIRE_SQLITE3=1)
// fails instead, so the shell's tests can never be skipped there unnoticed.
import { spawnSync } from 'node:child_process';

/** The shell's command: `$SQLITE3`, else `sqlite3` on PATH. */
export const SQLITE3 = process.env.SQLITE3 ?? 'sqlite3';

function probe(): string | undefined {
  const result = spawnSync(SQLITE3, ['-version'], { encoding: 'utf8' });
  if (result.status === 0 && /^3\.\d+/.test(result.stdout)) return undefined;
  const why = result.error !== undefined ? String((result.error as NodeJS.ErrnoException).code ?? result.error) : `exit ${String(result.status)}`;
  const reason = `no sqlite3 shell (${SQLITE3}: ${why}); install it (apt-get install sqlite3) or set SQLITE3 to run these tests`;
  if (process.env.TOOL_REGISTRY_REQUIRE_SQLITE3 === '1') throw new Error(`TOOL_REGISTRY_REQUIRE_SQLITE3=1 but ${reason}`);
  return reason;
}

/** Why the shell's tests are skipped here, or `undefined` when the shell is there. */
export const sqlite3Missing: string | undefined = probe();

/** For `beforeEach`: skips the test, with the reason, when there is no shell. */
export function skipWithoutSqlite3(context: { skip: (note?: string) => void }): void {
  if (sqlite3Missing !== undefined) context.skip(sqlite3Missing);
}

/** Whether the shell runs here (for `it.skipIf(!HAS_SQLITE3)`). */
export const HAS_SQLITE3 = sqlite3Missing === undefined;

/** Appended to the title of a test that needs the shell: empty when it is installed. */
export const NEEDS_SQLITE3 = HAS_SQLITE3 ? '' : ` [SKIPPED: ${sqlite3Missing}]`;
