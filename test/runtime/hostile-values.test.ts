// invoke never rejects, never throws and never hangs for what a handler throws or returns,
// however hostile: values whose `message` or `then` cannot be read, revoked proxies, values
// that cannot be frozen, and data or arguments that make a schema check throw. Each path is
// run plain, with a timeout and with a caller's signal (three code paths in invoke).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolBox, ToolSet, defineTool } from '../../src/index.js';
import type { InvokeOptions, Tool, ToolResult } from '../../src/index.js';

type Handler = (args: Record<string, unknown>) => unknown;

function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

const unreadableMessage = (): object => ({
  get message(): string {
    throw new Error('message getter');
  },
});
const trapProxy = (): object =>
  new Proxy(
    {},
    {
      get() {
        throw new Error('get trap');
      },
    },
  );

/** What a call came to: a result, or how it broke the promise of invoke. */
type Outcome = { result: ToolResult } | { broke: 'threw' | 'rejected' | 'hung'; error?: unknown };

async function outcome(call: () => Promise<ToolResult>): Promise<Outcome> {
  let promise: Promise<ToolResult>;
  try {
    promise = call();
  } catch (error) {
    return { broke: 'threw', error };
  }
  const hung = new Promise<Outcome>((resolve) => setTimeout(() => resolve({ broke: 'hung' }), 1_000));
  return Promise.race([promise.then((result) => ({ result }), (error: unknown) => ({ broke: 'rejected' as const, error })), hung]);
}

function codeOf(out: Outcome): string {
  if ('broke' in out) return `broke: ${out.broke} (${String((out.error as Error | undefined)?.message ?? out.error)})`;
  expect(Object.isFrozen(out.result)).toBe(true);
  return out.result.success ? 'success' : out.result.code;
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  // Let any stray rejection surface before checking.
  await new Promise((resolve) => setTimeout(resolve, 10));
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

const paths: [string, () => InvokeOptions | undefined][] = [
  ['plain', () => undefined],
  ['timeoutMs', () => ({ timeoutMs: 5_000 })],
  ['signal', () => ({ signal: new AbortController().signal })],
];

describe.each([
  ['ToolSet', (tools: Tool[]) => new ToolSet(tools)],
  ['ToolBox', (tools: Tool[]) => new ToolBox(tools)],
])('%s.invoke with hostile handlers', (_kind, make) => {
  const invoke = (handler: Handler, options: InvokeOptions | undefined, extra: { input_schema?: Record<string, unknown>; output_schema?: Record<string, unknown>; args?: unknown } = {}) => {
    const tool = defineTool({ name: 'hostile', input_schema: extra.input_schema ?? {}, ...(extra.output_schema ? { output_schema: extra.output_schema } : {}), handler });
    return outcome(() => make([tool]).invoke('hostile', extra.args ?? {}, options));
  };

  describe.each(paths)('(%s)', (_path, options) => {
    it.each<[string, Handler]>([
      ['throws an object whose message getter throws', () => { throw unreadableMessage(); }],
      ['throws a proxy whose get trap throws', () => { throw trapProxy(); }],
      ['throws a revoked proxy', () => { throw revoked(); }],
      ['rejects with an object whose message getter throws', async () => { throw unreadableMessage(); }],
      ['rejects with a revoked proxy', async () => { throw revoked(); }],
    ])('TOOL_FAILED when the handler %s', async (_label, handler) => {
      const out = await invoke(handler, options());
      expect(codeOf(out)).toBe('TOOL_FAILED');
      if ('result' in out && !out.result.success) expect(out.result.error).toContain("'hostile'");
    });

    it.each<[string, Handler]>([
      ['an object whose then getter throws', () => ({ get then(): never { throw new Error('then getter'); } })],
      ['a revoked proxy', () => revoked()],
      ['a promise whose constructor getter throws', () => Object.defineProperty(Promise.resolve(1), 'constructor', { get(): never { throw new Error('constructor'); } })],
      ['an object whose getter throws', () => ({ get x(): never { throw new Error('getter'); } })],
      ['(async) an object whose getter throws', async () => ({ get x(): never { throw new Error('getter'); } })],
      ['a proxy that cannot be frozen', () => new Proxy({}, { preventExtensions: () => false })],
      ['(async) a proxy that cannot be frozen', async () => new Proxy({}, { preventExtensions: () => false })],
    ])('TOOL_FAILED when the handler returns %s', async (_label, handler) => {
      expect(codeOf(await invoke(handler, options()))).toBe('TOOL_FAILED');
    });

    it('INVALID_OUTPUT when the handler returns process.env (not JSON data: a prototype of its own; it cannot be frozen either)', async () => {
      expect(codeOf(await invoke(() => process.env, options()))).toBe('INVALID_OUTPUT');
      expect(Object.isFrozen(process.env)).toBe(false);
    });

    // A native promise is followed through the intrinsic `then`: what it settles with decides,
    // whatever `then` or `constructor` was put on it.
    const withThen = (promise: Promise<unknown>, then: unknown): Promise<unknown> => Object.assign(promise, { then });
    it.each<[string, Handler, string]>([
      ['a promise whose then throws', () => withThen(Promise.resolve(42), () => { throw new Error('hostile then'); }), 'success'],
      ['a promise whose then returns undefined', () => withThen(Promise.resolve(42), () => undefined), 'success'],
      ['a promise whose then never calls back and returns a thenable', () => withThen(Promise.resolve(42), () => ({ then: () => undefined })), 'success'],
      ['a rejected promise whose then returns undefined', () => withThen(Promise.reject(new Error('no')), () => undefined), 'TOOL_FAILED'],
      ['a promise whose then getter throws', () => Object.defineProperty(Promise.resolve(42), 'then', { get(): never { throw new Error('then getter'); } }), 'success'],
      ['a promise whose species constructor throws', () => Object.assign(Promise.resolve(42), { constructor: { [Symbol.species]: function () { throw new Error('species'); } } }), 'TOOL_FAILED'],
      ['a Promise subclass whose then throws', () => {
        class Hostile extends Promise<unknown> {
          override then(): never {
            throw new Error('subclass then');
          }
        }
        return Hostile.resolve(42);
      }, 'success'],
    ])('a result when the handler returns %s', async (_label, handler, expected) => {
      const out = await invoke(handler, options());
      expect(codeOf(out)).toBe(expected);
      if ('result' in out && out.result.success) expect(out.result.data).toBe(42);
    });

    it('INVALID_OUTPUT when checking the output throws (a cycle against a recursive output_schema)', async () => {
      const handler = (): unknown => {
        const data: Record<string, unknown> = {};
        data.self = data;
        return data;
      };
      const out = await invoke(handler, options(), { output_schema: { type: 'object', properties: { self: { $ref: '#' } } } });
      expect(codeOf(out)).toBe('INVALID_OUTPUT');
      if ('result' in out && !out.result.success) expect(out.result.issues?.map((issue) => issue.path)).toEqual(['']);
    });

    it('INVALID_OUTPUT when the output cannot be read to be checked (a getter that throws)', async () => {
      const handler = (): unknown => ({ get n(): never { throw new Error('getter'); } });
      const out = await invoke(handler, options(), { output_schema: { type: 'object', properties: { n: { type: 'integer' } } } });
      expect(codeOf(out)).toBe('INVALID_OUTPUT');
    });

    it('INVALID_ARGUMENTS (path "") when checking the arguments throws (a cycle against a recursive input_schema)', async () => {
      const args: Record<string, unknown> = {};
      args.self = args;
      let called = false;
      const out = await invoke(() => (called = true), options(), { input_schema: { type: 'object', properties: { self: { $ref: '#' } } }, args });
      expect(codeOf(out)).toBe('INVALID_ARGUMENTS');
      if ('result' in out && !out.result.success) expect(out.result.issues?.map((issue) => issue.path)).toEqual(['']);
      expect(called).toBe(false);
    });
  });
});
