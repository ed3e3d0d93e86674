// Shared test helpers: spec builders, a settable clock, error-code assertions and a
// deep-frozen check. Tests assert on error codes, never on message text.
import { expect } from 'vitest';
import { ToolRegistryError } from '../../src/index.js';
import type { ChangeEvent, ToolRegistry, ToolRegistryErrorCode, ToolSpecInput } from '../../src/index.js';

/** A spec with only the required fields (plus what `extra` adds or overrides). */
export function minimalSpec(toolName: string, extra: Partial<ToolSpecInput> = {}): ToolSpecInput {
  return { tool_name: toolName, input_schema: { type: 'object' }, output_schema: { type: 'object' }, ...extra };
}

/** A spec with every field set, nested schemas included. */
export function fullSpec(toolName: string, version: string | null = '1.0.0') {
  return {
    tool_name: toolName,
    version,
    description: `Searches the web (${toolName})`,
    input_schema: {
      type: 'object',
      properties: { query: { type: 'string', minLength: 1 }, limit: { type: 'integer', default: 10 } },
      required: ['query'],
      additionalProperties: false,
    },
    output_schema: { type: 'array', items: { type: 'object', properties: { url: { type: 'string' } } } },
    tags: ['web', 'search'],
  };
}

/** A clock that returns a fixed instant until it is set to another one. */
export interface ManualClock {
  readonly now: () => Date;
  /** Sets the instant (and stops any stepping). */
  set(iso: string): void;
  /** From now on each reading moves the instant `ms` later first (it counts the readings). */
  stepEach(ms: number): void;
}

export function manualClock(iso = '2025-01-01T00:00:00.000Z'): ManualClock {
  let current = iso;
  let step = 0;
  return {
    now: () => {
      if (step !== 0) current = new Date(Date.parse(current) + step).toISOString();
      return new Date(current);
    },
    set(next: string) {
      current = next;
      step = 0;
    },
    stepEach(ms: number) {
      step = ms;
    },
  };
}

/** Runs `action` (a promise or a thunk) and returns the ToolRegistryError it fails with; fails the test otherwise. */
export async function expectCode(
  action: Promise<unknown> | (() => unknown),
  code: ToolRegistryErrorCode,
): Promise<ToolRegistryError> {
  const error = await caught(action);
  expect(error, `expected a ToolRegistryError with code ${code}`).toBeInstanceOf(ToolRegistryError);
  expect((error as ToolRegistryError).code).toBe(code);
  return error as ToolRegistryError;
}

/** Misuse (wrong argument types) is a plain TypeError without a `code`. */
export async function expectPlainTypeError(action: Promise<unknown> | (() => unknown)): Promise<TypeError> {
  const error = await caught(action);
  expect(error).toBeInstanceOf(TypeError);
  expect(error).not.toBeInstanceOf(ToolRegistryError);
  expect((error as { code?: unknown }).code).toBeUndefined();
  return error as TypeError;
}

async function caught(action: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof action === 'function' ? action() : action);
  } catch (error) {
    return error;
  }
  return undefined;
}

/** Whether `value` and every object reachable from it is frozen. */
export function isDeepFrozen(value: unknown, seen = new Set<object>()): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (seen.has(value)) return true;
  seen.add(value);
  if (!Object.isFrozen(value)) return false;
  return Reflect.ownKeys(value).every((key) => isDeepFrozen((value as Record<PropertyKey, unknown>)[key], seen));
}

/** The HEX SHA-256 form of a fingerprint. */
export const FINGERPRINT = /^[0-9a-f]{64}$/;

/** Every method of the interface except `close` and the dispose symbol, called with valid arguments. */
export type RegistryMethod = Exclude<keyof ToolRegistry, 'close' | typeof Symbol.asyncDispose>;

/**
 * One valid call per method. Typed as a full record, so a method added to `ToolRegistry`
 * cannot be left out of the "fails after close" tests.
 */
export const callEveryMethod: Record<RegistryMethod, (registry: ToolRegistry) => Promise<unknown>> = {
  register: (registry) => registry.register(minimalSpec('after_close')),
  registerMany: (registry) => registry.registerMany([minimalSpec('after_close_1'), minimalSpec('after_close_2')]),
  get: (registry) => registry.get('present'),
  has: (registry) => registry.has('present'),
  listAll: (registry) => registry.listAll({ includeDisabled: true }),
  setEnabled: (registry) => registry.setEnabled('present', false),
  remove: (registry) => registry.remove('present'),
  exportSnapshot: (registry) => registry.exportSnapshot(),
  importSnapshot: (registry) => registry.importSnapshot({ tools: [] }),
  history: (registry) => registry.history('present'),
  changes: (registry) => registry.changes({ since: 0, limit: 10 }),
  search: (registry) => registry.search('present'),
  listPage: (registry) => registry.listPage({ limit: 10 }),
  // An already-aborted signal: the iteration ends at once while open, and the call rejects after close.
  watch: async (registry) => {
    for await (const event of registry.watch({ since: 0, signal: AbortSignal.abort() })) void event;
  },
  deprecate: (registry) => registry.deprecate('present', { message: 'gone' }),
  undeprecate: (registry) => registry.undeprecate('present'),
  setPolicy: (registry) => registry.setPolicy({ versionOrder: 'semver' }),
  getPolicy: (registry) => registry.getPolicy(),
  putUpstream: (registry) => registry.putUpstream({ name: 'present', transport: { type: 'http', url: 'https://example.com/mcp', headers: {} } }),
  getUpstream: (registry) => registry.getUpstream('present'),
  listUpstreams: (registry) => registry.listUpstreams(),
  removeUpstream: (registry) => registry.removeUpstream('present'),
  recordCalls: (registry) =>
    registry.recordCalls([
      { at: '2025-01-01T00:00:00.000Z', token: null, persona: null, namespace: 'default', tool: 'present', version: null, fingerprint: null, upstream: null, duration_ms: 1, outcome: 'ok' },
    ]),
  listCalls: (registry) => registry.listCalls({ limit: 10 }),
};

/**
 * The one tool each call of `callEveryMethod` names, which its errors carry as
 * `context.tool_name` (DESIGN: "wherever a tool is involved"); calls naming no tool, or
 * several, are left out.
 */
export const toolNamedBy: Partial<Record<RegistryMethod, string>> = {
  register: 'after_close',
  get: 'present',
  has: 'present',
  setEnabled: 'present',
  remove: 'present',
  history: 'present',
  deprecate: 'present',
  undeprecate: 'present',
};

/** Collects events from `registry.watch(options)` until `count` arrived (then stops the watch). */
export async function collectEvents(
  registry: ToolRegistry,
  count: number,
  options: { since?: number } = {},
): Promise<ChangeEvent[]> {
  const controller = new AbortController();
  const events: ChangeEvent[] = [];
  if (count === 0) return events;
  for await (const event of registry.watch({ ...options, signal: controller.signal })) {
    events.push(event);
    if (events.length >= count) controller.abort();
  }
  return events;
}
