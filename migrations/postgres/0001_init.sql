-- tool-registry PostgreSQL schema, version 0001 (PostgreSQL 13 or newer).
-- Applied by the store with search_path set to the registry's schema (default
-- tool_registry), inside one transaction, under the migration advisory lock. The trigger
-- functions keep that search_path (SET search_path FROM CURRENT), so a DBA's hand edit in
-- psql is logged like the store's own writes whatever the session's search_path is.
-- Names sort by code point (COLLATE "C"), as every store lists them.

-- Spec history: one row per distinct spec (fingerprint) ever stored under a name; rows are
-- never deleted (remove() deletes the registration only). spec_json is the spec's JSON text
-- exactly as registered (TEXT, not jsonb: jsonb reorders keys and drops duplicates);
-- fingerprint is the SHA-256 (hex) of its canonical JSON (keys sorted at every depth).
CREATE TABLE tool_specs (
  tool_name           text COLLATE "C" NOT NULL,
  fingerprint         text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
  version             text,
  spec_json           text NOT NULL CHECK (json_typeof(spec_json::json) = 'object'),
  first_registered_at text NOT NULL,
  -- Storage order, for history() oldest first even when a clock gives two specs one time.
  -- (Handed out before commit, but one name's writers hold its lock, so per name it is commit order.)
  stored_order        bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (tool_name, fingerprint)
);

-- Current registrations: one row per registered tool, pointing at its current spec.
-- created_at is text: a snapshot's value is kept verbatim, never reformatted.
CREATE TABLE tool_registrations (
  tool_name   text COLLATE "C" NOT NULL PRIMARY KEY,
  fingerprint text NOT NULL,
  enabled     boolean NOT NULL,
  created_at  text,
  FOREIGN KEY (tool_name, fingerprint) REFERENCES tool_specs (tool_name, fingerprint)
);

-- The registry's head, one row: `revision` is the number of the last logged change. Every
-- writing transaction updates this row, so revisions are handed out under its row lock:
-- gap-free, in commit order, and one transaction's changes are contiguous (a sequence
-- would hand numbers out before commit, so change 1 could become visible after change 2).
-- `token` changes with every logged statement (and is copied into its log entries) and
-- `generation` was chosen when this schema was created: a cache that remembers them notices
-- a log it did not follow (a restored dump).
CREATE TABLE tool_registry_head (
  only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  revision   bigint NOT NULL CHECK (revision >= 0),
  token      text NOT NULL,
  generation text NOT NULL
);
INSERT INTO tool_registry_head (revision, token, generation)
VALUES (0, gen_random_uuid()::text, gen_random_uuid()::text);

-- The change log (the feed of changes()/watch() and the caches' catch-up), bounded to the
-- last 10,000 changes, or one per tool when there are more tools. xid is the writing
-- transaction (for a DBA correlating with
-- pg_stat_activity or the server log); at is the change's time in UTC, as text like
-- created_at. version is the tool's version after the change (for `removed`, the one removed).
CREATE TABLE tool_changes (
  revision  bigint PRIMARY KEY,
  xid       xid8 NOT NULL DEFAULT pg_current_xact_id(),
  tool_name text COLLATE "C" NOT NULL,
  action    text NOT NULL CHECK (action IN ('added', 'updated', 'enabled', 'disabled', 'removed')),
  version   text,
  at        text NOT NULL,
  -- The head's token after the statement that logged this change: a cache that stopped here
  -- checks it is still this entry (a restored dump may reuse the revision for another change).
  token     text NOT NULL
);

-- Appends one statement's changes (already in order) under the head's row lock and trims
-- the log as the other stores do: whenever the head passes a multiple of 1,000, what is
-- more than max(10,000, number of tools) changes behind that multiple goes (so a cache can
-- always catch up on a change to every tool). Entries a trim would drop at once are not written.
CREATE FUNCTION tool_changes_append(names text[], actions text[], versions text[])
RETURNS void LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  n bigint := coalesce(cardinality(names), 0);
  head bigint;
  trim_at bigint;
  keep bigint;
  below bigint := 0;
  tok text := gen_random_uuid()::text;
  stamp text := to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
BEGIN
  IF n = 0 THEN
    RETURN;
  END IF;
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
  -- A wake-up for every instance's cache and watch, delivered on commit (the payload is the
  -- new head; listeners read what changed from this log, never from the notification).
  PERFORM pg_notify(left('tool_registry_changes_' || current_schema(), 63), head::text);
END $$;

CREATE FUNCTION tool_registrations_logged_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  -- In the statement's row order (a batch's order): a plain scan of the transition table, no join.
  SELECT array_agg(n.tool_name), array_agg('added'::text),
         array_agg((SELECT s.version FROM tool_specs AS s WHERE s.tool_name = n.tool_name AND s.fingerprint = n.fingerprint))
  INTO names, actions, versions
  FROM new_rows AS n;
  PERFORM tool_changes_append(names, actions, versions);
  RETURN NULL;
END $$;

-- An update that changes nothing is not a change. A new spec or created_at is `updated` (an
-- import may flip enabled in the same step); enabled alone is `enabled`/`disabled`; a row
-- renamed by hand removes the old name and adds the new one. (Old and new rows are matched
-- by name, so one statement's updates are logged in name order.)
CREATE FUNCTION tool_registrations_logged_update() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
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

CREATE FUNCTION tool_registrations_logged_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  SELECT array_agg(o.tool_name), array_agg('removed'::text),
         array_agg((SELECT s.version FROM tool_specs AS s WHERE s.tool_name = o.tool_name AND s.fingerprint = o.fingerprint))
  INTO names, actions, versions
  FROM old_rows AS o;
  PERFORM tool_changes_append(names, actions, versions);
  RETURN NULL;
END $$;

-- The store only rewrites the text of a history row no tool points at; by hand, changing the
-- row a tool points at changes what the tool shows. (Its key cannot change or go while a
-- registration points at it: the foreign key refuses.)
CREATE FUNCTION tool_specs_logged_update() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  SELECT array_agg(r.tool_name ORDER BY r.tool_name), array_agg('updated'::text ORDER BY r.tool_name), array_agg(n.version ORDER BY r.tool_name)
  INTO names, actions, versions
  FROM new_rows AS n
  JOIN tool_registrations AS r ON r.tool_name = n.tool_name AND r.fingerprint = n.fingerprint;
  PERFORM tool_changes_append(names, actions, versions);
  RETURN NULL;
END $$;

CREATE TRIGGER tool_registrations_logged_insert AFTER INSERT ON tool_registrations
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tool_registrations_logged_insert();
CREATE TRIGGER tool_registrations_logged_update AFTER UPDATE ON tool_registrations
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tool_registrations_logged_update();
CREATE TRIGGER tool_registrations_logged_delete AFTER DELETE ON tool_registrations
REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION tool_registrations_logged_delete();
-- TRUNCATE fires no delete trigger: log every tool it takes as removed.
CREATE FUNCTION tool_registrations_logged_truncate() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  names text[]; actions text[]; versions text[];
BEGIN
  SELECT array_agg(r.tool_name ORDER BY r.tool_name), array_agg('removed'::text ORDER BY r.tool_name), array_agg(s.version ORDER BY r.tool_name)
  INTO names, actions, versions
  FROM tool_registrations AS r
  LEFT JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint;
  PERFORM tool_changes_append(names, actions, versions);
  RETURN NULL;
END $$;

CREATE TRIGGER tool_registrations_logged_truncate BEFORE TRUNCATE ON tool_registrations
FOR EACH STATEMENT EXECUTE FUNCTION tool_registrations_logged_truncate();
CREATE TRIGGER tool_specs_logged_update AFTER UPDATE ON tool_specs
REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION tool_specs_logged_update();

-- One row per current tool, for operators: tags is a JSON array.
CREATE VIEW tools AS
SELECT
  r.tool_name                          AS tool_name,
  s.version                            AS version,
  r.enabled                            AS enabled,
  r.created_at                         AS created_at,
  s.spec_json::json ->> 'description'  AS description,
  s.spec_json::json -> 'tags'          AS tags,
  r.fingerprint                        AS fingerprint
FROM tool_registrations AS r
JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint;

-- The store's two round trips of a write, as functions (one statement each). Lock names match
-- the store's (src/stores/postgres/identifiers.ts: 'tool-registry <schema> writers' and
-- 'tool-registry <schema> tool <name>').

-- Takes the write's locks (lock waits bounded by lock_timeout_ms), then returns the current
-- rows of `names`, read after the locks are held: the writers' lock shared and one lock per
-- name in name order, or (exclusive) the writers' lock alone, as an import takes it.
CREATE FUNCTION tool_registry_lock(lock_timeout_ms integer, exclusive boolean, names text[])
RETURNS TABLE (tool_name text, version text, fingerprint text, enabled boolean, created_at text, spec_json text)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  one text;
BEGIN
  PERFORM set_config('lock_timeout', lock_timeout_ms::text || 'ms', true);
  IF exclusive THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('tool-registry ' || current_schema() || ' writers', 0));
  ELSE
    PERFORM pg_advisory_xact_lock_shared(hashtextextended('tool-registry ' || current_schema() || ' writers', 0));
    FOR one IN SELECT DISTINCT n FROM unnest(names) AS n ORDER BY n LOOP
      PERFORM pg_advisory_xact_lock(hashtextextended('tool-registry ' || current_schema() || ' tool ' || one, 0));
    END LOOP;
  END IF;
  RETURN QUERY
    SELECT r.tool_name::text, s.version, r.fingerprint, r.enabled, r.created_at, s.spec_json
    FROM tool_registrations AS r
    JOIN tool_specs AS s ON s.tool_name = r.tool_name AND s.fingerprint = r.fingerprint
    WHERE r.tool_name = ANY (names);
END $$;

-- Writes tools given as JSON arrays: specs [[tool_name, fingerprint, version, spec_json,
-- first_registered_at], ...] and registrations [[tool_name, fingerprint, enabled,
-- created_at], ...]. A spec new to the name's history is inserted; a history row the tool
-- does not point at takes the new text; the text of the spec a tool already points at is
-- kept. Then each registration is inserted or replaced. Two statements, in this order, so the
-- log's statement triggers see a re-stored history row before the registration moves to it.
-- Returns the head after the write.
CREATE FUNCTION tool_registry_write(specs json, registrations json)
RETURNS TABLE (revision bigint, token text)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO tool_specs AS s (tool_name, fingerprint, version, spec_json, first_registered_at)
  SELECT e->>0, e->>1, e->>2, e->>3, e->>4 FROM jsonb_array_elements(specs::jsonb) AS e
  ON CONFLICT (tool_name, fingerprint) DO UPDATE SET spec_json = EXCLUDED.spec_json
  WHERE NOT EXISTS (SELECT 1 FROM tool_registrations AS r WHERE r.tool_name = s.tool_name AND r.fingerprint = s.fingerprint)
    AND s.spec_json IS DISTINCT FROM EXCLUDED.spec_json;
  INSERT INTO tool_registrations AS r (tool_name, fingerprint, enabled, created_at)
  SELECT e->>0, e->>1, (e->>2)::boolean, e->>3 FROM jsonb_array_elements(registrations::jsonb) AS e
  ON CONFLICT (tool_name) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, enabled = EXCLUDED.enabled, created_at = EXCLUDED.created_at
  WHERE (r.fingerprint, r.enabled, r.created_at) IS DISTINCT FROM (EXCLUDED.fingerprint, EXCLUDED.enabled, EXCLUDED.created_at);
  RETURN QUERY SELECT h.revision, h.token FROM tool_registry_head AS h;
END $$;
