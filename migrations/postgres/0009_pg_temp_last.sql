-- tool-registry PostgreSQL schema, version 0009: every function of the registry searches the
-- session's temporary schema last (applied like 0001, with search_path set to the registry's
-- schema and then pg_temp). No table changes.
--
-- The functions kept the search_path they were created under (SET search_path FROM CURRENT),
-- the registry's schema alone; PostgreSQL then searches pg_temp first, so a temporary table
-- named like a store table (tool_changes, tool_registry_head, ...) in the session of a hand
-- edit took the trigger's writes: the edit was never logged, nor notified. Each function that
-- sets a search_path now sets the current one, '<schema>, pg_temp' (pg_catalog stays first,
-- as PostgreSQL searches it first when it is not listed). The runner applies every migration
-- under that search_path since this release, so a function a later migration replaces with
-- SET search_path FROM CURRENT keeps it.
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.pronamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
      -- A fresh schema's functions have it already (the runner's search_path): nothing to do.
      AND EXISTS (SELECT FROM unnest(p.proconfig) AS c(setting) WHERE c.setting LIKE 'search\_path=%' AND c.setting <> 'search_path=' || current_setting('search_path'))
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET search_path FROM CURRENT', f);
  END LOOP;
END $$;
