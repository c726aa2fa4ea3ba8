import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * One delivery per event and endpoint subscribed to its type, made by a trigger in the transaction
 * that appends the event: an event is fanned out exactly when it commits, whoever wrote it (a
 * service, or the counting statement). Paused endpoints get theirs too, sent once resumed. The
 * worker sends an endpoint's pending deliveries in event order, the endpoint's row locked.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_deliveries (
      endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      event_id bigint NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      last_attempt_at timestamptz,
      last_status integer,
      last_response text,
      finished_at timestamptz,
      PRIMARY KEY (endpoint_id, event_id)
    )
  `.execute(db)
  // The worker's read: an endpoint's next pending delivery. Finished rows stay out of it.
  await sql`CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (endpoint_id, event_id) WHERE status = 'pending'`.execute(
    db
  )
  await sql`CREATE INDEX webhook_deliveries_event_id_idx ON webhook_deliveries (event_id)`.execute(db)
  await sql`GRANT SELECT, INSERT, UPDATE ON webhook_deliveries TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`
    CREATE FUNCTION fan_out_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $function$
    BEGIN
      INSERT INTO webhook_deliveries (endpoint_id, event_id)
      SELECT e.id, NEW.id FROM webhook_endpoints e WHERE NEW.type = ANY (e.events);
      RETURN NULL;
    END
    $function$
  `.execute(db)
  await sql`
    CREATE TRIGGER webhook_events_fan_out AFTER INSERT ON webhook_events
    FOR EACH ROW EXECUTE FUNCTION fan_out_webhook_event()
  `.execute(db)
}
