-- tool-registry SQLite schema, version 0002: a change log for the read cache.
-- Triggers log the name of every tool whose current registration (or spec row) changes, so
-- a write from any connection is logged: the store, another process, the sqlite3 shell.
-- A cached reader asks for the names logged after the revision it holds and reloads only
-- those. The log keeps the last 10,000 changes or more; a reader further behind reloads
-- everything. Leave this table alone: recent entries cannot be deleted or changed.

-- One row per change; `revision` only grows (the newest row is never deleted), so the
-- largest revision is the registry's revision.
CREATE TABLE tool_changes (
  revision  INTEGER NOT NULL PRIMARY KEY,
  tool_name TEXT NOT NULL
) STRICT;

CREATE TRIGGER tool_registrations_logged_insert AFTER INSERT ON tool_registrations
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (NEW.tool_name);
END;

CREATE TRIGGER tool_registrations_logged_update AFTER UPDATE ON tool_registrations
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (NEW.tool_name);
END;

-- A row renamed by hand also changes the old name.
CREATE TRIGGER tool_registrations_logged_rename AFTER UPDATE OF tool_name ON tool_registrations
WHEN OLD.tool_name IS NOT NEW.tool_name
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (OLD.tool_name);
END;

CREATE TRIGGER tool_registrations_logged_delete AFTER DELETE ON tool_registrations
BEGIN
  INSERT INTO tool_changes (tool_name) VALUES (OLD.tool_name);
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

-- Bounded: every 1,000th change drops the entries 10,000 or more changes old.
CREATE TRIGGER tool_changes_pruned AFTER INSERT ON tool_changes
WHEN NEW.revision % 1000 = 0
BEGIN
  DELETE FROM tool_changes WHERE revision <= NEW.revision - 10000;
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
