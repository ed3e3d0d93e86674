import { DuplicateToolError, ValidationError } from '../core/errors.js';
import { previewValue } from '../core/issues.js';
import { collectTools } from './collect-tools.js';
import { assertTool } from './define-tool.js';
import type { CollisionPolicy, Tool } from './define-tool.js';
import { invokeTool } from './invoke.js';
import type { InvokeOptions } from './invoke.js';
import { checkCompiled } from './policy.js';
import type { CompiledPolicy } from './policy.js';
import type { ToolResult } from './tool-result.js';
import { scopeOfSet, setSetScope, ToolSet } from './tool-set.js';

/** An agent turn's context that says when the turn is acknowledged: a DOM-style or Node-style event source. */
export type TurnContext =
  | Pick<EventTarget, 'addEventListener' | 'removeEventListener'>
  | { on(event: 'ack' | 'nack', listener: () => void): unknown; off(event: 'ack' | 'nack', listener: () => void): unknown }
  | { once(event: 'ack' | 'nack', listener: () => void): unknown };

export interface RegisterOptions {
  /** Replace a tool of the same name (it keeps its position). Default `false`: `DUPLICATE_TOOL`. */
  readonly overwrite?: boolean;
}

export interface MergeOptions {
  /** Used when the incoming tool's own `onCollision` is `'throw'`. Default `'throw'`. */
  readonly onCollision?: CollisionPolicy;
}

const COLLISION_POLICIES: readonly unknown[] = ['throw', 'keep', 'replace'];

/** Gives a box the policies the set it came from was derived under (`forTurn`); internal to the runtime. */
export let setBoxScope: (box: ToolBox, scope: readonly CompiledPolicy[] | undefined) => ToolBox;
/** The policies a box was derived under (what its `register` enforces); internal to the runtime. */
export let scopeOfBox: (box: ToolBox) => readonly CompiledPolicy[] | undefined;

/** The first policy of `scope` that denies `tool`, with its reason; `undefined` when all allow it. */
function denial(scope: readonly CompiledPolicy[] | undefined, tool: Tool): { persona: string; reason: string } | undefined {
  for (const policy of scope ?? []) {
    const verdict = checkCompiled(policy, tool);
    if (!verdict.allowed) return { persona: policy.persona, reason: verdict.reason };
  }
  return undefined;
}
const BRAND = Symbol.for('tool-registry.ToolBox');

/**
 * A turn-scoped, mutable set of tools, built fresh for each agent turn (usually with
 * `toolSet.forTurn()`): register and unregister while the turn runs, merge boxes, and prune
 * ephemeral tools when the turn is acknowledged. Insertion order is the order (`all()`); a
 * replaced tool keeps its position. Holds the caller's own Tool objects, never copies.
 */
export class ToolBox {
  readonly #tools = new Map<string, Tool>();
  /**
   * The policies of the `forPolicy` set this box comes from: the box holds only tools they
   * allow (`register` refuses the others, `merge` leaves them out), and its calls run under
   * them too (`toolSearchTool`).
   */
  #scope: readonly CompiledPolicy[] | undefined;
  // A brand rather than instanceof alone, so two copies of the package recognise each other.
  readonly [BRAND] = true;

  /**
   * @param tools Tools made by `defineTool`, in the order they should appear.
   * @throws DUPLICATE_TOOL (`context.tool_name`) when two share a name; TypeError for anything that is not a Tool
   */
  constructor(tools: Iterable<Tool> = []) {
    for (const tool of collectTools('new ToolBox()', tools)) this.#tools.set(tool.name, tool);
  }

  /** Whether `value` is a ToolBox (also one from another copy of this package). */
  static isToolBox(value: unknown): value is ToolBox {
    return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }

  /**
   * A fresh box holding every box's tools (a ToolSet counts as a box of its tools in name
   * order), left to right in insertion order; the inputs are
   * untouched. On a name collision the incoming tool's own `onCollision` decides first
   * (`keep`: the earlier tool stays; `replace`: the incoming one takes the earlier one's
   * position); when it is `'throw'`, `options.onCollision` decides (default `'throw'`:
   * `DUPLICATE_TOOL`). A name is a name: the same Tool object in two boxes collides too.
   */
  static merge(boxes: Iterable<ToolBox | ToolSet>, options: MergeOptions = {}): ToolBox {
    if (boxes === null || typeof boxes !== 'object' || typeof (boxes as Iterable<ToolBox>)[Symbol.iterator] !== 'function') {
      throw new TypeError(`ToolBox.merge(): boxes must be an array (or iterable) of ToolBoxes, got ${previewValue(boxes)}`);
    }
    if (typeof options !== 'object' || options === null) throw new TypeError('ToolBox.merge(): options must be an object');
    const fallback = options.onCollision ?? 'throw';
    if (!COLLISION_POLICIES.includes(fallback)) {
      throw new TypeError(`ToolBox.merge(): onCollision must be 'throw', 'keep' or 'replace', got ${previewValue(fallback)}`);
    }
    const merged = new ToolBox();
    const from = new Map<string, number>();
    const list = [...boxes];
    list.forEach((box, index) => {
      if (!ToolBox.isToolBox(box) && !(box instanceof ToolSet)) throw new TypeError(`ToolBox.merge(): boxes[${index}] is not a ToolBox or ToolSet`);
      // Every input's policies bind the merged box: a persona's box merged with a plugin stays the persona's.
      const scope = box instanceof ToolSet ? scopeOfSet(box) : box instanceof ToolBox ? box.#scope : undefined;
      if (scope !== undefined) merged.#scope = [...(merged.#scope ?? []), ...scope];
    });
    let index = 0;
    for (const box of list) {
      for (const tool of ToolBox.isToolBox(box) ? box.all() : box.tools()) {
        // The brand also matches a box from another copy of the package (or a forgery): its
        // tools must be this copy's, or a box would hold a tool without compiled schemas.
        assertTool(tool, `ToolBox.merge(): a tool of boxes[${index}]`);
        // A tool the persona may not call is left out, as forPolicy leaves it out: the model must never see it.
        if (denial(merged.#scope, tool) !== undefined) continue;
        const existing = merged.get(tool.name);
        if (existing === undefined) {
          merged.#tools.set(tool.name, tool);
          from.set(tool.name, index);
          continue;
        }
        const policy = tool.onCollision === 'throw' ? fallback : tool.onCollision;
        if (policy === 'throw') throw new DuplicateToolError(tool.name, `boxes[${index}]`, `boxes[${from.get(tool.name) ?? 0}]`);
        if (policy === 'replace') {
          merged.#tools.set(tool.name, tool);
          from.set(tool.name, index);
        }
      }
      index++;
    }
    return merged;
  }

  /**
   * Adds a tool at the end; with `overwrite: true` a tool of the same name is replaced in
   * place (it keeps its position). Returns the box.
   * @throws DUPLICATE_TOOL unless `overwrite`; TypeError for a non-Tool
   */
  register(tool: Tool, options: RegisterOptions = {}): this {
    assertTool(tool, 'ToolBox.register(): tool');
    if (typeof options !== 'object' || options === null) throw new TypeError('ToolBox.register(): options must be an object');
    const denied = denial(this.#scope, tool);
    if (denied !== undefined) {
      // The box came from a forPolicy set: a tool its persona may not call would be shown to the model and run.
      const issues = [{ code: 'custom', message: `is not allowed for persona '${denied.persona}': ${denied.reason}`, path: ['tool'], pathText: 'tool' }];
      throw new ValidationError(
        `ToolBox.register(): tool '${tool.name}' is not allowed in this box, which came from a set derived with forPolicy: persona '${denied.persona}': ${denied.reason}`,
        issues,
        { path: 'tool', tool_name: tool.name, persona: denied.persona },
      );
    }
    if (options.overwrite !== true && this.#tools.has(tool.name)) {
      throw new DuplicateToolError(tool.name, 'register(tool)', 'the tool box');
    }
    this.#tools.set(tool.name, tool);
    return this;
  }

  /** Removes the named tool; `true` when one was removed, `false` (a no-op) when absent. */
  unregister(name: string): boolean {
    return this.#tools.delete(nameArgument('unregister', name));
  }

  /** Whether a tool of exactly this name is in the box. */
  has(name: string): boolean {
    return this.#tools.has(nameArgument('has', name));
  }

  /** The tool of exactly this name, or `undefined`. */
  get(name: string): Tool | undefined {
    return this.#tools.get(nameArgument('get', name));
  }

  /** The tools in insertion order (a fresh array). */
  all(): Tool[] {
    return [...this.#tools.values()];
  }

  /** How many tools the box holds. */
  get size(): number {
    return this.#tools.size;
  }

  /** Same results as `ToolSet.invoke`, against the box's current tools. */
  invoke(name: string, args?: unknown, options?: InvokeOptions): Promise<ToolResult> {
    return invokeTool(typeof name === 'string' ? this.#tools.get(name) : undefined, name, args, options, this.#scope);
  }

  /** Removes every ephemeral tool; returns their names (empty when there were none: idempotent). */
  pruneEphemeral(): string[] {
    const pruned: string[] = [];
    for (const [name, tool] of this.#tools) {
      if (tool.ephemeral) {
        this.#tools.delete(name);
        pruned.push(name);
      }
    }
    return pruned;
  }

  /**
   * Prunes ephemeral tools whenever `ctx` emits `'ack'` (never on `'nack'`: a turn that is
   * retried keeps its tools). `ctx` is an `EventTarget`, an object with `on`/`off` (Node's
   * EventEmitter), or one with only `once` (then at most one ack prunes). Returns a function
   * that unsubscribes (idempotent).
   */
  bindContext(ctx: TurnContext): () => void {
    let active = true;
    const onAck = (): void => {
      if (active) this.pruneEphemeral();
    };
    if (typeof ctx !== 'object' || ctx === null) throw new TypeError(`ToolBox.bindContext(): ctx must be an event source, got ${previewValue(ctx)}`);
    const source = ctx as Partial<Record<'addEventListener' | 'removeEventListener' | 'on' | 'off' | 'once', unknown>>;
    if (typeof source.addEventListener === 'function' && typeof source.removeEventListener === 'function') {
      const target = ctx as Pick<EventTarget, 'addEventListener' | 'removeEventListener'>;
      target.addEventListener('ack', onAck);
      return () => {
        active = false;
        target.removeEventListener('ack', onAck);
      };
    }
    if (typeof source.on === 'function' && typeof source.off === 'function') {
      const emitter = ctx as { on(event: string, listener: () => void): unknown; off(event: string, listener: () => void): unknown };
      emitter.on('ack', onAck);
      return () => {
        active = false;
        emitter.off('ack', onAck);
      };
    }
    if (typeof source.once === 'function') {
      (ctx as { once(event: string, listener: () => void): unknown }).once('ack', onAck);
      // `once` alone cannot be unsubscribed from; the listener is switched off instead.
      return () => {
        active = false;
      };
    }
    throw new TypeError('ToolBox.bindContext(): ctx must be an EventTarget or have on/off or once methods');
  }

  /** The tools in insertion order (live: a tool registered while iterating is visited). */
  [Symbol.iterator](): IterableIterator<Tool> {
    return this.#tools.values();
  }

  /** The box's current tools as an immutable `ToolSet` (the same Tool objects). */
  toToolSet(): ToolSet {
    return setSetScope(new ToolSet(this.all()), this.#scope);
  }

  static {
    setBoxScope = (box, scope) => {
      box.#scope = scope;
      return box;
    };
    scopeOfBox = (box) => box.#scope;
  }
}

function nameArgument(method: string, name: unknown): string {
  if (typeof name !== 'string') throw new TypeError(`ToolBox.${method}(): name must be a string, got ${previewValue(name)}`);
  return name;
}
