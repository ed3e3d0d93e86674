import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { DuplicateToolError, ToolBox, ToolSet, ValidationError, defineTool, toAiSdkTools } from '../../src/index.js';
import type { CollisionPolicy } from '../../src/index.js';

const tool = (name: string, extra: Record<string, unknown> = {}) => defineTool({ name, input_schema: {}, handler: () => name, ...extra });

function duplicate(make: () => unknown): DuplicateToolError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(DuplicateToolError);
    return error as DuplicateToolError;
  }
  throw new Error('expected DUPLICATE_TOOL');
}

describe('ToolBox', () => {
  it('starts empty or from tools; duplicates throw DUPLICATE_TOOL', () => {
    expect(new ToolBox().size).toBe(0);
    const error = duplicate(() => new ToolBox([tool('a'), tool('a')]));
    expect(error.code).toBe('DUPLICATE_TOOL');
    expect(error.context.tool_name).toBe('a');
  });

  it('register adds at the end; a name already there is DUPLICATE_TOOL unless overwrite', () => {
    const a = tool('a');
    const b = tool('b');
    const box = new ToolBox([a]);
    expect(box.register(b)).toBe(box);
    expect(box.all()).toEqual([a, b]);
    expect(duplicate(() => box.register(tool('a'))).context.tool_name).toBe('a');
    expect(duplicate(() => box.register(a)).code).toBe('DUPLICATE_TOOL');
    expect(duplicate(() => box.register(tool('a'), { overwrite: false })).code).toBe('DUPLICATE_TOOL');
    expect(box.get('a')).toBe(a);
  });

  it('a replaced tool keeps its position', () => {
    const box = new ToolBox([tool('a'), tool('b'), tool('c')]);
    const newer = tool('a', { version: '2' });
    box.register(newer, { overwrite: true });
    expect(box.all().map((t) => t.name)).toEqual(['a', 'b', 'c']);
    expect(box.get('a')).toBe(newer);
  });

  it('unregister removes (a no-op when absent), has/get are exact, all() is fresh in insertion order', () => {
    const c = tool('c');
    const a = tool('a');
    const box = new ToolBox([c, a]);
    expect(box.all().map((t) => t.name)).toEqual(['c', 'a']);
    expect(box.unregister('missing')).toBe(false);
    expect(box.unregister('c')).toBe(true);
    expect(box.unregister('c')).toBe(false);
    expect(box.has('c')).toBe(false);
    expect(box.has('a')).toBe(true);
    expect(box.has('A')).toBe(false);
    expect(box.get('c')).toBeUndefined();
    expect(box.get('a')).toBe(a);
    const list = box.all();
    list.pop();
    expect(box.size).toBe(1);
    expect(box.all()).not.toBe(box.all());
  });

  it('invoke sees the current tools', async () => {
    const box = new ToolBox();
    expect(await box.invoke('late', {})).toMatchObject({ success: false, code: 'TOOL_NOT_FOUND' });
    box.register(tool('late'));
    expect(await box.invoke('late', {})).toMatchObject({ success: true, data: 'late' });
  });

  it('pruneEphemeral removes ephemeral tools only, and is idempotent', () => {
    const box = new ToolBox([tool('keep'), tool('temp', { ephemeral: true }), tool('also', { ephemeral: true })]);
    expect(box.pruneEphemeral()).toEqual(['temp', 'also']);
    expect(box.all().map((t) => t.name)).toEqual(['keep']);
    expect(box.pruneEphemeral()).toEqual([]);
    expect(box.size).toBe(1);
  });

  describe('bindContext', () => {
    const contexts: [string, () => { ctx: object; emit: (event: 'ack' | 'nack') => void }][] = [
      ['an EventTarget', () => {
        const target = new EventTarget();
        return { ctx: target, emit: (event) => target.dispatchEvent(new Event(event)) };
      }],
      ['an EventEmitter (on/off)', () => {
        const emitter = new EventEmitter();
        return { ctx: emitter, emit: (event) => emitter.emit(event) };
      }],
      ['an object with once only', () => {
        const emitter = new EventEmitter();
        return { ctx: { once: (event: string, listener: () => void) => emitter.once(event, listener) }, emit: (event) => emitter.emit(event) };
      }],
    ];

    it.each(contexts)('with %s: prunes on ack, never on nack', (_label, make) => {
      const { ctx, emit } = make();
      const box = new ToolBox([tool('keep'), tool('temp', { ephemeral: true })]);
      box.bindContext(ctx as never);
      emit('nack');
      expect(box.has('temp')).toBe(true);
      emit('ack');
      expect(box.has('temp')).toBe(false);
      expect(box.has('keep')).toBe(true);
    });

    it.each(contexts)('with %s: the returned function unsubscribes', (_label, make) => {
      const { ctx, emit } = make();
      const box = new ToolBox([tool('temp', { ephemeral: true })]);
      const unsubscribe = box.bindContext(ctx as never);
      expect(typeof unsubscribe).toBe('function');
      unsubscribe();
      unsubscribe();
      emit('ack');
      expect(box.has('temp')).toBe(true);
    });

    it('removes its listener from an EventEmitter', () => {
      const emitter = new EventEmitter();
      const unsubscribe = new ToolBox().bindContext(emitter);
      expect(emitter.listenerCount('ack')).toBe(1);
      expect(emitter.listenerCount('nack')).toBe(0);
      unsubscribe();
      expect(emitter.listenerCount('ack')).toBe(0);
    });

    it('refuses something that is not an event source with a TypeError', () => {
      expect(() => new ToolBox().bindContext({} as never)).toThrow(TypeError);
      expect(() => new ToolBox().bindContext(null as never)).toThrow(TypeError);
    });
  });

  it('toToolSet freezes the turn: the same Tool objects, later changes to the box do not show', () => {
    const a = tool('a');
    const box = new ToolBox([tool('b'), a]);
    const set = box.toToolSet();
    expect(set).toBeInstanceOf(ToolSet);
    expect(set.list()).toEqual(['a', 'b']);
    expect(set.resolve('a')).toBe(a);
    box.unregister('a');
    expect(set.resolve('a')).toBe(a);
  });

  it('isToolBox', () => {
    expect(ToolBox.isToolBox(new ToolBox())).toBe(true);
    expect(ToolBox.isToolBox(new ToolSet([]))).toBe(false);
    expect(ToolBox.isToolBox({})).toBe(false);
    expect(ToolBox.isToolBox(null)).toBe(false);
  });

  describe('merge', () => {
    it('builds a fresh box left to right in insertion order; inputs untouched', () => {
      const first = new ToolBox([tool('b'), tool('a')]);
      const second = new ToolBox([tool('c')]);
      const merged = ToolBox.merge([first, second]);
      expect(merged).not.toBe(first);
      expect(merged.all().map((t) => t.name)).toEqual(['b', 'a', 'c']);
      expect(first.all().map((t) => t.name)).toEqual(['b', 'a']);
      expect(second.size).toBe(1);
      merged.unregister('b');
      expect(first.has('b')).toBe(true);
      expect(ToolBox.merge([]).size).toBe(0);
    });

    it('a collision throws DUPLICATE_TOOL by default', () => {
      const error = duplicate(() => ToolBox.merge([new ToolBox([tool('x')]), new ToolBox([tool('x')])]));
      expect(error.context.tool_name).toBe('x');
    });

    it.each<[CollisionPolicy, CollisionPolicy | undefined, 'first' | 'second' | 'throw']>([
      ['keep', undefined, 'first'],
      ['replace', undefined, 'second'],
      ['keep', 'replace', 'first'],
      ['replace', 'keep', 'second'],
      ['throw', 'keep', 'first'],
      ['throw', 'replace', 'second'],
      ['throw', 'throw', 'throw'],
      ['throw', undefined, 'throw'],
    ])("incoming onCollision '%s', merge onCollision %s -> %s", (own, mergeLevel, outcome) => {
      const first = tool('x', { version: '1' });
      const second = tool('x', { version: '2', onCollision: own });
      const boxes = [new ToolBox([tool('a'), first, tool('b')]), new ToolBox([second, tool('c')])];
      const options = mergeLevel === undefined ? {} : { onCollision: mergeLevel };
      if (outcome === 'throw') {
        duplicate(() => ToolBox.merge(boxes, options));
        return;
      }
      const merged = ToolBox.merge(boxes, options);
      expect(merged.all().map((t) => t.name)).toEqual(['a', 'x', 'b', 'c']);
      expect(merged.get('x')).toBe(outcome === 'first' ? first : second);
    });

    it('takes ToolSets as boxes too', () => {
      const merged = ToolBox.merge([new ToolSet([tool('b'), tool('a')]), new ToolBox([tool('c')])]);
      expect(merged.all().map((t) => t.name)).toEqual(['a', 'b', 'c']);
      expect(new ToolSet(merged).list()).toEqual(['a', 'b', 'c']);
      expect([...merged].map((t) => t.name)).toEqual(['a', 'b', 'c']);
    });

    it('refuses non-boxes and a bad policy with a TypeError', () => {
      expect(() => ToolBox.merge([{}] as never)).toThrow(TypeError);
      expect(() => ToolBox.merge([], { onCollision: 'merge' } as never)).toThrow(TypeError);
    });
  });

  describe('a box from a forPolicy set holds only what its persona may call', () => {
    const guest = { persona: 'guest', allowed_permissions: ['NET_HTTP'] };
    const shell = tool('shell', { permissions: { required: ['EXEC_SHELL'] } });
    const shown = new ToolSet([tool('search', { permissions: { required: ['NET_HTTP'] } }), shell]).forPolicy(guest);

    it('register refuses a tool the policy denies (VALIDATION_FAILED naming it), overwrite or not', async () => {
      const box = shown.forTurn();
      for (const options of [{}, { overwrite: true }]) {
        let thrown: unknown;
        try {
          box.register(shell, options);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(ValidationError);
        expect((thrown as ValidationError).context).toMatchObject({ path: 'tool', tool_name: 'shell', persona: 'guest' });
        expect((thrown as ValidationError).message).toContain('Missing required permissions: EXEC_SHELL');
      }
      expect(box.all().map((t) => t.name)).toEqual(['search']);
      expect(await box.invoke('shell', {})).toMatchObject({ code: 'TOOL_NOT_FOUND' });
      // What the policy allows is still registered; a box built anew is not bound.
      expect(box.register(tool('lookup')).has('lookup')).toBe(true);
      expect(new ToolBox().register(shell).has('shell')).toBe(true);
    });

    it('merge leaves out the tools any input\'s policy denies, whatever the order of the boxes', () => {
      const plugin = new ToolBox([tool('rm', { permissions: { required: ['EXEC_SHELL'] } }), tool('translate')]);
      for (const boxes of [[shown.forTurn(), plugin], [plugin, shown.forTurn()]]) {
        const merged = ToolBox.merge(boxes);
        expect(merged.all().map((t) => t.name).sort()).toEqual(['search', 'translate']);
        expect(Object.keys(toAiSdkTools(merged)).sort()).toEqual(['search', 'translate']);
        expect(merged.toToolSet().list()).toEqual(['search', 'translate']);
      }
    });
  });
});
