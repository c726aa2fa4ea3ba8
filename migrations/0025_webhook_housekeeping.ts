import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * Housekeeping of the outbox: finished deliveries past their retention are deleted, and then the
 * events that no delivery needs any more. The service's role may delete those rows (never update an
 * event); the indexes find them by age.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (finished_at) WHERE status <> 'pending'`.execute(
    db
  )
  await sql`CREATE INDEX webhook_events_at_idx ON webhook_events (at)`.execute(db)
  await sql`GRANT DELETE ON webhook_deliveries, webhook_events TO ${sql.id(SERVICE_ROLE)}`.execute(db)
}
