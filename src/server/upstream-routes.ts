// The gateway's governance over HTTP (issue 37): the upstreams with their tools' counts, the
// live pending view, approve and reject; admin scope. The server knows nothing of MCP: whoever
// builds it hands it an `UpstreamGovernance` (`upstreamGovernance()` of 'tool-registry/mcp';
// `tool-registry serve` does), which connects and lists. Without one, the rows are still
// listed (with the registered counts) and the live routes answer 501 GATEWAY_UNAVAILABLE.
import { z } from 'zod';
import type { ToolRegistry, Upstream } from '../index.js';
import { HttpProblem } from './problems.js';
import type { ServerErrorCode } from './problems.js';
import { json } from './route-table.js';
import type { RouteContext, RouteDefinition } from './route-table.js';
import { SchemaDifferenceSchema } from './schemas.js';

/** One tool of an upstream as the gateway sees it (`UpstreamToolState` of 'tool-registry/mcp'). */
export interface UpstreamToolStateView {
  readonly tool: string;
  readonly tool_name: string;
  readonly state: 'served' | 'changed' | 'new' | 'gone' | 'rejected' | 'unregistrable';
}

/** What approving did (`ApproveResult` of 'tool-registry/mcp'). */
export interface UpstreamApproveView {
  readonly approved: readonly { readonly tool: string; readonly tool_name: string; readonly from_version: string | null; readonly version: string; readonly breaking: boolean; readonly forced: boolean }[];
  readonly upstream: Upstream;
}

/**
 * What the server needs of the gateway (the MCP layer implements it). Errors carry a `code`:
 * `UPSTREAM_TOOL_NOT_FOUND`, `UPSTREAM_UNAVAILABLE`, `VARIABLE_MISSING` (answered 404/502), or
 * are the registry's own (COMPATIBILITY_FAILED, ...).
 */
export interface UpstreamGovernance {
  /** Each tool's state; `fresh: false` may answer from a listing a few seconds old. */
  states(registry: ToolRegistry, upstream: Upstream, options: { readonly fresh: boolean }): Promise<readonly UpstreamToolStateView[]>;
  approve(registry: ToolRegistry, upstream: Upstream, options: { readonly tools?: readonly string[]; readonly all?: boolean; readonly force?: boolean }): Promise<UpstreamApproveView>;
  reject(registry: ToolRegistry, upstream: Upstream, tool: string): Promise<{ readonly rejected: UpstreamToolStateView; readonly upstream: Upstream }>;
}

const GATEWAY_CODES: readonly string[] = ['UPSTREAM_TOOL_NOT_FOUND', 'UPSTREAM_UNAVAILABLE', 'VARIABLE_MISSING'];

const TransportSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('http'), url: z.string(), headers: z.record(z.string(), z.string()) }).strict(),
  z.object({ type: z.literal('stdio'), command: z.array(z.string()), env: z.record(z.string(), z.string()), cwd: z.string().nullable() }).strict(),
]);

const UpstreamRowShape = {
  name: z.string(),
  transport: TransportSchema.meta({ description: 'As stored: header and environment values keep their `${VAR}` references (never expanded here).' }),
  prefix: z.string(),
  approve: z.enum(['all', 'none']),
  permissions: z.array(z.string()),
  rejected: z.array(z.object({ tool: z.string(), definition: z.string() }).strict()),
  created_at: z.string(),
  updated_at: z.string(),
};

export const UpstreamSchema = z.object(UpstreamRowShape).strict().meta({ id: 'Upstream', description: 'An upstream MCP server as the registry stores it.' });

const CountsSchema = z
  .object({ served: z.number().int(), changed: z.number().int(), new: z.number().int(), gone: z.number().int(), rejected: z.number().int(), unregistrable: z.number().int(), pending: z.number().int() })
  .strict()
  .meta({ id: 'UpstreamToolCounts', description: 'Tools by state; `pending` = changed + new.' });

const ErrorSchema = z.object({ code: z.string(), message: z.string() }).strict();

export const UpstreamListSchema = z
  .object({
    upstreams: z.array(
      z
        .object({
          ...UpstreamRowShape,
          registered: z.number().int().meta({ description: 'Tools registered with the tag upstream:NAME (approved, disabled ones too).' }),
          counts: CountsSchema.nullable().meta({ description: 'From a listing at most a few seconds old; null when the upstream could not be listed (`error`) or the server has no gateway.' }),
          error: ErrorSchema.nullable(),
        })
        .strict(),
    ),
  })
  .strict()
  .meta({ id: 'UpstreamList' });

const DefinitionSchema = z
  .object({
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    inputSchema: z.record(z.string(), z.unknown()),
    outputSchema: z.record(z.string(), z.unknown()).optional(),
    annotations: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const UpstreamToolStateSchema = z
  .object({
    tool: z.string().meta({ description: "The tool's name upstream." }),
    tool_name: z.string().meta({ description: 'prefix + tool: its name in the registry.' }),
    state: z.enum(['served', 'changed', 'new', 'gone', 'rejected', 'unregistrable']),
    definition: DefinitionSchema.optional(),
    definition_hash: z.string().optional(),
    approved: z.object({ version: z.string().nullable(), definition_hash: z.string().nullable(), enabled: z.boolean() }).strict().optional(),
    diff: z
      .object({
        changed: z.array(z.string()),
        description: z.object({ before: z.string().nullable(), after: z.string().nullable() }).strict().nullable(),
        compatible: z.boolean(),
        differences: z.array(SchemaDifferenceSchema),
      })
      .strict()
      .optional(),
    next_version: z.string().optional(),
    reason: z.string().optional(),
  })
  .strict()
  .meta({ id: 'UpstreamToolState', description: 'One tool of an upstream: served, pending (changed or new, with the difference), gone, rejected or unregistrable.' });

export const UpstreamPendingSchema = z
  .object({ upstream: UpstreamSchema, counts: CountsSchema, tools: z.array(UpstreamToolStateSchema).meta({ description: 'Every tool that is not served.' }) })
  .strict()
  .meta({ id: 'UpstreamPending' });

export const ApproveRequestSchema = z
  .object({
    tools: z.array(z.string().min(1)).optional().meta({ description: "Tools to approve, by their name upstream (without the prefix); `TOOL@HASH` (its pending `definition_hash`) approves it only while the upstream lists that definition." }),
    all: z.boolean().optional().meta({ description: 'Every pending tool.' }),
    force: z.boolean().optional().meta({ description: "Register a breaking change that the registry's compatibility policy refuses (reported `forced`)." }),
  })
  .strict()
  .meta({ id: 'UpstreamApproveRequest' });

export const ApproveResultSchema = z
  .object({
    approved: z.array(
      z.object({ tool: z.string(), tool_name: z.string(), from_version: z.string().nullable(), version: z.string(), breaking: z.boolean(), forced: z.boolean() }).strict(),
    ),
    upstream: UpstreamSchema,
  })
  .strict()
  .meta({ id: 'UpstreamApproveResult' });

export const RejectRequestSchema = z.object({ tool: z.string().min(1) }).strict().meta({ id: 'UpstreamRejectRequest' });

export const RejectResultSchema = z.object({ rejected: UpstreamToolStateSchema, upstream: UpstreamSchema }).strict().meta({ id: 'UpstreamRejectResult' });

function counts(states: readonly UpstreamToolStateView[]): z.infer<typeof CountsSchema> {
  const out = { served: 0, changed: 0, new: 0, gone: 0, rejected: 0, unregistrable: 0, pending: 0 };
  for (const one of states) out[one.state] += 1;
  out.pending = out.changed + out.new;
  return out;
}

function rowOf(upstream: Upstream): Upstream {
  const { name, transport, prefix, approve, permissions, rejected, created_at, updated_at } = upstream;
  return { name, transport, prefix, approve, permissions, rejected, created_at, updated_at };
}

/** A gateway error (a `code` of its own) as the problem the edge answers; anything else as it is. */
function gatewayProblem(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !GATEWAY_CODES.includes(code) || !(error instanceof Error)) return error;
  const context = (error as { context?: Record<string, unknown> }).context ?? {};
  return new HttpProblem(code as ServerErrorCode, error.message, { context: { ...context } });
}

async function governed<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw gatewayProblem(error);
  }
}

async function requireUpstream(registry: ToolRegistry, name: string): Promise<Upstream> {
  const upstream = await registry.getUpstream(name);
  if (upstream === undefined) throw new HttpProblem('UPSTREAM_NOT_FOUND', `no upstream named ${JSON.stringify(name)}`, { context: { upstream: name } });
  return upstream;
}

function requireGateway(governance: UpstreamGovernance | undefined): UpstreamGovernance {
  if (governance === undefined) {
    throw new HttpProblem('GATEWAY_UNAVAILABLE', 'this server has no gateway to reach upstreams with (createToolRegistryServer({ upstreams: upstreamGovernance() }); tool-registry serve has one)');
  }
  return governance;
}

function parseBody<T>(schema: z.ZodType<T>, context: RouteContext): T {
  const parsed = schema.safeParse(context.body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message }));
    const first = issues[0] as { path: string; message: string };
    throw new HttpProblem('BAD_REQUEST', `the body: ${first.path === '' ? '' : `${first.path}: `}${first.message}`, { context: { issues } });
  }
  return parsed.data;
}

/**
 * How many upstreams `GET /v1/upstreams` counts at once: each may need a listing (a stdio
 * upstream: a child process), so a registry of 50 upstreams does not start 50 children at once.
 */
export const UPSTREAM_LIST_CONCURRENCY = 4;

/** `work` over every item, at most `limit` at a time, the results in the items' order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

const LIVE_ERRORS = ['UPSTREAM_NOT_FOUND', 'UPSTREAM_UNAVAILABLE', 'VARIABLE_MISSING', 'GATEWAY_UNAVAILABLE'];

/** The routes, over the gateway the server was given (or none). */
export function upstreamRoutes(governance: UpstreamGovernance | undefined): RouteDefinition[] {
  return [
    {
      method: 'get',
      path: '/v1/upstreams',
      operationId: 'listUpstreams',
      summary: 'The upstream MCP servers, as stored (secrets stay ${VAR} references), with their tools counted by state',
      tag: 'gateway',
      scope: 'admin',
      namespaced: true,
      responses: { 200: { description: 'Every upstream, by name.', schema: UpstreamListSchema } },
      errors: [],
      handle: async ({ registry }) => {
        const rows = await registry.listUpstreams();
        const upstreams = await mapBounded(
          rows,
          UPSTREAM_LIST_CONCURRENCY,
          async (row) => {
            const registered = (await registry.listAll({ includeDisabled: true, tags: [`upstream:${row.name}`] })).length;
            if (governance === undefined) return { ...rowOf(row), registered, counts: null, error: { code: 'GATEWAY_UNAVAILABLE', message: 'this server has no gateway' } };
            try {
              return { ...rowOf(row), registered, counts: counts(await governance.states(registry, row, { fresh: false })), error: null };
            } catch (error) {
              const problem = gatewayProblem(error);
              if (!(problem instanceof HttpProblem)) throw error;
              return { ...rowOf(row), registered, counts: null, error: { code: problem.code, message: problem.message } };
            }
          },
        );
        return json({ upstreams });
      },
    },
    {
      method: 'get',
      path: '/v1/upstreams/{name}/pending',
      operationId: 'upstreamPending',
      summary: "An upstream's tools that are not served, listed live: pending (changed, with the difference, or new), gone, rejected, unregistrable",
      tag: 'gateway',
      scope: 'admin',
      namespaced: true,
      pathParams: { name: z.string().meta({ description: 'The upstream name.' }) },
      responses: { 200: { description: 'The counts and every tool that is not served.', schema: UpstreamPendingSchema } },
      errors: LIVE_ERRORS,
      handle: async ({ registry, params }) => {
        const upstream = await requireUpstream(registry, params.name as string);
        const states = await governed(() => requireGateway(governance).states(registry, upstream, { fresh: true }));
        return json({ upstream: rowOf(upstream), counts: counts(states), tools: states.filter((one) => one.state !== 'served') });
      },
    },
    {
      method: 'post',
      path: '/v1/upstreams/{name}/approve',
      operationId: 'approveUpstreamTools',
      summary: "Approve pending tools: each is registered as its next version through the registry's policies",
      tag: 'gateway',
      scope: 'admin',
      namespaced: true,
      pathParams: { name: z.string().meta({ description: 'The upstream name.' }) },
      body: { schema: ApproveRequestSchema, description: '`{ tools?: string[], all?: boolean, force?: boolean }`: name the tools or give all.' },
      responses: { 200: { description: 'What was approved (empty when nothing was pending), and the row.', schema: ApproveResultSchema } },
      errors: [...LIVE_ERRORS, 'UPSTREAM_TOOL_NOT_FOUND', 'PRECONDITION_FAILED', 'COMPATIBILITY_FAILED', 'VERSION_DOWNGRADE', 'VERSION_CONFLICT', 'STORAGE_BUSY'],
      handle: async (context) => {
        const body = parseBody(ApproveRequestSchema, context);
        if (body.all !== true && (body.tools ?? []).length === 0) throw new HttpProblem('BAD_REQUEST', 'name the tools to approve (tools) or give all: true', { context: { path: 'tools' } });
        const upstream = await requireUpstream(context.registry, context.params.name as string);
        const result = await governed(() => requireGateway(governance).approve(context.registry, upstream, body));
        return json({ approved: result.approved, upstream: rowOf(result.upstream) });
      },
    },
    {
      method: 'post',
      path: '/v1/upstreams/{name}/reject',
      operationId: 'rejectUpstreamTool',
      summary: 'Reject the definition a pending tool has now: not served, not pending until the upstream changes it',
      tag: 'gateway',
      scope: 'admin',
      namespaced: true,
      pathParams: { name: z.string().meta({ description: 'The upstream name.' }) },
      body: { schema: RejectRequestSchema, description: '`{ tool }`: its name upstream (without the prefix).' },
      responses: { 200: { description: 'The rejected tool and the row.', schema: RejectResultSchema } },
      errors: [...LIVE_ERRORS, 'UPSTREAM_TOOL_NOT_FOUND', 'STORAGE_BUSY'],
      handle: async (context) => {
        const body = parseBody(RejectRequestSchema, context);
        const upstream = await requireUpstream(context.registry, context.params.name as string);
        const result = await governed(() => requireGateway(governance).reject(context.registry, upstream, body.tool));
        return json({ rejected: result.rejected, upstream: rowOf(result.upstream) });
      },
    },
  ];
}
