-- tool-registry SQLite schema, version 0003: a change log a cached reader can trust.
-- 1. Every log entry carries a random token, and the database a random generation: a reader
--    remembers the revision, token and generation it has seen, so a log it did not follow
--    (a backup restored onto the live file, another file copied in) is noticed even when its
--    newest revision is the same number.
-- 2. Every hand edit that changes what a tool shows is logged, also INSERT OR REPLACE into
--    tool_specs (its implied delete fires no trigger unless recursive_triggers is on).
-- 3. The log keeps at least one change per tool (and at least 10,000 changes).
-- Leave tool_changes and tool_changes_generation alone.

DROP TRIGGER tool_registrations_logged_insert;
DROP TRIGGER tool_registrations_logged_update;
DROP TRIGGER tool_registrations_logged_rename;
DROP TRIGGER tool_registrations_logged_delete;
DROP TRIGGER tool_specs_logged_update;
DROP TRIGGER tool_specs_logged_delete;
DROP TRIGGER tool_changes_pruned;
DROP TRIGGER tool_changes_kept;
DROP TRIGGER tool_changes_frozen;

-- The log, as in 0002, plus the token; existing entries are kept with fresh tokens.
CREATE TABLE tool_changes_0003 (
  revision  INTEGER NOT NULL PRIMARY KEY,
  tool_name TEXT NOT NULL,
  token     TEXT NOT NULL DEFAULT (lower(hex(randomblob(8))))
) STRICT;
INSERT INTO tool_changes_0003 (revision, tool_name) SELECT revision, tool_name FROM tool_changes;
DROP TABLE tool_changes;
ALTER TABLE tool_changes_0003 RENAME TO tool_changes;

-- One row: chosen when this database's log began; a copy of the file keeps it.
CREATE TABLE tool_changes_generation (
  generation TEXT NOT NULL
) STRICT;
INSERT INTO tool_changes_generation (generation) VALUES (lower(hex(randomblob(16))));

CREATE TRIGGER tool_registrations_logged_insert AFTER INSERT ON tool_registrations
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (NEW.tool_name);
END;

-- A row renamed by hand also changes the old name.
CREATE TRIGGER tool_registrations_logged_update AFTER UPDATE ON tool_registrations
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (NEW.tool_name);
  INSERT INTO tool_changes (tool_name) SELECT OLD.tool_name WHERE OLD.tool_name IS NOT NEW.tool_name;
END;

CREATE TRIGGER tool_registrations_logged_delete AFTER DELETE ON tool_registrations
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (OLD.tool_name);
END;

-- A spec row added (or replaced) changes what a tool shows when its registration points at
-- it. The store adds a new spec row before pointing at it, so its own inserts log nothing here.
CREATE TRIGGER tool_specs_logged_insert AFTER INSERT ON tool_specs
WHEN EXISTS (SELECT 1 FROM tool_registrations WHERE tool_name = NEW.tool_name AND fingerprint = NEW.fingerprint)
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (NEW.tool_name);
END;

-- The store never updates or deletes spec rows; by hand, that changes what a tool shows.
CREATE TRIGGER tool_specs_logged_update AFTER UPDATE ON tool_specs
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (OLD.tool_name);
  INSERT INTO tool_changes (tool_name) SELECT NEW.tool_name WHERE NEW.tool_name IS NOT OLD.tool_name;
END;

CREATE TRIGGER tool_specs_logged_delete AFTER DELETE ON tool_specs
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (OLD.tool_name);
END;

-- Bounded: every 1,000th change drops the entries older than the last 10,000 changes or,
-- when there are more tools than that, the last one change per tool: a cache can then catch
-- up on a change of every tool (a bulk import) instead of reloading.
CREATE TRIGGER tool_changes_pruned AFTER INSERT ON tool_changes
WHEN NEW.revision % 1000 = 0
BEGIN
  DELETE FROM tool_changes
  WHERE revision <= NEW.revision - max(10000, (SELECT count(*) FROM tool_registrations));
END;

-- Only pruning may delete, and nothing may rewrite an entry: a lost or renumbered recent
-- entry would let a cached reader miss a change.
CREATE TRIGGER tool_changes_kept BEFORE DELETE ON tool_changes
WHEN OLD.revision > (SELECT max(revision) FROM tool_changes) - 10000
BEGIN
  SELECT RAISE(ABORT, 'tool_changes keeps the last 10000 changes for the read cache; they cannot be deleted');
END;

CREATE TRIGGER tool_changes_frozen BEFORE UPDATE ON tool_changes
BEGIN
  SELECT RAISE(ABORT, 'tool_changes entries cannot be changed');
END;
