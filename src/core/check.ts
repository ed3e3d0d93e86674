// What `register` would do, and how two versions of a tool differ (issue 27): the library
// functions behind `tool-registry check` and `tool-registry diff` (and the server's
// `POST /v1/check` and `GET /v1/tools/{name}/diff`). They read the registry and change nothing.
import { ToolNotFoundError, ToolRegistryError } from './errors.js';
import type { ToolRegistryErrorCode } from './errors.js';
import { PatternBudget } from './pattern-match.js';
import type { ToolRegistry } from './registry.js';
import { decideRegistration } from './rules.js';
import { compareToolSchemas, compareToolSchemasWithin } from './schema-compare.js';
import type { SchemaDifference } from './schema-compare.js';
import { parseSpec } from './validation.js';
import { checkPolicies } from './versions.js';

/** What `register` would do with one spec. */
export interface CheckResult {
  /** The spec's tool_name (`null` when it has no valid one). */
  readonly tool_name: string | null;
  /** Where the spec stood in the input: `[2]`, or `''` for a single spec. */
  readonly path: string;
  /** `add` (rule 1), `update` (rule 3), `unchanged` (rule 2), or `refused` (with `error`). */
  readonly action: 'add' | 'update' | 'unchanged' | 'refused';
  /** The stored version (absent when the tool is not registered or the spec is invalid). */
  readonly from_version?: string | null;
  /** The spec's version (absent when the spec is invalid). */
  readonly to_version?: string | null;
  /** An update that is a rollback to a lower SemVer (allowed by `allowDowngrade`). */
  readonly rollback?: true;
  /** How the spec's schemas differ from the stored ones (`[]` for `add`). */
  readonly differences: readonly SchemaDifference[];
  /** Why `register` would refuse it: the error's code, message and context. */
  readonly error?: { readonly code: ToolRegistryErrorCode; readonly message: string; readonly context: Readonly<Record<string, unknown>> };
}

/** What `checkSpecs` answers. */
export interface CheckReport {
  /** `true` when `register` (or `registerMany`) would accept every spec. */
  readonly ok: boolean;
  readonly results: readonly CheckResult[];
}

function refused(toolName: string | null, path: string, error: unknown, extra: Partial<CheckResult> = {}): CheckResult {
  if (!(error instanceof ToolRegistryError)) throw error;
  return Object.freeze({
    tool_name: toolName,
    path,
    action: 'refused',
    ...extra,
    differences: extra.differences ?? Object.freeze([]),
    error: Object.freeze({ code: error.code, message: error.message, context: error.context }),
  });
}

/**
 * What `register` (one spec) or `registerMany` (an array) would do with each spec now: the
 * registration rule and the registry's policies (`getPolicy()`), read from the registry and
 * changing nothing. Each spec is judged on its own against the stored tools; a name given
 * twice in an array is refused (`DUPLICATE_TOOL`), as `registerMany` refuses it. Not atomic
 * with a later register: another writer may change the registry in between.
 * @throws the store's errors (STORAGE_BUSY, REGISTRY_CLOSED); never for a refused spec
 */
export async function checkSpecs(
  registry: ToolRegistry,
  specs: unknown,
  options: { readonly allowDowngrade?: boolean } = {},
): Promise<CheckReport> {
  if (typeof registry !== 'object' || registry === null || typeof registry.getPolicy !== 'function') {
    throw new TypeError('checkSpecs(): registry must be a ToolRegistry');
  }
  if (typeof options !== 'object' || options === null) throw new TypeError('checkSpecs(): options must be an object');
  const { allowDowngrade = false } = options;
  if (typeof allowDowngrade !== 'boolean') throw new TypeError(`checkSpecs(): allowDowngrade must be a boolean, got ${typeof allowDowngrade}`);
  const many = Array.isArray(specs);
  const inputs: readonly unknown[] = many ? Array.from(specs as unknown[]) : [specs];
  const policy = await registry.getPolicy();
  const seen = new Map<string, string>();
  const results: CheckResult[] = [];
  // One budget for the pattern tests of every spec's comparisons, as registerMany has.
  const budget = new PatternBudget();
  for (let index = 0; index < inputs.length; index++) {
    const path = many ? `[${index}]` : '';
    const input = inputs[index];
    const given = (input as { tool_name?: unknown } | null)?.tool_name;
    const givenName = typeof given === 'string' ? given : null;
    let prepared;
    try {
      prepared = parseSpec(input);
    } catch (error) {
      results.push(refused(givenName, path, error));
      continue;
    }
    const name = prepared.tool_name;
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      const error = new ToolRegistryError('DUPLICATE_TOOL', `tool ${JSON.stringify(name)} appears twice: at ${earlier} and at ${path}`, {
        context: { tool_name: name, path, first_path: earlier },
      });
      results.push(refused(name, path, error, { to_version: prepared.version }));
      continue;
    }
    seen.set(name, path);
    const current = await registry.get(name);
    const from = current === undefined ? {} : { from_version: current.spec.version };
    const differences = current === undefined ? Object.freeze([]) : compareToolSchemasWithin(current.spec, prepared.spec, budget).differences;
    try {
      const decision = decideRegistration(
        current === undefined ? undefined : { tool_name: name, version: current.spec.version, fingerprint: fingerprintOfRegistered(current.spec), enabled: current.enabled, created_at: current.created_at, deprecation: current.deprecation },
        prepared,
        many ? path : undefined,
      );
      if (decision.action === 'keep') {
        results.push(Object.freeze({ tool_name: name, path, action: 'unchanged', ...from, to_version: prepared.version, differences }));
        continue;
      }
      const { rollback } = checkPolicies(policy, current, prepared.spec, { allowDowngrade, budget, ...(many ? { path } : {}) });
      results.push(
        Object.freeze({
          tool_name: name,
          path,
          action: decision.action === 'create' ? 'add' : 'update',
          ...from,
          to_version: prepared.version,
          ...(rollback ? { rollback: true as const } : {}),
          differences,
        }),
      );
    } catch (error) {
      results.push(refused(name, path, error, { ...from, to_version: prepared.version, differences }));
    }
  }
  return Object.freeze({ ok: results.every((result) => result.action !== 'refused'), results: Object.freeze(results) });
}

/** The fingerprint of a stored spec (valid by construction). */
function fingerprintOfRegistered(spec: unknown): string {
  return parseSpec(spec).fingerprint;
}

/** How two versions of a tool differ (`diffVersions`). */
export interface VersionDiff {
  readonly tool_name: string;
  readonly from: { readonly version: string | null; readonly fingerprint: string };
  readonly to: { readonly version: string | null; readonly fingerprint: string };
  /** `true` when `to` keeps callers and consumers of `from` working (`compareToolSchemas`). */
  readonly compatible: boolean;
  readonly differences: readonly SchemaDifference[];
}

/**
 * The schema differences between two specs of a tool from its history (`history()`): `to`
 * defaults to the current spec (else the newest in the history), `from` to the spec stored
 * just before `to`. A version names the newest spec stored with it.
 * @throws TOOL_NOT_FOUND (with `context.version`) when the tool has no history, a version is
 *   not in it, or `to` has no earlier spec and `from` was not given
 */
export async function diffVersions(
  registry: ToolRegistry,
  toolName: string,
  options: { readonly from?: string | null; readonly to?: string | null } = {},
): Promise<VersionDiff> {
  if (typeof toolName !== 'string') throw new TypeError(`diffVersions(): tool_name must be a string, got ${typeof toolName}`);
  if (typeof options !== 'object' || options === null) throw new TypeError('diffVersions(): options must be an object');
  const history = await registry.history(toolName);
  if (history.length === 0) throw new ToolNotFoundError(toolName);
  const find = (version: string | null): number => {
    for (let i = history.length - 1; i >= 0; i--) if (history[i]?.spec.version === version) return i;
    throw new ToolRegistryError('TOOL_NOT_FOUND', `tool ${JSON.stringify(toolName)} has no spec with version ${JSON.stringify(version)} in its history`, {
      context: { tool_name: toolName, version },
    });
  };
  let toIndex: number;
  if (options.to !== undefined) toIndex = find(options.to);
  else {
    const current = await registry.get(toolName);
    const fingerprint = current === undefined ? undefined : fingerprintOfRegistered(current.spec);
    const at = fingerprint === undefined ? -1 : history.findIndex((entry) => entry.fingerprint === fingerprint);
    toIndex = at >= 0 ? at : history.length - 1;
  }
  const fromIndex = options.from !== undefined ? find(options.from) : toIndex - 1;
  if (fromIndex < 0) {
    const version = history[toIndex]?.spec.version ?? null;
    throw new ToolRegistryError('TOOL_NOT_FOUND', `tool ${JSON.stringify(toolName)} has no spec before version ${JSON.stringify(version)} to compare with; give the version to compare from`, {
      context: { tool_name: toolName, version },
    });
  }
  const from = history[fromIndex] as (typeof history)[number];
  const to = history[toIndex] as (typeof history)[number];
  const comparison = compareToolSchemas(from.spec, to.spec);
  return Object.freeze({
    tool_name: toolName,
    from: Object.freeze({ version: from.spec.version, fingerprint: from.fingerprint }),
    to: Object.freeze({ version: to.spec.version, fingerprint: to.fingerprint }),
    compatible: comparison.compatible,
    differences: comparison.differences,
  });
}
