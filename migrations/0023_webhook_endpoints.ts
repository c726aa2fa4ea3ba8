import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * Webhook endpoints: where the outbox's events go. The secret signs (Standard Webhooks); while a
 * rotation's grace runs, the previous secret signs too, until `previous_secret_until` by the
 * database's clock. An endpoint that fails for an hour is paused (`paused_at`) until an operator
 * resumes it; `failing_since` is the first failure since the last success.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoints (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      url text NOT NULL CHECK (length(url) <= 2048),
      events text[] NOT NULL CHECK (cardinality(events) > 0),
      description text CHECK (length(description) <= 200),
      secret text NOT NULL,
      previous_secret text,
      previous_secret_until timestamptz,
      paused_at timestamptz,
      failing_since timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((previous_secret IS NULL) = (previous_secret_until IS NULL))
    )
  `.execute(db)
  await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints TO ${sql.id(SERVICE_ROLE)}`.execute(db)
}
