// A tool that finds tools (issue 26): the model starts a turn with it alone, calls it with
// `{ query }`, and the best tools of the source are registered in the turn's ToolBox as
// ephemeral tools, gone once the turn is acknowledged.
import { previewValue } from '../core/issues.js';
import { defineTool, ephemeralCopy } from './define-tool.js';
import type { Tool } from './define-tool.js';
import { callPolicyOf } from './invoke.js';
import { checkCompiled } from './policy.js';
import type { CompiledPolicy } from './policy.js';
import { scopeOfBox, ToolBox } from './tool-box.js';
import { ToolSet } from './tool-set.js';

export interface ToolSearchToolOptions {
  /** Tools returned (and loaded) per search, 1-50. Default 5. */
  readonly k?: number;
  /** The tool's name. Default `'tool_search'`. */
  readonly name?: string;
  /** What the model is told the tool does. */
  readonly description?: string;
}

/** What the search tool returns to the model. */
export interface ToolSearchOutput {
  /** The best tools, best first: what the model needs to choose one. */
  readonly tools: readonly { readonly name: string; readonly description: string | null }[];
  /** The names registered in the turn's ToolBox by this call (already there: not repeated). */
  readonly loaded: readonly string[];
}

const DEFAULT_DESCRIPTION =
  'Search the available tools by what you want to do. Returns the best matching tools by name and description; ' +
  'they become callable for the rest of this turn. Call it before using a tool you have not seen.';

/** The turn's box: the `context` of the call itself, or its `toolBox` property. */
function boxOf(context: unknown): ToolBox | undefined {
  if (ToolBox.isToolBox(context)) return context;
  const box = typeof context === 'object' && context !== null ? (context as { toolBox?: unknown }).toolBox : undefined;
  return ToolBox.isToolBox(box) ? box : undefined;
}

/** Per source, the sets of the tools each policy allows (by what decides it), so a search under a policy builds its index once. */
const allowedSets = new WeakMap<ToolSet, Map<string, ToolSet>>();
/** Policies remembered per source; past it the map starts again (a bound, not a cache policy). */
const MAX_POLICIES_PER_SOURCE = 64;

/** The tools of `source` that every one of `policies` allows (`ToolSet.forPolicy`'s set, kept per policies). */
function allowedOf(source: ToolSet, policies: readonly CompiledPolicy[]): ToolSet {
  let perPolicy = allowedSets.get(source);
  if (perPolicy === undefined) allowedSets.set(source, (perPolicy = new Map()));
  const key = JSON.stringify(policies.map((policy) => [policy.tools === undefined ? null : [...policy.tools].sort(), [...policy.permissions].sort()]));
  let allowed = perPolicy.get(key);
  if (allowed === undefined) {
    if (perPolicy.size >= MAX_POLICIES_PER_SOURCE) perPolicy.clear();
    allowed = new ToolSet(source.tools().filter((tool) => policies.every((policy) => checkCompiled(policy, tool).allowed)));
    perPolicy.set(key, allowed);
  }
  return allowed;
}

/**
 * A Tool the model calls with `{ query }`: it searches `source` (`ToolSet.search`) and returns
 * the best `k` tools' names and descriptions. Invoked with the turn's ToolBox as `context`
 * (`box.invoke(name, args, { context: box })`, or `context: { toolBox: box }`), it also
 * registers those tools in the box as ephemeral copies, so they are callable for the turn
 * and pruned when it is acknowledged (`box.bindContext`). A tool the box already holds is
 * left as it is. The search tool itself is not ephemeral. Invoked under a policy (`invoke`'s
 * `policy`, as an MCP session's is), or on a set or box derived with `forPolicy` (and its
 * `forTurn`, `toToolSet`, `ToolBox.merge`), it finds only the tools those policies allow: a
 * persona never learns the name or description of a tool it may not call.
 * @throws TypeError when `source` is not a ToolSet or an option is invalid
 */
export function toolSearchTool(source: ToolSet, options: ToolSearchToolOptions = {}): Tool<{ query: string }> {
  if (!(source instanceof ToolSet)) throw new TypeError(`toolSearchTool(): source must be a ToolSet, got ${previewValue(source)}`);
  if (typeof options !== 'object' || options === null) throw new TypeError('toolSearchTool(): options must be an object');
  const { k = 5, name = 'tool_search', description = DEFAULT_DESCRIPTION } = options;
  if (!Number.isInteger(k) || k < 1 || k > 50) throw new TypeError(`toolSearchTool(): k must be an integer from 1 to 50, got ${previewValue(k)}`);
  return defineTool<{ query: string }>({
    name,
    description,
    input_schema: {
      type: 'object',
      properties: { query: { type: 'string', minLength: 1, description: 'What the tool should do, in a few words (such as "send an email").' } },
      required: ['query'],
      additionalProperties: false,
    },
    handler: ({ query }, options): ToolSearchOutput => {
      const { context } = options;
      const box = boxOf(context);
      // The turn's box may be a persona's (from a forPolicy set), which takes only what it may call: search under its policies too.
      const boxScope = box instanceof ToolBox ? scopeOfBox(box) : undefined; // a foreign copy's box enforces its own
      const callPolicy = callPolicyOf(options);
      const policy = boxScope === undefined ? callPolicy : [...(callPolicy ?? []), ...boxScope];
      const hits = (policy === undefined ? source : allowedOf(source, policy)).search(query, k);
      const loaded: string[] = [];
      if (box !== undefined) {
        for (const { tool } of hits) {
          if (box.has(tool.name)) continue;
          box.register(ephemeralCopy(tool));
          loaded.push(tool.name);
        }
      }
      return { tools: hits.map(({ tool }) => ({ name: tool.name, description: tool.spec.description })), loaded };
    },
  });
}
