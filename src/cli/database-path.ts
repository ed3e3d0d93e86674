// Which database file a command uses. Kept apart from database.ts so that --help and
// usage errors do not load the store.
import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import { CliError } from './errors.js';

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

/** A parser for a repeatable option (`--tag`, `--namespace`, `--permission`): each value as `parseNonEmpty` takes it, collected. */
export function collectNonEmpty(what: string): (value: string, previous: readonly string[]) => string[] {
  const parse = parseNonEmpty(what);
  return (value, previous) => [...previous, parse(value)];
}

/**
 * The --db of a command: given after it or after a command it belongs to (`upstream --db X add`,
 * `--db X list`). Given at two levels is a usage error, as twice at one level is: the nearest won.
 */
export function databaseOption(command: Command): string | undefined {
  const given: string[] = [];
  for (let level: Command | null = command; level !== null; level = level.parent) {
    const db = level.opts<{ db?: string }>().db;
    if (db !== undefined) given.push(db);
  }
  if (given.length > 1) {
    throw new CliError('USAGE', `option '--db <path>' given twice (${given.reverse().map((db) => `'${db}'`).join(' and ')}); give it once`);
  }
  return given[0];
}
