import { sql, type Kysely } from 'kysely'

/**
 * Announces each new secret hash (a key issued or rotated) on the api_keys_added channel, as base64,
 * so every instance's membership filter learns it as soon as the key can be used.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION notify_api_key_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('api_keys_added', encode(NEW.secret_hash, 'base64'));
      RETURN NULL;
    END
    $$
  `.execute(db)
  await sql`
    CREATE TRIGGER api_key_added
    AFTER INSERT OR UPDATE OF secret_hash ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_api_key_added()
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER api_key_added ON api_keys`.execute(db)
  await sql`DROP FUNCTION notify_api_key_added()`.execute(db)
}
