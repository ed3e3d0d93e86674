// SQLite errors that are about the file itself, not about the registry's data or locks.

function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** SQLITE_READONLY and its extended codes: the file (or its folder, or the mount) cannot be written. */
export function isReadOnlyStorage(error: unknown): boolean {
  return sqliteCode(error)?.startsWith('SQLITE_READONLY') === true;
}

/** SQLITE_CORRUPT, SQLITE_NOTADB and their extended codes: the file's pages cannot be read as a database. */
export function isDamagedFile(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== undefined && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}
