-- tool-registry SQLite schema, version 0004: the change feed (issue 11) and specs kept as
-- registered.
--
-- tool_specs.spec_json now holds the spec's JSON text as it was registered (the caller's key
-- order, defaults after the given keys); rows written before this migration hold canonical
-- JSON and are returned as they are. The fingerprint is still the SHA-256 of the spec's
-- canonical JSON (keys sorted at every depth), so it is no longer the hash of spec_json
-- itself; `tool-registry verify` recomputes it from the canonical form of spec_json.
--
-- tool_changes becomes the change feed: every entry written from now on says what happened
-- (action), the tool's version after it (for `removed`, the version removed) and when it was
-- committed (at, UTC, from SQLite's clock). The triggers below compute these from the rows,
-- so a change made with the sqlite3 shell is in the feed like the store's own. An entry
-- logged only for the read cache, or written before this migration, has action NULL and is
-- not an event. Readable by the Debian 12 sqlite3 shell (3.40): plain triggers, CASE,
-- strftime.

ALTER TABLE tool_changes ADD COLUMN action TEXT
  CHECK (action IS NULL OR action IN ('added', 'updated', 'enabled', 'disabled', 'removed'));
ALTER TABLE tool_changes ADD COLUMN version TEXT;
ALTER TABLE tool_changes ADD COLUMN at TEXT;

DROP TRIGGER IF EXISTS tool_registrations_logged_insert;
DROP TRIGGER IF EXISTS tool_registrations_logged_update;
DROP TRIGGER IF EXISTS tool_registrations_logged_rename;
DROP TRIGGER IF EXISTS tool_registrations_logged_delete;
DROP TRIGGER IF EXISTS tool_specs_logged_update;
DROP TRIGGER IF EXISTS tool_specs_logged_delete;
-- Created by 0003; replaced below by one that also says what changed.
DROP TRIGGER IF EXISTS tool_specs_logged_insert;

CREATE TRIGGER tool_registrations_logged_insert AFTER INSERT ON tool_registrations
BEGIN
  INSERT INTO tool_changes (tool_name, action, version, at)
  VALUES (
    NEW.tool_name,
    'added',
    (SELECT version FROM tool_specs WHERE tool_name = NEW.tool_name AND fingerprint = NEW.fingerprint),
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  );
END;

-- An update that changes nothing is not a change. A new spec or created_at is `updated`
-- (an import may flip enabled in the same step); enabled alone is `enabled`/`disabled`.
CREATE TRIGGER tool_registrations_logged_update AFTER UPDATE ON tool_registrations
WHEN OLD.tool_name IS NEW.tool_name
  AND (OLD.fingerprint IS NOT NEW.fingerprint OR OLD.created_at IS NOT NEW.created_at OR OLD.enabled IS NOT NEW.enabled)
BEGIN
  INSERT INTO tool_changes (tool_name, action, version, at)
  VALUES (
    NEW.tool_name,
    CASE
      WHEN OLD.fingerprint IS NOT NEW.fingerprint OR OLD.created_at IS NOT NEW.created_at THEN 'updated'
      WHEN NEW.enabled = 1 THEN 'enabled'
      ELSE 'disabled'
    END,
    (SELECT version FROM tool_specs WHERE tool_name = NEW.tool_name AND fingerprint = NEW.fingerprint),
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  );
END;

-- A row renamed by hand: the old name is removed, the new one added.
CREATE TRIGGER tool_registrations_logged_rename AFTER UPDATE OF tool_name ON tool_registrations
WHEN OLD.tool_name IS NOT NEW.tool_name
BEGIN
  INSERT INTO tool_changes (tool_name, action, version, at)
  VALUES (
    OLD.tool_name,
    'removed',
    (SELECT version FROM tool_specs WHERE tool_name = OLD.tool_name AND fingerprint = OLD.fingerprint),
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  );
  INSERT INTO tool_changes (tool_name, action, version, at)
  VALUES (
    NEW.tool_name,
    'added',
    (SELECT version FROM tool_specs WHERE tool_name = NEW.tool_name AND fingerprint = NEW.fingerprint),
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  );
END;

CREATE TRIGGER tool_registrations_logged_delete AFTER DELETE ON tool_registrations
BEGIN
  INSERT INTO tool_changes (tool_name, action, version, at)
  VALUES (
    OLD.tool_name,
    'removed',
    (SELECT version FROM tool_specs WHERE tool_name = OLD.tool_name AND fingerprint = OLD.fingerprint),
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  );
END;

-- Spec rows matter to the feed only when a current registration points at them. The store
-- never changes a row a registration points at (it only gives a row no tool shows the text
-- of a re-registration); by hand, that changes what the tool shows.
CREATE TRIGGER tool_specs_logged_insert AFTER INSERT ON tool_specs
WHEN EXISTS (SELECT 1 FROM tool_registrations WHERE tool_name = NEW.tool_name AND fingerprint = NEW.fingerprint)
BEGIN
  INSERT INTO tool_changes (tool_name, action, version, at)
  VALUES (NEW.tool_name, 'updated', NEW.version, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

CREATE TRIGGER tool_specs_logged_update AFTER UPDATE ON tool_specs
BEGIN
  -- The tool that showed the old row: it shows the new one, or (key changed) nothing.
  INSERT INTO tool_changes (tool_name, action, version, at)
  SELECT
    r.tool_name,
    CASE WHEN NEW.tool_name IS OLD.tool_name AND NEW.fingerprint IS OLD.fingerprint THEN 'updated' ELSE 'removed' END,
    CASE WHEN NEW.tool_name IS OLD.tool_name AND NEW.fingerprint IS OLD.fingerprint THEN NEW.version ELSE OLD.version END,
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  FROM tool_registrations AS r
  WHERE r.tool_name = OLD.tool_name AND r.fingerprint = OLD.fingerprint;
  -- A tool that now finds its row under the new key.
  INSERT INTO tool_changes (tool_name, action, version, at)
  SELECT r.tool_name, 'updated', NEW.version, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  FROM tool_registrations AS r
  WHERE r.tool_name = NEW.tool_name AND r.fingerprint = NEW.fingerprint
    AND (NEW.tool_name IS NOT OLD.tool_name OR NEW.fingerprint IS NOT OLD.fingerprint);
END;

CREATE TRIGGER tool_specs_logged_delete AFTER DELETE ON tool_specs
BEGIN
  INSERT INTO tool_changes (tool_name, action, version, at)
  SELECT r.tool_name, 'removed', OLD.version, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  FROM tool_registrations AS r
  WHERE r.tool_name = OLD.tool_name AND r.fingerprint = OLD.fingerprint;
END;

-- The feed's own index: the oldest event and a page after a revision skip the NULL entries.
CREATE INDEX tool_changes_events ON tool_changes (revision) WHERE action IS NOT NULL;
