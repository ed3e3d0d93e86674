// Which driver errors the command reports as the database failing (IO_ERROR, naming a code).
import { describe, expect, it } from 'vitest';
import { storageFailureCode } from '../../src/cli/database.js';

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
});
