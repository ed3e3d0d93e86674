// The registry's schema name and what is derived from it: the quoted identifier, the
// advisory-lock keys and the notification channel. Everything is per schema, so several
// registries can share one database without sharing locks or wake-ups.

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks the `schema` option, before anything connects: a plain identifier of at most 63
 * bytes (PostgreSQL's limit) that names no system schema. PostgreSQL reserves the `pg_`
 * prefix (CREATE SCHEMA refuses it, 42939; the check is case-sensitive, as our quoted names
 * are) and `information_schema` is the server's own: the registry's tables would land in it.
 */
export function checkSchemaName(schema: unknown): string {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema) || schema.length > 63) {
    throw new TypeError(
      `schema must be an identifier of 1-63 characters (letters, digits, _; not starting with a digit), got ${JSON.stringify(schema)}`,
    );
  }
  if (schema.startsWith('pg_') || schema === 'information_schema') {
    throw new TypeError(
      `schema must not name a system schema (PostgreSQL reserves the pg_ prefix and information_schema), got ${JSON.stringify(schema)}`,
    );
  }
  return schema;
}

/** `"name"`, safe to splice into SQL (names are checked by checkSchemaName, quotes doubled anyway). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Text hashed by the server (`hashtextextended(text, 0)`) into a 64-bit advisory-lock key.
 * A collision between two keys only makes one wait for the other, never a wrong result.
 */
export const lockKeys = {
  /** Held (transaction-scoped) while migrations are checked and applied. */
  migrate: (schema: string): string => `tool-registry ${schema} migrate`,
  // The write locks are taken by the schema's tool_registry_lock() (migrations/postgres/0001):
  // 'tool-registry <schema> writers' (shared by every write, exclusive for an import) and
  // 'tool-registry <schema> tool <name>' (one per name a write touches).
} as const;

/** The LISTEN/NOTIFY channel of a schema's changes (an identifier of at most 63 bytes). */
export function changeChannel(schema: string): string {
  return `tool_registry_changes_${schema}`.slice(0, 63);
}
