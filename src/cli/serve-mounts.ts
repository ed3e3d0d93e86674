// The extra handlers `tool-registry serve` mounts beside the routes: the MCP endpoint at /mcp
// and /v1/namespaces/{ns}/mcp, with the tools of --tools MODULE and (unless --no-upstreams)
// each namespace's approved upstream tools.
import type { ToolSet } from '../index.js';
import type { McpMount } from '../mcp/index.js';
import type { Mount, UpstreamGovernance } from '../server/index.js';
// The endpoint's description alone (no imports): /openapi.json describes /mcp before the SDK loads.
import { MCP_MOUNT_DESCRIPTION } from '../mcp-description.js';

/**
 * The mounts for one `serve` run, from its parsed options; `tools`: the --tools module's set
 * when the caller read it already (`serveTools`), so that it is loaded once.
 */
export async function serveMounts(options: Readonly<Record<string, unknown>>, tools?: ToolSet): Promise<Record<string, Mount>> {
  const upstreams = options.upstreams !== false;
  if (typeof options.tools !== 'string' && !upstreams) return {};
  if (typeof options.tools !== 'string') return { mcp: onFirstRequest(() => mcpMountFor(options)) };
  // A --tools module is read at start: a module that fails to load is a usage error of `serve`.
  return { mcp: await mcpMountFor(options, tools ?? (await serveTools(options))) };
}

/** The tools of `serve --tools MODULE` (a usage error when the module fails to load); undefined without --tools. */
export async function serveTools(options: Readonly<Record<string, unknown>>): Promise<ToolSet | undefined> {
  if (typeof options.tools !== 'string') return undefined;
  const { readToolsModule } = await import('./mcp-run.js');
  return readToolsModule(options.tools);
}

/**
 * The server's `toolPermissions` for the tools `serve` has the code of: what each one's code
 * requires, so that /v1/exports under a policy leaves out what the token's MCP sessions hide.
 */
export function toolPermissionsOf(tools: ToolSet): (toolName: string) => readonly string[] | undefined {
  return (toolName) => tools.resolve(toolName)?.permissions.required;
}

/**
 * A warning of `serve` on stderr, one JSON line as the request lines are (`{ time, level:
 * "warn", message }`), so that a log pipeline reading stderr as JSON lines never meets a
 * line it cannot parse (docs/server.md).
 */
export function serveWarning(message: string, stderr: NodeJS.WritableStream = process.stderr): boolean {
  return stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'warn', message })}\n`);
}

/** The MCP mount of `options`, the MCP SDK loaded with it (it is not needed to serve the HTTP API alone). */
async function mcpMountFor(options: Readonly<Record<string, unknown>>, given?: ToolSet): Promise<McpMount> {
  const upstreams = options.upstreams !== false;
  const [{ mcpMount }, { createToolSet }] = await Promise.all([import('../mcp/index.js'), import('../index.js')]);
  const tools = given ?? createToolSet([]);
  const warn = (message: string): boolean => serveWarning(message);
  const number = (name: string): { [key: string]: number } => (typeof options[name] === 'number' ? { [name]: options[name] } : {});
  return mcpMount(tools, {
    ...number('sessionIdleMs'),
    ...number('callTimeoutMs'),
    ...number('pageSize'),
    ...number('maxResultBytes'),
    ...number('maxCallsInFlight'),
    onError: (error, namespace) => serveWarning(`MCP in namespace ${namespace} cannot follow the registry: ${(error as Error).message ?? String(error)} (retrying)`),
    onWarning: warn,
    upstreams: upstreams ? { ...(typeof options.syncInterval === 'number' ? { syncIntervalMs: options.syncInterval } : {}), onWarning: warn } : false,
    audit: { onError: (error, rows) => serveWarning(`the audit log could not write ${rows} call record(s): ${(error as Error).message ?? String(error)}`) },
  });
}

/**
 * An MCP mount made by `make()` at its first request. Without --tools, `serve` starts
 * without the MCP SDK (its server, client and transports, their ajv and zod 3: about a
 * third of the process's start-up CPU; docs/testing.md, tenth round). Until then there is
 * no session, no audit row and no gateway listing, which is what the mount itself reports
 * before a namespace's first request.
 */
function onFirstRequest(make: () => Promise<McpMount>): McpMount {
  let made: Promise<McpMount> | undefined;
  let mount: McpMount | undefined;
  let closed = false;
  return {
    scope: 'read',
    // Declared now, not once loaded: the document is built at the first GET /openapi.json (it
    // declared every answer of /mcp as `default`, and its 400, JSON-RPC, as a problem only).
    ...MCP_MOUNT_DESCRIPTION,
    upstreamDefinitions: async (registry, upstream) => (mount === undefined ? undefined : mount.upstreamDefinitions(registry, upstream)),
    sessionCount: () => mount?.sessionCount?.() ?? 0,
    auditStats: () => mount?.auditStats?.() ?? { written: 0, failedWrites: 0, dropped: 0, buffered: 0 },
    async handle(request, context) {
      if (closed) return new Response(null, { status: 503 });
      made ??= make().then((value) => (mount = value));
      const real = await made;
      // Closed while it loaded: the mount's own answer after close().
      return closed ? new Response(null, { status: 503 }) : real.handle(request, context);
    },
    async close() {
      closed = true;
      if (made !== undefined) await (await made).close?.();
    },
  };
}

/**
 * The gateway behind the server's `/v1/upstreams` routes, loaded on their first use (the MCP SDK
 * is not needed to serve the rest); `${VAR}` in upstream headers and env come from `env`. With
 * the MCP mount serving upstreams, a namespace whose gateway has listed an upstream (for the
 * row as it is now) answers from that listing, so the pending view is what is served; else the
 * routes connect and list.
 */
export function serveGovernance(env: NodeJS.ProcessEnv, mounts: Readonly<Record<string, Mount>> = {}): UpstreamGovernance {
  const mcp = mounts.mcp as Partial<McpMount> | undefined;
  const live = typeof mcp?.upstreamDefinitions === 'function' ? mcp.upstreamDefinitions.bind(mcp) : undefined;
  let loaded: Promise<UpstreamGovernance> | undefined;
  const gateway = (): Promise<UpstreamGovernance> => (loaded ??= import('../mcp/index.js').then((mod) => mod.upstreamGovernance({ env, ...(live === undefined ? {} : { definitions: live }) })));
  return {
    states: async (registry, upstream, options) => (await gateway()).states(registry, upstream, options),
    approve: async (registry, upstream, options) => (await gateway()).approve(registry, upstream, options),
    reject: async (registry, upstream, tool) => (await gateway()).reject(registry, upstream, tool),
  };
}
