// The MCP endpoint as a mount of the HTTP server (`serve --tools MODULE`): one live tool set
// and one Streamable HTTP handler per namespace, sessions opened with the request's token.
import { liveToolSet } from '../index.js';
import type { LiveToolSet, Mount, MountContext, ToolRegistry, ToolSet } from '../index.js';
import { createMcpHttpHandler } from './http-handler.js';
import type { McpHttpHandler, McpHttpHandlerOptions } from './http-handler.js';

/** Options of `mcpMount`: every namespace's handler gets them. */
export interface McpMountOptions extends McpHttpHandlerOptions {
  /** Hears a namespace's failure to follow its registry (default: a process warning). */
  readonly onError?: (error: unknown, namespace: string) => void;
}

interface Endpoint {
  readonly registry: ToolRegistry;
  readonly live: LiveToolSet;
  readonly handler: McpHttpHandler;
}

/**
 * The MCP endpoint for `createToolRegistryServer({ mounts: { mcp: mcpMount(tools) } })`:
 * `/mcp` serves the `default` namespace, `/v1/namespaces/{ns}/mcp` that namespace, each over
 * a `liveToolSet` of `tools` on its registry (made at the namespace's first request). The
 * server authenticates first (scope `read` opens a session); the token's `policy` decides
 * what its sessions list and may call, and a session answers only to the token that opened
 * it. Sessions end with the server.
 */
export function mcpMount(tools: ToolSet, options: McpMountOptions = {}): Mount {
  const { onError, ...handlerOptions } = options;
  const endpoints = new Map<string, Promise<Endpoint>>();
  let closed = false;

  const endpointFor = (namespace: string, registry: ToolRegistry): Promise<Endpoint> => {
    const known = endpoints.get(namespace);
    if (known !== undefined) return known;
    const made = (async (): Promise<Endpoint> => {
      const live = await liveToolSet(registry, tools, onError === undefined ? {} : { onError: (error) => onError(error, namespace) });
      const handler = createMcpHttpHandler(live, handlerOptions);
      handlers.add(handler);
      return { registry, live, handler };
    })();
    endpoints.set(namespace, made);
    // A failed start (the registry could not be read) is tried again by the next request.
    made.catch(() => endpoints.delete(namespace));
    return made;
  };

  /** Handlers made so far, for their session counts (a namespace's endpoint once it started). */
  const handlers = new Set<{ readonly sessionCount: number }>();

  return {
    scope: 'read',
    sessionCount: () => [...handlers].reduce((sum, handler) => sum + handler.sessionCount, 0),
    async handle(request: Request, context: MountContext): Promise<Response> {
      if (closed) return new Response(null, { status: 503 });
      let endpoint = await endpointFor(context.namespace, context.registry);
      if (endpoint.registry !== context.registry) {
        // The namespace was opened again (a new registry object): follow the new one.
        endpoints.delete(context.namespace);
        const replaced = endpoint;
        handlers.delete(replaced.handler);
        void replaced.handler.close().then(() => replaced.live.close());
        endpoint = await endpointFor(context.namespace, context.registry);
      }
      const token = context.token;
      return endpoint.handler.handle(request, token === null ? {} : { principal: token.name, ...(token.policy === null ? {} : { policy: token.policy }) });
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
        }),
      );
    },
  };
}
