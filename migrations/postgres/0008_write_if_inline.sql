-- tool-registry PostgreSQL schema, version 0008: the one-statement write of a cached instance
-- (0005, 0006) in one function, with plans that read by key (applied like 0001: search_path
-- set to the registry's schema). No table changes; the same locks, checks, rows and log.
--
-- Measured with pg_stat_statements (track = all) over 1,000 `register`s of a new tool at
-- 10,000 tools: tool_registry_write_if took 1.54 ms of server time a call. 0.75 ms of it went
-- to tool_registry_write's first statement, which looked up the current row of each name to
-- log its action: its generic plan (force_generic_plan, 0002) expects 100 elements of the JSON
-- array and so hashed them and scanned all of tool_registrations; and 0.17 ms to calling
-- tool_registry_lock as a set-returning function and passing its rows on as JSON. Here:
--  * write_if takes the same locks itself and reads each name's current row, deprecation and
--    the policies by key (LATERAL subqueries, which are looked up per element whatever the
--    estimate);
--  * once every row it was given is the current one, the actions are computed from those
--    rows (they are the current ones), not read again;
--  * tool_registry_write (the four-round-trip write's, and imports') reads the current rows by
--    key too.

CREATE OR REPLACE FUNCTION tool_registry_write_if(lock_timeout_ms integer, expected json, specs json, registrations json, policy json)
RETURNS TABLE (written boolean, revision bigint, token text)
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  n bigint; head bigint; trim_at bigint; keep bigint; tok text; stamp text;
  names text[]; actions text[]; versions text[];
BEGIN
  -- The locks of tool_registry_lock: the writers' lock shared, then one per name in name order.
  PERFORM set_config('lock_timeout', lock_timeout_ms::text || 'ms', true), pg_advisory_xact_lock_shared(hashtextextended('tool-registry ' || current_schema() || ' writers', 0));
  PERFORM pg_advisory_xact_lock(hashtextextended('tool-registry ' || current_schema() || ' tool ' || x.name, 0))
  FROM (SELECT DISTINCT e->>0 AS name FROM json_array_elements(expected) AS e ORDER BY 1) AS x;
  -- Read after the locks are held (a new snapshot for this statement): any difference from the
  -- rows and policies the caller decided on, and nothing is written.
  IF (policy->>'versionOrder') IS DISTINCT FROM coalesce((SELECT p.value FROM tool_registry_policy AS p WHERE p.name = 'versionOrder'), 'any')
     OR (policy->>'compatibility') IS DISTINCT FROM coalesce((SELECT p.value FROM tool_registry_policy AS p WHERE p.name = 'compatibility'), 'none')
     OR EXISTS (
    SELECT 1
    FROM json_array_elements(expected) AS e
    LEFT JOIN LATERAL (
      SELECT r.fingerprint, r.enabled, r.created_at, s.spec_json
      FROM tool_registrations AS r
      JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
      WHERE r.tool_name = e->>0
      LIMIT 1
    ) AS r ON true
    LEFT JOIN LATERAL (
      SELECT d.message, d.replacement, d.sunset FROM tool_deprecations AS d WHERE d.tool_name = e->>0 LIMIT 1
    ) AS d ON true
    WHERE (e->>1) IS DISTINCT FROM r.fingerprint
       OR (r.fingerprint IS NOT NULL
           AND ((e->>2)::boolean IS DISTINCT FROM r.enabled
                OR (e->>3) IS DISTINCT FROM r.created_at
                OR (e->>4) IS DISTINCT FROM r.spec_json
                OR (e->>5) IS DISTINCT FROM d.message
                OR (e->>6) IS DISTINCT FROM d.replacement
                OR (e->>7) IS DISTINCT FROM d.sunset))
  )
     -- A tool written that the caller did not say it read: decided the usual way.
     OR EXISTS (
    SELECT 1 FROM json_array_elements(registrations) AS g
    WHERE NOT EXISTS (SELECT 1 FROM json_array_elements(expected) AS e WHERE e->>0 = g->>0)
  ) THEN
    RETURN QUERY SELECT false, NULL::bigint, NULL::text;
    RETURN;
  END IF;
  -- The actions as tool_registry_write logs them (0004), against the rows just compared.
  SELECT array_agg(c.tool_name ORDER BY c.ord), array_agg(c.action ORDER BY c.ord), array_agg(c.version ORDER BY c.ord)
  INTO names, actions, versions
  FROM (
    SELECT
      g.ord,
      g.v->>0 AS tool_name,
      CASE
        WHEN (x.v->>1) IS NULL THEN 'added'
        WHEN (x.v->>1) IS DISTINCT FROM g.v->>1 OR (x.v->>3) IS DISTINCT FROM g.v->>3 THEN 'updated'
        WHEN (x.v->>2)::boolean IS DISTINCT FROM (g.v->>2)::boolean THEN CASE WHEN (g.v->>2)::boolean THEN 'enabled' ELSE 'disabled' END
      END AS action,
      s.v->>2 AS version
    FROM json_array_elements(registrations) WITH ORDINALITY AS g (v, ord)
    JOIN json_array_elements(specs) WITH ORDINALITY AS s (v, ord) ON s.ord = g.ord
    LEFT JOIN json_array_elements(expected) AS x (v) ON x.v->>0 = g.v->>0
  ) AS c
  WHERE c.action IS NOT NULL;
  -- The triggers step aside while the function logs its own writes (0004). Set here, not as a
  -- SET clause of the function: PostgreSQL 15 and later let only a superuser (or a role
  -- granted SET ON PARAMETER) create a function that sets a custom parameter, and a migration
  -- run by the schema's owner must not need one.
  PERFORM set_config('tool_registry.store_logs', 'on', true);
  INSERT INTO tool_specs AS s (tool_name, fingerprint, version, spec_json, first_registered_at)
  SELECT e->>0, e->>1, e->>2, e->>3, e->>4 FROM json_array_elements(specs) AS e
  ON CONFLICT (tool_name, fingerprint) DO UPDATE SET spec_json = EXCLUDED.spec_json
  WHERE NOT EXISTS (SELECT 1 FROM tool_registrations AS r WHERE r.tool_name = s.tool_name AND r.fingerprint = s.fingerprint)
    AND s.spec_json IS DISTINCT FROM EXCLUDED.spec_json;
  INSERT INTO tool_registrations AS r (tool_name, fingerprint, enabled, created_at)
  SELECT e->>0, e->>1, (e->>2)::boolean, e->>3 FROM json_array_elements(registrations) AS e
  ON CONFLICT (tool_name) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, enabled = EXCLUDED.enabled, created_at = EXCLUDED.created_at
  WHERE (r.fingerprint, r.enabled, r.created_at) IS DISTINCT FROM (EXCLUDED.fingerprint, EXCLUDED.enabled, EXCLUDED.created_at);
  PERFORM set_config('tool_registry.store_logs', 'off', true);
  n := coalesce(cardinality(names), 0);
  IF n = 0 THEN
    RETURN QUERY SELECT true, h.revision, h.token FROM tool_registry_head AS h;
    RETURN;
  END IF;
  tok := gen_random_uuid()::text;
  stamp := to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  WITH h AS (UPDATE tool_registry_head AS h SET revision = h.revision + n, token = tok RETURNING h.revision),
  logged AS (
    INSERT INTO tool_changes (revision, tool_name, action, version, at, token)
    SELECT h.revision - n + c.ord, c.name, c.action, c.version, stamp, tok
    FROM h, unnest(names, actions, versions) WITH ORDINALITY AS c (name, action, version, ord)
  )
  SELECT h.revision INTO head FROM h;
  trim_at := head / 1000 * 1000;
  IF trim_at > head - n THEN
    keep := greatest(10000, (SELECT count(*) FROM tool_registrations));
    DELETE FROM tool_changes AS c WHERE c.revision <= trim_at - keep;
  END IF;
  PERFORM pg_notify(left('tool_registry_changes_' || current_schema(), 63), head::text);
  RETURN QUERY SELECT true, head, tok;
END $$;

-- As in 0004, with each name's current row read by key.
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
    LEFT JOIN LATERAL (
      SELECT r.tool_name, r.fingerprint, r.enabled, r.created_at FROM tool_registrations AS r WHERE r.tool_name = e.v->>0 LIMIT 1
    ) AS cur ON true
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
