import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { NET_HTTP, ToolBox, ToolSet, ValidationError, defineTool } from '../../src/index.js';
import type { Tool, ToolHandlerOptions, ToolResult } from '../../src/index.js';

const searchSchema = {
  type: 'object',
  properties: {
    q: { type: 'string', minLength: 1 },
    limit: { type: 'integer', minimum: 1, default: 10 },
    filters: { type: 'object', properties: { lang: { type: 'string', default: 'en' } }, default: {} },
  },
  required: ['q'],
  additionalProperties: false,
};

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen);
}

function failed(result: ToolResult): Extract<ToolResult, { success: false }> {
  if (result.success) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result;
}

describe.each([
  ['ToolSet', (tools: Tool[]) => new ToolSet(tools)],
  ['ToolBox', (tools: Tool[]) => new ToolBox(tools)],
])('%s.invoke', (_kind, make) => {
  it('calls the handler with a validated copy, defaults applied, and the call options', async () => {
    const calls: [unknown, ToolHandlerOptions][] = [];
    const tool = defineTool({
      name: 'search',
      input_schema: searchSchema,
      handler: (args, options) => {
        calls.push([args, options]);
        return { echoed: args };
      },
    });
    const args = { q: 'cats' };
    const context = { user: 'u1' };
    const result = await make([tool]).invoke('search', args, { context });
    expect(result.success).toBe(true);
    expect(calls).toHaveLength(1);
    const [received, options] = calls[0]!;
    expect(received).toEqual({ q: 'cats', limit: 10, filters: { lang: 'en' } });
    expect(received).not.toBe(args);
    expect(args).toEqual({ q: 'cats' });
    expect(options.context).toBe(context);
    expect(options.tool_name).toBe('search');
    expect(options.signal).toBeInstanceOf(AbortSignal);
    expect(options.signal.aborted).toBe(false);
    expect(result).toEqual({ success: true, data: { echoed: { q: 'cats', limit: 10, filters: { lang: 'en' } } }, execution_time_ms: expect.any(Number) });
  });

  it('the call options are exactly { context, signal, tool_name, progress, log, sample, elicit }, own properties a spread keeps, whatever the options', async () => {
    const seen: ToolHandlerOptions[] = [];
    const tool = defineTool({ name: 'opts', input_schema: {}, handler: (_args, options) => { seen.push(options); return 1; } });
    const set = make([tool]);
    const context = { user: 'u1' };
    await set.invoke('opts', {});
    await set.invoke('opts', {}, { context });
    await set.invoke('opts', {}, { context, signal: new AbortController().signal });
    await set.invoke('opts', {}, { context, timeoutMs: 1000 });
    expect(seen).toHaveLength(4);
    for (const [index, options] of seen.entries()) {
      expect(Object.keys(options).sort()).toEqual(['context', 'elicit', 'log', 'progress', 'sample', 'signal', 'tool_name']);
      const spread = { ...options };
      const fn = expect.any(Function);
      expect(spread).toEqual({ context: index === 0 ? undefined : context, signal: expect.any(AbortSignal), tool_name: 'opts', progress: fn, log: fn, sample: fn, elicit: fn });
      expect(spread.signal).toBe(options.signal);
    }
  });

  it('gives every call its own signal when nothing can abort it (listeners never pile up on a shared one)', async () => {
    const signals: AbortSignal[] = [];
    const tool = defineTool({ name: 't', input_schema: {}, handler: (_args, { signal }) => { signals.push(signal); signals.push(signal); return 1; } });
    const set = make([tool]);
    await set.invoke('t', {});
    await set.invoke('t', {});
    expect(signals[0]).toBe(signals[1]);
    expect(signals[0]).not.toBe(signals[2]);
    expect(signals.every((signal) => signal instanceof AbortSignal && !signal.aborted)).toBe(true);
  });

  it('returns deeply frozen results with a non-negative execution_time_ms', async () => {
    const tool = defineTool({ name: 't', input_schema: {}, handler: async () => ({ rows: [{ id: 1 }], meta: { n: 1 } }) });
    const result = await make([tool]).invoke('t', {});
    expect(result.success).toBe(true);
    expect(isDeepFrozen(result)).toBe(true);
    expect(result.execution_time_ms).toBeGreaterThanOrEqual(0);
    const bad = await make([tool]).invoke('nope', {});
    expect(isDeepFrozen(bad)).toBe(true);
  });

  it('measures execution_time_ms around the handler', async () => {
    const tool = defineTool({ name: 'slow', input_schema: {}, handler: () => new Promise((resolve) => setTimeout(() => resolve(1), 40)) });
    const result = await make([tool]).invoke('slow', {});
    expect(result.execution_time_ms).toBeGreaterThanOrEqual(35);
  });

  it('TOOL_NOT_FOUND for an unknown name (exact, case-sensitive), naming it', async () => {
    const tool = defineTool({ name: 'search', input_schema: {}, handler: () => 1 });
    for (const name of ['nope', 'Search', 'search ']) {
      const result = failed(await make([tool]).invoke(name, {}));
      expect(result.code).toBe('TOOL_NOT_FOUND');
      expect(result.error).toContain(name);
      expect(result.issues).toBeUndefined();
    }
  });

  it('INVALID_ARGUMENTS lists every problem with JSON-Pointer paths; the handler is not called', async () => {
    let called = false;
    const tool = defineTool({ name: 'search', input_schema: searchSchema, handler: () => (called = true) });
    const result = failed(await make([tool]).invoke('search', { limit: 0, filters: { lang: 5 }, extra: true }));
    expect(result.code).toBe('INVALID_ARGUMENTS');
    expect(result.error).toContain('search');
    expect([...(result.issues ?? [])].map((issue) => issue.path).sort()).toEqual(['/extra', '/filters/lang', '/limit', '/q']);
    for (const issue of result.issues ?? []) expect(typeof issue.message).toBe('string');
    expect(called).toBe(false);
  });

  it('escapes JSON-Pointer paths and points into arrays', async () => {
    const tool = defineTool({
      name: 't',
      input_schema: { type: 'object', properties: { 'a/b': { type: 'array', items: { type: 'integer' } } } },
      handler: () => 1,
    });
    const result = failed(await make([tool]).invoke('t', { 'a/b': [1, 'x'] }));
    expect(result.issues).toEqual([{ path: '/a~1b/1', message: expect.any(String) }]);
  });

  it('INVALID_ARGUMENTS for arguments that are not data (a function)', async () => {
    const tool = defineTool({ name: 't', input_schema: {}, handler: () => 1 });
    const result = failed(await make([tool]).invoke('t', { f: () => 1 }));
    expect(result.code).toBe('INVALID_ARGUMENTS');
    expect(result.issues).toHaveLength(1);
  });

  it('treats missing arguments as {}', async () => {
    const tool = defineTool({ name: 't', input_schema: { type: 'object', properties: { n: { type: 'integer', default: 3 } } }, handler: (args) => args });
    expect(await make([tool]).invoke('t')).toMatchObject({ success: true, data: { n: 3 } });
  });

  it('validates zod input schemas through their JSON Schema', async () => {
    const tool = defineTool({
      name: 'z',
      input_schema: z.object({ q: z.string().min(2), limit: z.number().int().default(5) }),
      handler: ({ q, limit }) => `${q}:${limit}`,
    });
    expect(await make([tool]).invoke('z', { q: 'ab' })).toMatchObject({ success: true, data: 'ab:5' });
    const result = failed(await make([tool]).invoke('z', { q: 'a', limit: 1.5 }));
    expect(result.code).toBe('INVALID_ARGUMENTS');
    expect([...(result.issues ?? [])].map((issue) => issue.path).sort()).toEqual(['/limit', '/q']);
  });

  it('validates formats (ajv-formats)', async () => {
    const tool = defineTool({ name: 'mail', input_schema: { type: 'object', properties: { to: { type: 'string', format: 'email' } } }, handler: () => 1 });
    expect(failed(await make([tool]).invoke('mail', { to: 'not an address' })).issues).toEqual([{ path: '/to', message: expect.any(String) }]);
    expect((await make([tool]).invoke('mail', { to: 'a@example.com' })).success).toBe(true);
  });

  it('TOOL_FAILED keeps the message, not the stack, for a throw, a rejection and a non-Error', async () => {
    const tools = [
      defineTool({ name: 'throws', input_schema: {}, handler: () => { throw new Error('disk full'); } }),
      defineTool({ name: 'rejects', input_schema: {}, handler: async () => { throw new Error('quota exceeded'); } }),
      defineTool({ name: 'string', input_schema: {}, handler: () => Promise.reject('plain reason') }),
      defineTool({ name: 'foreign', input_schema: {}, handler: () => { throw { message: 'error-like from another realm' }; } }),
    ];
    const set = make(tools);
    for (const [name, message] of [['throws', 'disk full'], ['rejects', 'quota exceeded'], ['string', 'plain reason'], ['foreign', 'error-like from another realm']] as const) {
      const result = failed(await set.invoke(name, {}));
      expect(result.code).toBe('TOOL_FAILED');
      expect(result.error).toContain(message);
      expect(result.error).toContain(name);
      expect(result.error).not.toMatch(/\n\s+at /);
      expect(Object.keys(result).sort()).toEqual(['code', 'error', 'execution_time_ms', 'success']);
    }
  });

  it('INVALID_OUTPUT when the output fails a constraining output_schema', async () => {
    const tool = defineTool({ name: 'count', input_schema: {}, output_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, handler: () => ({ n: 'many' }) });
    const result = failed(await make([tool]).invoke('count', {}));
    expect(result.code).toBe('INVALID_OUTPUT');
    expect(result.issues).toEqual([{ path: '/n', message: expect.any(String) }]);
    const good = defineTool({ name: 'count', input_schema: {}, output_schema: { type: 'object', properties: { n: { type: 'integer' } } }, handler: () => ({ n: 2 }) });
    expect(await make([good]).invoke('count', {})).toMatchObject({ success: true, data: { n: 2 } });
  });

  it('an empty (or annotation-only) output_schema accepts anything, undefined included', async () => {
    for (const output_schema of [{}, { description: 'anything' }]) {
      for (const value of [undefined, 1, 'x', [1], { a: 1 }, null]) {
        const tool = defineTool({ name: 't', input_schema: {}, output_schema, handler: () => value });
        expect(await make([tool]).invoke('t', {})).toMatchObject({ success: true, data: value });
      }
    }
  });

  it('a success is JSON data, deeply frozen in place: shared objects are fine, every object is frozen', async () => {
    const shared = { n: 1 };
    const data = { a: shared, b: [shared, { c: null }], d: undefined, e: 'x', f: true, g: -0.5 };
    const tool = defineTool({ name: 't', input_schema: {}, handler: () => data });
    const result = await make([tool]).invoke('t', {});
    expect(result).toMatchObject({ success: true });
    expect(result.success && result.data).toBe(data);
    for (const object of [data, shared, data.b, data.b[1]]) expect(Object.isFrozen(object)).toBe(true);
  });

  // A result goes to a model as JSON: what JSON would change (a Map or Set becomes {}, a Date a
  // string, NaN null) or cannot carry (a cycle, a BigInt) is INVALID_OUTPUT, with the path of
  // the first such value, and the handler's value is left unfrozen (issue 28, defect 6).
  it.each<[string, () => unknown, string, RegExp]>([
    ['a Map', () => new Map([['k', 1]]), '', /is a Map, not JSON data/],
    ['a Set inside an object', () => ({ tags: new Set(['a']) }), '/tags', /is a Set/],
    ['a Date', () => ({ at: new Date(0) }), '/at', /is a Date, not JSON data \(return date\.toISOString\(\)/],
    ['a class instance', () => ({ list: [new (class Point { x = 1; })()] }), '/list/0', /an instance of Point/],
    ['a typed array', () => ({ bytes: new Uint8Array([1, 2]) }), '/bytes', /is a Uint8Array/],
    ['an Error', () => ({ error: new Error('x') }), '/error', /is an Error, not JSON data/],
    ['a RegExp (key with / and ~)', () => ({ 'a/b~c': /x/ }), '/a~1b~0c', /is a RegExp/],
    ['NaN', () => ({ n: NaN }), '/n', /is NaN/],
    ['Infinity', () => [Infinity], '/0', /is Infinity/],
    ['a BigInt', () => ({ n: 1n }), '/n', /is a bigint/],
    ['a function', () => ({ toJSON: () => 1 }), '/toJSON', /is a function/],
    ['a symbol', () => Symbol('s'), '', /is a symbol/],
    ['undefined in an array', () => [1, undefined], '/1', /undefined/],
    ['an array with holes', () => [1, , 3], '', /holes/], // eslint-disable-line no-sparse-arrays
    ['a named property of an array', () => ({ list: Object.assign([1, 2], { extra: 'x' }) }), '/list/extra', /is a named property of an array, which JSON leaves out/],
    // As many named keys as holes: a count of keys against the length passed it, and JSON made a null of the hole and dropped the name.
    ['a hole and a named property', () => Object.assign([1, , 3], { extra: 'x' }), '/extra', /named property/], // eslint-disable-line no-sparse-arrays
    ['a cycle', () => {
      const data: Record<string, unknown> = { list: [] };
      (data.list as unknown[]).push(data);
      return data;
    }, '/list/0', /a cycle/],
  ])('INVALID_OUTPUT for %s, nothing frozen', async (_label, handler, path, message) => {
    const value = handler();
    const tool = defineTool({ name: 't', input_schema: {}, handler: () => value });
    const result = failed(await make([tool]).invoke('t', {}));
    expect(result.code).toBe('INVALID_OUTPUT');
    expect(result.issues).toEqual([{ path, message: expect.stringMatching(message) }]);
    expect(result.error).toMatch(/Tool 't' returned output that is not JSON data/);
    if (typeof value === 'object' && value !== null) expect(Object.isFrozen(value)).toBe(false);
    if (value instanceof Map) {
      // Before, a "deeply frozen" success carried a Map that could still be changed.
      value.set('k', 2);
      expect(value.get('k')).toBe(2);
    }
  });

  it('a hanging handler is cut off by timeoutMs (TIMEOUT), and its signal is aborted', async () => {
    let signal: AbortSignal | undefined;
    const tool = defineTool({ name: 'hang', input_schema: {}, handler: (_args, options) => { signal = options.signal; return new Promise(() => {}); } });
    const started = performance.now();
    const result = failed(await make([tool]).invoke('hang', {}, { timeoutMs: 50 }));
    expect(result.code).toBe('TIMEOUT');
    expect(result.error).toContain('hang');
    expect(performance.now() - started).toBeLessThan(5000);
    expect(result.execution_time_ms).toBeGreaterThanOrEqual(45);
    expect(signal?.aborted).toBe(true);
  });

  it('a busy handler that never looks at its signal is cut off too', async () => {
    const tool = defineTool({ name: 'ignore', input_schema: {}, handler: () => new Promise((resolve) => setTimeout(() => resolve('late'), 2000)) });
    const result = failed(await make([tool]).invoke('ignore', {}, { timeoutMs: 30 }));
    expect(result.code).toBe('TIMEOUT');
  });

  it('a handler that finishes in time is not a TIMEOUT', async () => {
    const tool = defineTool({ name: 'quick', input_schema: {}, handler: async () => 'done' });
    expect(await make([tool]).invoke('quick', {}, { timeoutMs: 1000 })).toMatchObject({ success: true, data: 'done' });
  });

  it('ABORTED when the caller aborts mid-call; the handler signal is aborted with the reason', async () => {
    let signal: AbortSignal | undefined;
    const tool = defineTool({ name: 'hang', input_schema: {}, handler: (_args, options) => { signal = options.signal; return new Promise(() => {}); } });
    for (const timeoutMs of [undefined, 10_000]) {
      const controller = new AbortController();
      const pending = make([tool]).invoke('hang', {}, { signal: controller.signal, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
      setTimeout(() => controller.abort(new Error('user left')), 20);
      const result = failed(await pending);
      expect(result.code).toBe('ABORTED');
      expect(signal?.aborted).toBe(true);
      expect(signal?.reason).toEqual(new Error('user left'));
    }
  });

  it('ABORTED without calling the handler when the signal was aborted before', async () => {
    let called = false;
    const tool = defineTool({ name: 't', input_schema: {}, handler: () => (called = true) });
    const result = failed(await make([tool]).invoke('t', {}, { signal: AbortSignal.abort() }));
    expect(result.code).toBe('ABORTED');
    expect(called).toBe(false);
  });

  it('a rejection after the timeout changes nothing and is not unhandled', async () => {
    const tool = defineTool({ name: 't', input_schema: {}, handler: (_args, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped')))) });
    expect(failed(await make([tool]).invoke('t', {}, { timeoutMs: 10 })).code).toBe('TIMEOUT');
  });

  it('concurrent invocations never share argument objects', async () => {
    const seen: Record<string, unknown>[] = [];
    const tool = defineTool({
      name: 'mutate',
      input_schema: { type: 'object', properties: { list: { type: 'array', default: [] }, nested: { type: 'object', default: { n: 0 } } } },
      handler: async (args: Record<string, unknown>) => {
        seen.push(args);
        (args.list as unknown[]).push(seen.length);
        (args.nested as { n: number }).n += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { list: [...(args.list as unknown[])], n: (args.nested as { n: number }).n };
      },
    });
    const set = make([tool]);
    const shared = { list: [0] };
    const results = await Promise.all(Array.from({ length: 20 }, () => set.invoke('mutate', shared)));
    expect(new Set(seen).size).toBe(20);
    expect(new Set(seen.map((args) => args.list)).size).toBe(20);
    expect(new Set(seen.map((args) => args.nested)).size).toBe(20);
    for (const result of results) {
      expect(result.success).toBe(true);
      if (result.success) expect(result.data).toEqual({ list: [0, expect.any(Number)], n: 1 });
    }
    expect(shared).toEqual({ list: [0] });
    // Defaults come fresh per call as well.
    const defaulted = await Promise.all([set.invoke('mutate', {}), set.invoke('mutate', {})]);
    expect(defaulted.map((result) => (result.success ? result.data : undefined))).toEqual([
      { list: [expect.any(Number)], n: 1 },
      { list: [expect.any(Number)], n: 1 },
    ]);
  });

  it('keeps a __proto__ key as data', async () => {
    const tool = defineTool({ name: 't', input_schema: {}, handler: (args) => Object.keys(args) });
    const args = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const result = await make([tool]).invoke('t', args);
    expect(result).toMatchObject({ success: true, data: ['__proto__', 'a'] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a property named like an Object.prototype member (constructor, toString) is there only when the arguments have it', async () => {
    const tool = defineTool({
      name: 't',
      input_schema: { type: 'object', properties: { constructor: { type: 'string' }, toString: { type: 'number' }, q: { type: 'string' } }, required: ['q'] },
      output_schema: { type: 'object', properties: { valueOf: { type: 'string' } } },
      handler: (args) => ({ got: Object.keys(args) }),
    });
    const set = make([tool]);
    expect(await set.invoke('t', { q: 'x' })).toMatchObject({ success: true, data: { got: ['q'] } });
    expect(await set.invoke('t', { q: 'x', constructor: 'y', toString: 1 })).toMatchObject({ success: true, data: { got: ['q', 'constructor', 'toString'] } });
    const missing = await set.invoke('t', { constructor: 'y' });
    expect(missing).toMatchObject({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/q', message: 'is required' }] });
    const required = defineTool({ name: 'r', input_schema: { type: 'object', properties: { constructor: { type: 'string' } }, required: ['constructor'] }, handler: () => 1 });
    expect(await make([required]).invoke('r', {})).toMatchObject({ code: 'INVALID_ARGUMENTS', issues: [{ path: '/constructor', message: 'is required' }] });
  });

  it('PERMISSION_DENIED with the policy reason, the handler never called', async () => {
    let calls = 0;
    const tool = defineTool({ name: 'fetch', input_schema: {}, permissions: { required: [NET_HTTP, 'B_PERM'] }, handler: () => ++calls });
    const set = make([tool]);
    const missing = failed(await set.invoke('fetch', {}, { policy: { persona: 'p' } }));
    expect(missing).toMatchObject({ code: 'PERMISSION_DENIED', error: 'Missing required permissions: B_PERM, NET_HTTP' });
    const listed = failed(await set.invoke('fetch', {}, { policy: { persona: 'p', allowed_tools: ['other'], allowed_permissions: [NET_HTTP, 'B_PERM'] } }));
    expect(listed).toMatchObject({ code: 'PERMISSION_DENIED', error: "Tool 'fetch' is not in the allowlist for persona 'p'" });
    expect(calls).toBe(0);
    expect(await set.invoke('fetch', {}, { policy: { persona: 'p', allowed_permissions: [NET_HTTP, 'B_PERM'] } })).toMatchObject({ success: true, data: 1 });
  });

  it.each([
    ['timeoutMs: -1', { timeoutMs: -1 }],
    ['timeoutMs: 0', { timeoutMs: 0 }],
    ['timeoutMs: NaN', { timeoutMs: Number.NaN }],
    ['timeoutMs as a string', { timeoutMs: '10' }],
    ['timeoutMs over setTimeout\'s limit', { timeoutMs: 2 ** 31 }],
    ['a signal that is not an AbortSignal', { signal: {} }],
  ])('rejects misuse with a TypeError: %s', async (_label, options) => {
    const tool = defineTool({ name: 't', input_schema: {}, handler: () => 1 });
    await expect(make([tool]).invoke('t', {}, options as never)).rejects.toBeInstanceOf(TypeError);
  });

  it('rejects a non-string name and non-object options with a TypeError', async () => {
    const set = make([defineTool({ name: 't', input_schema: {}, handler: () => 1 })]);
    await expect(set.invoke(42 as never, {})).rejects.toBeInstanceOf(TypeError);
    await expect(set.invoke('t', {}, 'fast' as never)).rejects.toBeInstanceOf(TypeError);
  });

  it('a signal look-alike without removeEventListener is a TypeError; one whose removeEventListener throws still settles', async () => {
    const set = make([defineTool({ name: 't', input_schema: {}, handler: async () => 1 })]);
    // Before: accepted, and the throw when the call ended left invoke pending forever (and an unhandled rejection).
    await expect(set.invoke('t', {}, { signal: { aborted: false, addEventListener() {} } as never })).rejects.toBeInstanceOf(TypeError);
    const throwing = {
      aborted: false,
      addEventListener() {},
      removeEventListener() {
        throw new Error('remove');
      },
    };
    expect(await set.invoke('t', {}, { signal: throwing as never })).toMatchObject({ success: true, data: 1 });
  });

  it('accepts timeoutMs: Infinity as no timeout', async () => {
    const set = make([defineTool({ name: 't', input_schema: {}, handler: async () => 1 })]);
    expect(await set.invoke('t', {}, { timeoutMs: Infinity })).toMatchObject({ success: true });
  });

  it('rejects an invalid policy with VALIDATION_FAILED', async () => {
    const set = make([defineTool({ name: 't', input_schema: {}, handler: () => 1 })]);
    await expect(set.invoke('t', {}, { policy: { allowed_tools: ['t'] } as never })).rejects.toBeInstanceOf(ValidationError);
  });
});
