// The MCP endpoint as a mount of the HTTP server (`serve --tools MODULE`): one live tool set
// and one Streamable HTTP handler per namespace, sessions opened with the request's token.
import { liveToolSet } from '../index.js';
import type { LiveToolSet, ToolRegistry, ToolSet, Upstream } from '../index.js';
// The server's mount contract, types only: tool-registry/mcp loads no server code (src/server/index.ts).
import type { Mount, MountContext } from '../server/index.js';
import { gatewayToolSet } from './gateway/gateway.js';
import type { GatewayOptions, GatewayToolSet } from './gateway/gateway.js';
import type { UpstreamToolDefinition } from './gateway/upstream-definition.js';
import { createCallRecorder } from './call-recorder.js';
import type { CallRecorder, CallRecorderOptions, CallRecorderStats } from './call-recorder.js';
import { createMcpHttpHandler, rpcError } from './http-handler.js';
import type { McpHttpHandler, McpHttpHandlerOptions } from './http-handler.js';
import { MCP_MOUNT_DESCRIPTION } from '../mcp-description.js';

/**
 * Options of `mcpMount`: every namespace's handler gets them, but for `allowedOrigins`,
 * `maxBodyBytes` and `maxSessions`: the server's edges decide those for every route (its own
 * origin and `cors`; its `maxBodyBytes`; its `maxSessions`).
 */
export interface McpMountOptions extends Omit<McpHttpHandlerOptions, 'allowedOrigins' | 'maxBodyBytes' | 'maxSessions'> {
  /** Hears a namespace's failure to follow its registry (default: a process warning). */
  readonly onError?: (error: unknown, namespace: string) => void;
  /**
   * The gateway: each namespace also serves its registry's upstream MCP servers' approved
   * tools (`gatewayToolSet`), with these options. `false`: local tools only. Default `{}`.
   */
  readonly upstreams?: false | Omit<GatewayOptions, 'policy' | 'clock' | 'onError'>;
  /**
   * The audit log: every `tools/call` is recorded in its namespace's registry
   * (`createCallRecorder` with these options; its `onError` hears failed writes). `false`:
   * nothing is recorded. Default `{}` (recorded, default bounds).
   */
  readonly audit?: false | CallRecorderOptions;
}


/** The MCP mount, and what its gateways list now (for `upstreamGovernance`'s `definitions`). */
export interface McpMount extends Mount {
  /**
   * What the gateway serving `registry` (a namespace whose endpoint started) lists now for
   * `upstream`: undefined when there is none, it is not connected or has not listed, or it
   * has not read the row's current version yet; then the caller connects and lists itself.
   */
  upstreamDefinitions(registry: ToolRegistry, upstream: Upstream): Promise<readonly UpstreamToolDefinition[] | undefined>;
}

interface Endpoint {
  readonly registry: ToolRegistry;
  readonly live: LiveToolSet;
  readonly handler: McpHttpHandler;
  readonly recorder: CallRecorder | undefined;
}

/**
 * The MCP endpoint for `createToolRegistryServer({ mounts: { mcp: mcpMount(tools) } })`:
 * `/mcp` serves the `default` namespace, `/v1/namespaces/{ns}/mcp` that namespace, each over
 * a `liveToolSet` of `tools` on its registry (made at the namespace's first request). The
 * server authenticates first (scope `read` opens a session); the token's `policy` decides
 * what its sessions list and may call, and a session answers only to the token that opened
 * it (its id: not another token of the same name). A session counts against the server's
 * `maxSessions`, and ends when its token is revoked or changed, or with the server.
 */
export function mcpMount(tools: ToolSet, options: McpMountOptions = {}): McpMount {
  const { onError, upstreams = {}, audit = {}, ...rest } = options;
  // Whatever a caller passes (a plain object may carry more than the type): the server decides
  // the edges, and each namespace's endpoint its own records.
  const { allowedOrigins: _origins, maxBodyBytes: _limit, maxSessions: _sessions, onCall: _onCall, namespace: _namespace, tokenName: _tokenName, ...given } = rest as McpHttpHandlerOptions;
  // The server bounds bodies and sessions (its maxBodyBytes, its maxSessions and a token's share of it).
  const handlerOptions: McpHttpHandlerOptions = { ...given, maxBodyBytes: Number.POSITIVE_INFINITY, maxSessions: Number.POSITIVE_INFINITY };
  const endpoints = new Map<string, Promise<Endpoint>>();
  /** The endpoints that started, by their registry (a namespace opened again is another registry). */
  const started = new WeakMap<ToolRegistry, Endpoint>();
  let closed = false;

  /** Handlers made so far, for their session counts (a namespace's endpoint once it started). */
  const handlers = new Set<{ readonly sessionCount: number }>();
  /** Recorders of the endpoints alive now, and the counts of those retired. */
  const recorders = new Set<CallRecorder>();
  const retired = { written: 0, failedWrites: 0, dropped: 0 };
  /** Recorders being closed: an endpoint retired twice at once (requests that found it stale, its registry closed) counted its rows twice. */
  const closingRecorders = new Map<CallRecorder, Promise<void>>();
  const closeRecorder = (recorder: CallRecorder | undefined): Promise<void> => {
    if (recorder === undefined || !recorders.has(recorder)) return Promise.resolve();
    let closing = closingRecorders.get(recorder);
    if (closing === undefined) {
      closing = (async () => {
        await recorder.close();
        recorders.delete(recorder);
        closingRecorders.delete(recorder);
        retired.written += recorder.stats.written;
        retired.failedWrites += recorder.stats.failedWrites;
        retired.dropped += recorder.stats.dropped;
      })();
      closingRecorders.set(recorder, closing);
    }
    return closing;
  };

  const retire = (namespace: string, endpoint: Promise<Endpoint>): void => {
    if (endpoints.get(namespace) === endpoint) endpoints.delete(namespace);
    void endpoint.then(
      (done) => {
        handlers.delete(done.handler);
        if (started.get(done.registry) === done) started.delete(done.registry);
        return done.handler.close().then(() => Promise.all([done.live.close(), closeRecorder(done.recorder)]));
      },
      () => {},
    );
  };

  const endpointFor = (namespace: string, registry: ToolRegistry): Promise<Endpoint> => {
    const known = endpoints.get(namespace);
    if (known !== undefined) return known;
    const made: Promise<Endpoint> = (async (): Promise<Endpoint> => {
      const follow = upstreams === false ? liveToolSet : (on: ToolRegistry, source: ToolSet, given: { onError: (error: unknown) => void }) => gatewayToolSet(on, source, { ...upstreams, ...given });
      const live = await follow(registry, tools, {
        onError: (error) => {
          // The server closed the namespace (least recently used, no session held it): this
          // endpoint is done; the namespace's next request opens it again with a new one.
          if ((error as { code?: unknown }).code === 'REGISTRY_CLOSED') return retire(namespace, made);
          if (onError !== undefined) onError(error, namespace);
          else process.emitWarning(`mcpMount: namespace ${namespace} cannot follow its registry (${(error as Error).message ?? String(error)}); retrying`, 'ToolRegistryWarning');
        },
      });
      const recorder = audit === false ? undefined : createCallRecorder(registry, audit);
      if (recorder !== undefined) recorders.add(recorder);
      const handler = createMcpHttpHandler(live, { ...handlerOptions, namespace, ...(recorder === undefined ? {} : { onCall: recorder.record }) });
      handlers.add(handler);
      const endpoint = { registry, live, handler, recorder };
      started.set(registry, endpoint);
      return endpoint;
    })();
    endpoints.set(namespace, made);
    // A failed start (the registry could not be read) is tried again by the next request.
    made.catch(() => endpoints.delete(namespace));
    return made;
  };

  return {
    scope: 'read',
    ...MCP_MOUNT_DESCRIPTION,
    upstreamDefinitions: async (registry, upstream) => {
      const live = started.get(registry)?.live as Partial<GatewayToolSet> | undefined;
      if (closed || typeof live?.upstreams !== 'function' || live.closed === true) return undefined;
      const status = live.upstreams().find((each) => each.name === upstream.name);
      return status?.connected === true && status.listedFor === upstream.updated_at ? status.listed : undefined;
    },
    sessionCount: () => [...handlers].reduce((sum, handler) => sum + handler.sessionCount, 0),
    auditStats: (): CallRecorderStats => {
      const sum = { ...retired, buffered: 0 };
      for (const { stats } of recorders) {
        sum.written += stats.written;
        sum.failedWrites += stats.failedWrites;
        sum.dropped += stats.dropped;
        sum.buffered += stats.buffered;
      }
      return sum;
    },
    async handle(request: Request, context: MountContext): Promise<Response> {
      // A JSON-RPC error with Retry-After, as the handler's own 503 (it had neither body nor Retry-After).
      if (closed) return rpcError(503, -32000, 'The MCP endpoint is shutting down');
      // The server hands a mount every path below its own, but the endpoint is one path (MCP: "a single HTTP
      // endpoint"): `/mcp/team_a` served the default namespace's tools as if it were that namespace's endpoint.
      const path = new URL(request.url).pathname;
      const segments = path.split('/');
      const own = segments.slice(0, path.startsWith('/v1/namespaces/') ? 5 : 2).join('/');
      if (path !== own) return rpcError(404, -32000, `Not found: ${JSON.stringify(path)} is below the MCP endpoint ${own}, which has no paths under it (a namespace's endpoint is /v1/namespaces/{ns}${own.slice(own.lastIndexOf('/'))})`);
      const known = endpointFor(context.namespace, context.registry);
      let endpoint = await known;
      if (endpoint.registry !== context.registry) {
        // The namespace was opened again (a new registry object): follow the new one. The one
        // retired is the stale one this request found, never what the map holds now: another
        // request may have made the new endpoint meanwhile (retiring it ended its new sessions).
        retire(context.namespace, known);
        endpoint = await endpointFor(context.namespace, context.registry);
      }
      const token = context.token;
      // A session belongs to the token itself (its id), not its name: one created again under the same name is another
      // principal. So is the token once its scopes, namespaces or policy changed: the session's next request is a 404 at
      // once (the server checks the token file on every request), before the server's 500 ms check ends the session.
      const recorder = endpoint.recorder;
      const admit =
        recorder === undefined
          ? context.openSession
          : (): ReturnType<MountContext['openSession']> => {
              const lease = context.openSession();
              let released = false;
              return {
                signal: lease.signal,
                release: () => {
                  if (released) return;
                  released = true;
                  // The namespace stays open until the session's call records are written: closed
                  // meanwhile as the least recently used one, they were dropped (REGISTRY_CLOSED).
                  const unhold = context.hold?.() ?? (() => {});
                  lease.release();
                  void recorder.flush().finally(unhold);
                },
              };
            };
      const principal = token === null ? undefined : JSON.stringify([token.id, token.scopes, token.namespaces, token.policy]);
      return endpoint.handler.handle(
        request,
        token === null ? { originChecked: true, admit } : { originChecked: true, admit, principal, tokenName: token.name, ...(token.policy === null ? {} : { policy: token.policy }) },
      );
    },
    async close(): Promise<void> {
      closed = true;
      const all = await Promise.allSettled(endpoints.values());
      endpoints.clear();
      handlers.clear();
      await Promise.all(
        all.map(async (settled) => {
          if (settled.status !== 'fulfilled') return;
          await settled.value.handler.close();
          await settled.value.live.close();
          // Before the server closes the registries: what waits is written.
          await closeRecorder(settled.value.recorder);
        }),
      );
    },
  };
}
