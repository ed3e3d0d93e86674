// GET /v1/calls: the audit log of MCP tool calls (every tools/call the MCP endpoint answered in
// the namespace), newest first, filtered and paged. Admin scope: who called what is not for
// every reader.
import { z } from 'zod';
import { json } from './route-table.js';
import type { RouteDefinition } from './route-table.js';
import { queryCount } from './schemas.js';
import { readSince, sinceInstant } from '../since-instant.js';

export const CALLS_PAGE_MAX = 1000;
const CALLS_PAGE_DEFAULT = 100;

export const CallRecordSchema = z
  .object({
    id: z.number().int().meta({ description: 'Grows with every row; pass the last one as `before` for the next page.' }),
    at: z.string().meta({ description: 'When the call started (ISO 8601, UTC).' }),
    token: z.string().nullable().meta({ description: "The token's name; null on a server without tokens, or over stdio." }),
    persona: z.string().nullable().meta({ description: "The persona of the token's policy; null without one." }),
    namespace: z.string(),
    tool: z.string().meta({ description: 'The name the caller asked for (an unknown one too, cut at 128 characters).' }),
    version: z.string().nullable(),
    fingerprint: z.string().nullable().meta({ description: "The served spec's SHA-256 fingerprint; null for a tool not served." }),
    upstream: z.string().nullable().meta({ description: 'The upstream MCP server of a gateway tool (its `upstream:NAME` tag); null for a local tool.' }),
    duration_ms: z.number(),
    outcome: z.string().meta({ description: '`ok`, or the error code the caller got (TOOL_NOT_FOUND, PERMISSION_DENIED, INVALID_ARGUMENTS, TIMEOUT, TOOL_FAILED, TOOL_ERROR, UPSTREAM_UNAVAILABLE, ...).' }),
  })
  .strict()
  .meta({ id: 'CallRecord', description: 'One MCP tools/call: who, which tool, how long, how it ended; never its arguments or result.' });

export const CallsPageSchema = z
  .object({
    calls: z.array(CallRecordSchema),
    next_before: z.number().int().nullable().meta({ description: 'Pass as `before` for the next (older) page; null on the last page.' }),
  })
  .strict()
  .meta({ id: 'CallsPage', description: 'Audit rows, newest first.' });


export const CALL_ROUTES: readonly RouteDefinition[] = [
  {
    method: 'get',
    path: '/v1/calls',
    operationId: 'listCalls',
    summary: 'The audit log: MCP tools/call records of the namespace, newest first (admin)',
    tag: 'audit',
    scope: 'admin',
    namespaced: true,
    query: z.object({
      tool: z.string().min(1).optional().meta({ description: 'Only calls of this tool (exact name).' }),
      token: z.string().min(1).optional().meta({ description: "Only calls made with this token (its name)." }),
      since: z
        .string()
        .superRefine((text, context) => {
          const read = readSince(text);
          if ('error' in read) context.addIssue({ code: 'custom', message: read.error });
        })
        .optional()
        .meta({ description: 'Only calls that started at or after this instant: an ISO 8601 date-time with Z or +hh:mm, or a date (midnight UTC).' }),
      limit: queryCount(`At most this many rows (default ${CALLS_PAGE_DEFAULT})`, CALLS_PAGE_MAX),
      before: queryCount('Only rows older than this id: the `next_before` of the previous page', Number.MAX_SAFE_INTEGER),
    }),
    responses: { 200: { description: 'A page of call records, newest first.', schema: CallsPageSchema } },
    errors: [],
    handle: async ({ registry, query }) => {
      const limit = query.limit === undefined ? CALLS_PAGE_DEFAULT : Number(query.limit);
      if (limit === 0) return json({ calls: [], next_before: null });
      const since = query.since === undefined ? undefined : sinceInstant(query.since as string);
      const calls = await registry.listCalls({
        limit,
        ...(query.tool === undefined ? {} : { tool: query.tool as string }),
        ...(query.token === undefined ? {} : { token: query.token as string }),
        ...(since === undefined ? {} : { since }),
        ...(query.before === undefined ? {} : { before: Number(query.before) }),
      });
      const last = calls.at(-1);
      return json({ calls, next_before: calls.length === limit && last !== undefined ? last.id : null });
    },
  },
];
