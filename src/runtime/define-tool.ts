import { z } from 'zod';
import { canonicalJson, deepFreeze, fingerprintOfCanonical } from '../core/canonical.js';
import { JsonObjectSchema, TOOL_NAME_PATTERN, ToolSpec } from '../core/contracts.js';
import type { JsonObject } from '../core/contracts.js';
import { ValidationError } from '../core/errors.js';
import { describeIssues, formatPath, toRegistryIssues } from '../core/issues.js';
import type { RegistryIssue } from '../core/issues.js';
import { ArgsCopier } from './copy-args.js';
import { PERMISSION_NAME_PATTERN } from './permissions.js';
import { compileSchema, constrains } from './schema-validator.js';
import type { SchemaCheck } from './schema-validator.js';
import type { ElicitParams, ElicitResult, McpLogLevel, SampleParams, SampleResult } from './call-context.js';

/** What happens when a tool meets another of the same name in `ToolBox.merge`. */
export type CollisionPolicy = 'throw' | 'keep' | 'replace';

/** The permissions a tool declares: `required` ones are checked by policies; `optional` ones are informative. */
export interface ToolPermissions {
  readonly required: readonly string[];
  readonly optional: readonly string[];
}

/** The second argument of every handler call. */
export interface ToolHandlerOptions<Context = unknown> {
  /** `invoke`'s `context` option, as given (not copied); `undefined` when none was given. */
  readonly context: Context;
  /** Aborted when the caller's signal aborts or `timeoutMs` passes; stop work when it fires. */
  readonly signal: AbortSignal;
  /** The name the tool was invoked by. */
  readonly tool_name: string;
  /**
   * Reports progress (`progress` rising; `total` when known). Over MCP it is sent as
   * `notifications/progress` when the caller's request gave a `_meta.progressToken` (else
   * nothing is sent); in-process it goes to `invoke`'s `onProgress`. A TypeError for a
   * number that is not finite.
   */
  readonly progress: (progress: number, total?: number, message?: string) => void;
  /**
   * Logs a message (`data`: any JSON value; `logger` defaults to the tool's name). Over MCP it
   * is sent as `notifications/message` when `level` is at or above the session's
   * `logging/setLevel` (every level until the client sets one); in-process it goes to
   * `invoke`'s `onLog`. A TypeError for an unknown level.
   */
  readonly log: (level: McpLogLevel, data: unknown, logger?: string) => void;
  /**
   * Asks the calling client for a model's answer (`sampling/createMessage`) and resolves to
   * it. Over MCP the request goes to the session that made the call; in-process to `invoke`'s
   * `client`, and without one it rejects with `ClientUnavailableError` (`code`
   * `'CLIENT_UNAVAILABLE'`). A client without the capability, or an error of the client's, rejects.
   */
  readonly sample: (params: SampleParams) => Promise<SampleResult>;
  /**
   * Asks the calling client's user for input (`elicitation/create`) and resolves to the
   * answer (`action`: accept, decline or cancel, and `content`). As `sample` otherwise.
   */
  readonly elicit: (params: ElicitParams) => Promise<ElicitResult>;
  /**
   * The calling client's session: an opaque object, the same for every call of one MCP
   * session (`invoke`'s `client.session`); absent in-process without one. The gateway uses it
   * to send an upstream's request to the right session when several calls are in flight.
   */
  readonly session?: object;
}

/** A JSON Schema given as a plain JSON object (checked at `defineTool`). */
export type JsonSchemaObject = { readonly [key: string]: unknown };

/** A zod 4 schema (classic or mini); converted with `z.toJSONSchema`. */
export type ZodSchema = z.core.$ZodType;

/**
 * Hints about a tool's behaviour, as MCP names them (`ToolAnnotations`). Hints only: a client
 * must not rely on them for safety. Served to MCP clients; not part of the stored spec.
 */
export interface ToolAnnotations {
  /** A human-readable title for the tool (MCP `ToolAnnotations.title`; the tool's own `title` takes precedence in clients). */
  readonly title?: string;
  /** The tool changes nothing in its environment. */
  readonly readOnlyHint?: boolean;
  /** When it does change something, the change may be destructive (not only additive). */
  readonly destructiveHint?: boolean;
  /** Calling it again with the same arguments has no further effect. */
  readonly idempotentHint?: boolean;
  /** It reaches an open world (the web, other services) rather than a closed domain. */
  readonly openWorldHint?: boolean;
}

/** What `defineTool` accepts. Unknown fields are refused. */
export interface ToolDefinition<Args = Record<string, unknown>, Context = unknown> {
  /** The tool name: 1-128 of `A-Z a-z 0-9 _ - .` (the MCP rule); becomes `spec.tool_name`. */
  readonly name: string;
  readonly version?: string | null;
  readonly description?: string | null;
  /** A human-readable name for user interfaces (MCP `title`); not part of the stored spec. */
  readonly title?: string;
  /** Behaviour hints for clients (MCP `annotations`); not part of the stored spec. */
  readonly annotations?: ToolAnnotations;
  /** A JSON Schema object, or a zod schema (then `spec.input_schema` is `z.toJSONSchema(schema)`). */
  readonly input_schema: JsonSchemaObject | ZodSchema;
  /** Default `{}` (accepts any output). A JSON Schema object or a zod schema. */
  readonly output_schema?: JsonSchemaObject | ZodSchema;
  readonly tags?: readonly string[];
  /** Permission names (`^[A-Z][A-Z0-9_]*$`); default none. */
  readonly permissions?: { readonly required?: readonly string[]; readonly optional?: readonly string[] };
  /**
   * Called with a validated copy of the arguments (schema defaults applied) and the call's
   * options (context, signal, progress, log, sample, elicit). Returns JSON data, or MCP content
   * made with `mcpContent` (text, images, audio, resources).
   */
  readonly handler: (args: Args, options: ToolHandlerOptions<Context>) => unknown;
  /** Pruned from a `ToolBox` when its turn is acknowledged. Default `false`. */
  readonly ephemeral?: boolean;
  /** Decides collisions in `ToolBox.merge` when this tool is the incoming one. Default `'throw'`. */
  readonly onCollision?: CollisionPolicy;
}

/**
 * A tool with its handler, deeply frozen. Made only by `defineTool`; sets and boxes accept
 * nothing else and hand back these very objects.
 */
export interface Tool<Args = Record<string, unknown>, Context = unknown> {
  readonly name: string;
  /** A valid, deeply frozen `ToolSpec` (`tool_name` = `name`). */
  readonly spec: ToolSpec;
  readonly permissions: ToolPermissions;
  /** The definition's `title`, or `null`. */
  readonly title: string | null;
  /** The definition's `annotations` (a frozen copy; `{}` when none were given). */
  readonly annotations: ToolAnnotations;
  readonly ephemeral: boolean;
  readonly onCollision: CollisionPolicy;
  // Method syntax on purpose: a Tool<{ q: string }> is then usable where a Tool is expected.
  handler(args: Args, options: ToolHandlerOptions<Context>): unknown;
}

/** What the runtime keeps per Tool: compiled schemas and the spec's canonical identity. */
export interface ToolInternals {
  readonly checkInput: SchemaCheck;
  /** Absent when `output_schema` constrains nothing (`{}`). */
  readonly checkOutput: SchemaCheck | undefined;
  readonly canonical: string;
  readonly fingerprint: string;
  /** The per-call argument copy, specialised to the keys the tool is called with. */
  readonly argsCopier: ArgsCopier;
}

const internals = new WeakMap<object, ToolInternals>();

/** The compiled schemas of a Tool made by `defineTool`, or `undefined` for anything else. */
export function internalsOf(value: unknown): ToolInternals | undefined {
  return typeof value === 'object' && value !== null ? internals.get(value) : undefined;
}

/** Whether `value` is a Tool made by `defineTool`. */
function isTool(value: unknown): value is Tool {
  return internalsOf(value) !== undefined;
}

/** A TypeError naming where a non-Tool was given: sets and boxes take only `defineTool` results. */
export function assertTool(value: unknown, where: string): asserts value is Tool {
  if (!isTool(value)) throw new TypeError(`${where} is not a Tool made by defineTool()`);
}

function isZodSchema(value: unknown): value is ZodSchema {
  if (typeof value !== 'object' || value === null || !('_zod' in value)) return false;
  const zod = (value as { _zod: unknown })._zod;
  return typeof zod === 'object' && zod !== null && 'def' in zod;
}

const permissionName = z
  .string()
  .regex(PERMISSION_NAME_PATTERN, { error: 'must be a permission name matching ^[A-Z][A-Z0-9_]*$, such as READ_FS' });

const Definition = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN, { error: 'must be 1-128 characters of A-Z a-z 0-9 _ - . (the MCP tool-name rule)' }),
  version: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  title: z.string().min(1, { error: 'must be a non-empty string' }).optional(),
  annotations: z
    .strictObject({
      title: z.string().optional(),
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    })
    .optional(),
  input_schema: JsonObjectSchema,
  output_schema: JsonObjectSchema.optional(),
  tags: z.array(z.string().min(1, { error: 'must be a non-empty string' })).optional(),
  permissions: z
    .strictObject({ required: z.array(permissionName).optional(), optional: z.array(permissionName).optional() })
    .optional(),
  handler: z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', { error: 'must be a function' }),
  ephemeral: z.boolean().optional(),
  onCollision: z.enum(['throw', 'keep', 'replace']).optional(),
});

function invalid(name: string | undefined, issues: RegistryIssue[], input: unknown, cause?: unknown): ValidationError {
  return new ValidationError(
    `invalid tool definition${name === undefined ? '' : ` ${JSON.stringify(name)}`}: ${describeIssues(issues, input)}`,
    issues,
    { ...(name === undefined ? {} : { tool_name: name }), path: (issues[0] as RegistryIssue).pathText },
    cause,
  );
}

function issue(field: string, message: string): RegistryIssue {
  return Object.freeze({ code: 'custom', message, path: Object.freeze([field]), pathText: formatPath([field]) });
}

/** Converts a zod schema field to JSON Schema; a schema zod cannot express is VALIDATION_FAILED on that field. */
function toJsonSchema(value: unknown, field: 'input_schema' | 'output_schema', name: string | undefined, input: unknown): unknown {
  if (!isZodSchema(value)) {
    if (typeof value === 'object' && value !== null && '_def' in value && 'safeParse' in value) {
      throw invalid(name, [issue(field, 'is a zod 3 schema; use zod 4 (or a JSON Schema object)')], input);
    }
    return value;
  }
  try {
    return z.toJSONSchema(value);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw invalid(name, [issue(field, `zod schema has no JSON Schema form: ${reason}`)], input, error);
  }
}

/** An unknown-fields issue becomes one issue per field, at that field's path (`foo`, `permissions.extra`). */
export function perUnknownKey(zodIssue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (zodIssue.code !== 'unrecognized_keys') return [zodIssue];
  return zodIssue.keys.map((key) => ({ ...zodIssue, keys: [key], path: [...zodIssue.path, key], message: 'is not a known field' }));
}

function unique(names: readonly string[] | undefined): readonly string[] {
  return Object.freeze([...new Set(names ?? [])]);
}

/**
 * Defines a tool: validates the whole definition, builds its `ToolSpec` through the core
 * contract, compiles its schemas once (ajv 8; draft 2020-12 unless `$schema` names draft-07
 * or 2019-09) and returns a deeply frozen `Tool`. The caller's schema objects are copied,
 * never frozen or changed.
 *
 * @example
 * const search = defineTool({
 *   name: 'search',
 *   input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
 *   permissions: { required: [NET_HTTP] },
 *   handler: async ({ q }) => ({ hits: [] }),
 * });
 * @throws VALIDATION_FAILED (`ValidationError`) naming the field: the name rule, an unknown
 *   field, a schema that is not JSON or that ajv cannot compile (`input_schema` /
 *   `output_schema`), a handler that is not a function, a bad permission name.
 */
export function defineTool<S extends ZodSchema, Context = unknown>(
  definition: Omit<ToolDefinition<z.output<S>, Context>, 'input_schema'> & { readonly input_schema: S },
): Tool<z.output<S>, Context>;
export function defineTool<Args = Record<string, unknown>, Context = unknown>(
  definition: ToolDefinition<Args, Context>,
): Tool<Args, Context>;
export function defineTool(definition: ToolDefinition<never, unknown>): Tool<never, unknown> {
  if (typeof definition !== 'object' || definition === null) {
    throw invalid(undefined, [{ code: 'custom', message: 'must be a tool definition object', path: [], pathText: '' }], definition);
  }
  const rawName = (definition as { name?: unknown }).name;
  const name = typeof rawName === 'string' ? rawName : undefined;
  const input = {
    ...definition,
    input_schema: toJsonSchema(definition.input_schema, 'input_schema', name, definition),
    ...('output_schema' in definition && definition.output_schema !== undefined
      ? { output_schema: toJsonSchema(definition.output_schema, 'output_schema', name, definition) }
      : {}),
  };
  const parsed = Definition.safeParse(input);
  if (!parsed.success) throw invalid(name, toRegistryIssues(parsed.error.issues.flatMap(perUnknownKey)), input);
  const value = parsed.data;
  // Copies: the spec is frozen, and the caller's own schema objects must stay theirs.
  const spec = deepFreeze(
    ToolSpec.parse({
      tool_name: value.name,
      version: value.version ?? null,
      description: value.description ?? null,
      input_schema: structuredClone(value.input_schema),
      output_schema: structuredClone(value.output_schema ?? {}),
      tags: [...(value.tags ?? [])],
    }),
  );
  const compile = (schema: JsonObject, field: 'input_schema' | 'output_schema', applyDefaults: boolean): SchemaCheck => {
    try {
      return compileSchema(schema, applyDefaults);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw invalid(value.name, [issue(field, `is not a JSON Schema ajv can compile: ${reason}`)], input, error);
    }
  };
  const checkInput = compile(spec.input_schema, 'input_schema', true);
  const checkOutput = constrains(spec.output_schema) ? compile(spec.output_schema, 'output_schema', false) : undefined;
  const canonical = canonicalJson(spec);
  const tool: Tool<never, unknown> = Object.freeze({
    name: value.name,
    spec,
    permissions: Object.freeze({ required: unique(value.permissions?.required), optional: unique(value.permissions?.optional) }),
    title: value.title ?? null,
    annotations: Object.freeze({ ...value.annotations }),
    handler: value.handler as Tool<never, unknown>['handler'],
    ephemeral: value.ephemeral ?? false,
    onCollision: value.onCollision ?? 'throw',
  });
  internals.set(tool, Object.freeze({ checkInput, checkOutput, canonical, fingerprint: fingerprintOfCanonical(canonical), argsCopier: new ArgsCopier() }));
  return tool;
}

/**
 * The same tool, ephemeral (pruned from a ToolBox when its turn is acknowledged): a frozen
 * copy sharing the compiled schemas. An ephemeral tool comes back as it is.
 */
export function ephemeralCopy<Args, Context>(tool: Tool<Args, Context>): Tool<Args, Context> {
  assertTool(tool, 'ephemeralCopy(): tool');
  if (tool.ephemeral) return tool;
  const copy = Object.freeze({ ...tool, ephemeral: true });
  internals.set(copy, internalsOf(tool) as ToolInternals);
  return copy;
}
