-- tool-registry SQLite schema, version 0007: the gateway's rows (issue 37), upstream MCP
-- servers and the audit log of tool calls. Readable by the Debian 12 sqlite3 shell (3.40):
-- STRICT tables, JSON as TEXT checked with one-argument json_valid.
--
-- tool_upstreams: one row per upstream MCP server whose tools the registry governs (its tools
-- are ordinary rows of tool_registrations, tagged upstream:NAME). `transport` is JSON text:
-- {"type":"http","url":...,"headers":{...}} or {"type":"stdio","command":[...],"env":{...},"cwd":...}.
-- Header and env values are stored as given: a ${VAR} reference stays unexpanded here and is
-- expanded only by the process that connects, so a secret never lands in this file.
-- `permissions` (what every tool of the upstream needs) and `rejected` (the definitions an
-- operator rejected: [{"tool":...,"definition":HASH}]) are JSON arrays. A write replaces the
-- row and moves updated_at; created_at stays. Serving processes poll this table.
CREATE TABLE tool_upstreams (
  name        TEXT NOT NULL PRIMARY KEY,
  transport   TEXT NOT NULL CHECK (json_valid(transport) AND json_extract(transport, '$.type') IN ('http', 'stdio')),
  prefix      TEXT NOT NULL,
  approve     TEXT NOT NULL CHECK (approve IN ('all', 'none')),
  permissions TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(permissions) AND json_type(permissions) = 'array'),
  rejected    TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(rejected) AND json_type(rejected) = 'array'),
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
) STRICT;

-- tool_calls: the audit log, one row per MCP tools/call (who, what, how it ended; never the
-- arguments or the result). `at` is when the call started, as UTC text (2025-01-01T00:00:00.000Z),
-- so it sorts and compares as text; `outcome` is 'ok' or the error code the caller got. `id`
-- only grows (AUTOINCREMENT: never handed out twice, even after every row was pruned): the
-- newest rows have the highest ids. Each write of rows prunes the log to the store's
-- callRetention (default: the newest 100,000 rows, none older than 30 days), by id for the
-- count and through tool_calls_at for the age. Deleting rows by hand is harmless.
CREATE TABLE tool_calls (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  at          TEXT NOT NULL,
  token       TEXT,
  persona     TEXT,
  namespace   TEXT NOT NULL,
  tool        TEXT NOT NULL,
  version     TEXT,
  fingerprint TEXT,
  upstream    TEXT,
  duration_ms REAL NOT NULL CHECK (duration_ms >= 0),
  outcome     TEXT NOT NULL
) STRICT;

-- The filters of listCalls (and `tool-registry calls --tool`); each index also holds the id,
-- so a filtered page is read newest first from the index.
CREATE INDEX tool_calls_at ON tool_calls (at);
CREATE INDEX tool_calls_tool ON tool_calls (tool);
CREATE INDEX tool_calls_token ON tool_calls (token);
