// Version policies (issue 27): stored in the registry, so every process obeys the same ones.
// `versionOrder: 'semver'` refuses a lower SemVer than the stored one (VERSION_DOWNGRADE);
// `compatibility` refuses a new version whose schemas would break callers or consumers
// (COMPATIBILITY_FAILED). Both are off by default, so the seed's registration rule stands.
import type * as SemverModule from 'semver';
import type { ToolRegistration, ToolSpec } from './contracts.js';
import { CompatibilityFailedError, ValidationError, VersionDowngradeError } from './errors.js';
import { previewValue } from './issues.js';
import { PATTERN_BUDGET_MS, PatternBudget } from './pattern-match.js';
import { compareToolSchemasWithin } from './schema-compare.js';
import type { SchemaDifference, ToolSchemas } from './schema-compare.js';

/**
 * semver, run at the first version check instead of in every process that loads the core (a
 * `list` never needs it; running its modules was 2 % of one's CPU profile): the bundle turns
 * this `require` into a call of the bundled module, which runs once.
 */
// eslint-disable-next-line typescript/no-require-imports -- a require the bundle resolves is what defers a module's run
const semver = (): typeof SemverModule => require('semver') as typeof SemverModule;

/** `'any'` (default): any other version replaces the stored one. `'semver'`: versions are SemVer 2.0.0 and may not go down. */
export type VersionOrder = 'any' | 'semver';
/** `'none'` (default), `'backward'` (no breaking schema change), `'semver-major'` (a breaking change needs a major bump). */
export type CompatibilityPolicy = 'none' | 'backward' | 'semver-major';

/** The registry's policies, as `getPolicy()` returns them. */
export interface RegistryPolicy {
  readonly versionOrder: VersionOrder;
  readonly compatibility: CompatibilityPolicy;
}

/** What `setPolicy()` takes: the policies to change (the others are kept). */
export interface RegistryPolicyInput {
  readonly versionOrder?: VersionOrder;
  readonly compatibility?: CompatibilityPolicy;
}

export const VERSION_ORDERS: readonly VersionOrder[] = Object.freeze(['any', 'semver']);
export const COMPATIBILITY_POLICIES: readonly CompatibilityPolicy[] = Object.freeze(['none', 'backward', 'semver-major']);

/** The policies of a registry nobody set any on: the seed's rule. */
export const DEFAULT_POLICY: RegistryPolicy = Object.freeze({ versionOrder: 'any', compatibility: 'none' });

/** The policy built from stored name/value pairs (a store's rows); unset names keep the default. */
export function policyOf(entries: Iterable<readonly [string, string]>): RegistryPolicy {
  let policy: RegistryPolicy = DEFAULT_POLICY;
  for (const [name, value] of entries) {
    if (name === 'versionOrder' && (VERSION_ORDERS as readonly string[]).includes(value)) policy = { ...policy, versionOrder: value as VersionOrder };
    if (name === 'compatibility' && (COMPATIBILITY_POLICIES as readonly string[]).includes(value)) policy = { ...policy, compatibility: value as CompatibilityPolicy };
  }
  return Object.freeze(policy);
}

function policyIssue(path: string, message: string) {
  return Object.freeze({ code: 'custom', message, path: Object.freeze([path]), pathText: path });
}

/**
 * Checks what `setPolicy()` was given.
 * @throws TypeError when it is not an object; VALIDATION_FAILED (every issue, with its path)
 *   for an unknown policy name or value
 */
export function parsePolicyInput(input: unknown): RegistryPolicyInput {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new TypeError(`setPolicy(): policy must be an object, got ${previewValue(input)}`);
  }
  const issues = [];
  const given = input as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (key !== 'versionOrder' && key !== 'compatibility') issues.push(policyIssue(key, `unknown policy ${JSON.stringify(key)}: the policies are versionOrder and compatibility`));
  }
  const { versionOrder, compatibility } = given;
  if (versionOrder !== undefined && !(VERSION_ORDERS as readonly unknown[]).includes(versionOrder)) {
    issues.push(policyIssue('versionOrder', `must be 'any' or 'semver' (got ${previewValue(versionOrder)})`));
  }
  if (compatibility !== undefined && !(COMPATIBILITY_POLICIES as readonly unknown[]).includes(compatibility)) {
    issues.push(policyIssue('compatibility', `must be 'none', 'backward' or 'semver-major' (got ${previewValue(compatibility)})`));
  }
  if (issues.length > 0) {
    throw new ValidationError(`invalid policy: ${issues.map((issue) => `${issue.pathText}: ${issue.message}`).join('; ')}; nothing was changed`, issues, {
      path: (issues[0] as { pathText: string }).pathText,
    });
  }
  return Object.freeze({
    ...(versionOrder === undefined ? {} : { versionOrder: versionOrder as VersionOrder }),
    ...(compatibility === undefined ? {} : { compatibility: compatibility as CompatibilityPolicy }),
  });
}

/**
 * Whether a version is SemVer 2.0.0 exactly (the `semver` package parses; its leniencies, a
 * leading `v` or `=` and surrounding spaces, are refused).
 */
export function isSemVer(version: string | null): version is string {
  return version !== null && /^[0-9]/.test(version) && version.trim() === version && semver().parse(version) !== null;
}

function notSemVer(toolName: string, version: string | null, path: string | undefined, why: string): ValidationError {
  const where = path === undefined ? 'version' : `${path}.version`;
  const message = `must be a SemVer 2.0.0 version such as 1.4.0 (${why}), got ${previewValue(version)}`;
  return new ValidationError(`invalid tool spec ${JSON.stringify(toolName)}: ${where}: ${message}`, [policyIssue(where, message)], { tool_name: toolName, path: where });
}

/** What a policy check decided about a new spec. */
export interface PolicyVerdict {
  /** A lower SemVer than the stored one, allowed by `allowDowngrade`: the change event says `rollback: true`. */
  readonly rollback: boolean;
}

const NOT_A_ROLLBACK: PolicyVerdict = Object.freeze({ rollback: false });

/**
 * The policies' check of a spec that rule 1 (`current` undefined) or rule 3 (another version)
 * is about to store: SemVer and order (`versionOrder`), then the schemas (`compatibility`).
 * A rollback (a lower SemVer with `allowDowngrade`) restores a version callers used before:
 * the compatibility policy does not judge it, nor one written with `allowIncompatible` (an override).
 * @throws VALIDATION_FAILED (a version that is not SemVer where a policy needs one),
 *   VERSION_DOWNGRADE, COMPATIBILITY_FAILED
 */
export function checkPolicies(
  policy: RegistryPolicy,
  current: Pick<ToolRegistration, 'spec'> | undefined,
  incoming: Pick<ToolSpec, 'tool_name' | 'version'> & ToolSchemas,
  options: {
    readonly allowDowngrade: boolean;
    readonly allowIncompatible?: boolean;
    readonly path?: string;
    /** A batch's budget for pattern tests, shared by its specs' comparisons (default: this one's own). */
    readonly budget?: PatternBudget;
  },
): PolicyVerdict {
  if (policy === DEFAULT_POLICY || (policy.versionOrder === 'any' && policy.compatibility === 'none')) return NOT_A_ROLLBACK;
  const toolName = incoming.tool_name;
  const version = incoming.version;
  let rollback = false;
  if (policy.versionOrder === 'semver') {
    if (!isSemVer(version)) throw notSemVer(toolName, version, options.path, "the registry's policy versionOrder is 'semver'");
    const stored = current?.spec.version ?? null;
    // A stored version from before the policy that is not SemVer has no order: any SemVer follows it.
    if (isSemVer(stored) && semver().compare(version, stored) < 0) {
      if (!options.allowDowngrade) {
        const where = options.path === undefined ? '' : ` (at ${options.path})`;
        throw new VersionDowngradeError(
          `version downgrade for tool ${JSON.stringify(toolName)}${where}: ${version} is lower than the stored ${stored} and the registry's policy versionOrder is 'semver'; ` +
            `register a higher version, or pass { allowDowngrade: true } to roll back`,
          { tool_name: toolName, version, current_version: stored, ...(options.path === undefined ? {} : { path: options.path }) },
        );
      }
      rollback = true;
    }
  }
  if (current === undefined || rollback || policy.compatibility === 'none' || options.allowIncompatible === true) return rollback ? Object.freeze({ rollback }) : NOT_A_ROLLBACK;
  const stored = current.spec.version;
  if (policy.compatibility === 'semver-major') {
    if (!isSemVer(version)) throw notSemVer(toolName, version, options.path, "the registry's policy compatibility is 'semver-major'");
  }
  const budget = options.budget ?? new PatternBudget();
  const comparison = compareToolSchemasWithin(current.spec, incoming, budget);
  if (comparison.compatible) return NOT_A_ROLLBACK;
  if (policy.compatibility === 'semver-major' && isSemVer(stored) && semver().major(version as string) > semver().major(stored)) return NOT_A_ROLLBACK;
  throw compatibilityFailed(policy.compatibility, toolName, stored, version, comparison.differences, options.path, budget.unchecked);
}

function compatibilityFailed(
  policy: CompatibilityPolicy,
  toolName: string,
  stored: string | null,
  version: string | null,
  differences: readonly SchemaDifference[],
  path: string | undefined,
  outOfTime: string | undefined,
): CompatibilityFailedError {
  const breaking = differences.filter((d) => d.breaking !== false);
  const shown = breaking
    .slice(0, 5)
    .map((d) => `${d.type} at ${d.path}${d.breaking === 'undecidable' ? ' (undecidable)' : ''}`)
    .join(', ');
  // An entry with `omitted` stands for that many values of one place (schema-compare.ts).
  const count = breaking.reduce((sum, d) => sum + (d.omitted ?? 1), 0);
  const more = count > 5 ? ` and ${count - 5} more` : '';
  const fix =
    policy === 'semver-major'
      ? `give it a higher major version than ${stored === null ? 'the stored one' : stored}`
      : 'keep the old schemas accepted, or change the policy';
  const where = path === undefined ? '' : ` (at ${path})`;
  // Say why a difference is undecidable when a pattern ran out of the verdict's time (pattern-match.ts).
  const slow = outOfTime === undefined ? '' : `; the pattern ${previewValue(outOfTime)} could not be tested against a value within the ${PATTERN_BUDGET_MS} ms a verdict has for patterns (a batch's specs share them), so what it decides is undecidable`;
  return new CompatibilityFailedError(
    `incompatible new version of tool ${JSON.stringify(toolName)}${where}: ${version === null ? 'unversioned' : version} would break callers or consumers of ${stored === null ? 'the unversioned spec' : stored} ` +
      `(${shown}${more}) and the registry's policy compatibility is '${policy}'${slow}; ${fix}`,
    { tool_name: toolName, version, current_version: stored, policy, differences, ...(path === undefined ? {} : { path }) },
  );
}
