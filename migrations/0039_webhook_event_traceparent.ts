import { sql, type Kysely } from 'kysely'

/**
 * The W3C traceparent of the traced request whose change an event reports, sent with each of its
 * deliveries so a receiver's trace continues that request's; null when none was traced. The check
 * keeps anything else out of a header.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE webhook_events ADD COLUMN traceparent text
      CONSTRAINT webhook_events_traceparent_format CHECK (traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$')
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_events DROP COLUMN traceparent`.execute(db)
}
