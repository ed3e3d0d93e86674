import type { Deprecation } from '../core/contracts.js';
import { performance } from 'node:perf_hooks';

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
  /** The handler's value, deeply frozen in place. */
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

export function success<Data>(data: Data, started: number): ToolSuccess<Data> {
  return Object.freeze({ success: true, data: freezeValue(data), execution_time_ms: now() - started });
}

/**
 * Freezes a handler's value and everything reachable from it. Unlike the core's JSON-only
 * deepFreeze it tolerates what handlers return: cycles (a WeakSet of visited objects) and
 * typed arrays (which cannot be frozen and are left as they are).
 */
function freezeValue<T>(value: T): T {
  if (typeof value === 'object' && value !== null) freezeObject(value, new WeakSet());
  return value;
}

function freezeObject(value: object, seen: WeakSet<object>): void {
  if (seen.has(value) || ArrayBuffer.isView(value)) return;
  seen.add(value);
  Object.freeze(value);
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null) freezeObject(item, seen);
  }
}
