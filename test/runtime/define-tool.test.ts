import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import {
  DB_READ,
  DB_WRITE,
  EXEC_SHELL,
  NET_HTTP,
  READ_ENV,
  READ_FS,
  ToolRegistryError,
  ToolSpec,
  ValidationError,
  ToolSet,
  WRITE_FS,
  defineTool,
} from '../../src/index.js';
import type { Tool, ToolHandlerOptions } from '../../src/index.js';
import { internalsOf } from '../../src/runtime/define-tool.js';

const handler = (): string => 'ok';
const schema = { type: 'object', properties: { q: { type: 'string' } } };

function failure(make: () => unknown): ValidationError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toBeInstanceOf(ToolRegistryError);
    return error as ValidationError;
  }
  throw new Error('expected defineTool to throw');
}

function paths(error: ValidationError): string[] {
  return error.issues.map((issue) => issue.pathText);
}

describe('permission constants', () => {
  it('are their own names', () => {
    expect({ READ_FS, WRITE_FS, NET_HTTP, EXEC_SHELL, READ_ENV, DB_READ, DB_WRITE }).toEqual({
      READ_FS: 'READ_FS',
      WRITE_FS: 'WRITE_FS',
      NET_HTTP: 'NET_HTTP',
      EXEC_SHELL: 'EXEC_SHELL',
      READ_ENV: 'READ_ENV',
      DB_READ: 'DB_READ',
      DB_WRITE: 'DB_WRITE',
    });
  });
});

describe('defineTool', () => {
  it('builds a deeply frozen Tool with a valid ToolSpec and the defaults', () => {
    const tool = defineTool({ name: 'search', input_schema: schema, handler });
    expect(tool.name).toBe('search');
    expect(tool.spec).toEqual({ tool_name: 'search', version: null, description: null, input_schema: schema, output_schema: {}, tags: [] });
    expect(ToolSpec.parse(tool.spec)).toEqual(tool.spec);
    expect(tool.permissions).toEqual({ required: [], optional: [] });
    expect(tool.ephemeral).toBe(false);
    expect(tool.onCollision).toBe('throw');
    expect(tool.title).toBeNull();
    expect(tool.annotations).toEqual({});
    expect(tool.handler).toBe(handler);
    for (const value of [tool, tool.annotations, tool.spec, tool.spec.input_schema, tool.spec.tags, tool.permissions, tool.permissions.required]) {
      expect(Object.isFrozen(value)).toBe(true);
    }
    expect(Object.isFrozen((tool.spec.input_schema as { properties: object }).properties)).toBe(true);
  });

  it('keeps title and annotations on the Tool (a frozen copy), out of the spec', () => {
    const annotations = { readOnlyHint: true, openWorldHint: false };
    const tool = defineTool({ name: 'search', title: 'Search the web', annotations, input_schema: schema, handler });
    expect(tool.title).toBe('Search the web');
    expect(tool.annotations).toEqual(annotations);
    expect(tool.annotations).not.toBe(annotations);
    expect(Object.isFrozen(tool.annotations)).toBe(true);
    expect(Object.isFrozen(annotations)).toBe(false);
    expect(Object.keys(tool.spec)).not.toContain('title');
    expect(defineTool({ name: 'search', input_schema: schema, handler }).spec).toEqual(tool.spec);
  });

  it('keeps every given field', () => {
    const tool = defineTool({
      name: 'fetch.page-1',
      version: '2.0.0',
      description: 'fetch a page',
      input_schema: schema,
      output_schema: { type: 'string' },
      tags: ['web', 'web'],
      permissions: { required: [NET_HTTP, 'SEND_EMAIL'], optional: [READ_ENV] },
      handler,
      ephemeral: true,
      onCollision: 'replace',
    });
    expect(tool.spec).toEqual({
      tool_name: 'fetch.page-1',
      version: '2.0.0',
      description: 'fetch a page',
      input_schema: schema,
      output_schema: { type: 'string' },
      tags: ['web', 'web'],
    });
    expect(tool.permissions).toEqual({ required: ['NET_HTTP', 'SEND_EMAIL'], optional: ['READ_ENV'] });
    expect(tool.ephemeral).toBe(true);
    expect(tool.onCollision).toBe('replace');
  });

  it("copies the caller's schemas: they are neither frozen nor shared", () => {
    const input = { type: 'object', properties: { q: { type: 'string' } } };
    const tool = defineTool({ name: 't', input_schema: input, handler });
    expect(Object.isFrozen(input)).toBe(false);
    expect(tool.spec.input_schema).not.toBe(input);
    input.properties.q.type = 'number';
    expect(tool.spec.input_schema).toEqual(schema);
  });

  it('turns a zod schema into JSON Schema with zod\'s own converter', () => {
    const input = z.object({ q: z.string(), limit: z.number().int().default(10) });
    const output = z.object({ hits: z.array(z.string()) });
    const tool = defineTool({ name: 'z', input_schema: input, output_schema: output, handler: ({ q }) => ({ hits: [q] }) });
    expect(tool.spec.input_schema).toEqual(z.toJSONSchema(input));
    expect(tool.spec.output_schema).toEqual(z.toJSONSchema(output));
  });

  it('types the handler arguments from a zod schema (checked by the typecheck)', () => {
    const tool = defineTool({ name: 'typed', input_schema: z.object({ q: z.string(), n: z.number().optional() }), handler: ({ q }) => q.toUpperCase() });
    expectTypeOf(tool.handler).parameter(0).toEqualTypeOf<{ q: string; n?: number | undefined }>();
    expect(tool.handler({ q: 'a' }, { context: undefined, signal: new AbortController().signal, tool_name: 'typed' } as ToolHandlerOptions)).toBe('A');
  });

  it('refuses a zod 3 schema, naming the field', () => {
    const error = failure(() => defineTool({ name: 'old', input_schema: z3.object({ q: z3.string() }) as never, handler }));
    expect(paths(error)).toEqual(['input_schema']);
  });

  it('refuses a zod schema with no JSON Schema form, naming the field', () => {
    const error = failure(() => defineTool({ name: 'z', input_schema: z.string().transform((s) => s.length), handler }));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(paths(error)).toEqual(['input_schema']);
    expect(error.context.tool_name).toBe('z');
  });

  it.each([
    ['the name rule', { name: 'has space', input_schema: schema, handler }, ['name']],
    ['an empty name', { name: '', input_schema: schema, handler }, ['name']],
    ['a name over 128 characters', { name: 'a'.repeat(129), input_schema: schema, handler }, ['name']],
    ['a missing input_schema', { name: 't', handler }, ['input_schema']],
    ['an input_schema that is not an object', { name: 't', input_schema: 'object', handler }, ['input_schema']],
    ['an input_schema that is not JSON', { name: 't', input_schema: { default: () => 1 }, handler }, ['input_schema.default']],
    ['a handler that is not a function', { name: 't', input_schema: schema, handler: 'run' }, ['handler']],
    ['a missing handler', { name: 't', input_schema: schema }, ['handler']],
    ['a lowercase permission', { name: 't', input_schema: schema, handler, permissions: { required: ['read_fs'] } }, ['permissions.required[0]']],
    ['a permission starting with a digit', { name: 't', input_schema: schema, handler, permissions: { optional: ['1X'] } }, ['permissions.optional[0]']],
    ['permissions as an array', { name: 't', input_schema: schema, handler, permissions: [READ_FS] }, ['permissions']],
    ['an unknown permissions field', { name: 't', input_schema: schema, handler, permissions: { needed: [] } }, ['permissions.needed']],
    ['an unknown field', { name: 't', input_schema: schema, handler, execute: handler }, ['execute']],
    ['a bad onCollision', { name: 't', input_schema: schema, handler, onCollision: 'merge' }, ['onCollision']],
    ['a non-boolean ephemeral', { name: 't', input_schema: schema, handler, ephemeral: 'yes' }, ['ephemeral']],
    ['an empty tag', { name: 't', input_schema: schema, handler, tags: [''] }, ['tags[0]']],
    ['a numeric version', { name: 't', input_schema: schema, handler, version: 1 }, ['version']],
    ['an empty title', { name: 't', input_schema: schema, handler, title: '' }, ['title']],
    ['a non-boolean annotation', { name: 't', input_schema: schema, handler, annotations: { readOnlyHint: 'yes' } }, ['annotations.readOnlyHint']],
    ['an unknown annotation', { name: 't', input_schema: schema, handler, annotations: { safe: true } }, ['annotations.safe']],
    // ajv skips that property name: its value went unchecked, and additionalProperties: false refused it as undeclared.
    ['a property named __proto__ (nested)', { name: 't', input_schema: JSON.parse('{"type":"object","properties":{"a":{"type":"object","properties":{"__proto__":{"type":"string"}}}}}'), handler }, ['input_schema']],
    ['an output property named __proto__', { name: 't', input_schema: schema, output_schema: JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}'), handler }, ['output_schema']],
  ])('refuses %s with VALIDATION_FAILED naming the field', (_label, definition, expected) => {
    const error = failure(() => defineTool(definition as never));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(paths(error)).toEqual(expected);
  });

  it('reports every problem at once', () => {
    const error = failure(() => defineTool({ name: 'a b', input_schema: schema, handler: 1, extra: true } as never));
    expect(paths(error).sort()).toEqual(['extra', 'handler', 'name']);
  });

  it.each([
    ['input_schema', { input_schema: { type: 'strin' } }],
    ['input_schema', { input_schema: { $ref: '#/$defs/missing' } }],
    ['input_schema', { input_schema: { minLength: 'five' } }],
    ['input_schema', { input_schema: { $schema: 'http://json-schema.org/draft-04/schema#' } }],
    ['output_schema', { input_schema: schema, output_schema: { type: 'objekt' } }],
    // ajv makes it a check that returns a Promise: any arguments passed, and its rejection ended the process.
    ['input_schema', { input_schema: { $async: true, type: 'object', properties: { n: { type: 'integer' } } } }],
    ['output_schema', { input_schema: schema, output_schema: { $async: true, type: 'object' } }],
  ])('refuses a schema ajv cannot compile, naming %s', (field, fields) => {
    const error = failure(() => defineTool({ name: 't', handler, ...fields } as never));
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(paths(error)).toEqual([field]);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('compiles draft-07, 2019-09 and 2020-12 schemas, annotations and unknown formats included', () => {
    for (const $schema of ['http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2019-09/schema', 'https://json-schema.org/draft/2020-12/schema']) {
      expect(defineTool({ name: 't', input_schema: { $schema, type: 'object' }, handler }).spec.input_schema).toEqual({ $schema, type: 'object' });
    }
    expect(() => defineTool({ name: 't', input_schema: { type: 'string', format: 'x-custom', example: 'a', 'x-ui': 1 }, handler })).not.toThrow();
  });

  it('lets two tools use the same $id', () => {
    defineTool({ name: 'a', input_schema: { $id: 'https://example.com/args.json', type: 'object' }, handler });
    expect(defineTool({ name: 'b', input_schema: { $id: 'https://example.com/args.json', type: 'string' }, handler }).name).toBe('b');
  });

  it('refuses something that is not a definition object', () => {
    expect(failure(() => defineTool(null as never)).code).toBe('VALIDATION_FAILED');
  });
});

describe('compiled schemas, shared by what they are compiled from', () => {
  // A gateway's cold listing of an upstream of 10,000 tools that share a schema compiled it
  // 10,000 times (2.7-5.0 CPU-s; 1.2-1.6 s since).
  it('a schema defined again (as another object) reuses its check; another schema, keys in another order (defaults filled in another order), or the output side (no defaults) has its own', async () => {
    const define = (name: string, input_schema: Record<string, unknown>, output_schema?: Record<string, unknown>) => defineTool({ name, input_schema, ...(output_schema === undefined ? {} : { output_schema }), handler });
    const withDefault = { type: 'object', properties: { n: { type: 'integer', default: 3 } } };
    const one = define('one', withDefault);
    const two = define('two', { type: 'object', properties: { n: { type: 'integer', default: 3 } } });
    expect(internalsOf(two)?.checkInput).toBe(internalsOf(one)?.checkInput);
    expect(internalsOf(define('reordered', { properties: { n: { default: 3, type: 'integer' } }, type: 'object' }))?.checkInput).not.toBe(internalsOf(one)?.checkInput);
    expect(internalsOf(define('three', { ...withDefault, required: ['n'] }))?.checkInput).not.toBe(internalsOf(one)?.checkInput);
    // As an output schema the same text is checked without filling in defaults: a check of its own.
    const out = define('out', schema, withDefault);
    expect(internalsOf(out)?.checkOutput).not.toBe(internalsOf(one)?.checkInput);
    // Each tool still checks (and fills in) as its own: the shared check keeps nothing of a call.
    const invoke = (tool: Tool, args: Record<string, unknown>) => new ToolSet([tool]).invoke(tool.name, args);
    expect(await invoke(two, { n: 'x' })).toMatchObject({ success: false, code: 'INVALID_ARGUMENTS' });
    expect(await invoke(one, {})).toMatchObject({ success: true });
    // A schema ajv refuses is refused every time (nothing cached for it).
    for (const name of ['bad1', 'bad2']) expect(() => define(name, { type: 'object', properties: { n: { type: 'integr' } } })).toThrow(/is not a JSON Schema ajv can compile/);
  });
});
