import { compareCodePoints } from '../core/canonical.js';
import { previewValue } from '../core/issues.js';
import { collectTools } from './collect-tools.js';
import type { Tool } from './define-tool.js';
import { invokeTool } from './invoke.js';
import type { InvokeOptions } from './invoke.js';
import { checkCompiled, compilePolicy } from './policy.js';
import type { ToolPolicy } from './policy.js';
import { ToolBox } from './tool-box.js';
import type { ToolResult } from './tool-result.js';

/** A tool `loadToolSet` left out, and why. */
export interface ExcludedTool {
  readonly tool_name: string;
  /**
   * `disabled`: an operator disabled it; `not_registered`: it was never published;
   * `spec_mismatch`: the registry holds another spec than the code (only `liveToolSet`
   * leaves such a tool out; `loadToolSet` throws SPEC_MISMATCH).
   */
  readonly reason: 'disabled' | 'not_registered' | 'spec_mismatch';
}

const NOTHING_EXCLUDED: readonly ExcludedTool[] = Object.freeze([]);
// Kept beside the set (not a constructor option) so the public constructor stays `new ToolSet(tools)`.
const excludedBySet = new WeakMap<ToolSet, readonly ExcludedTool[]>();

/** Records what `loadToolSet` left out of `set`; internal to the runtime. */
export function recordExcluded(set: ToolSet, excluded: readonly ExcludedTool[]): ToolSet {
  excludedBySet.set(set, Object.freeze(excluded.map((entry) => Object.freeze({ ...entry }))));
  return set;
}

function nameArgument(method: string, name: unknown): string {
  if (typeof name !== 'string') throw new TypeError(`ToolSet.${method}(): name must be a string, got ${previewValue(name)}`);
  return name;
}

/**
 * A closed, immutable set of tools: given once at construction, never added to or taken
 * from (nothing at run time can slip in a tool that bypasses policy). The instance is
 * frozen; lookups are exact and case-sensitive; lists are in code-point order of names.
 * Schemas were compiled when each tool was defined; nothing is compiled per call.
 */
export class ToolSet {
  readonly #tools: ReadonlyMap<string, Tool>;

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
   * filtered out are not listed here. A set derived with `forPolicy` keeps its source's list.
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
    const excluded = excludedBySet.get(this);
    return excluded === undefined ? allowed : recordExcluded(allowed, excluded);
  }

  /** A fresh, mutable `ToolBox` for one agent turn, holding this set's tools (in name order). */
  forTurn(): ToolBox {
    return new ToolBox(this.tools());
  }

  /**
   * Invokes the named tool with validated arguments. Never rejects for a tool-level
   * failure: resolves to a frozen `ToolResult` (`TOOL_NOT_FOUND`, `INVALID_ARGUMENTS`,
   * `PERMISSION_DENIED`, `TOOL_FAILED`, `INVALID_OUTPUT`, `TIMEOUT`, `ABORTED`).
   * Rejects with TypeError for misuse (a non-string name, bad options) and with
   * VALIDATION_FAILED for an invalid `policy`.
   */
  invoke(name: string, args?: unknown, options?: InvokeOptions): Promise<ToolResult> {
    return invokeTool(typeof name === 'string' ? this.#tools.get(name) : undefined, name, args, options);
  }

  /** The tools in name order. */
  [Symbol.iterator](): IterableIterator<Tool> {
    return this.#tools.values();
  }
}

/** Same as `new ToolSet(tools)`. */
export function createToolSet(tools: Iterable<Tool>): ToolSet {
  return new ToolSet(tools);
}
