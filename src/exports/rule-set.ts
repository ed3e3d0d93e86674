// The shape every provider file fills in: its rules over one tool and over the whole request.
import type { ToolSpec } from '../core/contracts.js';
import type { RuleHit } from './schema.js';
import type { LintProvider, McpRevision } from './types.js';

/** What the rules are asked to check. */
export interface RuleContext {
  readonly strict: boolean;
  readonly revision: McpRevision;
  /** MCP only: an output schema whose root is not `type: "object"` is left out instead of refused. */
  readonly omitNonObjectOutput?: boolean;
}

/** One provider's rules. `request` findings get `tool_name: null` unless they name a tool. */
export interface ProviderRules {
  readonly provider: LintProvider | 'ai-sdk';
  /** What messages call the provider ("OpenAI", "Gemini (parameters)"). */
  readonly label: string;
  tool(spec: ToolSpec, context: RuleContext): RuleHit[];
  request(specs: readonly ToolSpec[], context: RuleContext): (RuleHit & { tool_name?: string })[];
}

/** A request with more tools than the provider accepts. */
export function tooManyTools(count: number, max: number, who: string, what = 'tools'): RuleHit[] {
  if (count <= max) return [];
  return [{ path: '', rule: 'max-tools', severity: 'error', message: `${who} accepts at most ${max} ${what} in one request; this one has ${count}` }];
}
