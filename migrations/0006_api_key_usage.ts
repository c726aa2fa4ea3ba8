import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // Requests admitted and refused per key and UTC day, for billing and for the key's owner. Written
  // by the rate limiter's counting statement, so recording usage costs no round trip of its own.
  await sql`
    CREATE TABLE api_key_usage (
      api_key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
      day date NOT NULL,
      admitted bigint NOT NULL DEFAULT 0 CHECK (admitted >= 0),
      refused bigint NOT NULL DEFAULT 0 CHECK (refused >= 0),
      PRIMARY KEY (api_key_id, day)
    )
  `.execute(db)
  // Clean-up deletes days past the retention period.
  await sql`CREATE INDEX api_key_usage_day_idx ON api_key_usage (day)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE api_key_usage`.execute(db)
}
