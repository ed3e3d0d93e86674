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
  const fromEnv = env[DATABASE_ENV];
  const database = flag ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : DEFAULT_DATABASE);
  return utf8Name(database, flag === undefined ? `database $${DATABASE_ENV}` : 'database --db');
}

/** `name`, unless it holds U+FFFD (see NOT_UTF8): then a usage error saying `where` it came from. */
export function utf8Name(name: string, where: string): string {
  if (name.includes(NOT_UTF8)) throw new CliError('USAGE', notUtf8(where));
  return name;
}

/**
 * U+FFFD: what Node reads in an argument or environment variable for bytes that are not UTF-8
 * (a Latin-1 `café.db`). A file named with it is another file: `migrate` created `caf\uFFFD.db`.
 */
const NOT_UTF8 = '\uFFFD';

function notUtf8(where: string): string {
  return `${where} holds U+FFFD, which Node puts for bytes that are not UTF-8: the file would be made or looked for under another name (give a UTF-8 name)`;
}

/** A parser for an option naming a file or folder the command may create (`--out`, `--tokens`, `--data-dir`): not empty, no U+FFFD. */
export function parseFileName(what: string): (value: string) => string {
  const nonEmpty = parseNonEmpty(what);
  return (value) => {
    if (nonEmpty(value).includes(NOT_UTF8)) throw new InvalidArgumentError(notUtf8('the name'));
    return value;
  };
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

/**
 * A parser for a repeatable option (`--tag`, `--namespace`, `--permission`) or a list argument
 * (`upstream approve NAME TOOL...`): each value as `parseNonEmpty` takes it, collected. A list
 * argument has no values before its first.
 */
export function collectNonEmpty(what: string): (value: string, previous: readonly string[] | undefined) => string[] {
  const parse = parseNonEmpty(what);
  return (value, previous) => [...(previous ?? []), parse(value)];
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
