import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, WebhookDeliveryStatus } from '../db/schema.js'

type Db = Kysely<Database> | Transaction<Database>

/** An endpoint locked for delivery, with the secrets that sign now (by the database's clock). */
export interface ClaimedEndpoint {
  id: bigint
  url: string
  secrets: string[]
}

/**
 * Locks one endpoint, not paused, whose next pending delivery is due, the longest due first; one
 * another worker holds is skipped. The lock lasts as long as the transaction: while it is held, no
 * other worker sends to this endpoint, so its events go one at a time and in order.
 */
export async function claimWebhookEndpoint(trx: Transaction<Database>): Promise<ClaimedEndpoint | undefined> {
  // Raw: a LATERAL head-of-queue read under FOR UPDATE OF ... SKIP LOCKED, which the builder cannot say.
  const { rows } = await sql<{ id: bigint; url: string; secret: string; previous: string | null }>`
    SELECT e.id, e.url, e.secret,
      CASE WHEN e.previous_secret_until > clock_timestamp() THEN e.previous_secret END AS previous
    FROM webhook_endpoints e
    CROSS JOIN LATERAL (
      SELECT d.next_attempt_at FROM webhook_deliveries d
      WHERE d.endpoint_id = e.id AND d.status = 'pending' ORDER BY d.event_id LIMIT 1
    ) head
    WHERE e.paused_at IS NULL AND head.next_attempt_at <= clock_timestamp()
    ORDER BY head.next_attempt_at
    LIMIT 1
    FOR UPDATE OF e SKIP LOCKED
  `.execute(trx)
  const row = rows[0]
  return row && { id: row.id, url: row.url, secrets: row.previous ? [row.secret, row.previous] : [row.secret] }
}

/**
 * Milliseconds until the earliest pending delivery of an endpoint not paused falls due, by the
 * database's clock (0 or less: due now); null when none is pending.
 */
export async function millisecondsUntilNextDelivery(db: Db): Promise<number | null> {
  const { rows } = await sql<{ ms: number | null }>`
    SELECT (extract(epoch FROM min(head.next_attempt_at) - clock_timestamp()) * 1000)::float8 AS ms
    FROM webhook_endpoints e
    CROSS JOIN LATERAL (
      SELECT d.next_attempt_at FROM webhook_deliveries d
      WHERE d.endpoint_id = e.id AND d.status = 'pending' ORDER BY d.event_id LIMIT 1
    ) head
    WHERE e.paused_at IS NULL
  `.execute(db)
  return rows[0]?.ms ?? null
}

/** The endpoint's next pending delivery in event order, with its event, and whether it is due now. */
export async function nextPendingDelivery(trx: Transaction<Database>, endpointId: bigint) {
  return trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select([
      'd.event_id as eventId',
      'd.attempts',
      'e.type',
      'e.at',
      sql<string>`e.data::text`.as('data'),
      'e.traceparent',
      sql<boolean>`d.next_attempt_at <= clock_timestamp()`.as('due')
    ])
    .where('d.endpoint_id', '=', endpointId)
    .where('d.status', '=', 'pending')
    .orderBy('d.event_id')
    .limit(1)
    .executeTakeFirst()
}

/** The endpoint's answer, as kept: its HTTP status (null when none came) and the start of its body or the error. */
export interface DeliveryAnswer {
  status: number | null
  response: string
}

export async function recordDelivered(
  trx: Transaction<Database>,
  endpointId: bigint,
  eventId: bigint,
  answer: DeliveryAnswer
): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set({
      status: 'delivered',
      attempts: sql<number>`attempts + 1`,
      last_attempt_at: sql<Date>`clock_timestamp()`,
      last_status: answer.status,
      last_response: answer.response,
      finished_at: sql<Date>`clock_timestamp()`
    })
    .where('endpoint_id', '=', endpointId)
    .where('event_id', '=', eventId)
    .execute()
  await trx
    .updateTable('webhook_endpoints')
    .set({ failing_since: null })
    .where('id', '=', endpointId)
    .where('failing_since', 'is not', null)
    .execute()
}

/**
 * A failed attempt: retried after `retrySeconds`, or, once the delivery is 24 hours old, failed for
 * good. The endpoint is failing from its first failure since a success, and paused when that was an
 * hour ago or more; all by the database's clock.
 */
export async function recordFailedAttempt(
  trx: Transaction<Database>,
  endpointId: bigint,
  eventId: bigint,
  answer: DeliveryAnswer,
  retrySeconds: number
): Promise<{ failed: boolean; paused: { failingSince: Date } | undefined }> {
  const delivery = await trx
    .updateTable('webhook_deliveries')
    .set({
      attempts: sql<number>`attempts + 1`,
      last_attempt_at: sql<Date>`clock_timestamp()`,
      last_status: answer.status,
      last_response: answer.response,
      status: sql<WebhookDeliveryStatus>`CASE WHEN created_at + interval '24 hours' <= clock_timestamp() THEN 'failed' ELSE 'pending' END`,
      finished_at: sql<Date | null>`CASE WHEN created_at + interval '24 hours' <= clock_timestamp() THEN clock_timestamp() END`,
      next_attempt_at: sql<Date>`clock_timestamp() + make_interval(secs => ${retrySeconds})`
    })
    .where('endpoint_id', '=', endpointId)
    .where('event_id', '=', eventId)
    .returning('status')
    .executeTakeFirstOrThrow()
  const endpoint = await trx
    .updateTable('webhook_endpoints')
    .set({
      failing_since: sql<Date>`coalesce(failing_since, clock_timestamp())`,
      paused_at: sql<Date | null>`CASE WHEN failing_since <= clock_timestamp() - interval '1 hour' THEN clock_timestamp() END`
    })
    .where('id', '=', endpointId)
    .returning(['paused_at as pausedAt', 'failing_since as failingSince'])
    .executeTakeFirstOrThrow()
  return {
    failed: delivery.status === 'failed',
    paused: endpoint.pausedAt ? { failingSince: endpoint.failingSince! } : undefined
  }
}

export interface WebhookDeliveryRecord {
  endpointId: bigint
  eventId: bigint
  type: string
  status: WebhookDeliveryStatus
  attempts: number
  createdAt: Date
  nextAttemptAt: Date | null
  lastAttemptAt: Date | null
  lastStatus: number | null
  lastResponse: string | null
  finishedAt: Date | null
}

/** An endpoint's deliveries newest first: a page of `limit` before `beforeEventId`, optionally of one status. */
export async function listWebhookDeliveries(
  db: Db,
  endpointId: bigint,
  page: { status?: WebhookDeliveryStatus; beforeEventId?: bigint; limit?: number } = {}
): Promise<WebhookDeliveryRecord[]> {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select([
      'd.endpoint_id as endpointId',
      'd.event_id as eventId',
      'e.type',
      'd.status',
      'd.attempts',
      'd.created_at as createdAt',
      sql<Date | null>`CASE WHEN d.status = 'pending' THEN d.next_attempt_at END`.as('nextAttemptAt'),
      'd.last_attempt_at as lastAttemptAt',
      'd.last_status as lastStatus',
      'd.last_response as lastResponse',
      'd.finished_at as finishedAt'
    ])
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('d.event_id', 'desc')
  if (page.status !== undefined) query = query.where('d.status', '=', page.status)
  if (page.beforeEventId !== undefined) query = query.where('d.event_id', '<', page.beforeEventId)
  if (page.limit !== undefined) query = query.limit(page.limit)
  return query.execute()
}

/** Sends a failed delivery again: pending, due now, its 24 hours counted afresh. */
export async function retryWebhookDelivery(db: Db, endpointId: bigint, eventId: bigint): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'pending',
      created_at: sql<Date>`clock_timestamp()`,
      next_attempt_at: sql<Date>`clock_timestamp()`,
      finished_at: null
    })
    .where('endpoint_id', '=', endpointId)
    .where('event_id', '=', eventId)
    .where('status', '=', 'failed')
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** An endpoint resumed: its pending deliveries are due now, whenever their next attempt was to be. */
export async function makePendingDeliveriesDue(db: Db, endpointId: bigint): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: sql<Date>`clock_timestamp()` })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '>', sql<Date>`clock_timestamp()`)
    .execute()
}

/** What waits to be sent to endpoints that are not paused, and for how long the oldest has; the paused endpoints. */
export async function readWebhookBacklog(db: Db) {
  const { rows } = await sql<{ pending: string; oldestSeconds: number | null; paused: string }>`
    SELECT
      (SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND e.paused_at IS NULL) AS pending,
      (SELECT extract(epoch FROM clock_timestamp() - min(d.created_at))::float8
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND e.paused_at IS NULL) AS "oldestSeconds",
      (SELECT count(*) FROM webhook_endpoints WHERE paused_at IS NOT NULL) AS paused
  `.execute(db)
  const row = rows[0]!
  return { pending: Number(row.pending), oldestSeconds: row.oldestSeconds ?? 0, paused: Number(row.paused) }
}

/**
 * Deletes deliveries finished more than `days` days ago, then the events older than that which no
 * delivery needs any more (pending ones keep theirs). By the database's clock.
 */
export async function deleteFinishedWebhookDeliveries(db: Db, days: number): Promise<number> {
  const deliveries = await db
    .deleteFrom('webhook_deliveries')
    .where('status', '<>', 'pending')
    .where('finished_at', '<', sql<Date>`now() - make_interval(days => ${days})`)
    .executeTakeFirst()
  await db
    .deleteFrom('webhook_events as e')
    .where('e.at', '<', sql<Date>`now() - make_interval(days => ${days})`)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('webhook_deliveries as d').select('d.event_id').whereRef('d.event_id', '=', 'e.id')))
    )
    .execute()
  return Number(deliveries.numDeletedRows)
}
