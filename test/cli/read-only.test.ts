// Read-only commands never create, migrate or change the database file.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCode, runCli, sha256, spec, useTempDir, useChildProcessTimeout } from './helpers.js';

useChildProcessTimeout();

const tempDir = useTempDir();

const READ_ONLY: readonly (readonly string[])[] = [
  ['list'],
  ['list', '--all', '--json'],
  ['get', 'weather'],
  ['get', 'weather', '--json'],
  ['export'],
  ['status'],
  ['status', '--json'],
  ['verify'],
  ['verify', '--json'],
];

describe('read-only commands', () => {
  it.each(READ_ONLY.map((args) => [args.join(' '), args] as const))(
    '%s on a missing database: DATABASE_NOT_FOUND, exit 1, and still no file',
    async (_name, args) => {
      const cwd = tempDir();
      for (const db of [undefined, join(cwd, 'other.db')]) {
        const result = await runCli(db === undefined ? [...args] : ['--db', db, ...args], { cwd });
        expect(result.code).toBe(1);
        expect(errorCode(result.stderr)).toBe('DATABASE_NOT_FOUND');
        expect(result.stdout).toBe('');
      }
      expect(existsSync(join(cwd, 'tool-registry.db'))).toBe(false);
      expect(existsSync(join(cwd, 'other.db'))).toBe(false);
    },
  );

  it('export --out on a missing database writes no file', async () => {
    const cwd = tempDir();
    const result = await runCli(['export', '--out', join(cwd, 'snap.json')], { cwd });
    expect(result.code).toBe(1);
    expect(errorCode(result.stderr)).toBe('DATABASE_NOT_FOUND');
    expect(existsSync(join(cwd, 'snap.json'))).toBe(false);
    expect(existsSync(join(cwd, 'tool-registry.db'))).toBe(false);
  });

  it('leave an existing database byte-for-byte unchanged', async () => {
    const cwd = tempDir();
    const db = join(cwd, 'tool-registry.db');
    expect((await runCli(['register', '-'], { cwd, input: JSON.stringify(spec('weather')) })).code).toBe(0);
    const before = sha256(db);
    for (const args of READ_ONLY) expect((await runCli([...args], { cwd })).code).toBe(0);
    expect(sha256(db)).toBe(before);
  });

  it('a file that is not a database, or a folder, is IO_ERROR (one line, no stack)', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'notes.txt'), 'just some text, long enough to not be mistaken for an empty file\n'.repeat(20));
    mkdirSync(join(cwd, 'folder.db'));
    for (const db of ['notes.txt', 'folder.db']) {
      for (const args of READ_ONLY) {
        const result = await runCli(['--db', join(cwd, db), ...args], { cwd });
        expect(result.code).toBe(1);
        expect(errorCode(result.stderr)).toBe('IO_ERROR');
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
      }
    }
  });
});
