// The gateway's rows of the registry (issue 37): the upstream MCP servers whose tools the
// registry governs, and the audit log of tool calls. Only their shapes and validation live
// here; every store keeps them (SQLite and PostgreSQL in tables of their own), the MCP layer
// connects, proxies and records.
import { z } from 'zod';

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

const Text = z.string().refine((text) => !text.includes('\u0000'), { error: 'must not contain U+0000' });
const StringMap = z.record(z.string().min(1, { error: 'must be a non-empty name' }), Text);

export const UpstreamTransportSchema = z.discriminatedUnion('type', [
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

export const UpstreamInputSchema = z.strictObject({
  name: z.string().regex(UPSTREAM_NAME_PATTERN, { error: 'must be 1-64 characters of A-Z a-z 0-9 _ -' }),
  transport: UpstreamTransportSchema,
  prefix: z.string().regex(/^[A-Za-z0-9_.-]{0,64}$/, { error: 'must be 0-64 characters of A-Z a-z 0-9 _ - .' }).optional(),
  approve: z.enum(['all', 'none']).default('all'),
  permissions: z.array(z.string().min(1)).default([]),
  rejected: z.array(z.strictObject({ tool: z.string().min(1), definition: z.string().min(1) })).default([]),
});

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
