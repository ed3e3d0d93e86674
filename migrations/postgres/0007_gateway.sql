-- tool-registry PostgreSQL schema, version 0007: the gateway's rows (issue 37), upstream MCP
-- servers and the audit log of tool calls (applied like 0001: search_path set to the registry's
-- schema). Neither table is in the change log: writing them wakes no cache and logs no event.
--
-- tool_upstreams: one row per upstream MCP server whose tools the registry governs (its tools
-- are ordinary rows of tool_registrations, tagged upstream:NAME). `transport` is JSON text, as
-- written (text, not jsonb: key order kept, as every store returns it):
-- {"type":"http","url":...,"headers":{...}} or {"type":"stdio","command":[...],"env":{...},"cwd":...}.
-- Header and env values are stored as given: a ${VAR} reference stays unexpanded here and is
-- expanded only by the process that connects, so a secret never lands in the database.
-- `permissions` and `rejected` ([{"tool":...,"definition":HASH}]) are JSON arrays as text. A
-- write replaces the row and moves updated_at; created_at stays. Serving processes poll it.
CREATE TABLE tool_upstreams (
  name        text COLLATE "C" NOT NULL PRIMARY KEY,
  transport   text NOT NULL CHECK ((transport::jsonb ->> 'type') IN ('http', 'stdio')),
  prefix      text NOT NULL,
  approve     text NOT NULL CHECK (approve IN ('all', 'none')),
  permissions text NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(permissions::jsonb) = 'array'),
  rejected    text NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(rejected::jsonb) = 'array'),
  created_at  text NOT NULL,
  updated_at  text NOT NULL
);

-- tool_calls: the audit log, one row per MCP tools/call (who, what, how it ended; never the
-- arguments or the result). `at` is when the call started, UTC text (2025-01-01T00:00:00.000Z)
-- as in the other tables (`at::timestamptz` for date arithmetic), collated "C" so it compares
-- as it sorts; `outcome` is 'ok' or the error code the caller got. `id` comes from a sequence:
-- it only grows (a rolled-back write leaves a gap). Each write of rows prunes the log to the
-- store's callRetention (default: the newest 100,000 ids, none older than 30 days). Deleting
-- rows by hand is harmless.
CREATE TABLE tool_calls (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at          text COLLATE "C" NOT NULL,
  token       text,
  persona     text,
  namespace   text NOT NULL,
  tool        text COLLATE "C" NOT NULL,
  version     text,
  fingerprint text,
  upstream    text,
  duration_ms double precision NOT NULL CHECK (duration_ms >= 0),
  outcome     text NOT NULL
);

-- The filters of listCalls, each read newest first (id descending) from its index.
CREATE INDEX tool_calls_at ON tool_calls (at);
CREATE INDEX tool_calls_tool ON tool_calls (tool, id);
CREATE INDEX tool_calls_token ON tool_calls (token, id);
