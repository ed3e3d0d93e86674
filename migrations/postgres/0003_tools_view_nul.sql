-- tool-registry PostgreSQL schema, version 0003: the `tools` view reads every description.
--
-- A description or a tag may hold U+0000 (the contract allows it; the spec's JSON text keeps
-- it escaped as \u0000). PostgreSQL text cannot hold it, so reading either field from the
-- JSON raised "unsupported Unicode escape sequence", and one such tool made every query of
-- the view fail. The view now shows U+0000 as U+FFFD (the replacement character) in
-- `description` and `tags`; the spec text, and what the store returns, are unchanged. Same
-- columns, same order. JSON.stringify writes U+0000 as the six characters \u0000, the form
-- replaced (a text that holds a backslash followed by "u0000" shows "ufffd" there).

CREATE OR REPLACE VIEW tools AS
SELECT
  r.tool_name                                                    AS tool_name,
  s.version                                                      AS version,
  r.enabled                                                      AS enabled,
  r.created_at                                                   AS created_at,
  replace(s.spec_json, E'\\u0000', E'\\ufffd')::json ->> 'description' AS description,
  replace(s.spec_json, E'\\u0000', E'\\ufffd')::json -> 'tags'   AS tags,
  r.fingerprint                                                  AS fingerprint
FROM tool_registrations AS r
JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint;
