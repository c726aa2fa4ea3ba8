import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * An audit trail the service's own role can neither forge nor purge. The role loses INSERT on
 * audit_events (so no row with a chosen `at`, and no OVERRIDING SYSTEM VALUE id) and any right on
 * its id sequence; it appends through append_audit_event, which runs as the owner, stamps the
 * database's now() and takes the id from the identity, and refuses an actor of no known shape or
 * naming an operator or key that does not exist. Deleting is still only
 * delete_audit_events_older_than, which now refuses fewer days than audit_retention holds: a floor
 * only the owner sets (400, the default of AUDIT_RETENTION_DAYS).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE audit_retention (
      only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
      days integer NOT NULL CHECK (days >= 1)
    )
  `.execute(db)
  await sql`INSERT INTO audit_retention (days) VALUES (400)`.execute(db)
  await sql`GRANT SELECT ON audit_retention TO ${sql.id(SERVICE_ROLE)}`.execute(db)

  await sql`
    CREATE FUNCTION append_audit_event(
      actor text, action text, account_id bigint, key_id bigint, changes jsonb, request_id text, on_behalf_of text
    ) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DECLARE
      appended bigint;
    BEGIN
      IF actor IS NULL OR actor !~ '^(bootstrap|operator:[a-z0-9][a-z0-9._-]{0,62}|key:ask_[0-9A-Za-z]{8}|cli:.{1,251})$' THEN
        RAISE EXCEPTION 'audit actor of no known shape' USING ERRCODE = '22023';
      END IF;
      IF actor LIKE 'operator:%'
        AND NOT EXISTS (SELECT 1 FROM public.operators o WHERE o.name = substr(actor, 10)) THEN
        RAISE EXCEPTION 'audit actor names no operator' USING ERRCODE = '22023';
      END IF;
      IF actor LIKE 'key:%' AND NOT EXISTS (SELECT 1 FROM public.api_keys k WHERE k.prefix = substr(actor, 5)) THEN
        RAISE EXCEPTION 'audit actor names no key' USING ERRCODE = '22023';
      END IF;
      INSERT INTO public.audit_events (at, actor, action, account_id, key_id, changes, request_id, on_behalf_of)
      VALUES (now(), actor, action, account_id, key_id, coalesce(changes, '{}'), request_id, on_behalf_of)
      RETURNING id INTO appended;
      RETURN appended;
    END
    $$
  `.execute(db)
  await sql`REVOKE ALL ON FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text) FROM PUBLIC`.execute(
    db
  )
  await sql`
    GRANT EXECUTE ON FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text) TO ${sql.id(SERVICE_ROLE)}
  `.execute(db)
  await sql`REVOKE INSERT ON audit_events FROM ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`REVOKE ALL ON SEQUENCE audit_events_id_seq FROM ${sql.id(SERVICE_ROLE)}`.execute(db)

  await sql`
    CREATE OR REPLACE FUNCTION delete_audit_events_older_than(days integer) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DECLARE
      kept integer := (SELECT r.days FROM public.audit_retention r);
      deleted bigint;
    BEGIN
      IF days IS NULL OR days < kept THEN
        RAISE EXCEPTION 'audit events are kept % days; % is fewer', kept, coalesce(days::text, 'null')
          USING ERRCODE = '22023';
      END IF;
      DELETE FROM public.audit_events WHERE at < now() - make_interval(days => days);
      GET DIAGNOSTICS deleted = ROW_COUNT;
      RETURN deleted;
    END
    $$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION delete_audit_events_older_than(days integer) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DECLARE
      deleted bigint;
    BEGIN
      IF days IS NULL OR days < 1 THEN
        RAISE EXCEPTION 'days must be at least 1' USING ERRCODE = '22023';
      END IF;
      DELETE FROM public.audit_events WHERE at < now() - make_interval(days => days);
      GET DIAGNOSTICS deleted = ROW_COUNT;
      RETURN deleted;
    END
    $$
  `.execute(db)
  await sql`GRANT INSERT ON audit_events TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`DROP FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text)`.execute(db)
  await sql`DROP TABLE audit_retention`.execute(db)
}
