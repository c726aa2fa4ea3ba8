import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * The `key.expiring` events sent: one row per key and expiry, so that every instance may look for
 * keys about to expire and each key's event is written once (a second instance's insert finds the
 * row and does nothing). A key whose expiry is moved gets an event for its new expiry. The index
 * finds the keys that expire soon without reading every key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE api_key_expiry_notices (
      api_key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL,
      sent_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (api_key_id, expires_at)
    )
  `.execute(db)
  await sql`
    CREATE INDEX api_keys_expiring_idx ON api_keys (expires_at) WHERE expires_at IS NOT NULL AND revoked_at IS NULL
  `.execute(db)
  await sql`GRANT SELECT, INSERT, DELETE ON api_key_expiry_notices TO ${sql.id(SERVICE_ROLE)}`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX api_keys_expiring_idx`.execute(db)
  await sql`DROP TABLE api_key_expiry_notices`.execute(db)
}
