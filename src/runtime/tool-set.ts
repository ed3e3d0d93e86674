import { compareCodePoints } from '../core/canonical.js';
import type { Deprecation } from '../core/contracts.js';
import { previewValue } from '../core/issues.js';
import { collectTools } from './collect-tools.js';
import type { Tool } from './define-tool.js';
import { invokeTool } from './invoke.js';
import type { InvokeOptions } from './invoke.js';
import { checkCompiled, compilePolicy } from './policy.js';
import type { CompiledPolicy, ToolPolicy } from './policy.js';
import { setBoxScope, ToolBox } from './tool-box.js';
import { SearchIndex } from '../core/search/search-index.js';
import { tokenize } from '../core/search/tokens.js';
import type { ToolResult } from './tool-result.js';

/** One result of `ToolSet.search`. */
export interface ToolSearchHit {
  readonly tool: Tool;
  /** BM25F score (higher is better), the same ranking as `registry.search`. */
  readonly score: number;
}

/** A tool `loadToolSet` left out, and why. */
export interface ExcludedTool {
  readonly tool_name: string;
  /**
   * `disabled`: an operator disabled it; `not_registered`: it was never published; `sunset`:
   * it is deprecated and its sunset has passed (issue 27); `spec_mismatch`: the registry holds
   * another spec than the code (only `liveToolSet` leaves such a tool out; `loadToolSet` throws
   * SPEC_MISMATCH).
   */
  readonly reason: 'disabled' | 'not_registered' | 'sunset' | 'spec_mismatch';
}

const NOTHING_EXCLUDED: readonly ExcludedTool[] = Object.freeze([]);
// Kept beside the set (not a constructor option) so the public constructor stays `new ToolSet(tools)`.
const excludedBySet = new WeakMap<ToolSet, readonly ExcludedTool[]>();
/** The Tools behind `excluded`, by name: what `forPolicy` checks to drop the ones its policy forbids. */
const excludedToolsBySet = new WeakMap<ToolSet, ReadonlyMap<string, Tool>>();

const deprecationsBySet = new WeakMap<ToolSet, ReadonlyMap<string, Deprecation>>();

/** Records the registry's deprecations of the tools in `set` (what `invoke` reports); internal to the runtime. */
export function recordDeprecations(set: ToolSet, deprecations: ReadonlyMap<string, Deprecation>): ToolSet {
  if (deprecations.size > 0) deprecationsBySet.set(set, deprecations);
  return set;
}

/** Records what `loadToolSet` left out of `set` (and the Tools left out, by name); internal to the runtime. */
export function recordExcluded(set: ToolSet, excluded: readonly ExcludedTool[], tools: ReadonlyMap<string, Tool>): ToolSet {
  excludedBySet.set(set, Object.freeze(excluded.map((entry) => Object.freeze({ ...entry }))));
  excludedToolsBySet.set(set, tools);
  return set;
}

function nameArgument(method: string, name: unknown): string {
  if (typeof name !== 'string') throw new TypeError(`ToolSet.${method}(): name must be a string, got ${previewValue(name)}`);
  return name;
}

/** The policies a set was derived under (`forPolicy`); internal to the runtime. */
export let scopeOfSet: (set: ToolSet) => readonly CompiledPolicy[] | undefined;
/** Gives a set the policies it was derived under; internal to the runtime. */
export let setSetScope: (set: ToolSet, scope: readonly CompiledPolicy[] | undefined) => ToolSet;

/**
 * A closed, immutable set of tools: given once at construction, never added to or taken
 * from (nothing at run time can slip in a tool that bypasses policy). The instance is
 * frozen; lookups are exact and case-sensitive; lists are in code-point order of names.
 * Schemas were compiled when each tool was defined; nothing is compiled per call.
 */
export class ToolSet {
  readonly #tools: ReadonlyMap<string, Tool>;
  /** Built at the first search (the set never changes, so once). */
  #index: SearchIndex<Tool> | undefined;
  /**
   * The policies this set was derived under (`forPolicy`): every call on it runs under them
   * too, so a `toolSearchTool` in it finds only what they allow. A private field, so the
   * frozen instance can still be given it once, right after it is made.
   */
  #scope: readonly CompiledPolicy[] | undefined;

  /**
   * @param tools Tools made by `defineTool` (any iterable; the order does not matter).
   * @throws DUPLICATE_TOOL (`context.tool_name`) when two tools share a name; TypeError for anything that is not a Tool
   */
  constructor(tools: Iterable<Tool>) {
    const list = collectTools('new ToolSet()', tools);
    list.sort((a, b) => compareCodePoints(a.name, b.name));
    this.#tools = new Map(list.map((tool) => [tool.name, tool]));
    Object.freeze(this);
  }

  /** The tool of exactly this name (case-sensitive), or `null`. */
  resolve(name: string): Tool | null {
    if (typeof name !== 'string') nameArgument('resolve', name);
    return this.#tools.get(name) ?? null;
  }

  /** The names, sorted by code point (a fresh array). */
  list(): string[] {
    return [...this.#tools.keys()];
  }

  /** How many tools the set holds. */
  get size(): number {
    return this.#tools.size;
  }

  /** The tools (the very objects given), sorted by name (a fresh array). */
  tools(): Tool[] {
    return [...this.#tools.values()];
  }

  /**
   * The tools `loadToolSet` left out because of the registry (`disabled`,
   * `not_registered`), sorted by name; empty for a set built directly. Tools a policy
   * filtered out are not listed here. A set derived with `forPolicy` keeps its source's list,
   * less the tools that policy forbids.
   */
  get excluded(): readonly ExcludedTool[] {
    return excludedBySet.get(this) ?? NOTHING_EXCLUDED;
  }

  /**
   * A new set holding only the tools `policy` allows (`checkToolPermission`), so an agent
   * is never shown a tool its persona may not call. `invoke` with the same policy agrees.
   * @throws VALIDATION_FAILED for an invalid policy
   */
  forPolicy(policy: ToolPolicy): ToolSet {
    const compiled = compilePolicy(policy);
    const allowed = new ToolSet(this.tools().filter((tool) => checkCompiled(compiled, tool).allowed));
    allowed.#scope = this.#scope === undefined ? [compiled] : [...this.#scope, compiled];
    const tools = excludedToolsBySet.get(this) ?? new Map<string, Tool>();
    const deprecations = deprecationsBySet.get(this);
    if (deprecations !== undefined) {
      const kept = new Map<string, Deprecation>();
      for (const [name, deprecation] of deprecations) {
        if (allowed.#tools.has(name)) kept.set(name, this.#shownTo(compiled, deprecation));
      }
      recordDeprecations(allowed, kept);
    }
    const excluded = excludedBySet.get(this);
    if (excluded === undefined) return allowed;
    // A tool the persona may not call stays unnamed, disabled or not: its excluded entry would tell it exists.
    const shown = excluded.filter((entry) => {
      const tool = tools.get(entry.tool_name);
      return tool === undefined || checkCompiled(compiled, tool).allowed;
    });
    return recordExcluded(allowed, shown, tools);
  }

  /**
   * The `k` tools that best match `query` (default 10), best first, ties by name: the ranking of
   * `registry.search` (BM25F over name, description, tags and input-schema text; docs/search.md).
   * A tool matching no term of the query is left out.
   * @throws TypeError for a non-string query or a `k` that is not an integer from 1 to 1000
   */
  search(query: string, k = 10): ToolSearchHit[] {
    if (typeof query !== 'string') throw new TypeError(`ToolSet.search(): query must be a string, got ${previewValue(query)}`);
    if (!Number.isInteger(k) || k < 1 || k > 1000) throw new TypeError(`ToolSet.search(): k must be an integer from 1 to 1000, got ${previewValue(k)}`);
    if (this.#index === undefined) {
      const index = new SearchIndex<Tool>();
      for (const tool of this.#tools.values()) index.set(tool.name, tool, tool.spec);
      this.#index = index;
    }
    return this.#index.top(tokenize(query), k).page.map((hit) => Object.freeze({ tool: hit.item, score: hit.score }));
  }

  /** A fresh, mutable `ToolBox` for one agent turn, holding this set's tools (in name order). */
  forTurn(): ToolBox {
    return setBoxScope(new ToolBox(this.tools()), this.#scope);
  }

  /**
   * Invokes the named tool with validated arguments. Never rejects for a tool-level
   * failure: resolves to a frozen `ToolResult` (`TOOL_NOT_FOUND`, `INVALID_ARGUMENTS`,
   * `PERMISSION_DENIED`, `TOOL_FAILED`, `INVALID_OUTPUT`, `TIMEOUT`, `ABORTED`).
   * Rejects with TypeError for misuse (a non-string name, bad options) and with
   * VALIDATION_FAILED for an invalid `policy`.
   */
  invoke(name: string, args?: unknown, options?: InvokeOptions): Promise<ToolResult> {
    const tool = typeof name === 'string' ? this.#tools.get(name) : undefined;
    const result = invokeTool(tool, name, args, options, this.#scope);
    const deprecation = tool === undefined ? undefined : deprecationsBySet.get(this)?.get(tool.name);
    // A deprecated tool still runs; its result says so (the caller should move off it), in the call's policy's words.
    return deprecation === undefined ? result : result.then((done) => Object.freeze({ ...done, deprecated: this.#shownUnder(options, deprecation) }));
  }

  /**
   * `deprecation` as `policy` may see it: "Use shell instead" would name a tool the persona may
   * not call, so a replacement the policy forbids (a tool of this set, one `loadToolSet` left
   * out, or a name its allowlist lacks) is left out.
   */
  #shownTo(policy: CompiledPolicy, deprecation: Deprecation): Deprecation {
    const replacement = deprecation.replacement;
    if (replacement === null) return deprecation;
    const subject = this.#tools.get(replacement) ?? excludedToolsBySet.get(this)?.get(replacement) ?? { name: replacement };
    return checkCompiled(policy, subject).allowed ? deprecation : Object.freeze({ ...deprecation, replacement: null });
  }

  /** The deprecation a call's result carries: under the call's `policy`, when it has one. */
  #shownUnder(options: InvokeOptions | undefined, deprecation: Deprecation): Deprecation {
    if (deprecation.replacement === null || options?.policy === undefined) return deprecation;
    try {
      return this.#shownTo(compilePolicy(options.policy), deprecation);
    } catch {
      return Object.freeze({ ...deprecation, replacement: null }); // a policy that no longer reads as one: name nothing
    }
  }

  /** The registry's deprecation of a tool in this set (`loadToolSet` records them), or `null`. */
  deprecation(name: string): Deprecation | null {
    if (typeof name !== 'string') nameArgument('deprecation', name);
    return deprecationsBySet.get(this)?.get(name) ?? null;
  }

  /** The tools in name order. */
  [Symbol.iterator](): IterableIterator<Tool> {
    return this.#tools.values();
  }

  static {
    scopeOfSet = (set) => set.#scope;
    setSetScope = (set, scope) => {
      set.#scope = scope;
      return set;
    };
  }
}

/** Same as `new ToolSet(tools)`. */
export function createToolSet(tools: Iterable<Tool>): ToolSet {
  return new ToolSet(tools);
}
