// The audit log's `since` (GET /v1/calls, `tool-registry calls --since`): one reading of it for both.
// Outside core/ so the command's usage errors do not load the core chunk (rolldown.config.mjs).

/** An ISO 8601 date, or date-time with an optional offset (refused without one: readSince). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Whether the `YYYY-MM-DD` that `text` starts with is a day the calendar has (Date.parse reads 2026-02-30 as March 2). */
function dayExists(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year); // Date.UTC reads years 0-99 as 1900-1999
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** A date-time (not a date alone) without `Z` or `+hh:mm`: `Date.parse` reads it in the machine's local time zone. */
const WITHOUT_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/i;

/**
 * `since` as the store compares it (UTC, `toISOString`), or why it is refused: not an instant, a
 * day the calendar lacks, or a date-time without a UTC offset (read in local time, the same
 * command meant different instants on two machines). A date alone is midnight UTC.
 */
export function readSince(text: string): { readonly instant: string } | { readonly error: string } {
  const shown = JSON.stringify(text);
  if (WITHOUT_OFFSET.test(text)) return { error: `${shown} has no UTC offset (it would be read in this machine's time zone); add Z or +hh:mm, such as ${text}Z` };
  const time = ISO_INSTANT.test(text) && dayExists(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time)) return { error: `expected an ISO 8601 date or date-time with a UTC offset, such as 2026-11-28 or 2026-11-28T09:00:00Z, got ${shown}` };
  return { instant: new Date(time).toISOString() };
}

/** `since` as the store compares it, or undefined when `readSince` refuses it. */
export function sinceInstant(text: string): string | undefined {
  const read = readSince(text);
  return 'instant' in read ? read.instant : undefined;
}
