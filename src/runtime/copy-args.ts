// The per-call copy of a tool's arguments: plain JSON is copied directly, anything else
// goes through structuredClone; a tool called again and again with the same keys (what a
// model sends) gets a copier specialised to those keys.
import { hasPlainPrototype } from '../core/canonical.js';

const NOT_JSON = Symbol('not JSON');

/**
 * A private copy of `value`, so defaults can be filled in and no two calls share an
 * object. Plain JSON is copied directly; anything else goes through structuredClone (which
 * throws for functions and symbols).
 */
function copyArgs(value: unknown): unknown {
  const copy = copyJson(value, 0);
  return copy === NOT_JSON ? structuredClone(value) : copy;
}

function isNotJsonPrimitive(value: unknown): boolean {
  return typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint';
}

function copyJson(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return isNotJsonPrimitive(value) ? NOT_JSON : value;
  if (depth > 256) return NOT_JSON;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = copyJson(value[i], depth + 1);
      if (item === NOT_JSON) return NOT_JSON;
      out[i] = item;
    }
    return out;
  }
  if (!hasPlainPrototype(value)) return NOT_JSON;
  // Built key by key: a spread copy that then gets a default added is ten times slower to validate (V8).
  const out: Record<string, unknown> = {};
  for (const key in value) {
    let item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' || isNotJsonPrimitive(item)) {
      item = copyJson(item, depth + 1);
      if (item === NOT_JSON) return NOT_JSON;
    }
    // defineProperty keeps a key named __proto__ as data, as JSON.parse would.
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}

type ShapeCopy = (value: object) => unknown;

/** How many copiers one tool may generate: a caller whose keys keep changing gets the generic copy. */
const MAX_SHAPES = 16;
/** Only small objects with short keys are worth a generated copier. */
const MAX_KEYS = 32;
const MAX_KEY_LENGTH = 64;

/**
 * The argument copier of one tool. The generic copy stores key by key through one
 * megamorphic keyed store (about 15 ns a property in V8); an object literal written for
 * the exact keys costs about 1 ns a property. So the copier remembers the last key list
 * (in `for...in` order, which is what the generic copy walks) and, once the same list came
 * twice in a row, generates `(v) => ({ "k1": v["k1"], ... })` for it, with the same checks
 * as the generic copy (nested values go through it). Keys are embedded with JSON.stringify
 * (a JSON string is a valid JS string literal); a key named `__proto__` is never
 * specialised (in a literal it would set the prototype). At most MAX_SHAPES copiers are
 * generated per tool, so changing keys cannot make it compile without end.
 */
export class ArgsCopier {
  #keys: readonly string[] = [];
  #copy: ShapeCopy | undefined;
  #candidate: readonly string[] | undefined;
  #built = 0;

  copy(value: unknown): unknown {
    if (typeof value === 'object' && value !== null && !Array.isArray(value) && hasPlainPrototype(value)) {
      const copy = this.#copy;
      if (copy !== undefined && sameKeys(value, this.#keys)) {
        const out = copy(value);
        return out === NOT_JSON ? structuredClone(value) : out;
      }
      if (this.#built < MAX_SHAPES) this.#learn(value);
    }
    return copyArgs(value);
  }

  #learn(value: object): void {
    const keys: string[] = [];
    for (const key in value) {
      if (keys.length === MAX_KEYS || key.length > MAX_KEY_LENGTH || key === '__proto__') return;
      keys.push(key);
    }
    const candidate = this.#candidate;
    if (candidate === undefined || candidate.length !== keys.length || !candidate.every((key, i) => key === keys[i])) {
      this.#candidate = keys;
      return;
    }
    this.#candidate = undefined;
    this.#built++;
    this.#keys = keys;
    this.#copy = generateCopy(keys);
  }
}

/** Whether `for...in` over `value` yields exactly `keys`, in order (no allocation). */
function sameKeys(value: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in value) {
    if (key !== keys[i]) return false;
    i++;
  }
  return i === keys.length;
}

function generateCopy(keys: readonly string[]): ShapeCopy {
  const reads = keys.map((key, i) =>
    `let a${i} = v[${JSON.stringify(key)}];\n` +
    `if (typeof a${i} === 'object' || typeof a${i} === 'function' || typeof a${i} === 'symbol' || typeof a${i} === 'bigint') { a${i} = deep(a${i}, 1); if (a${i} === NOT_JSON) return NOT_JSON; }`,
  );
  const literal = keys.map((key, i) => `${JSON.stringify(key)}: a${i}`).join(', ');
  // Keys are embedded as JSON string literals (see ArgsCopier); values are only ever read.
  const make = new Function('deep', 'NOT_JSON', `return function copyShape(v) {\n${reads.join('\n')}\nreturn { ${literal} };\n};`) as (
    deep: typeof copyJson,
    notJson: typeof NOT_JSON,
  ) => ShapeCopy;
  return make(copyJson, NOT_JSON);
}
