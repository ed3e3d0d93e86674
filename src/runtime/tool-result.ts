import type { Deprecation } from '../core/contracts.js';
import { performance } from 'node:perf_hooks';
import { hasPlainPrototype } from '../core/canonical.js';
import { escapePointer } from './schema-validator.js';

/**
 * The monotonic clock of `execution_time_ms`: `performance.now()`, taken from perf_hooks and
 * bound once. The global `performance` is a lazy getter on globalThis in Node, which costs a
 * call on every read; invoke reads the clock twice per call.
 */
export const now: () => number = performance.now.bind(performance);

/** Why an invocation did not succeed. Data on a result, never thrown. */
export type ToolResultCode =
  | 'TOOL_NOT_FOUND'
  | 'INVALID_ARGUMENTS'
  | 'PERMISSION_DENIED'
  | 'TOOL_FAILED'
  | 'INVALID_OUTPUT'
  | 'TIMEOUT'
  | 'ABORTED';

/** One schema problem: a JSON Pointer into the arguments (or output) and what is wrong there. */
export interface ToolResultIssue {
  /** JSON Pointer (RFC 6901): `/limit`, `/filters/0/field`; `''` is the value itself. */
  readonly path: string;
  readonly message: string;
}

/** A handler's value, validated against `output_schema` when that schema constrains anything. */
export interface ToolSuccess<Data = unknown> {
  readonly success: true;
  /** The handler's value: JSON data (undefined included), deeply frozen in place. */
  readonly data: Data;
  /** Wall time of the whole `invoke`, from `performance.now()` (monotonic), in milliseconds. */
  readonly execution_time_ms: number;
  /** The registry's deprecation of the tool, when the set came from `loadToolSet` and the tool is deprecated. */
  readonly deprecated?: Deprecation;
}

/** An invocation that did not succeed. */
export interface ToolFailure {
  readonly success: false;
  readonly code: ToolResultCode;
  /** A readable message naming the tool; for `PERMISSION_DENIED` exactly the policy's reason. */
  readonly error: string;
  /** Every schema problem; present for `INVALID_ARGUMENTS` and `INVALID_OUTPUT` only. */
  readonly issues?: readonly ToolResultIssue[];
  readonly execution_time_ms: number;
  /** As on a success: the tool's deprecation, when it is deprecated. */
  readonly deprecated?: Deprecation;
}

/**
 * What `invoke` resolves to, deeply frozen: `{ success: true, data, execution_time_ms }` or
 * `{ success: false, code, error, issues?, execution_time_ms }`. Branch on `success`, then
 * on `code`.
 */
export type ToolResult<Data = unknown> = ToolSuccess<Data> | ToolFailure;

export function failure(code: ToolResultCode, error: string, started: number, issues?: readonly ToolResultIssue[]): ToolFailure {
  const execution_time_ms = now() - started;
  return Object.freeze(
    issues === undefined
      ? { success: false, code, error, execution_time_ms }
      : { success: false, code, error, issues: Object.freeze(issues.map((issue) => Object.freeze(issue))), execution_time_ms },
  );
}

/**
 * A handler's value as a success, deeply frozen in place; the caller checked it with
 * `jsonIssue` first (a value that cannot be frozen throws here).
 */
export function success<Data>(data: Data, started: number, objects: readonly object[]): ToolSuccess<Data> {
  for (const object of objects) Object.freeze(object);
  return Object.freeze({ success: true, data, execution_time_ms: now() - started });
}

/** The kind of a value that is not JSON data, for a message: `a Map`, `a Uint8Array`, `an instance of Point`. */
function kindOf(value: object): string {
  const tag = Object.prototype.toString.call(value).slice(8, -1);
  if (tag !== 'Object') return `${/^[AEIO]/.test(tag) ? 'an' : 'a'} ${tag}`;
  const name: unknown = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an object with a prototype of its own';
}

const TO_ISO = ' (return date.toISOString() for a date)';

/** An array index as `Object.keys` gives it. */
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

/**
 * Why a handler's value is not JSON data, as one issue at its JSON Pointer, or undefined
 * when it is; then `objects` holds every object and array in it, for `success` to freeze.
 * JSON data: null, booleans, strings, finite numbers, arrays of JSON data and objects whose
 * prototype is Object.prototype or null with JSON data (or undefined, which JSON leaves
 * out) under their enumerable string keys; the value itself may be undefined (a handler that
 * returns nothing). Anything JSON would change (a Map or Set becomes `{}`, a Date a string,
 * NaN null) or cannot carry (a cycle, a BigInt, a function) is an issue. May throw (a getter
 * that throws, a revoked proxy): the caller turns that into TOOL_FAILED.
 */
export function jsonIssue(value: unknown, objects: object[]): ToolResultIssue | undefined {
  // 1: on the path from the root (a cycle if met again); 2: checked (met again, it is shared, not a cycle).
  const states = new Map<object, 1 | 2>();
  const visit = (item: unknown, inArray: boolean): ToolResultIssue | undefined => {
    switch (typeof item) {
      case 'string':
      case 'boolean':
        return undefined;
      case 'number':
        return Number.isFinite(item) ? undefined : { path: '', message: `is ${String(item)}, which JSON cannot carry (it would be null)` };
      case 'undefined':
        return inArray ? { path: '', message: 'is undefined, which JSON cannot carry in an array (it would be null)' } : undefined;
      case 'object':
        break;
      default:
        return { path: '', message: `is a ${typeof item}, not JSON data` };
    }
    if (item === null) return undefined;
    const state = states.get(item);
    if (state === 2) return undefined;
    if (state === 1) return { path: '', message: 'refers back to an object that contains it (a cycle), which JSON cannot carry' };
    const array = Array.isArray(item);
    if (!array && !hasPlainPrototype(item)) {
      return { path: '', message: `is ${kindOf(item)}, not JSON data${item instanceof Date ? TO_ISO : ''}` };
    }
    states.set(item, 1);
    const keys = Object.keys(item);
    for (const key of keys) {
      const issue = visit((item as Record<string, unknown>)[key], array);
      if (issue !== undefined) return { path: `/${escapePointer(key)}${issue.path}`, message: issue.message };
    }
    if (array) {
      // Index keys come first, in order, then named ones: a named key is last if there is one.
      // JSON leaves a named property out (a count alone took one for a hole, or let one hide a hole).
      const named = keys.length > 0 && !ARRAY_INDEX.test(keys[keys.length - 1] as string) ? keys.find((key) => !ARRAY_INDEX.test(key)) : undefined;
      if (named !== undefined) return { path: `/${escapePointer(named)}`, message: 'is a named property of an array, which JSON leaves out' };
      // An array's holes are not among its keys.
      if (keys.length !== (item as unknown[]).length) return { path: '', message: 'has holes, which JSON cannot carry (they would be null)' };
    }
    states.set(item, 2);
    objects.push(item);
    return undefined;
  };
  return visit(value, false);
}
