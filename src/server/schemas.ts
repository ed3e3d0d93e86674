// The wire contracts of the HTTP API as zod schemas: the routes document themselves with these
// (the OpenAPI document is generated from them) and the tests check every response against it.
import { z } from 'zod';
import { Deprecation, SCHEMA_DIFFERENCE_TYPES, ToolRegistration, ToolRegistrySnapshot, ToolSpec } from '../index.js';

export const ToolSpecSchema = ToolSpec.meta({ id: 'ToolSpec', description: 'A tool specification (snake_case, strict).' });
export const ToolRegistrationSchema = ToolRegistration.meta({ id: 'ToolRegistration', description: 'A stored tool.' });
export const SnapshotSchema = ToolRegistrySnapshot.meta({
  id: 'ToolRegistrySnapshot',
  description: "Every tool: the Python seed's ToolRegistrySnapshot, byte for byte.",
});

export const WriteResultSchema = z
  .object({ ...ToolRegistration.shape, action: z.enum(['added', 'updated', 'unchanged']) })
  .strict()
  .meta({ id: 'WriteResult', description: 'The registration after a write, and what the write did.' });

export const ToolPageSchema = z
  .object({
    tools: z.array(ToolRegistrationSchema),
    scores: z
      .array(z.number())
      .optional()
      .meta({ description: 'With `q` only: `scores[i]` is the search score of `tools[i]` (higher is better; comparable within one query only).' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .strict()
  .meta({ id: 'ToolPage', description: 'A page of tools: by name, or with `q` best first (ties by name) with their `scores`.' });

export const ManyResultSchema = z.object({ tools: z.array(WriteResultSchema) }).strict().meta({ id: 'ManyResult' });

export const HistorySchema = z
  .object({
    history: z.array(
      z
        .object({
          spec: ToolSpecSchema,
          fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
          first_registered_at: z.string(),
        })
        .strict(),
    ),
  })
  .strict()
  .meta({ id: 'History' });

export const RemovedSchema = z.object({ removed: z.boolean() }).strict().meta({ id: 'Removed' });

export const ChangeEventSchema = z
  .object({
    revision: z.number().int().min(0),
    tool_name: z.string(),
    action: z.enum(['added', 'updated', 'enabled', 'disabled', 'removed', 'deprecated', 'undeprecated']),
    version: z.string().nullable(),
    at: z.string(),
    rollback: z.literal(true).optional().meta({ description: 'On an `updated` event that rolled the tool back to a lower SemVer (`allow_downgrade`).' }),
  })
  .strict()
  .meta({ id: 'ChangeEvent' });

export const ChangesPageSchema = z
  .object({ revision: z.number().int().min(0), events: z.array(ChangeEventSchema) })
  .strict()
  .meta({ id: 'ChangesPage' });

export const ImportReportSchema = z
  .object({
    added: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    removed: z.number().int(),
    conflicts: z.number().int(),
    dryRun: z.boolean(),
    revision: z.number().int(),
    plan: z
      .array(
        z
          .object({
            tool_name: z.string(),
            action: z.enum(['add', 'update', 'unchanged', 'remove', 'conflict']),
            path: z.string().optional(),
            from_version: z.string().nullable().optional(),
            to_version: z.string().nullable().optional(),
          })
          .strict(),
      )
      .optional(),
  })
  .strict()
  .meta({ id: 'ImportReport', description: "The library's import report (`plan` on a dry run)." });

export const DeprecationRequestSchema = Deprecation.meta({
  id: 'Deprecation',
  description: '`message` (required), `replacement` (a tool name) and `sunset` (an ISO 8601 date or date-time).',
});

export const SchemaDifferenceSchema = z
  .object({
    type: z.enum(SCHEMA_DIFFERENCE_TYPES as unknown as [string, ...string[]]),
    path: z.string().meta({ description: 'A JSON Pointer into the new schema.' }),
    before: z.unknown(),
    after: z.unknown(),
    breaking: z.union([z.boolean(), z.literal('undecidable')]),
    omitted: z
      .number()
      .int()
      .positive()
      .optional()
      .meta({ description: 'Only on the entry that stands for the values of an enum-value-added/enum-value-removed place (type, path and breaking) not named: past the first 100 of the place, or past 1,000 named in the schema. How many they are; its before and after are null.' }),
  })
  .strict()
  .meta({ id: 'SchemaDifference' });

export const VersionDiffSchema = z
  .object({
    tool_name: z.string(),
    from: z.object({ version: z.string().nullable(), fingerprint: z.string() }).strict(),
    to: z.object({ version: z.string().nullable(), fingerprint: z.string() }).strict(),
    compatible: z.boolean(),
    differences: z.array(SchemaDifferenceSchema),
  })
  .strict()
  .meta({ id: 'VersionDiff', description: "The library's diffVersions(): how two specs of a tool differ." });

export const CheckReportSchema = z
  .object({
    ok: z.boolean().meta({ description: 'true when register (or registerMany) would accept every spec.' }),
    results: z.array(
      z
        .object({
          tool_name: z.string().nullable(),
          path: z.string(),
          action: z.enum(['add', 'update', 'unchanged', 'refused']),
          from_version: z.string().nullable().optional(),
          to_version: z.string().nullable().optional(),
          rollback: z.literal(true).optional(),
          differences: z.array(SchemaDifferenceSchema),
          error: z.object({ code: z.string(), message: z.string(), context: z.record(z.string(), z.unknown()) }).strict().optional(),
        })
        .strict(),
    ),
  })
  .strict()
  .meta({ id: 'CheckReport', description: "The library's checkSpecs(): what register would do with each spec, nothing changed." });

export const LintFindingSchema = z
  .object({
    tool_name: z.string().nullable(),
    provider: z.string(),
    path: z.string(),
    rule: z.string(),
    severity: z.enum(['error', 'warning']),
    message: z.string(),
  })
  .strict()
  .meta({ id: 'LintFinding' });

export const LintResultSchema = z.object({ findings: z.array(LintFindingSchema) }).strict().meta({ id: 'LintResult' });

export const WhoamiSchema = z
  .object({
    token: z.string().nullable().meta({ description: "The token's name; null on a server without tokens." }),
    scopes: z.array(z.enum(['read', 'write', 'admin'])),
    namespaces: z.array(z.string()).nullable().meta({ description: 'The namespaces the token may reach; null: all.' }),
    tokens_required: z.boolean(),
  })
  .strict()
  .meta({ id: 'Whoami' });

export const NamespaceListSchema = z.object({ namespaces: z.array(z.string()) }).strict().meta({ id: 'NamespaceList' });
export const NamespaceCreatedSchema = z.object({ namespace: z.string(), created: z.boolean() }).strict().meta({ id: 'NamespaceCreated' });
export const HealthSchema = z.object({ status: z.literal('ok') }).strict().meta({ id: 'Health' });
export const ReadySchema = z
  .object({ status: z.literal('ready'), revision: z.number().int().optional().meta({ description: 'Only when the request may read the default namespace.' }) })
  .strict()
  .meta({ id: 'Ready' });

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().meta({ description: 'The stable error code (VALIDATION_FAILED, TOOL_NOT_FOUND, UNAUTHORIZED, ...).' }),
    context: z.record(z.string(), z.unknown()),
    issues: z.array(z.object({ path: z.string(), message: z.string() }).strict()).optional(),
    error_id: z.string().optional(),
  })
  .strict()
  .meta({ id: 'Problem', description: 'RFC 9457 problem details with our code and context.' });

/** Any JSON value (an export's provider-specific shape). */
export const AnyJsonSchema = z.unknown().meta({ id: 'ProviderExport', description: "The provider's tool list, as the library's exporter makes it." });

// --- parameters ------------------------------------------------------------------------------

const BOOLEAN_TEXT = /^(true|false|1|0)$/i;
/** A boolean in a query: true/false/1/0 in any case (the Python client sends `True`). */
export const queryBoolean = (description: string) =>
  z.string().regex(BOOLEAN_TEXT, { error: 'expected true, false, 1 or 0' }).optional().meta({ description, example: 'true' });

export const queryCount = (description: string, max: number) =>
  z
    .string()
    // 16 digits: 1000000000000000 is below 2^53 (it was refused as not a whole number). abort:
    // a value that fails here is not checked again (the 400 listed the same issue twice).
    .regex(/^\d{1,16}$/, { error: `expected a whole number from 0 to ${max}`, abort: true })
    .refine((text) => Number(text) <= max, { error: `expected a whole number from 0 to ${max}` })
    .optional()
    .meta({ description: `${description} (0-${max})` });

export const toolNameParam = z.string().meta({ description: 'The tool_name (1-128 of A-Z a-z 0-9 _ - ., not `.` or `..`).', example: 'get_weather' });
export const namespaceParam = z.string().meta({ description: 'A namespace: a lowercase letter then up to 39 of a-z 0-9 _.', example: 'team_a' });

/** The value of a boolean query parameter checked by its schema. */
export function parseBoolean(text: string | undefined, fallback: boolean): boolean {
  if (text === undefined) return fallback;
  const lower = text.toLowerCase();
  return lower === 'true' || lower === '1';
}
