// node-postgres, loaded when a PostgreSQL store or namespace source is first opened rather
// than when the library is imported: a process that never opens one (the SQLite command, a
// memory registry) does not pay the 0.09 s of CPU its modules take to load. It is CommonJS,
// so require() loads it at once, from where a static import would have found it (the same
// module a user imports). Any layer may use it, as it imports nothing of ours.
import { createRequire } from 'node:module';
import type pg from 'pg';

let loaded: typeof pg | undefined;

/** The `pg` module (its default export), loaded on the first call. */
export function nodePostgres(): typeof pg {
  loaded ??= createRequire(import.meta.url)('pg') as typeof pg;
  return loaded;
}
