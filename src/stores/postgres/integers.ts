// node-postgres returns bigint (int8) and count(*) as strings, because they may not fit a
// JavaScript number. Every such value the store reads goes through here.

/** A bigint/count column as a number; throws when it is not a safe integer. */
export function safeInteger(value: unknown, what: string): number {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number)) {
    throw new RangeError(`${what}: expected an integer within ±2^53-1 from PostgreSQL, got ${JSON.stringify(value)}`);
  }
  return number;
}
