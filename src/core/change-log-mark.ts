// Marks of a change-log position, for a watch that must notice when the log it follows was
// replaced under it (a backup restored onto the live SQLite file, a dump restored into the
// PostgreSQL schema): the revision alone cannot tell, since the restored log hands the same
// numbers out again for other changes. A store whose log carries a generation (chosen when
// the database's log began) and a token per entry marks a position with both.

/** The mark of the log position at a revision: the log's generation and the token of the entry there (none at 0). */
export function logMark(generation: string | null | undefined, token: string | null | undefined): string {
  return `${generation ?? ''}/${token ?? ''}`;
}

/**
 * Whether the log no longer holds the position a watch marked at `since`: another generation,
 * or another entry at `since`. An entry the bounded log has trimmed cannot be compared, only
 * the generation (a cursor older than the log is CHANGES_EXPIRED anyway); a cursor beyond the
 * log's head is the core's to find. Without a mark (the watch's first read) nothing is compared.
 */
export function logReplaced(
  mark: string | undefined,
  since: number,
  generation: string | null | undefined,
  sinceToken: string | null | undefined,
): boolean {
  if (mark === undefined) return false;
  if (since > 0 && (sinceToken === null || sinceToken === undefined)) return !mark.startsWith(`${generation ?? ''}/`);
  return mark !== logMark(generation, sinceToken);
}
