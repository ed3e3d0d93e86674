// Typed Kysely view of migrations/sqlite (keep in step with the .sql files).
import type { Generated } from 'kysely';
import type { CallRecordInput, UpstreamRow } from '../../core/upstreams.js';

/** Spec history: one row per distinct spec stored under a name. */
export interface ToolSpecsTable {
  tool_name: string;
  /** SHA-256 (hex) of the spec's canonical JSON. */
  fingerprint: string;
  version: string | null;
  /** The spec's JSON as registered (canonical in rows written before migration 0004). */
  spec_json: string;
  first_registered_at: string;
}

/** Current registrations, pointing at a row of `tool_specs`. */
export interface ToolRegistrationsTable {
  tool_name: string;
  fingerprint: string;
  /** 0 or 1. */
  enabled: number;
  created_at: string | null;
}

export interface SchemaMigrationsTable {
  name: string;
  applied_at: string;
}

/** The operators' view: one row per current tool. */
export interface ToolsView {
  tool_name: string;
  version: string | null;
  enabled: number;
  created_at: string | null;
  description: string | null;
  /** JSON array as text. */
  tags: string;
  fingerprint: string;
  /** Migration 0006: the deprecation's fields (NULL: not deprecated). */
  deprecation_message: string | null;
  deprecation_replacement: string | null;
  deprecation_sunset: string | null;
}

/** The change log (migrations 0002 and 0003): one row per change of a tool. */
export interface ToolChangesTable {
  /** Grows by one per change; the largest is the registry's revision. */
  revision: number;
  tool_name: string;
  /** Random per entry: tells a reader whether this is the entry it saw at this revision (0003). */
  token: string;
  /** Migration 0004: what happened; NULL for an entry that is not an event (written before 0004, or by hand). */
  action: 'added' | 'updated' | 'enabled' | 'disabled' | 'removed' | 'deprecated' | 'undeprecated' | null;
  /** The tool's version after the change (`removed`: the version removed). */
  version: string | null;
  /** Commit time, ISO 8601 UTC from SQLite's clock. */
  at: string | null;
  /** Migration 0006: 1 on an `updated` entry that rolled the tool back to a lower version. */
  rollback: number | null;
}

/** Migration 0006: one row per deprecated current tool. */
export interface ToolDeprecationsTable {
  tool_name: string;
  message: string;
  replacement: string | null;
  sunset: string | null;
}

/** Migration 0006: the registry's policies, one row per policy set. */
export interface ToolRegistryPolicyTable {
  name: string;
  value: string;
}

/** Migration 0007: one row per upstream MCP server; transport, permissions and rejected are JSON text. */
export type ToolUpstreamsTable = UpstreamRow;

/** Migration 0007: the audit log of tool calls; `id` only grows. */
export interface ToolCallsTable extends CallRecordInput {
  id: Generated<number>;
}

/** One row: a random value chosen when the database's change log began (0003). */
export interface ToolChangesGenerationTable {
  generation: string;
}

/**
 * One row (migration 0005): the revision the change feed starts after. No event has a
 * revision at or below it; entries there were logged before migration 0004.
 */
export interface ToolChangesFeedStartTable {
  after_revision: number;
}

/** SQLite's own catalogue (read only, to find out whether a table exists). */
export interface SqliteMasterTable {
  type: string;
  name: string;
}

export interface SqliteSchema {
  tool_specs: ToolSpecsTable;
  tool_registrations: ToolRegistrationsTable;
  schema_migrations: SchemaMigrationsTable;
  tools: ToolsView;
  tool_changes: ToolChangesTable;
  tool_changes_generation: ToolChangesGenerationTable;
  tool_changes_feed_start: ToolChangesFeedStartTable;
  tool_deprecations: ToolDeprecationsTable;
  tool_registry_policy: ToolRegistryPolicyTable;
  tool_upstreams: ToolUpstreamsTable;
  tool_calls: ToolCallsTable;
  sqlite_master: SqliteMasterTable;
}
