// The shipped plain-SQL migrations of a store: `NNNN_name.sql` files of one folder, read in
// name order: the one rule every store's migrations follow (each store keeps its own folder
// and runner). In the core so that a store imports nothing but the core.
import { readdirSync, readFileSync } from 'node:fs';

export interface Migration {
  /** File name without `.sql`, such as `0001_init`. */
  readonly name: string;
  readonly sql: string;
}

const MIGRATION_FILE = /^(\d{4}_[a-z0-9_]+)\.sql$/;

/** Reads the `NNNN_name.sql` files of `folder` in name order; `store` names the store in the error for an empty folder. */
export function readMigrationFiles(folder: URL, store: string): readonly Migration[] {
  const names = readdirSync(folder)
    .map((file) => MIGRATION_FILE.exec(file)?.[1])
    .filter((name): name is string => name !== undefined)
    .sort();
  if (names.length === 0) throw new Error(`no ${store} migrations found in ${folder.pathname}`);
  return Object.freeze(
    names.map((name) => Object.freeze({ name, sql: readFileSync(new URL(`${name}.sql`, folder), 'utf8') })),
  );
}
