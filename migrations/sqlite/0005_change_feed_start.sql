-- tool-registry SQLite schema, version 0005: the change feed without an index of its own.
--
-- Every write paid for the partial index tool_changes_events (0004): one more b-tree to
-- update and one more page to commit per change. It existed only so the feed could skip the
-- log entries written before 0004 (action NULL, for the read cache only), which sit at the
-- start of the log: on a file migrated with many tools, up to one per tool. Every trigger of
-- 0004 writes an action, so no such entry is logged any more; where they end is recorded
-- once, here, and the feed reads the log by revision (its primary key) from there.
--
-- tool_changes_feed_start: one row. `after_revision` is the revision the change feed starts
-- after: no event (an entry with an action) has a revision at or below it; the entries there,
-- if pruning left any, are the ones logged before 0004. 0 on a database created with this
-- migration. The feed's queries start reading the log after it, so an operator must leave
-- it alone: a larger value would hide events from every reader of the feed (the triggers
-- below refuse to change or delete it). Readable by the Debian 12 sqlite3 shell (3.40).

CREATE TABLE tool_changes_feed_start (
  after_revision INTEGER NOT NULL CHECK (after_revision >= 0)
) STRICT;

-- Computed while the index still exists, so it reads one index entry, not the log: the
-- first event's revision less one or, when there is no event, the newest entry's revision.
INSERT INTO tool_changes_feed_start (after_revision)
SELECT coalesce(
  (SELECT min(revision) FROM tool_changes WHERE action IS NOT NULL) - 1,
  (SELECT max(revision) FROM tool_changes),
  0
);

CREATE TRIGGER tool_changes_feed_start_frozen BEFORE UPDATE ON tool_changes_feed_start
BEGIN
  SELECT RAISE(ABORT, 'tool_changes_feed_start is where the change feed starts; it cannot be changed');
END;

CREATE TRIGGER tool_changes_feed_start_kept BEFORE DELETE ON tool_changes_feed_start
BEGIN
  SELECT RAISE(ABORT, 'tool_changes_feed_start is where the change feed starts; it cannot be deleted');
END;

-- IF EXISTS: an operator may have dropped it by hand already.
DROP INDEX IF EXISTS tool_changes_events;
