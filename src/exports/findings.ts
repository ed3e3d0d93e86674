// The one loop every exporter runs (validate, lint for its provider, refuse or skip what the
// provider would reject, then build), and the per-tool / per-request finding helpers that
// lintTools shares. Provider files import this; it imports no provider file.
import type { ToolSpec } from '../core/contracts.js';
import { ProviderIncompatibleError } from '../core/errors.js';
import { specsOf } from './items.js';
import type { ProviderRules, RuleContext } from './rule-set.js';
import type { ExportItems, ExportOptions, LintFinding } from './types.js';

export function finding(rules: ProviderRules, toolName: string | null, hit: Omit<LintFinding, 'tool_name' | 'provider'>): LintFinding {
  return Object.freeze({ tool_name: toolName, provider: rules.provider, path: hit.path, rule: hit.rule, severity: hit.severity, message: hit.message });
}

/** Findings per tool (same index as `specs`): the provider's rules, and `duplicate-name` for a name seen before. */
export function toolFindings(
  specs: readonly ToolSpec[],
  rules: ProviderRules,
  context: RuleContext,
  /** One spec's findings by the rules (lintTools: bounded and remembered). */
  findingsOf: (spec: ToolSpec) => readonly LintFinding[] = (spec) => rules.tool(spec, context).map((hit) => finding(rules, spec.tool_name, hit)),
): LintFinding[][] {
  const seen = new Set<string>();
  return specs.map((spec) => {
    const found = [...findingsOf(spec)];
    if (seen.has(spec.tool_name)) {
      found.push(finding(rules, spec.tool_name, {
        path: '/tool_name',
        rule: 'duplicate-name',
        severity: 'error',
        message: `${JSON.stringify(spec.tool_name)} is given more than once; ${rules.label} needs every tool name in a request to be unique`,
      }));
    }
    seen.add(spec.tool_name);
    return found;
  });
}

export function requestFindings(specs: readonly ToolSpec[], rules: ProviderRules, context: RuleContext): LintFinding[] {
  return rules.request(specs, context).map((hit) => finding(rules, hit.tool_name ?? null, hit));
}

function incompatible(caller: string, rules: ProviderRules, errors: readonly LintFinding[]): ProviderIncompatibleError {
  const first = errors[0] as LintFinding;
  const tools = new Set(errors.flatMap((error) => (error.tool_name === null ? [] : [error.tool_name])));
  const where = first.tool_name === null ? 'the request' : `${JSON.stringify(first.tool_name)} at ${first.path}`;
  const count = `${errors.length} error${errors.length === 1 ? '' : 's'}`;
  return new ProviderIncompatibleError(
    `${caller}: ${rules.label} would reject this export (${count}${tools.size > 0 ? ` in ${tools.size} tool${tools.size === 1 ? '' : 's'}` : ''}); first: ${where}: ${first.message} [${first.rule}]`,
    { provider: rules.provider, findings: Object.freeze([...errors]), ...(first.tool_name === null ? {} : { tool_name: first.tool_name }) },
  );
}

/**
 * The loop of every exporter: validated enabled specs, the provider's findings, then
 * `build` for each tool it accepts (with the item it came from). With `onIncompatible: 'skip'` a tool with an error is
 * left out; a request-level error (too many tools) is still thrown, because leaving out
 * arbitrary tools to fit would be a silent choice.
 */
export function exportWith<T>(
  caller: string,
  items: ExportItems,
  options: ExportOptions,
  rules: ProviderRules,
  context: RuleContext,
  build: (spec: ToolSpec, source: unknown) => T,
): T[] {
  const onIncompatible = options.onIncompatible ?? 'throw';
  if (onIncompatible !== 'throw' && onIncompatible !== 'skip') {
    throw new TypeError(`${caller}: onIncompatible must be 'throw' or 'skip', got ${JSON.stringify(onIncompatible)}`);
  }
  const sources: unknown[] = [];
  const specs = specsOf(items, caller, options.deprecated ?? 'annotate', sources);
  const perTool = toolFindings(specs, rules, context);
  const kept: ToolSpec[] = [];
  const keptSources: unknown[] = [];
  const toolErrors: LintFinding[] = [];
  specs.forEach((spec, index) => {
    const errors = (perTool[index] as LintFinding[]).filter((found) => found.severity === 'error');
    if (errors.length === 0) {
      kept.push(spec);
      keptSources.push(sources[index]);
    } else toolErrors.push(...errors);
  });
  if (toolErrors.length > 0 && onIncompatible === 'throw') {
    const requestErrors = requestFindings(specs, rules, context).filter((found) => found.severity === 'error');
    throw incompatible(caller, rules, [...toolErrors, ...requestErrors]);
  }
  const requestErrors = requestFindings(kept, rules, context).filter((found) => found.severity === 'error');
  if (requestErrors.length > 0) throw incompatible(caller, rules, requestErrors);
  return kept.map((spec, index) => build(spec, keptSources[index]));
}


/** A boolean option: `undefined` is false, anything but a boolean is a TypeError naming it. */
export function checkBoolean(caller: string, name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new TypeError(`${caller}: ${name} must be a boolean, got ${JSON.stringify(value)}`);
  return value;
}

/** The resolved `deferLoading` option: off, or which names stay loaded and the search tool. */
export function deferLoadingOf<Search extends string>(
  caller: string,
  value: unknown,
  searches: readonly Search[],
  fallback: Search,
): { readonly keep: ReadonlySet<string>; readonly toolSearch: Search } | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return { keep: new Set(), toolSearch: fallback };
  if (typeof value !== 'object' || value === null) throw new TypeError(`${caller}: deferLoading must be a boolean or an object, got ${JSON.stringify(value)}`);
  const { keep = [], toolSearch = fallback } = value as { keep?: unknown; toolSearch?: unknown };
  if (!Array.isArray(keep) || keep.some((name) => typeof name !== 'string')) throw new TypeError(`${caller}: deferLoading.keep must be an array of tool names`);
  if (!searches.includes(toolSearch as Search)) {
    throw new TypeError(`${caller}: deferLoading.toolSearch must be ${searches.map((one) => `'${one}'`).join(' or ')}, got ${JSON.stringify(toolSearch)}`);
  }
  return { keep: new Set(keep as string[]), toolSearch: toolSearch as Search };
}
