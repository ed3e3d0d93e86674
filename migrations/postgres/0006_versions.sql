-- tool-registry PostgreSQL schema, version 0006: deprecations and the registry's policies
-- (issue 27; applied like 0001: search_path set to the registry's schema).
--
-- tool_deprecations: one row per deprecated current tool (no row: not deprecated). A new
-- version of a tool keeps its row (the store's writes upsert tool_registrations); removing the
-- tool deletes it (ON DELETE CASCADE). Inserting, changing or deleting a row, by the store or
-- by hand in psql, is logged in the change feed as `deprecated` / `undeprecated`.
CREATE TABLE tool_deprecations (
  tool_name   text COLLATE "C" NOT NULL PRIMARY KEY
              REFERENCES tool_registrations (tool_name) ON DELETE CASCADE ON UPDATE CASCADE,
  message     text NOT NULL CHECK (message <> ''),
  replacement text,
  sunset      text
);

-- tool_registry_policy: one row per policy set (no row: versionOrder 'any', compatibility
-- 'none'). setPolicy writes it under the writers' lock held exclusively, and every write reads
-- it after taking its locks, so a policy set by one instance binds every instance's next write.
CREATE TABLE tool_registry_policy (
  name  text NOT NULL PRIMARY KEY,
  value text NOT NULL,
  CHECK ((name = 'versionOrder' AND value IN ('any', 'semver'))
      OR (name = 'compatibility' AND value IN ('none', 'backward', 'semver-major')))
);

-- Two more actions, and `rollback`: true on an `updated` entry of a lower version written with
-- allowDowngrade (the store marks its own entry in the same transaction).
ALTER TABLE tool_changes DROP CONSTRAINT tool_changes_action_check;
ALTER TABLE tool_changes ADD CONSTRAINT tool_changes_action_check
  CHECK (action IN ('added', 'updated', 'enabled', 'disabled', 'removed', 'deprecated', 'undeprecated'));
ALTER TABLE tool_changes ADD COLUMN rollback boolean;

-- A deprecation change is logged with the tool's current version; names that are not (or no
-- longer: a cascade from a removal) registered log nothing.
-- One function for every event: `deprecated` for each name newly deprecated or whose
-- deprecation changed (`changed`), `undeprecated` for each name whose row went (`gone`).
CREATE FUNCTION tool_deprecations_log(changed text[], gone text[]) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  SELECT array_agg(c.tool_name ORDER BY c.tool_name, c.ord), array_agg(c.action ORDER BY c.tool_name, c.ord), array_agg(c.version ORDER BY c.tool_name, c.ord)
  INTO names, actions, versions
  FROM (
    SELECT r.tool_name::text AS tool_name, x.action, s.version, x.ord
    FROM (
      SELECT g AS tool_name, 'undeprecated'::text AS action, 1 AS ord FROM unnest(gone) AS g
      UNION ALL
      SELECT d, 'deprecated'::text, 2 FROM unnest(changed) AS d
    ) AS x
    JOIN tool_registrations AS r ON r.tool_name = x.tool_name
    JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
  ) AS c;
  IF names IS NOT NULL THEN
    PERFORM tool_changes_append(names, actions, versions);
  END IF;
END $$;

CREATE FUNCTION tool_deprecations_logged_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM tool_deprecations_log(ARRAY(SELECT n.tool_name::text FROM new_rows AS n), ARRAY[]::text[]);
  RETURN NULL;
END $$;

CREATE FUNCTION tool_deprecations_logged_update() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM tool_deprecations_log(
    ARRAY(
      SELECT n.tool_name::text FROM new_rows AS n
      WHERE NOT EXISTS (
        SELECT FROM old_rows AS o
        WHERE o.tool_name = n.tool_name AND o.message = n.message
          AND o.replacement IS NOT DISTINCT FROM n.replacement AND o.sunset IS NOT DISTINCT FROM n.sunset)),
    ARRAY(SELECT o.tool_name::text FROM old_rows AS o WHERE NOT EXISTS (SELECT FROM new_rows AS n WHERE n.tool_name = o.tool_name)));
  RETURN NULL;
END $$;

CREATE FUNCTION tool_deprecations_logged_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM tool_deprecations_log(ARRAY[]::text[], ARRAY(SELECT o.tool_name::text FROM old_rows AS o));
  RETURN NULL;
END $$;

CREATE TRIGGER tool_deprecations_logged_insert AFTER INSERT ON tool_deprecations
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tool_deprecations_logged_insert();
CREATE TRIGGER tool_deprecations_logged_update AFTER UPDATE ON tool_deprecations
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tool_deprecations_logged_update();
CREATE TRIGGER tool_deprecations_logged_delete AFTER DELETE ON tool_deprecations
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION tool_deprecations_logged_delete();

-- The one-round-trip write of 0005, which now also compares each name's deprecation
-- (expected entries carry [.., message, replacement, sunset] after spec_json) and the policies
-- the caller decided under (`policy`: {"versionOrder": .., "compatibility": ..}) with the
-- stored ones, read after the locks are held; any difference: nothing is written.
DROP FUNCTION tool_registry_write_if(integer, json, json, json);
CREATE FUNCTION tool_registry_write_if(lock_timeout_ms integer, expected json, specs json, registrations json, policy json)
RETURNS TABLE (written boolean, revision bigint, token text)
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  current_rows json;
BEGIN
  SELECT coalesce(json_agg(l), '[]') INTO current_rows
  FROM tool_registry_lock(lock_timeout_ms, false, ARRAY(SELECT e->>0 FROM json_array_elements(expected) AS e)) AS l;
  IF (policy->>'versionOrder') IS DISTINCT FROM coalesce((SELECT p.value FROM tool_registry_policy AS p WHERE p.name = 'versionOrder'), 'any')
     OR (policy->>'compatibility') IS DISTINCT FROM coalesce((SELECT p.value FROM tool_registry_policy AS p WHERE p.name = 'compatibility'), 'none')
     OR EXISTS (
    SELECT 1
    FROM json_array_elements(expected) AS e
    LEFT JOIN json_to_recordset(current_rows) AS r (tool_name text, fingerprint text, enabled boolean, created_at text, spec_json text)
      ON r.tool_name = e->>0
    LEFT JOIN tool_deprecations AS d ON d.tool_name = e->>0
    WHERE (e->>1) IS DISTINCT FROM r.fingerprint
       OR (r.tool_name IS NOT NULL
           AND ((e->>2)::boolean IS DISTINCT FROM r.enabled
                OR (e->>3) IS DISTINCT FROM r.created_at
                OR (e->>4) IS DISTINCT FROM r.spec_json
                OR (e->>5) IS DISTINCT FROM d.message
                OR (e->>6) IS DISTINCT FROM d.replacement
                OR (e->>7) IS DISTINCT FROM d.sunset))
  ) THEN
    RETURN QUERY SELECT false, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, w.revision, w.token FROM tool_registry_write(specs, registrations) AS w;
END $$;

-- The operators' view gains the deprecation's three columns, at the end (NULL: not deprecated).
CREATE OR REPLACE VIEW tools AS
SELECT
  r.tool_name                                                    AS tool_name,
  s.version                                                      AS version,
  r.enabled                                                      AS enabled,
  r.created_at                                                   AS created_at,
  replace(s.spec_json, E'\\u0000', E'\\ufffd')::json ->> 'description' AS description,
  replace(s.spec_json, E'\\u0000', E'\\ufffd')::json -> 'tags'   AS tags,
  r.fingerprint                                                  AS fingerprint,
  d.message                                                      AS deprecation_message,
  d.replacement                                                  AS deprecation_replacement,
  d.sunset                                                       AS deprecation_sunset
FROM tool_registrations AS r
JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
LEFT JOIN tool_deprecations AS d ON d.tool_name = r.tool_name;
