// The zod contracts (DESIGN.md "Data contracts") and the error classes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/canonical.js';
import {
  acceptToolRegistration,
  acceptToolSpec,
  MAX_JSON_DEPTH,
  TOOL_NAME_PATTERN,
  ToolRegistration,
  ToolRegistrySnapshot,
  ToolSpec,
} from '../../src/core/contracts.js';
import {
  DuplicateToolError,
  ReadOnlyError,
  ProviderIncompatibleError,
  PreconditionFailedError,
  ChangesExpiredError,
  SpecMismatchError,
  VersionDowngradeError,
  CompatibilityFailedError,
  RegistryClosedError,
  SchemaTooNewError,
  SnapshotInvalidError,
  StorageBusyError,
  StorageUnavailableError,
  ToolNotFoundError,
  ToolRegistryError,
  ValidationError,
  VersionConflictError,
} from '../../src/core/errors.js';
import type { ToolRegistryErrorCode } from '../../src/core/errors.js';
import { minimalSpec } from '../support/registry-helpers.js';

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe('ToolSpec', () => {
  it('applies the defaults', () => {
    expect(ToolSpec.parse(minimalSpec('t'))).toEqual({ ...minimalSpec('t'), version: null, description: null, tags: [] });
  });

  it('refuses unknown fields', () => {
    const result = ToolSpec.safeParse({ ...minimalSpec('t'), enabled: true });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.code).toBe('unrecognized_keys');
  });

  it.each(['a', 'A-Z_0.9', '-', '.', '_', 'x'.repeat(128), 'Tool.v2-beta_1'])('accepts the tool name %j', (name) => {
    expect(TOOL_NAME_PATTERN.test(name)).toBe(true);
    expect(ToolSpec.safeParse(minimalSpec(name)).success).toBe(true);
  });

  it.each(['', 'x'.repeat(129), 'a b', 'a/b', 'a:b', 'é', 'a\n', '\na', 'a\u0000', 'tool😀'])('refuses the tool name %j', (name) => {
    expect(ToolSpec.safeParse(minimalSpec(name)).success).toBe(false);
  });

  it('refuses empty tags, keeps order and duplicates', () => {
    expect(ToolSpec.safeParse(minimalSpec('t', { tags: [''] })).success).toBe(false);
    expect(ToolSpec.parse(minimalSpec('t', { tags: ['b', 'a', 'b'] })).tags).toEqual(['b', 'a', 'b']);
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels without overflowing the stack`, () => {
    expect(ToolSpec.safeParse(minimalSpec('t', { input_schema: nested(MAX_JSON_DEPTH - 1) as never })).success).toBe(true);
    const result = ToolSpec.safeParse(minimalSpec('t', { input_schema: nested(100_000) as never }));
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path[0]).toBe('input_schema');
  });

  it('accepts a shared (non-cyclic) reference and a null-prototype object', () => {
    const shared = { type: 'string' };
    const nullProto = Object.assign(Object.create(null) as object, { k: 1 });
    expect(ToolSpec.safeParse(minimalSpec('t', { input_schema: { a: shared, b: shared, c: nullProto } as never })).success).toBe(
      true,
    );
  });
});

describe('ToolRegistration', () => {
  it('defaults enabled to true and created_at to null', () => {
    expect(ToolRegistration.parse({ spec: minimalSpec('t') })).toMatchObject({ enabled: true, created_at: null });
  });

  it.each([
    '2025-01-31T12:00:00Z',
    '2025-01-31T12:00:00+00:00',
    '2025-01-31T12:00:00.123456+00:00',
    '2024-05-01T10:00:00.123456+02:00',
    '2025-01-31T12:00:00.5-05:30',
    '2025-01-31T12:00:00.000Z',
    // isoformat() of a zone whose offset is not whole minutes (local mean time): seconds, microseconds.
    '1880-01-01T00:00:00+05:53:28',
    '1880-01-01T00:00:00.000001-00:01:15.250000',
  ])('accepts created_at %j and keeps it verbatim', (created_at) => {
    expect(ToolRegistration.parse({ spec: minimalSpec('t'), created_at }).created_at).toBe(created_at);
  });

  it.each([
    '2025-01-31T12:00:00',
    '2025-01-31',
    'yesterday',
    '',
    '2025-13-01T00:00:00Z',
    '2025-01-31 12:00:00Z',
    '2025-01-31T12:00:00-0800',
    '2025-02-30T12:00:00+05:53:28',
    '2025-01-31T12:00:00+24:00:00',
    '2025-01-31T12:00:00+05:60:00',
    '2025-01-31T12:00:00Z:00:00',
  ])(
    'refuses created_at %j',
    (created_at) => {
      expect(ToolRegistration.safeParse({ spec: minimalSpec('t'), created_at }).success).toBe(false);
    },
  );

  it('refuses unknown fields', () => {
    expect(ToolRegistration.safeParse({ spec: minimalSpec('t'), revision: 1 }).success).toBe(false);
  });
});

describe('ToolRegistrySnapshot', () => {
  it('is exactly { tools }', () => {
    expect(ToolRegistrySnapshot.parse({ tools: [] })).toEqual({ tools: [] });
    expect(ToolRegistrySnapshot.safeParse({}).success).toBe(false);
    expect(ToolRegistrySnapshot.safeParse({ tools: [], meta: {} }).success).toBe(false);
  });
});

describe('errors', () => {
  // One instance per code: a code added to the union without a class fails to compile here.
  const examples: Record<ToolRegistryErrorCode, ToolRegistryError> = {
    VALIDATION_FAILED: new ValidationError('bad', [], { tool_name: 't' }),
    VERSION_CONFLICT: new VersionConflictError('conflict', {
      tool_name: 't',
      version: null,
      existing_fingerprint: 'a'.repeat(64),
      incoming_fingerprint: 'b'.repeat(64),
    }),
    TOOL_NOT_FOUND: new ToolNotFoundError('t'),
    DUPLICATE_TOOL: new DuplicateToolError('t', 'tools[2]', 'tools[0]'),
    SNAPSHOT_INVALID: new SnapshotInvalidError('bad', []),
    SCHEMA_TOO_NEW: new SchemaTooNewError('newer'),
    REGISTRY_CLOSED: new RegistryClosedError('get'),
    STORAGE_BUSY: new StorageBusyError('busy', {}, new Error('SQLITE_BUSY')),
    STORAGE_UNAVAILABLE: new StorageUnavailableError('down', { operation: 'get' }, new Error('ECONNREFUSED')),
    READ_ONLY: new ReadOnlyError('register'),
    PROVIDER_INCOMPATIBLE: new ProviderIncompatibleError('rejected', { tool_name: 't', provider: 'openai', findings: [] }),
    PRECONDITION_FAILED: new PreconditionFailedError('stale', { tool_name: 't', expected: '1', actual: '2', exists: true }),
    CHANGES_EXPIRED: new ChangesExpiredError(0, 1001, 11_000),
    SPEC_MISMATCH: new SpecMismatchError('mismatch', {
      tool_name: 't',
      code_fingerprint: 'a'.repeat(64),
      registry_fingerprint: 'b'.repeat(64),
      code_version: '1',
      registry_version: '1',
    }),
    VERSION_DOWNGRADE: new VersionDowngradeError('lower', { tool_name: 't', version: '1.0.0', current_version: '2.0.0' }),
    COMPATIBILITY_FAILED: new CompatibilityFailedError('breaks', { tool_name: 't', version: '2', current_version: '1', policy: 'backward', differences: [] }),
  };

  it.each(Object.entries(examples))('%s: code, name, base class and a frozen context', (code, error) => {
    expect(error.code).toBe(code);
    expect(error).toBeInstanceOf(ToolRegistryError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(error.constructor.name);
    expect(Object.isFrozen(error.context)).toBe(true);
  });

  it('carries the native cause', () => {
    const cause = new Error('SQLITE_BUSY');
    expect(new StorageBusyError('busy', {}, cause).cause).toBe(cause);
    expect('cause' in new ToolNotFoundError('t')).toBe(false);
  });

  it('names the tool in context and message', () => {
    expect(new ToolNotFoundError('My.Tool').context.tool_name).toBe('My.Tool');
    expect(new ToolNotFoundError('My.Tool').message).toContain('My.Tool');
  });
});

// The fast paths in front of zod (acceptToolSpec, acceptToolRegistration) must accept exactly
// what zod accepts, with the same data: random near-valid inputs, each field valid or not.
describe('the fast paths agree with zod', () => {
  const loneSurrogate = '\uD800';
  /** An array with a hole before its last item. */
  const holey = (...items: unknown[]) => {
    const array = new Array<unknown>(items.length + 1);
    items.forEach((item, i) => {
      array[i === items.length - 1 ? i + 1 : i] = item;
    });
    return array;
  };
  // Mostly valid values (so many inputs pass both), sometimes one zod refuses.
  const mostly = <T,>(valid: fc.Arbitrary<T>, invalid: readonly unknown[]) =>
    fc.oneof({ weight: 12, arbitrary: valid as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: fc.constantFrom(...invalid) });
  const schemaValue = mostly(fc.jsonValue({ maxDepth: 3 }), [Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, -0, undefined, `x${loneSurrogate}`, new Date(0), holey(1, 3)]);
  const schema = mostly(fc.dictionary(fc.string({ maxLength: 6 }), schemaValue, { maxKeys: 4 }), [
    null,
    [],
    'object',
    1,
    undefined,
    Object.create(null) as object,
    { [`k${loneSurrogate}`]: 1 },
    nested(MAX_JSON_DEPTH),
  ]);
  const text = mostly(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(null, undefined)), [3, `a${loneSurrogate}`, {}, 'a\u0000']);
  const tags = mostly(fc.oneof(fc.constant(undefined), fc.array(mostly(fc.string({ minLength: 1, maxLength: 5 }), ['', 1, null, `t${loneSurrogate}`, '\u0000']), { maxLength: 4 })), [
    null,
    'tag',
    holey('a'),
    {},
  ]);
  const name = mostly(fc.stringMatching(/^[A-Za-z0-9_.-]{1,12}$/), ['', 'a b', 'x'.repeat(129), 7, undefined]);
  const spec = fc
    .record(
      { tool_name: name, version: text, description: text, input_schema: schema, output_schema: schema, tags, extra: mostly(fc.constant(undefined), [1]) },
      { requiredKeys: ['tool_name', 'input_schema', 'output_schema'] },
    )
    .chain((fields) =>
      // Usually a plain object; sometimes a null prototype, a class instance or an array.
      mostly(fc.constantFrom('plain', 'null-proto'), ['instance', 'array']).map((form) => {
        const { extra, ...known } = fields;
        const input = extra === undefined ? known : { ...known, extra };
        if (form === 'null-proto') return Object.assign(Object.create(null) as object, input);
        if (form === 'instance') return Object.assign(new (class Spec {})(), input);
        if (form === 'array') return Object.assign([], input);
        return input;
      }),
    );
  const isPlain = (value: unknown) =>
    typeof value === 'object' && value !== null && [Object.prototype, null].includes(Object.getPrototypeOf(value) as object | null);

  it('acceptToolSpec: the same verdict as ToolSpec.safeParse on plain objects, never a different result', () => {
    let accepted = 0;
    fc.assert(
      fc.property(spec, (input) => {
        const fast = acceptToolSpec(input);
        const slow = ToolSpec.safeParse(input);
        if (fast === undefined) {
          // Only what zod refuses, or what is not a plain object (zod has the last word on those).
          if (isPlain(input)) expect(slow.success).toBe(false);
          return;
        }
        accepted++;
        expect(slow.success).toBe(true);
        expect(fast.data).toStrictEqual(slow.data);
        expect(Object.keys(fast.data)).toEqual(Object.keys(slow.data ?? {}));
        expect(fast.data.input_schema).toBe(slow.data?.input_schema);
        expect(fast.schemaTexts.get(fast.data.input_schema)).toBe(canonicalJson(fast.data.input_schema));
        expect(fast.schemaTexts.get(fast.data.output_schema)).toBe(canonicalJson(fast.data.output_schema));
      }),
      { numRuns: 3000 },
    );
    // Both verdicts were reached often. Over 60 seeds the fast path accepted 294-363 of the
    // 3,000 inputs (mean 326), so 200 is far below any seed's count, not a coin toss.
    expect(accepted).toBeGreaterThan(200);
    expect(accepted).toBeLessThan(2700);
  });

  it('acceptToolRegistration: the same verdict as ToolRegistration.safeParse', () => {
    const entry = fc.record(
      {
        spec,
        enabled: mostly(fc.boolean(), [undefined, 1, 'yes']),
        created_at: mostly(fc.constantFrom(undefined, null, '2025-01-31T12:00:00Z', '2025-01-31T12:00:00.123456+02:00'), ['2025-01-31', 'yesterday', 0]),
        extra: mostly(fc.constant(undefined), [1]),
      },
      { requiredKeys: ['spec'] },
    );
    let accepted = 0;
    fc.assert(
      fc.property(entry, ({ extra, ...fields }) => {
        const input = extra === undefined ? fields : { ...fields, extra };
        const fast = acceptToolRegistration(input);
        const slow = ToolRegistration.safeParse(input);
        if (fast === undefined) {
          if (isPlain(fields.spec)) expect(slow.success).toBe(false);
          return;
        }
        accepted++;
        expect(slow.success).toBe(true);
        expect(fast.data).toStrictEqual(slow.data);
        expect(Object.keys(fast.data)).toEqual(Object.keys(slow.data ?? {}));
      }),
      { numRuns: 3000 },
    );
    // 239-308 of 3,000 over 60 seeds.
    expect(accepted).toBeGreaterThan(100);
  });

  it('a key inherited through for...in (a polluted Object.prototype) is an unknown key for both', () => {
    const input = minimalSpec('t');
    Object.defineProperty(Object.prototype, 'surprise', { value: 1, enumerable: true, configurable: true, writable: true });
    try {
      expect(acceptToolSpec(input)).toBeUndefined();
      expect(ToolSpec.safeParse(input).success).toBe(false);
    } finally {
      delete (Object.prototype as Record<string, unknown>).surprise;
    }
    expect(acceptToolSpec(input)).toBeDefined();
  });
});
