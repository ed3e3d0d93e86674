// The runtime Tool a serving process makes of an approved upstream tool, and the one question
// every report of what is served asks of it: would a serving process make it? (`defineTool`
// refuses an input or output schema ajv cannot compile.) `upstream add`, `sync`, `pending`
// and the API's states ask `upstreamServingRefusal`, the gateway serves through
// `upstreamTool`: one decision, so no report counts as served a tool the server refuses.
import { defineTool } from '../../index.js';
import type { Tool, ToolAnnotations, ToolHandlerOptions, ToolSpecInput, Upstream } from '../../index.js';
import { upstreamToolSpec } from './upstream-definition.js';
import type { UpstreamToolDefinition } from './upstream-definition.js';

/**
 * The upstream's annotations as MCP's `ToolAnnotations` has them: `title` and the four hints,
 * each as the upstream gave it. (The SDK's client keeps only these keys when it reads a
 * `tools/list`; a value of another type, which it would have refused, is left out.)
 */
function annotationsOf(annotations: Readonly<Record<string, unknown>> | undefined): ToolAnnotations {
  const out: Record<string, unknown> = {};
  for (const key of ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    if (typeof annotations?.[key] === (key === 'title' ? 'string' : 'boolean')) out[key] = annotations?.[key];
  }
  return out as ToolAnnotations;
}

type UpstreamHandler = (args: Record<string, unknown>, call: ToolHandlerOptions) => unknown;

/**
 * The Tool of an upstream tool: `spec` (the registered one), the upstream's title and
 * annotations, the row's permissions, `handler`.
 * @throws what `defineTool` throws: VALIDATION_FAILED for a schema ajv cannot compile
 */
export function upstreamTool(upstream: Pick<Upstream, 'permissions'>, definition: UpstreamToolDefinition, spec: ToolSpecInput, handler: UpstreamHandler): Tool {
  return defineTool({
    name: spec.tool_name,
    version: spec.version ?? null,
    description: spec.description ?? null,
    ...(definition.title === undefined || definition.title === '' ? {} : { title: definition.title }),
    annotations: annotationsOf(definition.annotations),
    input_schema: spec.input_schema,
    output_schema: spec.output_schema ?? {},
    tags: spec.tags ?? [],
    permissions: { required: upstream.permissions },
    handler: handler as never,
  });
}

function refuseCall(): never {
  throw new Error('a tool made only to ask whether it can be served');
}

/** Answers by definition object (a serving gateway's listing keeps its objects), then by prefix. */
const asked = new WeakMap<UpstreamToolDefinition, Map<string, string | null>>();

/**
 * Why a serving process does not serve this definition once approved (`upstreamTool`
 * refuses it: the message the gateway logs after "is not served: "), or undefined when it
 * serves it. Asked of the spec `approve` registers; the row's permissions are checked when
 * the row is stored, so they play no part.
 */
export function upstreamServingRefusal(upstream: Pick<Upstream, 'name' | 'prefix'>, definition: UpstreamToolDefinition): string | undefined {
  const byPrefix = asked.get(definition) ?? new Map<string, string | null>();
  asked.set(definition, byPrefix);
  let answer = byPrefix.get(upstream.prefix);
  if (answer === undefined) {
    try {
      upstreamTool({ permissions: [] }, definition, upstreamToolSpec(upstream, definition, '1.0.0'), refuseCall);
      answer = null;
    } catch (error) {
      answer = error instanceof Error ? error.message : String(error);
    }
    byPrefix.set(upstream.prefix, answer);
  }
  return answer ?? undefined;
}
