-- tool-registry SQLite schema, version 0006: deprecations and the registry's policies (issue 27).
-- Readable by the Debian 12 sqlite3 shell (3.40): STRICT tables, plain triggers, CASE.
--
-- tool_deprecations: one row per deprecated current tool (no row: not deprecated). message is
-- required; replacement (a tool name) and sunset (an ISO 8601 date or date-time, kept as
-- given) may be NULL. A new version of a tool keeps its row; removing the tool deletes it (a
-- trigger, so a DELETE in the shell does too). Deprecating by hand with INSERT, changing or
-- deleting a row is logged in the change feed as `deprecated` / `undeprecated`, like the store's own.
CREATE TABLE tool_deprecations (
  tool_name   TEXT NOT NULL PRIMARY KEY,
  message     TEXT NOT NULL CHECK (length(message) > 0),
  replacement TEXT,
  sunset      TEXT
) STRICT;

-- tool_registry_policy: the registry's policies, one row per policy set (no row: the default,
-- versionOrder 'any' and compatibility 'none'). Every process reads them inside its write
-- transaction, so a policy set here binds every writer from its next write.
CREATE TABLE tool_registry_policy (
  name  TEXT NOT NULL PRIMARY KEY,
  value TEXT NOT NULL,
  CHECK ((name = 'versionOrder' AND value IN ('any', 'semver'))
      OR (name = 'compatibility' AND value IN ('none', 'backward', 'semver-major')))
) STRICT;

-- The change log gains two actions (its CHECK cannot be altered in place: the table is built
-- again with every entry, token and revision kept) and `rollback`: 1 on an `updated` entry of
-- a version lower than the one it replaced, written with allowDowngrade.
CREATE TABLE tool_changes_0006 AS SELECT revision, tool_name, token, action, version, at FROM tool_changes;
DROP TABLE tool_changes;
CREATE TABLE tool_changes (
  revision  INTEGER NOT NULL PRIMARY KEY,
  tool_name TEXT NOT NULL,
  token     TEXT NOT NULL DEFAULT (lower(hex(randomblob(8)))),
  action    TEXT CHECK (action IS NULL OR action IN ('added', 'updated', 'enabled', 'disabled', 'removed', 'deprecated', 'undeprecated')),
  version   TEXT,
  at        TEXT,
  rollback  INTEGER CHECK (rollback IS NULL OR rollback = 1)
) STRICT;
INSERT INTO tool_changes (revision, tool_name, token, action, version, at)
SELECT revision, tool_name, token, action, version, at FROM tool_changes_0006 ORDER BY revision;
DROP TABLE tool_changes_0006;

-- The triggers of the log itself went with the old table (0003's, unchanged but for
-- tool_changes_frozen, which now lets the writing store mark its own newest `updated` entry a rollback).
CREATE TRIGGER tool_changes_pruned AFTER INSERT ON tool_changes
WHEN NEW.revision % 1000 = 0
BEGIN
  DELETE FROM tool_changes
  WHERE revision <= NEW.revision - max(10000, (SELECT count(*) FROM tool_registrations));
END;

CREATE TRIGGER tool_changes_kept BEFORE DELETE ON tool_changes
WHEN OLD.revision > (SELECT max(revision) FROM tool_changes) - 10000
BEGIN
  SELECT RAISE(ABORT, 'tool_changes keeps the last 10000 changes for the read cache; they cannot be deleted');
END;

CREATE TRIGGER tool_changes_frozen BEFORE UPDATE ON tool_changes
WHEN NOT (OLD.action = 'updated' AND OLD.rollback IS NULL AND NEW.rollback = 1
  AND NEW.revision = (SELECT max(revision) FROM tool_changes)
  AND NEW.revision IS OLD.revision AND NEW.tool_name IS OLD.tool_name AND NEW.token IS OLD.token
  AND NEW.action IS OLD.action AND NEW.version IS OLD.version AND NEW.at IS OLD.at)
BEGIN
  SELECT RAISE(ABORT, 'tool_changes entries cannot be changed');
END;

-- A deprecation's changes, logged with the tool's current version; a row of a name that is not
-- registered logs nothing (it shows nowhere).
CREATE TRIGGER tool_deprecations_logged_insert AFTER INSERT ON tool_deprecations
BEGIN
  INSERT INTO tool_changes (tool_name, action, version, at)
  SELECT r.tool_name, 'deprecated', s.version, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  FROM tool_registrations AS r JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
  WHERE r.tool_name = NEW.tool_name;
END;

CREATE TRIGGER tool_deprecations_logged_update AFTER UPDATE ON tool_deprecations
WHEN OLD.tool_name IS NOT NEW.tool_name OR OLD.message IS NOT NEW.message
  OR OLD.replacement IS NOT NEW.replacement OR OLD.sunset IS NOT NEW.sunset
BEGIN
  INSERT INTO tool_changes (tool_name, action, version, at)
  SELECT r.tool_name, 'undeprecated', s.version, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  FROM tool_registrations AS r JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
  WHERE r.tool_name = OLD.tool_name AND OLD.tool_name IS NOT NEW.tool_name;
  INSERT INTO tool_changes (tool_name, action, version, at)
  SELECT r.tool_name, 'deprecated', s.version, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  FROM tool_registrations AS r JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
  WHERE r.tool_name = NEW.tool_name;
END;

CREATE TRIGGER tool_deprecations_logged_delete AFTER DELETE ON tool_deprecations
BEGIN
  INSERT INTO tool_changes (tool_name, action, version, at)
  SELECT r.tool_name, 'undeprecated', s.version, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
  FROM tool_registrations AS r JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
  WHERE r.tool_name = OLD.tool_name;
END;

-- A removed tool's deprecation goes with it (logged as `removed` only: the registration is gone
-- when this runs, so the delete above logs nothing).
CREATE TRIGGER tool_registrations_deprecation_removed AFTER DELETE ON tool_registrations
BEGIN
  DELETE FROM tool_deprecations WHERE tool_name = OLD.tool_name;
END;

-- The operators' view gains the deprecation's three columns (NULL: not deprecated).
DROP VIEW tools;
CREATE VIEW tools AS
SELECT
  r.tool_name                                AS tool_name,
  s.version                                  AS version,
  r.enabled                                  AS enabled,
  r.created_at                               AS created_at,
  json_extract(s.spec_json, '$.description') AS description,
  json_extract(s.spec_json, '$.tags')        AS tags,
  r.fingerprint                              AS fingerprint,
  d.message                                  AS deprecation_message,
  d.replacement                              AS deprecation_replacement,
  d.sunset                                   AS deprecation_sunset
FROM tool_registrations AS r
JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
LEFT JOIN tool_deprecations AS d ON d.tool_name = r.tool_name;
