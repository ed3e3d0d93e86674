// The bridge between the persistent registry (specs, enabled flags) and the tools in code.
import { canonicalJson, compareCodePoints, fingerprintOfCanonical } from '../core/canonical.js';
import { isPastSunset, sunsetTime } from '../core/contracts.js';
import type { Deprecation, ToolRegistration } from '../core/contracts.js';
import { SpecMismatchError } from '../core/errors.js';
import { previewValue } from '../core/issues.js';
import type { ToolRegistry } from '../core/registry.js';
import { collectTools } from './collect-tools.js';
import { internalsOf } from './define-tool.js';
import type { Tool } from './define-tool.js';
import { compilePolicy } from './policy.js';
import type { ToolPolicy } from './policy.js';
import { ToolBox } from './tool-box.js';
import { ToolSet, recordDeprecations, recordExcluded } from './tool-set.js';
import type { ExcludedTool } from './tool-set.js';

/** Tools as the bridge takes them: an array (or iterable) of Tools, a ToolSet or a ToolBox. */
export type ToolSource = Iterable<Tool> | ToolSet | ToolBox;

export interface LoadToolSetOptions {
  /** Also keep only the tools this policy allows (the others are not listed in `excluded`, whatever the registry says of them). */
  readonly policy?: ToolPolicy;
  /** What time it is, for deprecations' `sunset`. Default `() => new Date()`. */
  readonly clock?: () => Date;
}

function toolsOf(method: string, source: ToolSource): Tool[] {
  // A box's tools go through a ToolSet too: the brand also matches a box from another copy
  // of the package (or a forgery), and `excluded` is sorted by name whatever the source.
  if (ToolBox.isToolBox(source)) return new ToolSet(source.all()).tools();
  if (source === null || typeof source !== 'object' || typeof (source as Iterable<Tool>)[Symbol.iterator] !== 'function') {
    throw new TypeError(`${method}(): tools must be an array of Tools, a ToolSet or a ToolBox, got ${previewValue(source)}`);
  }
  // Through a ToolSet: every element is checked to be a Tool and names are unique (DUPLICATE_TOOL).
  return (source instanceof ToolSet ? source : new ToolSet(source as Iterable<Tool>)).tools();
}

function assertRegistry(method: string, registry: unknown): asserts registry is ToolRegistry {
  if (typeof registry !== 'object' || registry === null || typeof (registry as ToolRegistry).get !== 'function') {
    throw new TypeError(`${method}(): registry must be a ToolRegistry, got ${previewValue(registry)}`);
  }
}

/**
 * Registers every tool's spec in one all-or-nothing `registerMany`, by the registration
 * rule: an identical spec writes nothing, a new version replaces the old one (keeping an
 * operator's disable), and a spec changed without a version bump fails the whole deploy.
 * Returns the registrations in name order.
 * @throws VERSION_CONFLICT (nothing is written), DUPLICATE_TOOL, and the store's errors
 */
export async function publishTools(registry: ToolRegistry, tools: ToolSource): Promise<ToolRegistration[]> {
  assertRegistry('publishTools', registry);
  // In the caller's order (a box's insertion order), so that an error's `context.path`
  // (`[1]`) indexes what was given; collectTools checks each is a Tool and names are unique.
  const given = tools instanceof ToolSet ? tools.tools() : collectTools('publishTools()', ToolBox.isToolBox(tools) ? tools.all() : tools);
  const registrations = await registry.registerMany(given.map((tool) => tool.spec));
  return registrations.sort((a, b) => compareCodePoints(a.spec.tool_name, b.spec.tool_name));
}

/**
 * The earliest sunset after `now` (ms) among the stored registrations of `list`'s tools, or
 * undefined: the moment a live set must derive again although nothing was committed.
 */
export function nextSunset(list: readonly Tool[], stored: ReadonlyMap<string, ToolRegistration>, now: number): number | undefined {
  let next: number | undefined;
  for (const tool of list) {
    const sunset = stored.get(tool.name)?.deprecation?.sunset;
    if (sunset === undefined || sunset === null) continue;
    const at = sunsetTime(sunset);
    if (at !== undefined && at > now && (next === undefined || at < next)) next = at;
  }
  return next;
}

/**
 * A `ToolSet` of the tools the registry says may run: registered, enabled, and with the
 * stored spec canonically identical to the code's. A disabled tool and a tool never
 * published are left out and listed in the set's `excluded` (`disabled`,
 * `not_registered`), sorted by name; so is a deprecated tool whose `sunset` has passed
 * (`sunset`). A deprecated tool before its sunset is kept: `invoke` works and its result
 * carries `deprecated`. With `policy`, the set is also filtered by it.
 * @throws SPEC_MISMATCH when a stored spec differs from the code's (checked before the
 *   enabled flag: code and registry must agree even on a disabled tool; the first such tool
 *   by name, with `context.tool_name`, `code_fingerprint`, `registry_fingerprint`,
 *   `code_version`, `registry_version`); VALIDATION_FAILED for an invalid policy;
 *   DUPLICATE_TOOL; the store's errors
 */
export async function loadToolSet(registry: ToolRegistry, tools: ToolSource, options: LoadToolSetOptions = {}): Promise<ToolSet> {
  const { list, policy, clock } = checkLoadArguments('loadToolSet', registry, tools, options);
  return deriveToolSet(list, await readRegistrations(registry), policy, 'throw', clock().getTime());
}

/** The checked arguments of `loadToolSet` and `liveToolSet`. */
export function checkLoadArguments(
  method: string,
  registry: unknown,
  tools: ToolSource,
  options: LoadToolSetOptions,
): { list: Tool[]; policy: ToolPolicy | undefined; clock: () => Date } {
  assertRegistry(method, registry);
  if (typeof options !== 'object' || options === null) throw new TypeError(`${method}(): options must be an object`);
  const list = toolsOf(method, tools);
  if (options.policy !== undefined) compilePolicy(options.policy);
  const clock = options.clock ?? (() => new Date());
  if (typeof clock !== 'function') throw new TypeError(`${method}(): clock must be a function`);
  return { list, policy: options.policy, clock };
}

/**
 * One read of every registration, disabled ones included: one consistent view in every
 * store, so a commit that lands meanwhile (an import that disables one tool and enables
 * another) is seen for all the tools or for none. With the read cache it is a copy of what
 * is in memory; without it, the store reads every row (docs/runtime.md).
 */
export async function readRegistrations(registry: ToolRegistry): Promise<Map<string, ToolRegistration>> {
  return new Map((await registry.listAll({ includeDisabled: true })).map((registration) => [registration.spec.tool_name, registration]));
}

/**
 * The derivation `loadToolSet` and `liveToolSet` share: the tools the registrations say may
 * run, filtered by `policy`, with what was left out in `excluded`. A stored spec that differs
 * from the code's throws SPEC_MISMATCH (`onMismatch: 'throw'`) or is left out as
 * `spec_mismatch` (`'exclude'`). A deprecated tool whose sunset is at or before `now` (ms) is
 * left out as `sunset`.
 */
export function deriveToolSet(
  list: readonly Tool[],
  stored: ReadonlyMap<string, ToolRegistration>,
  policy: ToolPolicy | undefined,
  onMismatch: 'throw' | 'exclude',
  now: number,
): ToolSet {
  const excluded: ExcludedTool[] = [];
  const kept: Tool[] = [];
  const deprecations = new Map<string, Deprecation>();
  list.forEach((tool) => {
    const registration = stored.get(tool.name);
    if (registration === undefined) {
      excluded.push({ tool_name: tool.name, reason: 'not_registered' });
      return;
    }
    const code = internalsOf(tool) as NonNullable<ReturnType<typeof internalsOf>>;
    const storedJson = canonicalJson(registration.spec);
    if (storedJson !== code.canonical) {
      if (onMismatch === 'exclude') {
        excluded.push({ tool_name: tool.name, reason: 'spec_mismatch' });
        return;
      }
      const registryFingerprint = fingerprintOfCanonical(storedJson);
      throw new SpecMismatchError(
        `tool ${JSON.stringify(tool.name)}: the registry holds another spec (version ${JSON.stringify(registration.spec.version)}, fingerprint ${registryFingerprint.slice(0, 12)}) than the code (version ${JSON.stringify(tool.spec.version)}, fingerprint ${code.fingerprint.slice(0, 12)}); publish the code's tools (with a new version) or deploy the matching code`,
        {
          tool_name: tool.name,
          code_fingerprint: code.fingerprint,
          registry_fingerprint: registryFingerprint,
          code_version: tool.spec.version,
          registry_version: registration.spec.version,
        },
      );
    }
    if (!registration.enabled) excluded.push({ tool_name: tool.name, reason: 'disabled' });
    else if (isPastSunset(registration.deprecation, now)) excluded.push({ tool_name: tool.name, reason: 'sunset' });
    else {
      kept.push(tool);
      if (registration.deprecation !== null) deprecations.set(tool.name, registration.deprecation);
    }
  });
  const keptTools = new Set(kept);
  const left = new Map(list.filter((tool) => !keptTools.has(tool)).map((tool) => [tool.name, tool]));
  const set = recordExcluded(recordDeprecations(new ToolSet(kept), deprecations), excluded, left);
  // forPolicy keeps `excluded` less what the policy forbids: a persona is not told such a tool exists.
  return policy === undefined ? set : set.forPolicy(policy);
}
