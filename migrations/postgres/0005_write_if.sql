-- tool-registry PostgreSQL schema, version 0005: a write in one round trip (applied like 0001:
-- search_path set to the registry's schema). No table changes.
--
-- A write has been four round trips: BEGIN, tool_registry_lock (the locks, then the current
-- rows), tool_registry_write, COMMIT; the core decides between the second and the third. An
-- instance whose read cache holds the current rows can decide before it asks, and send the
-- decision with the rows it was made from: tool_registry_write_if takes the same locks,
-- compares the rows it finds with those, and writes only when they are equal. Sent as a
-- statement of its own, its transaction commits when it returns: one round trip. When a row
-- differs (another instance wrote since the cache last caught up) it writes nothing and says
-- so, and the store makes the write the four-round-trip way.

-- expected: [[tool_name, fingerprint, enabled, created_at, spec_json], ...], one entry per
-- name the decision read, with a null fingerprint (and nothing after it) for a name that had
-- no registration. specs and registrations as for tool_registry_write. Returns written = false
-- and nothing else when a row differs; else written = true and the head after the write.
CREATE FUNCTION tool_registry_write_if(lock_timeout_ms integer, expected json, specs json, registrations json)
RETURNS TABLE (written boolean, revision bigint, token text)
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  one text;
BEGIN
  -- The locks of tool_registry_lock: the writers' lock shared, then each name's in name order.
  PERFORM set_config('lock_timeout', lock_timeout_ms::text || 'ms', true);
  PERFORM pg_advisory_xact_lock_shared(hashtextextended('tool-registry ' || current_schema() || ' writers', 0));
  FOR one IN SELECT DISTINCT e->>0 AS n FROM json_array_elements(expected) AS e ORDER BY n LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('tool-registry ' || current_schema() || ' tool ' || one, 0));
  END LOOP;
  IF EXISTS (
    SELECT 1
    FROM json_array_elements(expected) AS e
    LEFT JOIN tool_registrations AS r ON r.tool_name = e->>0
    LEFT JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
    WHERE (e->>1) IS DISTINCT FROM r.fingerprint
       OR (r.tool_name IS NOT NULL
           AND ((e->>2)::boolean IS DISTINCT FROM r.enabled
                OR (e->>3) IS DISTINCT FROM r.created_at
                OR (e->>4) IS DISTINCT FROM s.spec_json))
  ) THEN
    RETURN QUERY SELECT false, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  RETURN QUERY SELECT true, w.revision, w.token FROM tool_registry_write(specs, registrations) AS w;
END $$;
