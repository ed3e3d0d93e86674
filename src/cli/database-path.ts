// Which database file a command uses. Kept apart from database.ts so that --help and
// usage errors do not load the store.

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
