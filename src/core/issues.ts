import type { z } from 'zod';

/** One validation problem: a zod issue with its path also formatted as a string. */
export interface RegistryIssue {
  readonly code: string;
  readonly message: string;
  /** The path as zod gives it: `['tools', 3, 'spec', 'version']`. */
  readonly path: readonly (string | number)[];
  /** The same path as text: `tools[3].spec.version` (empty for the root). */
  readonly pathText: string;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `['tools', 3, 'spec']` -> `tools[3].spec`; odd keys are quoted: `a["b c"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else if (typeof key === 'string' && IDENTIFIER.test(key)) text += text === '' ? key : `.${key}`;
    else text += `[${JSON.stringify(String(key))}]`;
  }
  return text;
}

/** A short, printable rendering of an offending value for error messages. */
export function previewValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return value.toString();
  if (value instanceof Date) return `a Date (${Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString()})`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object' && value !== null) {
    const proto = Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null;
    const name = proto?.constructor?.name;
    return proto === null || proto === Object.prototype ? 'an object' : `an instance of ${name ?? 'a class'}`;
  }
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(value, key)) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** Turns zod issues into registry issues, paths prefixed (e.g. with `tools[3]`). */
export function toRegistryIssues(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly (string | number)[] = [],
): RegistryIssue[] {
  return issues.map((issue) => {
    const path = [...prefix, ...issue.path.map((key) => (typeof key === 'symbol' ? key.toString() : key))];
    return Object.freeze({ code: issue.code, message: issue.message, path: Object.freeze(path), pathText: formatPath(path) });
  });
}

/**
 * The issues an error lists at most (`context.issues`); its message counts the rest. 300,000
 * `{}`s in a 1 MiB batch were 900,000 issues: 10 s of checking and a 200 MB answer.
 */
export const MAX_LISTED_ISSUES = 100;

/**
 * One line per issue: `tool_name: must match ... (got "a b")`. The value is looked up in
 * the input so the message says what was wrong and with what value.
 */
export function describeIssues(issues: readonly RegistryIssue[], input: unknown): string {
  const shown = issues.slice(0, 5).map((issue) => {
    const where = issue.pathText === '' ? '(root)' : issue.pathText;
    const missing = issue.code === 'unrecognized_keys' || issue.code === 'custom';
    const got = missing ? '' : ` (got ${previewValue(valueAt(input, issue.path))})`;
    return `${where}: ${issue.message}${got}`;
  });
  if (issues.length > shown.length) shown.push(`and ${issues.length - shown.length} more`);
  return shown.join('; ');
}
