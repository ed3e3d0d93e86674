// The gateway's rows of the registry (issue 37): the upstream MCP servers whose tools the
// registry governs, and the audit log of tool calls. Only their shapes and validation live
// here; every store keeps them (SQLite and PostgreSQL in tables of their own), the MCP layer
// connects, proxies and records.
import { z } from 'zod';
import { deepFreeze } from './canonical.js';
import { ValidationError } from './errors.js';
import { describeIssues, previewValue, toRegistryIssues } from './issues.js';
import type { RegistryIssue } from './issues.js';

/** An upstream's name: 1-64 of A-Z a-z 0-9 _ - (it becomes the tag `upstream:NAME` and the default prefix `NAME_`). */
export const UPSTREAM_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * How the gateway reaches an upstream. Header and environment values may hold `${VAR}`
 * references: they are stored as given and expanded only by the process that connects, so a
 * secret never lands in the database.
 */
export type UpstreamTransport =
  | {
      /** Streamable HTTP, falling back to the older HTTP+SSE transport. */
      readonly type: 'http';
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
    }
  | {
      /** A child process speaking MCP over stdio. */
      readonly type: 'stdio';
      /** The program and its arguments. */
      readonly command: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      /** The working folder; null: the connecting process's. */
      readonly cwd: string | null;
    };

/** `all`: tools the upstream lists are served at once; `none`: they wait as pending until approved. */
export type UpstreamApproval = 'all' | 'none';

/** A tool definition of the upstream that an operator rejected: not served, no longer pending. */
export interface UpstreamRejection {
  /** The tool's name upstream (without the prefix). */
  readonly tool: string;
  /** The rejected definition's hash (`upstreamDefinitionHash`); a later different definition is pending again. */
  readonly definition: string;
}

/** What `putUpstream` takes. */
export interface UpstreamInput {
  readonly name: string;
  readonly transport: UpstreamTransport;
  /** Put before each upstream tool's name to make its `tool_name`. Default `NAME_`; `''` keeps the upstream's names. */
  readonly prefix?: string;
  /** Default `'all'`. */
  readonly approve?: UpstreamApproval;
  /** Permissions every tool of this upstream needs (e.g. `NET_HTTP`), checked under each token's policy. Default none. */
  readonly permissions?: readonly string[];
  /** Rejected definitions. Default none. */
  readonly rejected?: readonly UpstreamRejection[];
}

/** An upstream as the registry stores it. */
export interface Upstream {
  readonly name: string;
  readonly transport: UpstreamTransport;
  readonly prefix: string;
  readonly approve: UpstreamApproval;
  readonly permissions: readonly string[];
  readonly rejected: readonly UpstreamRejection[];
  /** ISO 8601 UTC: when the name was first stored, and when its row last changed. */
  readonly created_at: string;
  readonly updated_at: string;
}

/** One `tools/call` as the audit log records it: who called what, how it ended; never arguments or results. */
export interface CallRecordInput {
  /** ISO 8601 UTC: when the call started. */
  readonly at: string;
  /** The token's name (null: a tokenless server or stdio). */
  readonly token: string | null;
  /** The persona the session's policy named, if any. */
  readonly persona: string | null;
  readonly namespace: string;
  readonly tool: string;
  readonly version: string | null;
  readonly fingerprint: string | null;
  /** The upstream's name for a proxied tool; null for a local one. */
  readonly upstream: string | null;
  readonly duration_ms: number;
  /** `ok`, or the error code the caller got (`TOOL_NOT_FOUND`, `VALIDATION_FAILED`, `UPSTREAM_UNAVAILABLE`, ...). */
  readonly outcome: string;
}

/** A stored audit row: the input plus its id (only grows). */
export interface CallRecord extends CallRecordInput {
  readonly id: number;
}

/** Filters of `listCalls`; rows come newest first. */
export interface CallsQuery {
  readonly tool?: string;
  readonly token?: string;
  /** ISO 8601: calls that started at or after it. */
  readonly since?: string;
  /** At most this many rows (1-10000). Default 100. */
  readonly limit?: number;
  /** Rows with an id below this one (the next page: the last row's id). */
  readonly before?: number;
}

/**
 * The audit log's retention: rows beyond either bound are deleted as new rows come in.
 * Defaults (DEFAULT_CALL_RETENTION): the newest 100,000 rows, at most 30 days old.
 */
export interface CallRetention {
  readonly maxRows: number;
  readonly maxAgeDays: number;
}

export const DEFAULT_CALL_RETENTION: CallRetention = Object.freeze({ maxRows: 100_000, maxAgeDays: 30 });

// --- validation and normalisation (the core's; stores receive these parsed, frozen values) ---

/**
 * The gateway's zod schemas, built at the first upstream, call record or calls query to check:
 * zod builds a schema when it is declared, and most processes that load the core (a `list`, a
 * worker) never check one.
 */
function buildSchemas() {
  const Text = z.string().refine((text) => !text.includes('\u0000'), { error: 'must not contain U+0000' });
  const StringMap = z.record(z.string().min(1, { error: 'must be a non-empty name' }), Text);

  const UpstreamTransportSchema = z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('http'),
      url: z.url({ protocol: /^https?$/, error: 'must be an http: or https: URL' }),
      headers: StringMap.default({}),
    }),
    z.strictObject({
      type: z.literal('stdio'),
      command: z.array(Text.min(1, { error: 'must be a non-empty string' })).min(1, { error: 'must name a program' }),
      env: StringMap.default({}),
      cwd: Text.nullable().default(null),
    }),
  ]);

  const UpstreamInputSchema = z.strictObject({
    name: z.string().regex(UPSTREAM_NAME_PATTERN, { error: 'must be 1-64 characters of A-Z a-z 0-9 _ -' }),
    transport: UpstreamTransportSchema,
    // Up to 65: the default, `NAME_` of a 64-character name, is put back as given by approve, reject and sync.
    prefix: z.string().regex(/^[A-Za-z0-9_.-]{0,65}$/, { error: 'must be 0-65 characters of A-Z a-z 0-9 _ - .' }).optional(),
    approve: z.enum(['all', 'none']).default('all'),
    permissions: z.array(z.string().min(1)).default([]),
    rejected: z.array(z.strictObject({ tool: z.string().min(1), definition: z.string().min(1) })).default([]),
  });

  const IsoTime = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with Z or an offset' });

  const CallRecordInputSchema = z.strictObject({
    at: IsoTime,
    token: Text.nullable(),
    persona: Text.nullable(),
    namespace: Text.min(1, { error: 'must be a non-empty string' }),
    tool: Text.min(1, { error: 'must be a non-empty string' }),
    version: Text.nullable(),
    fingerprint: Text.nullable(),
    upstream: Text.nullable(),
    duration_ms: z.number().finite().nonnegative({ error: 'must be a finite number >= 0' }),
    outcome: Text.min(1, { error: 'must be a non-empty string' }),
  });

  const CallsQuerySchema = z.strictObject({
    tool: Text.optional(),
    token: Text.optional(),
    since: IsoTime.optional(),
    limit: z.number().int().min(1, { error: 'must be an integer from 1 to 10000' }).max(10_000, { error: 'must be an integer from 1 to 10000' }).default(100),
    before: z.number().int().min(1, { error: 'must be a call id (an integer >= 1)' }).max(Number.MAX_SAFE_INTEGER).optional(),
  });

  return { UpstreamInputSchema, CallRecordInputSchema, CallsQuerySchema };
}
let schemas: ReturnType<typeof buildSchemas> | undefined;
const gatewaySchemas = (): ReturnType<typeof buildSchemas> => (schemas ??= buildSchemas());

/** `listCalls`' query with its defaults applied, `since` as stored times are (`toISOString()`). */
export interface ParsedCallsQuery {
  readonly tool?: string;
  readonly token?: string;
  readonly since?: string;
  readonly limit: number;
  readonly before?: number;
}

/** What a store applies after each `recordCalls`: keep at most `maxRows` rows, none with `at` before `oldestAt`. */
export interface CallPrune {
  readonly maxRows: number;
  /** `toISOString()` of now minus `maxAgeDays`. */
  readonly oldestAt: string;
}

function invalid(what: string, issues: readonly z.core.$ZodIssue[], input: unknown, prefix: readonly (string | number)[] = []): ValidationError {
  const found = toRegistryIssues(issues, prefix);
  return new ValidationError(`invalid ${what}: ${describeIssues(found, input)}; nothing was changed`, found, { path: (found[0] as RegistryIssue).pathText });
}

/** A stored time: any ISO 8601 date-time as UTC `YYYY-MM-DDTHH:mm:ss.sssZ`, so that times compare as text in every store. */
function utc(time: string): string {
  return new Date(time).toISOString();
}

/**
 * Validates `putUpstream`'s argument: defaults applied (prefix `NAME_`), frozen. `${VAR}`
 * references are kept as given.
 * @throws VALIDATION_FAILED naming each issue's path (`name`, `transport.url`, ...)
 */
export function parseUpstreamInput(input: unknown): Omit<Upstream, 'created_at' | 'updated_at'> {
  const result = gatewaySchemas().UpstreamInputSchema.safeParse(input);
  if (!result.success) {
    const name = (input as { name?: unknown } | null)?.name;
    throw invalid(`upstream${typeof name === 'string' ? ` ${JSON.stringify(name)}` : ''}`, result.error.issues, input);
  }
  const { name, transport, prefix, approve, permissions, rejected } = result.data;
  return { name, transport, prefix: prefix ?? `${name}_`, approve, permissions, rejected };
}

/** A frozen upstream in contract field order, from its parts (a store's row). */
export function makeUpstream(row: Omit<Upstream, 'created_at' | 'updated_at'>, createdAt: string, updatedAt: string): Upstream {
  return deepFreeze({
    name: row.name,
    transport: row.transport,
    prefix: row.prefix,
    approve: row.approve,
    permissions: row.permissions,
    rejected: row.rejected,
    created_at: createdAt,
    updated_at: updatedAt,
  });
}

/** An upstream as the SQL stores keep it (table tool_upstreams): transport, permissions and rejected as JSON text. */
// A type, not an interface: a statement's named parameters need its implicit index signature.
export type UpstreamRow = {
  name: string;
  transport: string;
  prefix: string;
  approve: string;
  permissions: string;
  rejected: string;
  created_at: string;
  updated_at: string;
};

/** The row of an upstream (JSON text as written by JSON.stringify; `${VAR}` references as given). */
export function upstreamToRow(upstream: Upstream): UpstreamRow {
  return {
    name: upstream.name,
    transport: JSON.stringify(upstream.transport),
    prefix: upstream.prefix,
    approve: upstream.approve,
    permissions: JSON.stringify(upstream.permissions),
    rejected: JSON.stringify(upstream.rejected),
    created_at: upstream.created_at,
    updated_at: upstream.updated_at,
  };
}

/** An upstream from its SQL row. */
export function upstreamFromRow(row: UpstreamRow): Upstream {
  return makeUpstream(
    {
      name: row.name,
      transport: JSON.parse(row.transport) as UpstreamTransport,
      prefix: row.prefix,
      approve: row.approve as UpstreamApproval,
      permissions: JSON.parse(row.permissions) as string[],
      rejected: JSON.parse(row.rejected) as UpstreamRejection[],
    },
    row.created_at,
    row.updated_at,
  );
}

/**
 * Validates `recordCalls`' rows: `at` as UTC `toISOString()` text, frozen.
 * @throws TypeError when `calls` is not an array; VALIDATION_FAILED with paths like `[2].duration_ms`
 */
export function parseCallRecords(calls: unknown): CallRecordInput[] {
  if (!Array.isArray(calls)) throw new TypeError(`recordCalls(): calls must be an array, got ${previewValue(calls)}`);
  const parsed: CallRecordInput[] = [];
  for (let index = 0; index < calls.length; index++) {
    const result = gatewaySchemas().CallRecordInputSchema.safeParse(calls[index]);
    if (!result.success) throw invalid('call records', result.error.issues, calls, [index]);
    parsed.push(Object.freeze({ ...result.data, at: utc(result.data.at) }));
  }
  return parsed;
}

/**
 * Validates `listCalls`' query (defaults applied).
 * @throws TypeError when the query is not an object; VALIDATION_FAILED naming the filter (`limit`, `since`, ...)
 */
export function parseCallsQuery(query: unknown): ParsedCallsQuery {
  if (query === undefined) return { limit: 100 };
  if (typeof query !== 'object' || query === null || Array.isArray(query)) {
    throw new TypeError(`listCalls(): query must be an object, got ${previewValue(query)}`);
  }
  const result = gatewaySchemas().CallsQuerySchema.safeParse(query);
  if (!result.success) throw invalid('calls query', result.error.issues, query);
  const { tool, token, since, limit, before } = result.data;
  return {
    limit,
    ...(tool === undefined ? {} : { tool }),
    ...(token === undefined ? {} : { token }),
    ...(since === undefined ? {} : { since: utc(since) }),
    ...(before === undefined ? {} : { before }),
  };
}

/**
 * The store option `callRetention` over the defaults.
 * @throws TypeError for a bound that is not a positive number (maxRows: an integer)
 */
export function resolveCallRetention(given: unknown): CallRetention {
  if (given === undefined) return DEFAULT_CALL_RETENTION;
  if (typeof given !== 'object' || given === null) throw new TypeError(`callRetention must be an object, got ${previewValue(given)}`);
  const { maxRows = DEFAULT_CALL_RETENTION.maxRows, maxAgeDays = DEFAULT_CALL_RETENTION.maxAgeDays } = given as Partial<CallRetention>;
  if (typeof maxRows !== 'number' || !Number.isSafeInteger(maxRows) || maxRows < 1) {
    throw new TypeError(`callRetention.maxRows must be an integer >= 1, got ${previewValue(maxRows)}`);
  }
  if (typeof maxAgeDays !== 'number' || !Number.isFinite(maxAgeDays) || maxAgeDays <= 0) {
    throw new TypeError(`callRetention.maxAgeDays must be a number > 0, got ${previewValue(maxAgeDays)}`);
  }
  return Object.freeze({ maxRows, maxAgeDays });
}
