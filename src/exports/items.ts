// Turns what exporters and lintTools are given (tools, specs, registrations, a tool set)
// into validated ToolSpecs. The runtime is accepted by shape, not by class, so the exports
// depend on the core only.
import { deepFreeze } from '../core/canonical.js';
import { isPastSunset, ToolSpec } from '../core/contracts.js';
import { ValidationError } from '../core/errors.js';
import { describeIssues, toRegistryIssues } from '../core/issues.js';
import type { RegistryIssue } from '../core/issues.js';
import type { ExportItems, ToolBoxLike, ToolSetLike } from './types.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isToolSetLike(value: unknown): value is ToolSetLike {
  return isObject(value) && !Array.isArray(value) && typeof value.tools === 'function';
}

/** A turn's `ToolBox` (by shape: `all()` returns its current tools in insertion order). */
function isToolBoxLike(value: unknown): value is ToolBoxLike {
  return isObject(value) && !Array.isArray(value) && typeof value.all === 'function';
}

/**
 * Specs already validated, by the deeply frozen input object they came from. What a registry
 * or the runtime hands out is deeply frozen and can never change, so it is validated once,
 * however often the same tools are exported (every agent turn, say). Anything else is
 * validated on every call.
 */
const validated = new WeakMap<object, ToolSpec>();

export function isDeeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (!Object.isFrozen(value)) return false;
  for (const key of Object.keys(value)) if (!isDeeplyFrozen((value as Record<string, unknown>)[key])) return false;
  return true;
}

/** What an export does with a deprecated registration: say so in the description (default), export it as is, or leave it out. */
export type DeprecatedExport = 'annotate' | 'keep' | 'omit';

/** The deprecation an item carries (a registration's), or undefined. */
export function deprecationOfItem(item: unknown): { message: string; replacement: string | null; sunset: string | null } | undefined {
  if (!isObject(item) || !('deprecation' in item)) return undefined;
  const deprecation = item.deprecation;
  if (!isObject(deprecation) || typeof deprecation.message !== 'string') return undefined;
  const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
  return { message: deprecation.message, replacement: text(deprecation.replacement), sunset: text(deprecation.sunset) };
}

/** The line an export adds to a deprecated tool's description. */
export function deprecatedLine(deprecation: { message: string; replacement: string | null; sunset: string | null }): string {
  // A message without a closing mark would run into the next sentence ("use find Use find instead.").
  const message = deprecation.message.trimEnd();
  const closed = /[.!?…。！？]["')\]]*$/u.test(message) || (deprecation.replacement === null && deprecation.sunset === null) ? message : `${message}.`;
  const instead = deprecation.replacement === null ? '' : ` Use ${deprecation.replacement} instead.`;
  // A sunset date means the start of that day (UTC): the tool goes on it, not after it.
  const sunset = deprecation.sunset === null ? '' : ` It will be removed ${/^\d{4}-\d{2}-\d{2}$/.test(deprecation.sunset) ? 'on' : 'at'} ${deprecation.sunset}.`;
  return `Deprecated: ${closed}${instead}${sunset}`;
}

function annotated(spec: ToolSpec, deprecation: { message: string; replacement: string | null; sunset: string | null }): ToolSpec {
  const line = deprecatedLine(deprecation);
  // Frozen at the top only: its schemas may be the caller's own objects (a spec validated
  // afresh keeps them), which deepFreeze froze in place.
  return Object.freeze({ ...spec, description: spec.description === null || spec.description === '' ? line : `${spec.description}\n\n${line}` });
}

/**
 * The enabled specs of `items`, in the given order, each validated with the `ToolSpec`
 * contract (defaults applied). A disabled registration is left out: a model must not see it;
 * so is a deprecated one whose sunset has passed (`loadToolSet` no longer offers it).
 * `sources`, when given, receives the item each spec came from (same index).
 * @throws VALIDATION_FAILED naming every bad field by path (`[2].spec.input_schema`);
 *   TypeError when `items` is neither a list nor a tool set.
 */
export function specsOf(items: ExportItems, caller: string, deprecated: DeprecatedExport = 'keep', sources?: unknown[]): ToolSpec[] {
  let list: readonly unknown[];
  if (Array.isArray(items)) list = items;
  else if (isToolSetLike(items)) {
    const tools = items.tools();
    if (!Array.isArray(tools)) throw new TypeError(`${caller}: the tool set's tools() did not return an array`);
    list = tools;
  } else if (isToolBoxLike(items)) {
    const tools = items.all();
    if (!Array.isArray(tools)) throw new TypeError(`${caller}: the tool box's all() did not return an array`);
    list = tools;
  } else {
    throw new TypeError(`${caller}: expected an array of tools, specs or registrations, a tool set or a tool box`);
  }
  if (deprecated !== 'annotate' && deprecated !== 'keep' && deprecated !== 'omit') {
    throw new TypeError(`${caller}: deprecated must be 'annotate', 'keep' or 'omit', got ${JSON.stringify(deprecated)}`);
  }
  const specs: ToolSpec[] = [];
  const issues: RegistryIssue[] = [];
  let firstBadName: string | undefined;
  const now = Date.now();
  for (let index = 0; index < list.length; index++) {
    const item = list[index];
    let input: unknown = item;
    const prefix: (string | number)[] = [index];
    const deprecation = deprecationOfItem(item);
    if (deprecation !== undefined && (deprecated === 'omit' || isPastSunset(deprecation, now))) continue;
    const push = (spec: ToolSpec): void => {
      specs.push(deprecation !== undefined && deprecated === 'annotate' ? annotated(spec, deprecation) : spec);
      sources?.push(item);
    };
    if (isObject(item) && 'spec' in item) {
      // A runtime Tool (spec + handler) or a registration (spec + enabled). Any item that
      // says `enabled: false` stays out, a registration joined with its handler included.
      if ('enabled' in item) {
        if (typeof item.enabled !== 'boolean') {
          issues.push(...toRegistryIssues([{ code: 'invalid_type', expected: 'boolean', message: 'must be a boolean', path: ['enabled'], input: item.enabled }], prefix));
          continue;
        }
        if (!item.enabled) continue;
      }
      input = item.spec;
      prefix.push('spec');
    }
    const known = isObject(input) ? validated.get(input) : undefined;
    if (known !== undefined) {
      push(known);
      continue;
    }
    const result = ToolSpec.safeParse(input);
    if (result.success) {
      if (isObject(input) && isDeeplyFrozen(input)) validated.set(input, deepFreeze(result.data));
      push(result.data);
      continue;
    }
    if (issues.length === 0 && isObject(input) && typeof input.tool_name === 'string') firstBadName = input.tool_name;
    issues.push(...toRegistryIssues(result.error.issues, prefix));
  }
  if (issues.length > 0) {
    throw new ValidationError(`${caller}: invalid tools: ${describeIssues(issues, list)}`, issues, {
      path: (issues[0] as RegistryIssue).pathText,
      ...(firstBadName === undefined ? {} : { tool_name: firstBadName }),
    });
  }
  return specs;
}
