-- tool-registry SQLite schema, version 0001.
-- Readable by the sqlite3 shell 3.37+ (STRICT tables); only the one-argument json_valid().
-- Indexes: the primary keys serve every query the store runs (a tool by name, the join on
-- (tool_name, fingerprint), listing in name order, a name's history), so there are no others.

-- Spec history: one row per distinct spec ever stored under a name. Rows are never
-- deleted (remove() deletes the registration only), so an operator can see what a name
-- used to point at. spec_json is the canonical JSON (keys sorted at every depth) and
-- fingerprint is its SHA-256 in hex.
CREATE TABLE tool_specs (
  tool_name           TEXT NOT NULL,
  fingerprint         TEXT NOT NULL CHECK (length(fingerprint) = 64),
  version             TEXT,
  spec_json           TEXT NOT NULL CHECK (json_valid(spec_json)),
  first_registered_at TEXT NOT NULL,
  PRIMARY KEY (tool_name, fingerprint)
) STRICT;

-- Current registrations: one row per registered tool, pointing at its current spec.
CREATE TABLE tool_registrations (
  tool_name   TEXT NOT NULL PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  created_at  TEXT,
  FOREIGN KEY (tool_name, fingerprint) REFERENCES tool_specs (tool_name, fingerprint)
) STRICT;

-- One row per current tool, for operators: tags is a JSON array as text.
CREATE VIEW tools AS
SELECT
  r.tool_name                               AS tool_name,
  s.version                                 AS version,
  r.enabled                                 AS enabled,
  r.created_at                              AS created_at,
  json_extract(s.spec_json, '$.description') AS description,
  json_extract(s.spec_json, '$.tags')        AS tags,
  r.fingerprint                             AS fingerprint
FROM tool_registrations AS r
JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint;

-- Applied migrations, one row per file (name without .sql).
CREATE TABLE schema_migrations (
  name       TEXT NOT NULL PRIMARY KEY,
  applied_at TEXT NOT NULL
) STRICT;
