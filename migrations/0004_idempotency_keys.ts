import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // One row per Idempotency-Key of an API key. A row with no pet_id is a claim: a request holds the
  // key until claimed_until; a row with a pet_id is the outcome that repeats replay. pet_id has no
  // foreign key: it is written in the statement that creates the pet, and pets are never deleted.
  await sql`
    CREATE TABLE idempotency_keys (
      api_key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
      key text NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
      request_hash bytea NOT NULL CHECK (octet_length(request_hash) = 32),
      claim_token uuid NOT NULL,
      claimed_until timestamptz NOT NULL,
      pet_id bigint,
      response_status smallint CHECK ((pet_id IS NULL) = (response_status IS NULL)),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (api_key_id, key)
    )
  `.execute(db)
  // Clean-up deletes expired keys.
  await sql`CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE idempotency_keys`.execute(db)
}
