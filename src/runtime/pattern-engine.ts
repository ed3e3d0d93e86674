// The regular expression engine of the runtime's validators (ajv's `code.regExp`): a caller's
// arguments (a model's, any MCP client's) are checked against a tool's `pattern`s on the
// calling thread, and a backtracking pattern (`^(a+)+$`, or the common `^(\w+\s?)+$`) against
// 40 a's and a `b` ran for hours, holding the process (a server's event loop with every other
// client). Every check now has PATTERN_CHECK_MS for its pattern tests, in total:
// - a check whose schema has a pattern whose shape does not bound its backtracking
//   (core/pattern-match.ts) runs whole in one `node:vm` run with that timeout, which V8
//   interrupts even inside a regular expression (one watchdog per check, not per test);
// - any other tests directly, each charged its shape's step bound, or its measured time when
//   that bound is large; a value too long for its bound is tested in the vm with what is left.
// Past the budget the check answers `unchecked` (the pattern and value), never "valid".
import { Script } from 'node:vm';
import { compiledOf, directSteps, patternContext } from '../core/pattern-match.js';
import type { Shape } from '../core/pattern-match.js';

/** The time one check (a call's arguments, or a result) may spend testing patterns, in total. */
export const PATTERN_CHECK_MS = 100;

/** About 10 ns per backtracking step here: a direct test is charged its bound at this rate... */
const MS_PER_STEP = 1e-5;
/** ...up to this bound (10 µs); a test that may take longer is timed (performance.now costs about 80 ns). */
const TIMED_STEPS = 1000;

/** A test the budget left undecided: the pattern, and the value (undefined: the check itself ran out of time). */
export interface Unchecked {
  readonly pattern: string | undefined;
  readonly value: string | undefined;
}

// The check running now (checks are synchronous: one at a time).
let spent = 0;
/** Whether the check runs whole in the vm, whose timeout bounds every test in it. */
let whole = false;
/** The test running in a whole check (pattern and value): what its timeout interrupted. */
let testing: string | undefined;
let testingValue: string | undefined;
let unchecked: Unchecked | undefined;
/** What ajv's compile running now met: no pattern, only patterns with a shape, or one without. */
let seen: Patterns = 'none';

/** The patterns of a schema: its checks with 'unbounded' run whole in the vm, with 'none' as ajv runs them. */
export type Patterns = 'none' | 'bounded' | 'unbounded';

class BoundedPattern {
  readonly #regexp: RegExp;
  readonly #shape: Shape | null;

  constructor(
    readonly source: string,
    regexp: RegExp,
    shape: Shape | null,
  ) {
    this.#regexp = regexp;
    this.#shape = shape;
  }

  test(value: string): boolean {
    if (whole) {
      testing = this.source;
      testingValue = value;
      const matched = this.#regexp.test(value);
      testing = undefined;
      return matched;
    }
    if (spent >= PATTERN_CHECK_MS) return this.#undecided(value);
    const steps = directSteps(this.#shape, value.length);
    if (steps <= TIMED_STEPS) {
      spent += steps * MS_PER_STEP;
      return this.#regexp.test(value);
    }
    if (steps !== Infinity) {
      const start = performance.now();
      try {
        return this.#regexp.test(value);
      } finally {
        spent += performance.now() - start;
      }
    }
    const answer = runBounded(testScript, { regexp: this.#regexp, value });
    return typeof answer === 'boolean' ? answer : this.#undecided(value);
  }

  #undecided(value: string): false {
    unchecked ??= { pattern: this.source, value };
    return false;
  }

  /** ajv keys its compiled patterns by this: the pattern and its flags, as a RegExp shows them. */
  toString(): string {
    return this.#regexp.toString();
  }
}

/**
 * ajv's `code.regExp`. ajv passes `u` (its `unicodeRegExp` default); a pattern that does not
 * compile throws the RegExp's SyntaxError, as ajv's own engine does.
 */
export const boundedRegExp = Object.assign(
  (pattern: string, flags: string): BoundedPattern => {
    const entry = flags === 'u' ? compiledOf(pattern) : null;
    if (entry === null) {
      const regexp = new RegExp(pattern, flags);
      seen = 'unbounded';
      return new BoundedPattern(pattern, regexp, null);
    }
    seen = entry.shape === null || seen === 'unbounded' ? 'unbounded' : 'bounded';
    return new BoundedPattern(pattern, entry.regexp, entry.shape);
  },
  // What ajv's standalone code would call it: the runtime generates none (its validators are compiled in process).
  { code: 'boundedRegExp' },
);

/**
 * Runs ajv's `compile`, telling which patterns the schema has. ajv checks the schema against
 * its meta-schema first, whose patterns (`$id`, `$anchor`) this engine tests too: the compile
 * gets a budget of its own, so what a refused check spent before cannot refuse a valid `$id`
 * (it did: "data/$id must match pattern"), and one it runs out of is said as such.
 */
export function compiling<T>(compile: () => T): { readonly compiled: T; readonly patterns: Patterns } {
  seen = 'none';
  startCheck();
  try {
    const compiled = compile();
    return { compiled, patterns: seen };
  } catch (error) {
    const missed = uncheckedTest();
    if (missed !== undefined) {
      throw new Error(`schema could not be checked against its meta-schema's pattern ${JSON.stringify(missed.pattern)} within ${PATTERN_CHECK_MS} ms`, { cause: error });
    }
    throw error;
  } finally {
    seen = 'none';
    startCheck();
  }
}

const testScript = new Script('regexp.test(value)');
const checkScript = new Script('check()');

/**
 * Runs a script in the vm with what is left of the budget, charging the time it took; the
 * script's value, or undefined when it ran out of time (or of stack in the matcher).
 */
function runBounded(script: Script, sandbox: Record<string, unknown>): unknown {
  const context = patternContext();
  Object.assign(context, sandbox);
  const start = performance.now();
  try {
    return script.runInContext(context, { timeout: Math.max(1, Math.ceil(PATTERN_CHECK_MS - spent)) });
  } catch {
    spent = PATTERN_CHECK_MS;
    return undefined;
  } finally {
    for (const key of Object.keys(sandbox)) (context as Record<string, unknown>)[key] = undefined;
    spent += performance.now() - start;
  }
}

/** Starts a check run directly (a schema whose patterns all have a shape): a budget of its own. */
export function startCheck(): void {
  spent = 0;
  unchecked = undefined;
}

/** The first test of the check run directly that the budget left undecided, if any. */
export function uncheckedTest(): Unchecked | undefined {
  const first = unchecked;
  unchecked = undefined;
  return first;
}

/**
 * Runs one check (a compiled validator on a value) whole in the vm, within PATTERN_CHECK_MS.
 * Its answer, or `Unchecked` when a test (or the check) could not finish in time. A run whose
 * time ran out outside any test (ajv's own work, a garbage collection, a core other processes
 * held: a loaded machine did so about once in 4,000 calls) runs once more, after `reset`
 * (which undoes what the interrupted run did to the value).
 */
export function checkWhole<T>(check: () => T, reset: () => void): { readonly answer: T } | Unchecked {
  let answer: T | undefined;
  let failed: { error: unknown } | undefined;
  const sandbox = {
    check: () => {
      // The check's own error is rethrown below; only the timeout ends the run.
      try {
        answer = check();
      } catch (error) {
        failed = { error };
      }
      return true;
    },
  };
  whole = true;
  try {
    for (let attempt = 1; ; attempt++) {
      spent = 0;
      if (runBounded(checkScript, sandbox) === true) break;
      if (testing !== undefined || attempt === 2) return { pattern: testing, value: testing === undefined ? undefined : testingValue };
      reset();
    }
  } finally {
    whole = false;
    testing = undefined;
    testingValue = undefined;
  }
  if (failed !== undefined) throw failed.error;
  return { answer: answer as T };
}
