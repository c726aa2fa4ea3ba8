import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../db/schema.js'
import { currentTraceparent } from '../trace-context.js'

type Db = Kysely<Database> | Transaction<Database>

/** The kinds of event the outbox carries; docs/webhooks.md gives each one's `data`. */
export type WebhookEventType =
  | 'key.created'
  | 'key.rotated'
  | 'key.revoked'
  | 'key.leaked'
  | 'key.expiring'
  | 'account.created'
  | 'plan.changed'
  | 'key.banned'
  | 'usage.threshold'
  | 'limit.would_refuse'
  | 'usage.reported'
  | 'endpoint.paused'

export interface NewWebhookEvent {
  type: WebhookEventType
  /** The account the event is about, or null for one about no account (a plan's definition). */
  accountId: bigint | string | null
  /** Ids as strings of digits, instants as ISO 8601 UTC. */
  data: Record<string, unknown>
}

/**
 * Appends one event to the outbox. Pass the transaction of the change it reports, so that the event
 * exists exactly when the change does; the delivery worker sends it after the commit, with the
 * traceparent of the traced request that made it.
 */
export async function appendWebhookEvent(db: Db, event: NewWebhookEvent): Promise<void> {
  await db
    .insertInto('webhook_events')
    .values({
      type: event.type,
      account_id: event.accountId === null ? null : BigInt(event.accountId),
      // An id that slipped through as a bigint is written as its digits, as the admin API shows it.
      data: JSON.stringify(event.data, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value)),
      traceparent: currentTraceparent() ?? null
    })
    .execute()
}

/**
 * Appends a `key.expiring` event for each usable key (not revoked, its account open) that expires
 * within `days` days of the database's clock and has had none for that expiry, and records that it
 * has, in one statement: instances that run it at once write each event once. The number written.
 */
export async function appendKeyExpiringEvents(db: Db, days: number): Promise<number> {
  // A data-modifying WITH whose RETURNING feeds the outbox, and jsonb_build_object: the builder cannot say both.
  const { rows } = await sql<{ count: string }>`
    WITH due AS (
      INSERT INTO api_key_expiry_notices (api_key_id, expires_at)
      SELECT k.id, k.expires_at FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.expires_at IS NOT NULL AND k.revoked_at IS NULL AND a.closed_at IS NULL
        AND k.expires_at > service_now() AND k.expires_at <= service_now() + make_interval(days => ${days}::integer)
      ON CONFLICT DO NOTHING
      RETURNING api_key_id
    ),
    written AS (
      INSERT INTO webhook_events (type, account_id, data)
      SELECT 'key.expiring', k.account_id, jsonb_build_object(
          'key', jsonb_build_object('id', k.id::text, 'prefix', k.prefix, 'name', k.name,
            'accountId', k.account_id::text, 'scopes', to_jsonb(k.scopes)),
          'expiresAt', to_char(k.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      FROM due JOIN api_keys k ON k.id = due.api_key_id
      ORDER BY k.id
      RETURNING id
    )
    SELECT count(*) AS count FROM written
  `.execute(db)
  return Number(rows[0]!.count)
}

/**
 * Writes the `usage.reported` events of every UTC hour that ended at least `graceSeconds` ago (by
 * the database's clock), within the last day, from the hour the first endpoint that takes them was
 * made, and not written before: one event an account that has usage in the hour. Records each such
 * hour in the same statement, so that instances that run it at once write each hour's events once.
 * The number written.
 */
export async function appendUsageReportedEvents(db: Db, graceSeconds: number): Promise<number> {
  const { rows } = await sql<{ count: string }>`
    WITH subscribed AS (
      SELECT date_trunc('hour', min(e.created_at), 'UTC') AS since FROM webhook_endpoints e
      WHERE 'usage.reported' = ANY (e.events)
    ),
    closed AS (
      SELECT date_trunc('hour', service_now() - make_interval(secs => ${graceSeconds}::integer), 'UTC')
        - interval '1 hour' AS last
    ),
    due AS (
      INSERT INTO usage_reported_hours (hour)
      SELECT h.hour FROM subscribed, closed
      CROSS JOIN LATERAL generate_series(greatest(subscribed.since, closed.last - interval '23 hours'), closed.last,
        interval '1 hour') AS h(hour)
      ORDER BY h.hour
      ON CONFLICT DO NOTHING
      RETURNING hour
    ),
    totals AS (
      SELECT due.hour, k.account_id, sum(u.admitted) AS admitted, sum(u.refused) AS refused, sum(u.units) AS units
      FROM due JOIN api_key_usage u ON u.hour = due.hour JOIN api_keys k ON k.id = u.api_key_id
      GROUP BY due.hour, k.account_id
    ),
    routes AS (
      SELECT r.hour, r.account_id, jsonb_agg(jsonb_build_object('route', r.route, 'admitted', r.admitted,
          'refused', r.refused, 'units', r.units) ORDER BY r.route) AS routes
      FROM (
        SELECT due.hour, k.account_id, u.route, sum(u.admitted) AS admitted, sum(u.refused) AS refused,
          sum(u.units) AS units
        FROM due JOIN api_key_route_usage u ON u.hour = due.hour JOIN api_keys k ON k.id = u.api_key_id
        GROUP BY due.hour, k.account_id, u.route
      ) AS r
      GROUP BY r.hour, r.account_id
    ),
    written AS (
      INSERT INTO webhook_events (type, at, account_id, data)
      SELECT 'usage.reported', service_now(), t.account_id, jsonb_build_object(
          'account', jsonb_build_object('id', t.account_id::text, 'externalId', a.external_id),
          'hourStart', to_char(t.hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          'hourEnd', to_char((t.hour + interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          'admitted', t.admitted, 'refused', t.refused, 'units', t.units,
          'routes', coalesce(r.routes, '[]'))
      FROM totals t
      JOIN accounts a ON a.id = t.account_id
      LEFT JOIN routes r ON r.hour = t.hour AND r.account_id = t.account_id
      ORDER BY t.hour, t.account_id
      RETURNING id
    )
    SELECT count(*) AS count FROM written
  `.execute(db)
  return Number(rows[0]!.count)
}
