// Typed Kysely view of migrations/postgres (keep in step with the .sql files). bigint
// columns arrive from node-postgres as strings (see integers.ts).
import type { Generated } from 'kysely';
import type { CallRecordInput, UpstreamRow } from '../../core/upstreams.js';

/** Spec history: one row per distinct spec stored under a name. */
export interface ToolSpecsTable {
  tool_name: string;
  /** SHA-256 (hex) of the spec's canonical JSON. */
  fingerprint: string;
  version: string | null;
  /** The spec's JSON text as registered. */
  spec_json: string;
  first_registered_at: string;
  /** Identity: the order rows were stored in (history, oldest first). */
  stored_order: Generated<string>;
}

/** Current registrations, pointing at a row of `tool_specs`. */
export interface ToolRegistrationsTable {
  tool_name: string;
  fingerprint: string;
  enabled: boolean;
  created_at: string | null;
}

/** One row: the last logged change, a token that changes with every change, the schema's generation. */
export interface ToolRegistryHeadTable {
  only_row: boolean;
  revision: string;
  token: string;
  generation: string;
}

/** The bounded change log. */
export interface ToolChangesTable {
  revision: string;
  /** xid8 as text. */
  xid: string;
  tool_name: string;
  action: 'added' | 'updated' | 'enabled' | 'disabled' | 'removed' | 'deprecated' | 'undeprecated';
  version: string | null;
  at: string;
  /** The head's token after the statement that logged this change. */
  token: string;
  /** Migration 0006: true on an `updated` entry that rolled the tool back to a lower version. */
  rollback: boolean | null;
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

/** Migration 0007: the audit log of tool calls; `id` (bigint, read as a string) only grows. */
export interface ToolCallsTable extends CallRecordInput {
  id: Generated<string>;
}

export interface SchemaMigrationsTable {
  name: string;
  applied_at: Date;
}

/** The operators' view: one row per current tool. */
export interface ToolsView {
  tool_name: string;
  version: string | null;
  enabled: boolean;
  created_at: string | null;
  description: string | null;
  tags: unknown;
  fingerprint: string;
  deprecation_message: string | null;
  deprecation_replacement: string | null;
  deprecation_sunset: string | null;
}

export interface PostgresSchema {
  tool_specs: ToolSpecsTable;
  tool_registrations: ToolRegistrationsTable;
  tool_registry_head: ToolRegistryHeadTable;
  tool_changes: ToolChangesTable;
  schema_migrations: SchemaMigrationsTable;
  tools: ToolsView;
  tool_deprecations: ToolDeprecationsTable;
  tool_registry_policy: ToolRegistryPolicyTable;
  tool_upstreams: ToolUpstreamsTable;
  tool_calls: ToolCallsTable;
}
