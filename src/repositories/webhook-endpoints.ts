import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../db/schema.js'

type Db = Kysely<Database> | Transaction<Database>

/** An endpoint as operators see it: never its secrets. */
export interface WebhookEndpointRecord {
  id: bigint
  url: string
  events: string[]
  description: string | null
  pausedAt: Date | null
  failingSince: Date | null
  /** While a rotation's grace runs (by the database's clock), when the previous secret stops signing. */
  previousSecretUntil: Date | null
  createdAt: Date
  updatedAt: Date
}

const endpointColumns = (db: Db) =>
  db
    .selectFrom('webhook_endpoints')
    .select([
      'id',
      'url',
      'events',
      'description',
      'paused_at as pausedAt',
      'failing_since as failingSince',
      sql<Date | null>`CASE WHEN previous_secret_until > now() THEN previous_secret_until END`.as(
        'previousSecretUntil'
      ),
      'created_at as createdAt',
      'updated_at as updatedAt'
    ])

export async function insertWebhookEndpoint(
  db: Db,
  fields: { url: string; events: string[]; description: string | null; secret: string }
): Promise<WebhookEndpointRecord> {
  const { id } = await db.insertInto('webhook_endpoints').values(fields).returning('id').executeTakeFirstOrThrow()
  return (await getWebhookEndpoint(db, id))!
}

export async function getWebhookEndpoint(db: Db, id: bigint): Promise<WebhookEndpointRecord | undefined> {
  return endpointColumns(db).where('id', '=', id).executeTakeFirst()
}

/** The endpoint, its row locked until the transaction ends, so that changes to it queue. */
export async function lockWebhookEndpoint(
  db: Transaction<Database>,
  id: bigint
): Promise<WebhookEndpointRecord | undefined> {
  return endpointColumns(db).where('id', '=', id).forUpdate().executeTakeFirst()
}

/** Endpoints in ascending id order, a page of `limit` after `afterId`. */
export async function listWebhookEndpoints(
  db: Db,
  page: { afterId?: bigint; limit?: number } = {}
): Promise<WebhookEndpointRecord[]> {
  let query = endpointColumns(db).orderBy('id')
  if (page.afterId !== undefined) query = query.where('id', '>', page.afterId)
  if (page.limit !== undefined) query = query.limit(page.limit)
  return query.execute()
}

export interface WebhookEndpointChanges {
  url?: string
  events?: string[]
  description?: string | null
  /** true pauses it now; false resumes it, its failures forgotten. */
  paused?: boolean
}

export async function updateWebhookEndpoint(
  db: Db,
  id: bigint,
  changes: WebhookEndpointChanges
): Promise<WebhookEndpointRecord | undefined> {
  const { url, events, description, paused } = changes
  const row = await db
    .updateTable('webhook_endpoints')
    .set({
      ...(url === undefined ? {} : { url }),
      ...(events === undefined ? {} : { events }),
      ...(description === undefined ? {} : { description }),
      ...(paused === true ? { paused_at: sql<Date>`coalesce(paused_at, now())` } : {}),
      ...(paused === false ? { paused_at: null, failing_since: null } : {}),
      updated_at: sql<Date>`now()`
    })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst()
  return row && getWebhookEndpoint(db, row.id)
}

/**
 * A new secret; the current one keeps signing for `graceSeconds` (by the database's clock), so that
 * receivers can move to the new one while deliveries carry both signatures. A grace of 0 ends it now.
 */
export async function rotateWebhookEndpointSecret(
  db: Db,
  id: bigint,
  secret: string,
  graceSeconds: number
): Promise<WebhookEndpointRecord | undefined> {
  const grace = graceSeconds > 0
  const row = await db
    .updateTable('webhook_endpoints')
    .set({
      secret,
      previous_secret: grace ? sql<string>`secret` : null,
      previous_secret_until: grace ? sql<Date>`now() + make_interval(secs => ${graceSeconds})` : null,
      updated_at: sql<Date>`now()`
    })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst()
  return row && getWebhookEndpoint(db, row.id)
}

export async function deleteWebhookEndpoint(db: Db, id: bigint): Promise<boolean> {
  const result = await db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}
