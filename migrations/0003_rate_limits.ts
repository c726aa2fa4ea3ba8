import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // One row per rate-limited subject (an API key, or a client address without a valid key), holding
  // both windows, so one upsert decides and counts atomically. Created UNLOGGED, which a database
  // crash empties; 0007_rate_limit_counters_logged makes it logged.
  await sql`
    CREATE UNLOGGED TABLE rate_limit_counters (
      subject text PRIMARY KEY,
      minute_start timestamptz NOT NULL,
      minute_used integer NOT NULL,
      minute_limit integer NOT NULL,
      day_start timestamptz NOT NULL,
      day_used integer NOT NULL,
      day_limit integer,
      wanted integer NOT NULL,
      last_grant integer NOT NULL,
      refused integer NOT NULL DEFAULT 0,
      refused_until timestamptz,
      ban_after integer,
      ban_seconds integer,
      banned_until timestamptz,
      updated_at timestamptz NOT NULL
    )
  `.execute(db)
  // Clean-up deletes rows whose day is over.
  await sql`CREATE INDEX rate_limit_counters_day_start_idx ON rate_limit_counters (day_start)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE rate_limit_counters`.execute(db)
}
