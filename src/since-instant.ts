// The audit log's `since` (GET /v1/calls, `tool-registry calls --since`): one reading of it for both.
// Outside core/ so the command's usage errors do not load the core chunk (rolldown.config.mjs).

/** An ISO 8601 date, or date-time with an optional offset. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Whether the `YYYY-MM-DD` that `text` starts with is a day the calendar has (Date.parse reads 2026-02-30 as March 2). */
function dayExists(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year); // Date.UTC reads years 0-99 as 1900-1999
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** `since` as the store compares it (UTC, `toISOString`), or undefined for a text that is no instant or names a day the calendar lacks. */
export function sinceInstant(text: string): string | undefined {
  if (!ISO_INSTANT.test(text) || !dayExists(text)) return undefined;
  const time = Date.parse(text);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}
