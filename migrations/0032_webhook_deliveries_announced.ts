import { sql, type Kysely } from 'kysely'

/**
 * A delivery added, or made due again (an operator's retry, an endpoint resumed), is announced on
 * `webhook_deliveries_due`, so that an idle delivery worker waits for the announcement instead of
 * polling the outbox every second. A failed attempt pushes its delivery into the future and
 * announces nothing: the worker that made it knows when it falls due.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION announce_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('webhook_deliveries_due', '');
      RETURN NULL;
    END
    $$
  `.execute(db)
  await sql`
    CREATE TRIGGER webhook_deliveries_added AFTER INSERT ON webhook_deliveries
    FOR EACH STATEMENT EXECUTE FUNCTION announce_webhook_deliveries()
  `.execute(db)
  await sql`
    CREATE TRIGGER webhook_deliveries_due_again AFTER UPDATE ON webhook_deliveries
    FOR EACH ROW WHEN (NEW.status = 'pending' AND NEW.next_attempt_at <= clock_timestamp()
      AND (OLD.status <> 'pending' OR OLD.next_attempt_at > clock_timestamp()))
    EXECUTE FUNCTION announce_webhook_deliveries()
  `.execute(db)
  await sql`
    CREATE TRIGGER webhook_endpoints_resumed AFTER UPDATE OF paused_at ON webhook_endpoints
    FOR EACH ROW WHEN (OLD.paused_at IS NOT NULL AND NEW.paused_at IS NULL)
    EXECUTE FUNCTION announce_webhook_deliveries()
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER webhook_endpoints_resumed ON webhook_endpoints`.execute(db)
  await sql`DROP TRIGGER webhook_deliveries_due_again ON webhook_deliveries`.execute(db)
  await sql`DROP TRIGGER webhook_deliveries_added ON webhook_deliveries`.execute(db)
  await sql`DROP FUNCTION announce_webhook_deliveries()`.execute(db)
}
