// ajv's `uniqueItems` compares every pair of items (deep equality) unless the schema's `items`
// declares scalar types only: `{ type: 'array', uniqueItems: true }` with 30,000 small objects
// (350 KB of arguments, which any model or MCP client may send) held the process 13 s, and a
// 1 MiB body minutes. This one keys each item by its JSON with object keys sorted (deep
// equality ignores their order): one pass over the value. Same errors as ajv's.
import type { FuncKeywordDefinition, SchemaValidateFunction } from 'ajv';

// ajv's deep equality (a CommonJS module: its function is `default`), required on first use as
// ajv itself is (schema-validator.ts).
type DeepEqual = (a: unknown, b: unknown) => boolean;
let deepEqual: DeepEqual | undefined;
// eslint-disable-next-line typescript/no-require-imports -- as in schema-validator.ts
const equal: DeepEqual = (a, b) => (deepEqual ??= (require('ajv/dist/runtime/equal.js') as { default: DeepEqual }).default)(a, b);

class NotJson extends Error {}

/** An item's JSON, object keys sorted; NotJson for what deep equality and JSON would tell apart differently. */
function keyOf(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NotJson();
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(keyOf).join(',')}]`;
  if (typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) throw new NotJson();
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${keyOf(record[key])}`)
    .join(',')}}`;
}

/** The duplicate pair ajv's pairwise loop reports: the last item equal to an earlier one (i), and the last such earlier one (j). */
function duplicateOf(items: readonly unknown[]): [number, number] | undefined {
  const seen = new Map<string, number>();
  let found: [number, number] | undefined;
  try {
    for (let i = 0; i < items.length; i++) {
      const key = keyOf(items[i]);
      const j = seen.get(key);
      if (j !== undefined) found = [i, j];
      seen.set(key, i);
    }
    return found;
  } catch (error) {
    if (!(error instanceof NotJson)) throw error;
    // Not JSON data (a handler's output before its JSON check: a Date, a Map, NaN): ajv's pairwise deep equality.
    for (let i = items.length; i--; ) for (let j = i; j--; ) if (equal(items[i], items[j])) return [i, j];
    return undefined;
  }
}

const validate: SchemaValidateFunction = (schema: boolean, data: unknown[]) => {
  const duplicate = schema ? duplicateOf(data) : undefined;
  if (duplicate === undefined) return true;
  const [i, j] = duplicate;
  validate.errors = [{ keyword: 'uniqueItems', message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`, params: { i, j } }];
  return false;
};

/** ajv's `uniqueItems` keyword, linear in the value's size: replaces the built-in one. */
export const uniqueItems: FuncKeywordDefinition = { keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, validate };
