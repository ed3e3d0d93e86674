-- tool-registry PostgreSQL schema, version 0002: the same tables, log and behaviour as 0001,
-- with cheaper functions (applied like 0001: search_path set to the registry's schema).
--
-- Measured on PostgreSQL 18 (bench/postgres.mjs, docs/postgres.md): most of the server time
-- of a write went to planning, not running. A plpgsql statement with parameters (`= ANY
-- (names)`, `jsonb_array_elements(specs)`, `unnest(names, ...)`) is planned afresh on every
-- call while its custom plan looks cheaper than the generic one, which it always does here:
-- about 40 µs of the lock function's 50. These statements have one good plan whatever the
-- values (index lookups by key, or a scan of the given rows), so the functions keep it
-- (plan_cache_mode = force_generic_plan, a per-function setting like search_path).
-- And a statement trigger fires even when its statement touched no row (INSERT … ON
-- CONFLICT DO UPDATE fires the UPDATE triggers too): those now return at once.

ALTER FUNCTION tool_registry_lock(integer, boolean, text[]) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION tool_registry_write(json, json) SET plan_cache_mode = force_generic_plan;

-- As in 0001, except that nothing is computed when there is nothing to append.
CREATE OR REPLACE FUNCTION tool_changes_append(names text[], actions text[], versions text[])
RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  n bigint := coalesce(cardinality(names), 0);
  head bigint;
  trim_at bigint;
  keep bigint;
  below bigint := 0;
  tok text;
  stamp text;
BEGIN
  IF n = 0 THEN
    RETURN;
  END IF;
  tok := gen_random_uuid()::text;
  stamp := to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  UPDATE tool_registry_head SET revision = revision + n, token = tok RETURNING revision INTO head;
  trim_at := head / 1000 * 1000;
  IF trim_at > head - n THEN
    keep := greatest(10000, (SELECT count(*) FROM tool_registrations));
    below := trim_at - keep;
    DELETE FROM tool_changes WHERE revision <= below;
  END IF;
  INSERT INTO tool_changes (revision, tool_name, action, version, at, token)
  SELECT head - n + c.ord, c.name, c.action, c.version, stamp, tok
  FROM unnest(names, actions, versions) WITH ORDINALITY AS c (name, action, version, ord)
  WHERE head - n + c.ord > below;
  PERFORM pg_notify(left('tool_registry_changes_' || current_schema(), 63), head::text);
END $$;

-- The log's trigger functions as in 0001, each returning at once when its statement touched
-- no row.
CREATE OR REPLACE FUNCTION tool_registrations_logged_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  IF NOT EXISTS (SELECT FROM new_rows) THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(n.tool_name), array_agg('added'::text),
         array_agg((SELECT s.version FROM tool_specs AS s WHERE s.tool_name = n.tool_name AND s.fingerprint = n.fingerprint))
  INTO names, actions, versions
  FROM new_rows AS n;
  PERFORM tool_changes_append(names, actions, versions);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION tool_registrations_logged_update() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  IF NOT EXISTS (SELECT FROM new_rows) THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(c.tool_name ORDER BY c.tool_name), array_agg(c.action ORDER BY c.tool_name), array_agg(c.version ORDER BY c.tool_name)
  INTO names, actions, versions
  FROM (
    SELECT
      coalesce(n.tool_name, o.tool_name) AS tool_name,
      CASE
        WHEN o.tool_name IS NULL THEN 'added'
        WHEN n.tool_name IS NULL THEN 'removed'
        WHEN o.fingerprint IS DISTINCT FROM n.fingerprint OR o.created_at IS DISTINCT FROM n.created_at THEN 'updated'
        WHEN o.enabled IS DISTINCT FROM n.enabled THEN CASE WHEN n.enabled THEN 'enabled' ELSE 'disabled' END
      END AS action,
      CASE WHEN n.tool_name IS NULL THEN so.version ELSE sn.version END AS version
    FROM old_rows AS o
    FULL JOIN new_rows AS n ON n.tool_name = o.tool_name
    LEFT JOIN tool_specs AS so ON so.tool_name = o.tool_name AND so.fingerprint = o.fingerprint
    LEFT JOIN tool_specs AS sn ON sn.tool_name = n.tool_name AND sn.fingerprint = n.fingerprint
  ) AS c
  WHERE c.action IS NOT NULL;
  PERFORM tool_changes_append(names, actions, versions);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION tool_registrations_logged_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  IF NOT EXISTS (SELECT FROM old_rows) THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(o.tool_name), array_agg('removed'::text),
         array_agg((SELECT s.version FROM tool_specs AS s WHERE s.tool_name = o.tool_name AND s.fingerprint = o.fingerprint))
  INTO names, actions, versions
  FROM old_rows AS o;
  PERFORM tool_changes_append(names, actions, versions);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION tool_specs_logged_update() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  IF NOT EXISTS (SELECT FROM new_rows) THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(r.tool_name ORDER BY r.tool_name), array_agg('updated'::text ORDER BY r.tool_name), array_agg(n.version ORDER BY r.tool_name)
  INTO names, actions, versions
  FROM new_rows AS n
  JOIN tool_registrations AS r ON r.tool_name = n.tool_name AND r.fingerprint = n.fingerprint;
  PERFORM tool_changes_append(names, actions, versions);
  RETURN NULL;
END $$;
