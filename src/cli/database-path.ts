// Which database file a command uses. Kept apart from database.ts so that --help and
// usage errors do not load the store.
import { InvalidArgumentError } from 'commander';

/** The embedded default, relative to the working folder. */
export const DEFAULT_DATABASE = './tool-registry.db';
/** The environment variable naming the database when `--db` is not given. */
export const DATABASE_ENV = 'TOOL_REGISTRY_DB';

/** `--db`, else `TOOL_REGISTRY_DB` (when not empty), else `./tool-registry.db`. */
export function resolveDatabase(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag !== undefined) return flag;
  const fromEnv = env[DATABASE_ENV];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : DEFAULT_DATABASE;
}

/** Parses a `--db` value: an empty one names no database (a usage error, exit 2), rather than `./tool-registry.db` or an odd open failure. */
export const parseDatabaseOption = parseNonEmpty('a database file or a postgres:// URL');

/**
 * A parser for an option naming a file, a folder or an address (`--tokens`, `--policy`,
 * `--tools`, `--data-dir`, `--host`): an empty value is a usage error. It was a stack
 * (`--tools ''`), a temporary file left in the working folder (`token create --tokens ''`),
 * no error at all (`token list`), or a server listening on every address (`serve --host ''`).
 */
export function parseNonEmpty(what: string): (value: string) => string {
  return (value) => {
    if (value === '') throw new InvalidArgumentError(`expected ${what}, got an empty value`);
    return value;
  };
}
