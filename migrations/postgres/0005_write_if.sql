-- tool-registry PostgreSQL schema, version 0005: a write in one round trip (applied like 0001:
-- search_path set to the registry's schema). No table changes.
--
-- A write has been four round trips: BEGIN, tool_registry_lock (the locks, then the current
-- rows), tool_registry_write, COMMIT; the core decides between the second and the third. An
-- instance whose read cache holds the current rows can decide before it asks, and send the
-- decision with the rows it was made from: tool_registry_write_if takes the locks and reads
-- the rows through tool_registry_lock, compares them with those, and writes only when they
-- are equal. Sent as a statement of its own, its transaction commits when it returns: one
-- round trip. When a row differs (another instance wrote since the cache last caught up) it writes nothing and says
-- so, and the store makes the write the four-round-trip way.

-- expected: [[tool_name, fingerprint, enabled, created_at, spec_json], ...], one entry per
-- name the decision read, with a null fingerprint (and nothing after it) for a name that had
-- no registration. specs and registrations as for tool_registry_write. Returns written = false
-- and nothing else when a row differs; else written = true and the head after the write.
CREATE FUNCTION tool_registry_write_if(lock_timeout_ms integer, expected json, specs json, registrations json)
RETURNS TABLE (written boolean, revision bigint, token text)
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  current_rows json;
BEGIN
  -- The locks and the read of tool_registry_lock (one place for both): the current rows of
  -- the names, read after their locks are held.
  SELECT coalesce(json_agg(l), '[]') INTO current_rows
  FROM tool_registry_lock(lock_timeout_ms, false, ARRAY(SELECT e->>0 FROM json_array_elements(expected) AS e)) AS l;
  IF EXISTS (
    SELECT 1
    FROM json_array_elements(expected) AS e
    LEFT JOIN json_to_recordset(current_rows) AS r (tool_name text, fingerprint text, enabled boolean, created_at text, spec_json text)
      ON r.tool_name = e->>0
    WHERE (e->>1) IS DISTINCT FROM r.fingerprint
       OR (r.tool_name IS NOT NULL
           AND ((e->>2)::boolean IS DISTINCT FROM r.enabled
                OR (e->>3) IS DISTINCT FROM r.created_at
                OR (e->>4) IS DISTINCT FROM r.spec_json))
  ) THEN
    RETURN QUERY SELECT false, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, w.revision, w.token FROM tool_registry_write(specs, registrations) AS w;
END $$;
