import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * What the release before 0029 runs keeps working on this schema while it still serves in a rolling
 * upgrade (docs/deploy.md, "Upgrades while the previous release runs"); the release after this one
 * drops both. append_audit_event without a credential, which 0029 dropped and that release calls for
 * every audited change (a key rotated over /v1/keys, the CLI's changes), is back as the same call
 * with no credential: it appends what 0029 lets a session without one append, and refuses the rest.
 * A DELETE on the limit_counters view (that release's ten-minute clean-up, which 0034 broke) deletes
 * nothing rather than failing, so the clean-ups after it in the same run still run.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION append_audit_event(
      actor text, action text, account_id bigint, key_id bigint, changes jsonb, request_id text, on_behalf_of text
    ) RETURNS bigint
    LANGUAGE sql SET search_path = pg_catalog, public AS $$
      SELECT public.append_audit_event(actor, action, account_id, key_id, changes, request_id, on_behalf_of, NULL::bytea)
    $$
  `.execute(db)
  await sql`REVOKE ALL ON FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text) FROM PUBLIC`.execute(
    db
  )
  await sql`
    GRANT EXECUTE ON FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text) TO ${sql.id(SERVICE_ROLE)}
  `.execute(db)

  // Nothing is deleted: a window taken out of a row that count_units has just written would lose its counts,
  // and the new release's clean-up deletes idle rows of account_counters itself.
  await sql`
    CREATE FUNCTION limit_counters_kept() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RETURN NULL;
    END
    $$
  `.execute(db)
  await sql`
    CREATE TRIGGER limit_counters_kept INSTEAD OF DELETE ON limit_counters
    FOR EACH ROW EXECUTE FUNCTION limit_counters_kept()
  `.execute(db)
  await sql`GRANT DELETE ON limit_counters TO ${sql.id(SERVICE_ROLE)}`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`REVOKE DELETE ON limit_counters FROM ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`DROP TRIGGER limit_counters_kept ON limit_counters`.execute(db)
  await sql`DROP FUNCTION limit_counters_kept()`.execute(db)
  await sql`DROP FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text)`.execute(db)
}
