// Which driver errors the command reports as the database failing (IO_ERROR, naming a code).
import { describe, expect, it } from 'vitest';
import { storageFailure, storageFailureCode } from '../../src/cli/database.js';
import { CliError } from '../../src/cli/errors.js';
import { StorageUnavailableError } from '../../src/index.js';

const withCode = (message: string, code?: string): Error => Object.assign(new Error(message), code === undefined ? {} : { code });
const PG = 'postgres://127.0.0.1:5432/registry';

describe('storageFailureCode', () => {
  it("names a socket failure of PostgreSQL by node's code, EPIPE included (five capitals, but no SQLSTATE)", () => {
    expect(storageFailureCode(PG, withCode('write EPIPE', 'EPIPE'))).toBe('EPIPE');
    expect(storageFailureCode(PG, withCode('read ECONNRESET', 'ECONNRESET'))).toBe('ECONNRESET');
    expect(storageFailureCode(PG, withCode('Connection terminated unexpectedly'))).toBe('connection lost');
  });

  it("names the server's failures by SQLSTATE and leaves a statement's own errors alone", () => {
    expect(storageFailureCode(PG, withCode('terminating connection due to administrator command', '57P01'))).toBe('SQLSTATE 57P01');
    expect(storageFailureCode(PG, withCode('could not extend file: No space left on device', '53100'))).toBe('SQLSTATE 53100');
    expect(storageFailureCode(PG, withCode('duplicate key value violates unique constraint', '23505'))).toBeUndefined();
    expect(storageFailureCode(PG, withCode('syntax error', '42601'))).toBeUndefined();
  });

  it("names SQLite's file failures and nothing else", () => {
    expect(storageFailureCode('tools.db', withCode('database disk image is malformed', 'SQLITE_CORRUPT'))).toBe('SQLITE_CORRUPT');
    expect(storageFailureCode('tools.db', withCode('write EPIPE', 'EPIPE'))).toBeUndefined();
    expect(storageFailureCode('tools.db', withCode('constraint failed', 'SQLITE_CONSTRAINT_CHECK'))).toBeUndefined();
  });

  it("keeps the store's own STORAGE_UNAVAILABLE message (a schema dropped or unreadable) as IO_ERROR, and unwraps only a lost connection", () => {
    // Unwrapped to the bare driver error, these were printed as INTERNAL with a stack.
    const cases: [string, string][] = [
      ['3F000', 'get: the registry schema s or its tables are missing (schema "s" does not exist, SQLSTATE 3F000)'],
      ['42501', 'get: this database role may not read the registry schema s: it lacks USAGE on schema s'],
    ];
    for (const [code, message] of cases) {
      const failure = storageFailure(PG, new StorageUnavailableError(message, { operation: 'get', driver_code: code }, withCode('raw', code)));
      expect(failure).toBeInstanceOf(CliError);
      expect([(failure as CliError).code, (failure as CliError).message]).toEqual(['IO_ERROR', `database ${PG}: ${message}`]);
    }
    const lost = storageFailure(PG, new StorageUnavailableError('get: the database cannot be reached', { operation: 'get' }, withCode('terminating connection due to administrator command', '57P01')));
    expect((lost as CliError).message).toBe(`database ${PG}: terminating connection due to administrator command (SQLSTATE 57P01)`);
  });
});
