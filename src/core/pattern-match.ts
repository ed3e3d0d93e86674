// Testing a schema's `pattern` (or a `patternProperties` name) against a value, for the
// comparison of two schemas. Both come from a spec anyone with write access can send, and a
// backtracking pattern (`^(a+)+$` against 40 a's and a b) runs for hours and holds the
// process (a server's event loop with it). Every test is bounded: a pattern whose shape bounds
// its backtracking runs directly on a value short enough; any other runs in a reused `node:vm`
// context with a timeout, which V8 interrupts even inside a regular expression. A comparison
// has PATTERN_BUDGET_MS for all its tests; past it, a test is `undefined` (cannot tell), so the
// difference it decides is undecidable (docs/versions.md, "What is undecidable").
import { Script, createContext } from 'node:vm';

/** The time one verdict (`compareSchemas`, `compareToolSchemas`, a batch's: `PatternBudget`) may spend testing patterns, in total. */
export const PATTERN_BUDGET_MS = 250;

/**
 * The most backtracking steps a direct test may take, by `testsDirectly`' bound (about 10 ns
 * each here: 2.6 ms), and the longest value tested directly whatever the bound says.
 */
const DIRECT_STEPS = 2 ** 18;
const DIRECT_MAX_LENGTH = 4096;

/**
 * What bounds a pattern's backtracking when it has no backreference, no lookaround and no
 * group quantified over a body that can match in more than one way: its variable quantifiers
 * (`*`, `+`, `?`, `{n,}`, `{n,m}`, and such a group's), the product of its alternations'
 * branch counts, and whether it is anchored at the start (one start position).
 */
export interface Shape {
  readonly quantifiers: number;
  readonly branches: number;
  readonly anchored: boolean;
}

export interface Compiled {
  readonly regexp: RegExp;
  /** `null`: nothing bounds its backtracking (a quantified group over `a+`, `a|b`; `\1`; a lookaround). */
  readonly shape: Shape | null;
}

const compiled = new Map<string, Compiled | null>();
// Kept: at most COMPILED_LIMIT patterns and COMPILED_CHARS of their text, then all dropped. A
// pattern may be as long as a request body (1 MiB): by count alone, a client's 1,000 distinct
// ones kept 2 GB (the text and the RegExp) for the process's life.
const COMPILED_LIMIT = 1000;
const COMPILED_CHARS = 4 * 1024 * 1024;
let compiledChars = 0;

/** A pattern compiled as ajv compiles it (`u` flag) with its `Shape`; null when it does not compile. */
export function compiledOf(pattern: string): Compiled | null {
  let entry = compiled.get(pattern);
  if (entry === undefined) {
    try {
      entry = { regexp: new RegExp(pattern, 'u'), shape: shapeOf(pattern) };
    } catch {
      entry = null;
    }
    if (compiled.size >= COMPILED_LIMIT || compiledChars + pattern.length > COMPILED_CHARS) {
      compiled.clear();
      compiledChars = 0;
    }
    compiled.set(pattern, entry);
    compiledChars += pattern.length;
  }
  return entry;
}

/** A `pattern` as ajv compiles it (`u` flag), or null when it does not compile. */
export function compilePattern(pattern: string): RegExp | null {
  return compiledOf(pattern)?.regexp ?? null;
}

interface Group {
  /** The quantifiers before it opened. */
  readonly before: number;
  branches: number;
  /** Whether its body can match in more than one way. */
  varies: boolean;
  /** Whether it holds a group. */
  nested: boolean;
  /** Where its body starts in the pattern. */
  readonly body: number;
}

/** One atom of a group's body with its quantifier: `a`, `\\d+`, `[a-z]{1,3}`, `.*?`. */
const ATOM = /^(\\(?:[pPu]\{[^}]*\}|u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|c[A-Za-z]|[^])|\[(?:\\[^]|[^\]\\])*\]|[^\\[(){}|*+?])([*+?]|\{\d+(?:,\d*)?\})?\??/u;

interface UnicodePatterns {
  /** One character, or an escaped one that is not a letter or digit (`\.`, `\-`): a literal. */
  readonly literalAtom: RegExp;
  /** What may start a group's name (`(?<name>`). */
  readonly groupNameStart: RegExp;
}
let unicode: UnicodePatterns | undefined;

/**
 * Made at first use, with `new RegExp`: V8 builds a `\p{...}` literal's sets when it parses the
 * module, in every process that loads the core, though few check a schema's patterns
 * (search/tokens.ts does the same; docs/testing.md).
 */
function unicodePatterns(): UnicodePatterns {
  unicode ??= {
    literalAtom: new RegExp(String.raw`^(?:[^\\.^$]|\\[^\p{L}\p{N}])$`, 'u'),
    groupNameStart: new RegExp(String.raw`[\p{L}_$]`, 'u'),
  };
  return unicode;
}

/**
 * Whether a body (no group, no `|`) starts with one literal character, unquantified, that no
 * other atom of it matches: then every such character starts an iteration, and the
 * iterations of a quantified group over it split a value one way only.
 */
function delimited(body: string): boolean {
  const atoms: { text: string; quantified: boolean }[] = [];
  for (let rest = body; rest !== ''; ) {
    const atom = ATOM.exec(rest);
    if (atom === null) return false;
    atoms.push({ text: atom[1] as string, quantified: atom[2] !== undefined });
    rest = rest.slice(atom[0].length);
  }
  const [first, ...others] = atoms;
  if (first === undefined || first.quantified || !unicodePatterns().literalAtom.test(first.text)) return false;
  const literal = [...first.text].at(-1) as string;
  // Each atom alone, anchored, tested on the one character: exact, and nothing to backtrack.
  return others.every((atom) => !new RegExp(`^(?:${atom.text})$`, 'u').test(literal));
}

/** The `Shape` of a pattern, or null (see `Compiled.shape`); anything this reading does not know is null. */
function shapeOf(pattern: string): Shape | null {
  let quantifiers = 0;
  // Per open group: the quantifiers before it, its branch count, and whether its body can match in more than one way.
  // `branches`: the product of the closed groups' branch counts.
  const groups: Group[] = [{ before: 0, branches: 1, varies: false, nested: false, body: 0 }];
  let branches = 1;
  let afterQuantifier = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const quantifierBefore = afterQuantifier;
    afterQuantifier = false;
    const group = groups.at(-1) as Group;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined || /[1-9k]/.test(next)) return null;
      i++;
      if ((next === 'p' || next === 'P' || next === 'u') && pattern[i + 1] === '{') {
        i = pattern.indexOf('}', i);
        if (i === -1) return null;
      }
    } else if (c === '[') {
      for (i++; i < pattern.length && pattern[i] !== ']'; i++) if (pattern[i] === '\\') i++;
    } else if (c === '(') {
      group.nested = true;
      if (pattern[i + 1] === '?') {
        // `(?:` and `(?<name>`; a lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) is not read.
        if (pattern[i + 2] === ':') i += 2;
        else if (pattern[i + 2] === '<' && unicodePatterns().groupNameStart.test(pattern[i + 3] ?? '')) i = pattern.indexOf('>', i);
        else return null;
        if (i === -1) return null;
      }
      groups.push({ before: quantifiers, branches: 1, varies: false, nested: false, body: i + 1 });
    } else if (c === ')') {
      if (groups.length === 1) return null;
      groups.pop();
      branches *= group.branches;
      const varies = group.varies || group.branches > 1 || quantifiers > group.before;
      (groups.at(-1) as Group).varies ||= varies;
      // `(a+)+`, `(a|b)*`: the ways to split a value between the iterations multiply, unless
      // each iteration starts with a character nothing else in it matches and has one way to
      // reach the next (`(-[a-z]+)*`; `(-a*a*)*` splits each iteration's a's many ways).
      const quantified = /[*+?{]/.test(pattern[i + 1] ?? '');
      if (varies && quantified && (group.nested || group.branches > 1 || quantifiers - group.before > 1 || !delimited(pattern.slice(group.body, i)))) return null;
    } else if (c === '|') {
      group.branches++;
    } else if (c === '*' || c === '+' || c === '?') {
      // `*?`, `+?`, `??`, `{n,m}?`: the lazy form of the quantifier before, not another one.
      if (!(c === '?' && quantifierBefore)) quantifiers++;
      afterQuantifier = true;
    } else if (c === '{') {
      const bounds = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (bounds === null) return null;
      if (bounds[2] !== undefined && bounds[3] !== bounds[1]) quantifiers++;
      i += bounds[0].length - 1;
      afterQuantifier = true;
    }
  }
  const root = groups[0] as { branches: number };
  if (groups.length !== 1) return null;
  // The product of every group's branch count: exact for alternations one after another, more than enough for nested ones.
  return { quantifiers, branches: branches * root.branches, anchored: pattern.startsWith('^') && root.branches === 1 };
}

/**
 * Whether a test of `pattern` on a value of `length` characters runs directly: its shape
 * bounds the backtracking steps at (length + 1) per quantifier, per start position unless
 * anchored, times the branches, and that is at most DIRECT_STEPS.
 */
export function testsDirectly(pattern: string, length: number): boolean {
  const entry = compiledOf(pattern);
  return entry !== null && direct(entry.shape, length);
}

function direct(shape: Shape | null, length: number): boolean {
  return directSteps(shape, length) <= DIRECT_STEPS;
}

/** The bound on a direct test's backtracking steps (see `testsDirectly`); Infinity when it does not run directly. */
export function directSteps(shape: Shape | null, length: number): number {
  if (shape === null || length > DIRECT_MAX_LENGTH) return Infinity;
  let steps = shape.branches;
  for (let i = shape.anchored ? 0 : -1; i < shape.quantifiers && steps <= DIRECT_STEPS; i++) steps *= length + 1;
  return steps <= DIRECT_STEPS ? steps : Infinity;
}

// One context for every test (the runtime's too): creating one costs about a millisecond,
// running in it with a timeout about 0.1 ms (a watchdog thread per run), so values known
// together run in one.
let context: object | undefined;

/** The `node:vm` context bounded tests run in. */
export function patternContext(): object {
  return (context ??= createContext(Object.create(null)));
}
let batch: Script | undefined;

/**
 * The time one verdict has for its pattern tests: one comparison's, or a batch's (a
 * registerMany, a merge import, a checkSpecs), whose comparisons share it: else N specs in
 * one request would hold the process N times as long.
 */
export class PatternBudget {
  spent = 0;
  /** The first pattern that could not be tested in time. */
  unchecked: string | undefined;
  /** What the vm answered, by pattern and value. */
  readonly known = new Map<string, Map<string, boolean>>();
}

/** The budget of the comparison running now (comparisons are synchronous: one at a time). */
let current = new PatternBudget();

/** Runs a (synchronous) comparison within `budget`. */
export function withinBudget<T>(budget: PatternBudget, compare: () => T): T {
  const outer = current;
  current = budget;
  try {
    return compare();
  } finally {
    current = outer;
  }
}

/**
 * Tests `values` in the vm, in one run, within what is left of the budget; each answer is
 * kept in `known` as it comes (a run stopped by its timeout keeps those before).
 */
function runInVm(pattern: string, regexp: RegExp, values: readonly string[]): void {
  const budget = current;
  let answers = budget.known.get(pattern);
  if (answers === undefined) budget.known.set(pattern, (answers = new Map()));
  const context = patternContext();
  batch ??= new Script('for (const value of values) answers.set(value, regexp.test(value));');
  const sandbox = context as { regexp?: RegExp; values?: readonly string[]; answers?: Map<string, boolean> };
  Object.assign(sandbox, { regexp, values, answers });
  const start = performance.now();
  try {
    batch.runInContext(context, { timeout: Math.max(1, Math.ceil(PATTERN_BUDGET_MS - budget.spent)) });
  } catch {
    // Out of time (ERR_SCRIPT_EXECUTION_TIMEOUT), or out of stack in the matcher: cannot tell.
    budget.spent = PATTERN_BUDGET_MS;
    budget.unchecked ??= pattern;
  } finally {
    Object.assign(sandbox, { regexp: undefined, values: undefined, answers: undefined });
    budget.spent += performance.now() - start;
  }
}

/**
 * Tests in one vm run the values of a list (an `enum`, property names) that `matchPattern`
 * would send to the vm one by one: a verdict then pays one run per list, not per value.
 */
export function prefetchPattern(pattern: string, values: readonly unknown[]): void {
  const entry = compiledOf(pattern);
  if (entry === null || current.spent >= PATTERN_BUDGET_MS) return;
  const answers = current.known.get(pattern);
  const left = values.filter((value): value is string => typeof value === 'string' && !answers?.has(value) && !direct(entry.shape, value.length));
  if (left.length > 1) runInVm(pattern, entry.regexp, left);
}

/**
 * Whether `value` matches `pattern` as ajv tests it (`u` flag); `undefined` when the pattern
 * does not compile or could not be tested within what is left of the budget.
 */
export function matchPattern(pattern: string, value: string): boolean | undefined {
  const entry = compiledOf(pattern);
  if (entry === null) return undefined;
  const budget = current;
  const answer = budget.known.size === 0 ? undefined : budget.known.get(pattern)?.get(value);
  if (answer !== undefined) return answer;
  if (budget.spent >= PATTERN_BUDGET_MS) {
    budget.unchecked ??= pattern;
    return undefined;
  }
  if (direct(entry.shape, value.length)) {
    const start = performance.now();
    try {
      return entry.regexp.test(value);
    } finally {
      budget.spent += performance.now() - start;
    }
  }
  runInVm(pattern, entry.regexp, [value]);
  return budget.known.get(pattern)?.get(value);
}
