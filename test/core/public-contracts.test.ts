// The exported data contracts: zod schemas, strict, and what comes out is deeply frozen
// (DESIGN's data contracts), a copy that leaves the caller's objects as they were.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolRegistration, ToolRegistrySnapshot, ToolSpec } from '../../src/index.js';

/** Every object reachable from `value` is frozen. */
function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(deeplyFrozen);
}

const input = () => ({
  tool_name: 'search',
  input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  output_schema: {},
  tags: ['web'],
});

describe('the exported contracts', () => {
  it('ToolSpec.parse gives a deeply frozen copy with the defaults, and leaves the input alone', () => {
    const given = input();
    const spec = ToolSpec.parse(given);
    expect(spec).toEqual({ ...given, version: null, description: null });
    expect(deeplyFrozen(spec)).toBe(true);
    expect(spec.input_schema).not.toBe(given.input_schema);
    expect(Object.isFrozen(given) || Object.isFrozen(given.input_schema) || Object.isFrozen(given.tags)).toBe(false);
    given.input_schema.properties.q.type = 'number';
    expect(spec.input_schema).toEqual({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] });
  });

  it('ToolRegistration and ToolRegistrySnapshot give deeply frozen copies too', () => {
    const registration = ToolRegistration.parse({ spec: input() });
    expect(registration).toMatchObject({ enabled: true, created_at: null });
    expect(deeplyFrozen(registration)).toBe(true);
    const snapshot = ToolRegistrySnapshot.parse({ tools: [{ spec: input(), enabled: false, created_at: '2025-01-01T00:00:00+00:00' }] });
    expect(snapshot.tools[0]?.created_at).toBe('2025-01-01T00:00:00+00:00');
    expect(deeplyFrozen(snapshot)).toBe(true);
  });

  it('stay strict zod object schemas: unknown fields are refused; shape and extend work, and pick works on the shape', () => {
    const result = ToolSpec.safeParse({ ...input(), color: 'red' });
    expect(result.success).toBe(false);
    expect(Object.keys(ToolSpec.shape)).toEqual(['tool_name', 'version', 'description', 'input_schema', 'output_schema', 'tags']);
    const extended = ToolSpec.extend({ owner: z.string() }).parse({ ...input(), owner: 'search-team' });
    expect([extended.owner, deeplyFrozen(extended)]).toEqual(['search-team', true]);
    // zod refuses pick, omit, partial and merge on a schema with a check (the frozen copy is one).
    expect(z.strictObject(ToolSpec.shape).pick({ tool_name: true }).parse({ tool_name: 'a' })).toEqual({ tool_name: 'a' });
    expect(Object.keys(ToolRegistration.shape)).toEqual(['spec', 'enabled', 'created_at', 'deprecation']);
    expect(Object.keys(ToolRegistrySnapshot.shape)).toEqual(['tools']);
  });
});
