import { sql, type Kysely } from 'kysely'

/**
 * A change to keys or accounts is announced with the ids it touched (`api_keys:3,9`, `accounts:7`),
 * so that an instance makes stale only the cached keys it names rather than every key it holds; an
 * issued key (`api_keys+`) makes none stale. Plans, costs and a TRUNCATE still announce the table
 * alone, which makes every cached key stale. An instance of the release before this one takes every
 * announcement for the latter, as it always did.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // A payload past this many bytes names the table alone: NOTIFY takes at most 8,000.
  await sql`
    CREATE FUNCTION notify_rows_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      ids text;
    BEGIN
      SELECT string_agg(DISTINCT c.id::text, ',') INTO ids FROM changed c;
      IF ids IS NOT NULL THEN
        PERFORM pg_notify('api_keys_changed',
          CASE WHEN length(ids) <= 7000 THEN TG_TABLE_NAME || ':' || ids ELSE TG_TABLE_NAME END);
      END IF;
      RETURN NULL;
    END
    $$
  `.execute(db)
  await sql`
    CREATE FUNCTION notify_keys_issued() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('api_keys_changed', 'api_keys+');
      RETURN NULL;
    END
    $$
  `.execute(db)
  await sql`DROP TRIGGER api_keys_changed ON api_keys`.execute(db)
  await sql`DROP TRIGGER accounts_changed ON accounts`.execute(db)
  for (const table of ['api_keys', 'accounts']) {
    await sql`
      CREATE TRIGGER ${sql.raw(`${table}_updated`)} AFTER UPDATE ON ${sql.table(table)}
      REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION notify_rows_changed()
    `.execute(db)
    await sql`
      CREATE TRIGGER ${sql.raw(`${table}_deleted`)} AFTER DELETE ON ${sql.table(table)}
      REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION notify_rows_changed()
    `.execute(db)
    await sql`
      CREATE TRIGGER ${sql.raw(`${table}_truncated`)} AFTER TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed()
    `.execute(db)
  }
  // An account opened holds no key yet: nothing to announce.
  await sql`
    CREATE TRIGGER api_keys_issued AFTER INSERT ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION notify_keys_issued()
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER api_keys_issued ON api_keys`.execute(db)
  for (const table of ['api_keys', 'accounts']) {
    for (const suffix of ['updated', 'deleted', 'truncated']) {
      await sql`DROP TRIGGER ${sql.raw(`${table}_${suffix}`)} ON ${sql.table(table)}`.execute(db)
    }
    await sql`
      CREATE TRIGGER ${sql.raw(`${table}_changed`)}
      AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed()
    `.execute(db)
  }
  await sql`DROP FUNCTION notify_keys_issued(), notify_rows_changed()`.execute(db)
}
