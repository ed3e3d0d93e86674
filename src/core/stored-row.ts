// The check every store's verify() runs on a current row as it is stored: the spec text
// parses, the registration meets the contract, the fingerprint is the SHA-256 of the
// spec's canonical JSON, and the row's name and version are the spec's.
import { canonicalJson, fingerprintOfCanonical } from './canonical.js';
import { ToolRegistration } from './contracts.js';
import type { Deprecation } from './contracts.js';
import { makeDeprecation } from './validation.js';

/** A deprecation as the SQL stores read it beside a tool's row (migration 0006; all null: none). */
export interface DeprecationColumns {
  readonly dep_message: string | null;
  readonly dep_replacement: string | null;
  readonly dep_sunset: string | null;
}

/** The deprecation of a row's columns (null: none). */
export function deprecationOfColumns(row: DeprecationColumns): Deprecation | null {
  return row.dep_message === null ? null : makeDeprecation(row.dep_message, row.dep_replacement, row.dep_sunset);
}

/** A deprecation as a row's columns. */
export function deprecationColumns(deprecation: Deprecation | null): DeprecationColumns {
  return deprecation === null
    ? { dep_message: null, dep_replacement: null, dep_sunset: null }
    : { dep_message: deprecation.message, dep_replacement: deprecation.replacement, dep_sunset: deprecation.sunset };
}

/** A current tool as a store keeps it. */
export interface StoredRow {
  readonly tool_name: string;
  readonly version: string | null;
  readonly fingerprint: string;
  /** The spec's text as registered (any key order). */
  readonly spec_json: string;
  readonly enabled: boolean;
  readonly created_at: string | null;
}

/** A problem with one stored row. */
export interface StoredRowProblem {
  readonly kind: 'contract' | 'fingerprint';
  readonly tool_name: string;
  readonly message: string;
}

/** One problem a store's `verify()` found; each store adds the kinds only it can find. */
export interface StoreVerifyProblem<Kind extends string> {
  readonly kind: StoredRowProblem['kind'] | Kind;
  readonly tool_name?: string;
  readonly message: string;
}

/** What every store's `verify()` reports: `ok` when it found no problem. */
export interface StoreVerifyReport<Problem> {
  readonly ok: boolean;
  readonly checkedTools: number;
  readonly problems: readonly Problem[];
}

/** What every store's `status()` reports; each store adds its own settings. */
export interface StoreStatus {
  /** The name of the last applied migration, such as `0001_init`. */
  readonly schemaVersion: string;
  readonly appliedMigrations: readonly string[];
  readonly tools: number;
  readonly enabled: number;
  readonly disabled: number;
  /** The store-wide revision (0 before the first change). */
  readonly revision: number;
  /** Rows in the spec history (every distinct spec ever registered under a current or former name). */
  readonly specHistory: number;
  /** Whether the registry was opened read-only. */
  readonly readonly: boolean;
}

/** Every problem of one stored row; `[]` when it meets the contracts. */
export function checkStoredRow(row: StoredRow): StoredRowProblem[] {
  const name = row.tool_name;
  let spec: unknown;
  try {
    spec = JSON.parse(row.spec_json);
  } catch (error) {
    return [{ kind: 'contract', tool_name: name, message: `spec_json does not parse: ${String(error)}` }];
  }
  const problems: StoredRowProblem[] = [];
  const fingerprint = fingerprintOfCanonical(canonicalJson(spec));
  if (fingerprint !== row.fingerprint) {
    problems.push({
      kind: 'fingerprint',
      tool_name: name,
      message: `stored fingerprint ${row.fingerprint} is not the SHA-256 of the stored spec's canonical JSON (${fingerprint})`,
    });
  }
  const parsed = ToolRegistration.safeParse({ spec, enabled: row.enabled, created_at: row.created_at });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    problems.push({ kind: 'contract', tool_name: name, message: `the stored registration breaks the contract: ${issues}` });
    return problems;
  }
  if (parsed.data.spec.tool_name !== name || parsed.data.spec.version !== row.version) {
    problems.push({
      kind: 'contract',
      tool_name: name,
      message: `the stored spec names ${JSON.stringify(parsed.data.spec.tool_name)} version ${JSON.stringify(parsed.data.spec.version)}, its row ${JSON.stringify(name)} version ${JSON.stringify(row.version)}`,
    });
  }
  return problems;
}
