// lintTools: every provider's rule set over the same validated specs.
import { anthropicRules } from './anthropic.js';
import { checkBoolean, finding, requestFindings, toolFindings } from './findings.js';
import { geminiOpenApiRules, geminiRules } from './gemini.js';
import { deprecatedLine, deprecationOfItem, specsOf } from './items.js';
import { mcpRules } from './mcp.js';
import { openaiRules } from './openai.js';
import type { ProviderRules, RuleContext } from './rule-set.js';
import type { ToolSpec } from '../core/contracts.js';
import type { ExportItems, LintFinding, LintOptions, LintProvider } from './types.js';
import { LINT_PROVIDERS } from './types.js';

const RULES: Record<LintProvider, ProviderRules> = {
  mcp: mcpRules,
  openai: openaiRules,
  anthropic: anthropicRules,
  gemini: geminiRules,
  'gemini-openapi': geminiOpenApiRules,
};

const DEFAULT_PROVIDERS: readonly LintProvider[] = ['mcp', 'openai', 'anthropic', 'gemini'];

/**
 * Findings listed per tool and provider; the rest are counted in one `more-findings` finding.
 * A 500 KB schema of 5,000 `if`/`then`/`else` gave 25 MB of findings: 30 such tools made
 * GET /v1/lint take 30 s of CPU and 2.3 GB, then fail (a 500: the answer passed the longest string).
 */
const MAX_FINDINGS_PER_TOOL = 100;

/**
 * Each spec's listed findings by provider and options. A registration's spec is one frozen
 * object until the tool changes (the exports validate such a spec once), so GET /v1/lint
 * runs the rules over a tool once, not on every request: they cost about 0.4 s per 500 KB
 * schema and provider, which 30 tools made 15 s a request.
 */
const linted = new WeakMap<ToolSpec, Map<string, readonly LintFinding[]>>();

function listedFindings(spec: ToolSpec, rules: ProviderRules, context: RuleContext): readonly LintFinding[] {
  const key = `${rules.provider}\u0000${String(context.strict)}\u0000${context.revision}`;
  let bySpec = linted.get(spec);
  let found = bySpec?.get(key);
  if (found === undefined) {
    found = listed(rules.tool(spec, context).map((hit) => finding(rules, spec.tool_name, hit)));
    if (Object.isFrozen(spec)) {
      if (bySpec === undefined) linted.set(spec, (bySpec = new Map()));
      bySpec.set(key, found);
    }
  }
  return found;
}

/** At most MAX_FINDINGS_PER_TOOL of one tool's findings for one provider, then one saying how many more there are. */
function listed(list: readonly LintFinding[]): readonly LintFinding[] {
  if (list.length <= MAX_FINDINGS_PER_TOOL) return list;
  const rest = list.slice(MAX_FINDINGS_PER_TOOL);
  const first = list[0] as LintFinding;
  return [
    ...list.slice(0, MAX_FINDINGS_PER_TOOL),
    Object.freeze({
      tool_name: first.tool_name,
      provider: first.provider,
      path: '',
      rule: 'more-findings',
      // As severe as the worst one left out, so an error is never hidden behind a warning.
      severity: rest.some((finding) => finding.severity === 'error') ? 'error' : 'warning',
      message: `${rest.length} more findings of this tool for this provider are not listed (at most ${MAX_FINDINGS_PER_TOOL} are)`,
    } satisfies LintFinding),
  ];
}

function checkProviders(providers: unknown): readonly LintProvider[] {
  if (!Array.isArray(providers)) throw new TypeError(`lintTools: providers must be an array of ${LINT_PROVIDERS.join(', ')}`);
  for (const provider of providers) {
    if (!LINT_PROVIDERS.includes(provider as LintProvider)) {
      throw new TypeError(`lintTools: unknown provider ${JSON.stringify(provider)}; known: ${LINT_PROVIDERS.join(', ')}`);
    }
  }
  return providers as LintProvider[];
}

/** A warning per deprecated registration among `items` (by tool name): agents should move off it. */
function deprecatedFindings(items: ExportItems): Map<string, { tool_name: string; message: string }> {
  const found = new Map<string, { tool_name: string; message: string }>();
  const list: readonly unknown[] = Array.isArray(items) ? items : [];
  for (const item of list) {
    const deprecation = deprecationOfItem(item);
    const name = (item as { spec?: { tool_name?: unknown } }).spec?.tool_name;
    if (deprecation === undefined || typeof name !== 'string') continue;
    found.set(name, { tool_name: name, message: `the tool is deprecated; exports say so in its description (${deprecatedLine(deprecation)})` });
  }
  return found;
}

/**
 * Checks tools against the rules of each provider and returns every finding, in provider
 * order, then tool order, each provider's request-level findings last. Disabled
 * registrations are not linted (they are never exported). Never throws for what it finds.
 * @throws VALIDATION_FAILED when an item is not a valid ToolSpec; TypeError on bad options
 */
export function lintTools(items: ExportItems, options: LintOptions = {}): LintFinding[] {
  const providers = checkProviders(options.providers ?? DEFAULT_PROVIDERS);
  const strict = checkBoolean('lintTools', 'strict', options.strict);
  const revision = options.revision ?? '2025-11-25';
  if (revision !== '2025-11-25' && revision !== '2025-06-18') {
    throw new TypeError(`lintTools: revision must be '2025-11-25' or '2025-06-18', got ${JSON.stringify(revision)}`);
  }
  // What the exporters send by default: a deprecated tool's description with its Deprecated line,
  // which can pass a provider's limit (OpenAI's 1,024 characters) that the registered one keeps.
  const specs = specsOf(items, 'lintTools', 'annotate');
  const context: RuleContext = { strict, revision };
  const findings: LintFinding[] = [];
  const deprecated = deprecatedFindings(items);
  for (const provider of providers) {
    const rules = RULES[provider];
    toolFindings(specs, rules, context, (spec) => listedFindings(spec, rules, context)).forEach((list, index) => {
      findings.push(...list);
      const warning = deprecated.get((specs[index] as (typeof specs)[number]).tool_name);
      if (warning !== undefined) findings.push({ tool_name: warning.tool_name, provider, path: 'deprecation', rule: 'deprecated', severity: 'warning', message: warning.message });
    });
    findings.push(...requestFindings(specs, rules, context));
  }
  return findings;
}

