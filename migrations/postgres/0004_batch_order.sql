-- tool-registry PostgreSQL schema, version 0004: the store's own writes are logged in the
-- order of the batch, as the other stores log them (applied like 0001: search_path set to the
-- registry's schema).
--
-- Until now statement triggers logged every write. One INSERT … ON CONFLICT DO UPDATE fires
-- the UPDATE triggers before the INSERT ones, and a DELETE reports its rows in the order it
-- found them, so a registerMany of [new, changed] or a replace import logged its events in
-- another order than the memory and SQLite stores (snapshot order, then the removals by name).
-- Now the two write functions log their own statements, in the order of their input, and the
-- triggers step aside while they do (a transaction-local setting); a hand edit is still logged
-- by the triggers. No table changes.

-- The log's triggers (functions of 0002 unchanged) step aside while the store logs its own
-- statement. DROP and CREATE in this migration's one transaction: no write sees them missing.
DROP TRIGGER tool_registrations_logged_insert ON tool_registrations;
DROP TRIGGER tool_registrations_logged_update ON tool_registrations;
DROP TRIGGER tool_registrations_logged_delete ON tool_registrations;
DROP TRIGGER tool_specs_logged_update ON tool_specs;
CREATE TRIGGER tool_registrations_logged_insert AFTER INSERT ON tool_registrations
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
WHEN (current_setting('tool_registry.store_logs', true) IS DISTINCT FROM 'on')
EXECUTE FUNCTION tool_registrations_logged_insert();
CREATE TRIGGER tool_registrations_logged_update AFTER UPDATE ON tool_registrations
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
WHEN (current_setting('tool_registry.store_logs', true) IS DISTINCT FROM 'on')
EXECUTE FUNCTION tool_registrations_logged_update();
CREATE TRIGGER tool_registrations_logged_delete AFTER DELETE ON tool_registrations
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
WHEN (current_setting('tool_registry.store_logs', true) IS DISTINCT FROM 'on')
EXECUTE FUNCTION tool_registrations_logged_delete();
CREATE TRIGGER tool_specs_logged_update AFTER UPDATE ON tool_specs
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
WHEN (current_setting('tool_registry.store_logs', true) IS DISTINCT FROM 'on')
EXECUTE FUNCTION tool_specs_logged_update();

-- As in 0001, and it logs what it changes itself, in the order of `registrations`: `added`
-- (a new name), `updated` (another spec or created_at; enabled may flip with it), `enabled` /
-- `disabled` (that alone), nothing for a row that stays as it was. The changes are read under
-- the store's advisory locks, before the write, against the same rows the write replaces.
CREATE OR REPLACE FUNCTION tool_registry_write(specs json, registrations json)
RETURNS TABLE (revision bigint, token text)
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  SELECT array_agg(c.tool_name ORDER BY c.ord), array_agg(c.action ORDER BY c.ord), array_agg(c.version ORDER BY c.ord)
  INTO names, actions, versions
  FROM (
    SELECT
      e.ord,
      e.v->>0 AS tool_name,
      CASE
        WHEN cur.tool_name IS NULL THEN 'added'
        WHEN cur.fingerprint IS DISTINCT FROM e.v->>1 OR cur.created_at IS DISTINCT FROM e.v->>3 THEN 'updated'
        WHEN cur.enabled IS DISTINCT FROM (e.v->>2)::boolean THEN CASE WHEN (e.v->>2)::boolean THEN 'enabled' ELSE 'disabled' END
      END AS action,
      s.v->>2 AS version
    FROM jsonb_array_elements(registrations::jsonb) WITH ORDINALITY AS e (v, ord)
    JOIN jsonb_array_elements(specs::jsonb) WITH ORDINALITY AS s (v, ord) ON s.ord = e.ord
    LEFT JOIN tool_registrations AS cur ON cur.tool_name = e.v->>0
  ) AS c
  WHERE c.action IS NOT NULL;
  PERFORM set_config('tool_registry.store_logs', 'on', true);
  INSERT INTO tool_specs AS s (tool_name, fingerprint, version, spec_json, first_registered_at)
  SELECT e->>0, e->>1, e->>2, e->>3, e->>4 FROM jsonb_array_elements(specs::jsonb) AS e
  ON CONFLICT (tool_name, fingerprint) DO UPDATE SET spec_json = EXCLUDED.spec_json
  WHERE NOT EXISTS (SELECT 1 FROM tool_registrations AS r WHERE r.tool_name = s.tool_name AND r.fingerprint = s.fingerprint)
    AND s.spec_json IS DISTINCT FROM EXCLUDED.spec_json;
  INSERT INTO tool_registrations AS r (tool_name, fingerprint, enabled, created_at)
  SELECT e->>0, e->>1, (e->>2)::boolean, e->>3 FROM jsonb_array_elements(registrations::jsonb) AS e
  ON CONFLICT (tool_name) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, enabled = EXCLUDED.enabled, created_at = EXCLUDED.created_at
  WHERE (r.fingerprint, r.enabled, r.created_at) IS DISTINCT FROM (EXCLUDED.fingerprint, EXCLUDED.enabled, EXCLUDED.created_at);
  PERFORM set_config('tool_registry.store_logs', 'off', true);
  PERFORM tool_changes_append(names, actions, versions);
  RETURN QUERY SELECT h.revision, h.token FROM tool_registry_head AS h;
END $$;

-- Deletes the registrations of `names` (their history stays) and logs each one that was there
-- as `removed`, in the order of `names`; returns the names that were there.
CREATE FUNCTION tool_registry_delete(names text[])
RETURNS TABLE (removed_name text)
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  gone text[]; versions text[];
BEGIN
  PERFORM set_config('tool_registry.store_logs', 'on', true);
  WITH d AS (
    DELETE FROM tool_registrations AS r WHERE r.tool_name = ANY (names) RETURNING r.tool_name, r.fingerprint
  )
  SELECT array_agg(d.tool_name ORDER BY n.ord), array_agg(s.version ORDER BY n.ord)
  INTO gone, versions
  FROM d
  JOIN unnest(names) WITH ORDINALITY AS n (name, ord) ON n.name = d.tool_name
  LEFT JOIN tool_specs AS s ON s.tool_name = d.tool_name AND s.fingerprint = d.fingerprint;
  PERFORM set_config('tool_registry.store_logs', 'off', true);
  IF gone IS NOT NULL THEN
    PERFORM tool_changes_append(gone, array_fill('removed'::text, ARRAY[cardinality(gone)]), versions);
  END IF;
  RETURN QUERY SELECT unnest(gone);
END $$;
