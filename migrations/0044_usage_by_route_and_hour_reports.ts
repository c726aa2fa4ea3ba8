import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * Usage by route, beside api_key_usage's usage by key: each instance adds its requests per key, UTC
 * hour and route every few seconds. And the hours whose `usage.reported` events are written: one row
 * an hour, so that every instance may look for closed hours and each hour's events are written once
 * (a second instance's insert waits for the first's commit, finds the row and does nothing).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE api_key_route_usage (
      api_key_id bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
      hour timestamptz NOT NULL,
      route text NOT NULL CHECK (length(route) BETWEEN 1 AND 300),
      admitted bigint NOT NULL DEFAULT 0 CHECK (admitted >= 0),
      refused bigint NOT NULL DEFAULT 0 CHECK (refused >= 0),
      units bigint NOT NULL DEFAULT 0 CHECK (units >= 0),
      PRIMARY KEY (api_key_id, hour, route)
    ) WITH (fillfactor = 50)
  `.execute(db)
  await sql`CREATE INDEX api_key_route_usage_hour_idx ON api_key_route_usage (hour, api_key_id)`.execute(db)
  await sql`
    CREATE TABLE usage_reported_hours (
      hour timestamptz PRIMARY KEY,
      reported_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )
  `.execute(db)
  await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON api_key_route_usage TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`GRANT SELECT, INSERT, DELETE ON usage_reported_hours TO ${sql.id(SERVICE_ROLE)}`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE usage_reported_hours`.execute(db)
  await sql`DROP TABLE api_key_route_usage`.execute(db)
}
