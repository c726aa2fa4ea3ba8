import type { Kysely } from 'kysely'
import type { Database, WebhookDeliveryStatus } from '../db/schema.js'
import { InvalidInputError, NotFoundError } from '../errors.js'
import { appendAuditEvent } from '../repositories/audit-events.js'
import {
  listWebhookDeliveries,
  makePendingDeliveriesDue,
  retryWebhookDelivery,
  type WebhookDeliveryRecord
} from '../repositories/webhook-deliveries.js'
import {
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  insertWebhookEndpoint,
  listWebhookEndpoints,
  lockWebhookEndpoint,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
  type WebhookEndpointRecord
} from '../repositories/webhook-endpoints.js'
import type { WebhookEventType } from '../repositories/webhook-events.js'
import { checkEndpointUrl, RefusedAddressError, type AddressPolicy } from '../webhooks/address-policy.js'
import { newWebhookSecret } from '../webhooks/signing.js'
import { changedFields, checkGraceSeconds, checkName, type Actor } from './rules.js'

// What the CLI and the admin API do with webhook endpoints and their deliveries. Nothing here knows
// of HTTP or of the terminal; every change is written with its audit event in one transaction.

type Db = Kysely<Database>

/** Every event type an endpoint may take; docs/webhooks.md gives each one's data. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'key.created',
  'key.rotated',
  'key.revoked',
  'key.leaked',
  'key.expiring',
  'account.created',
  'plan.changed',
  'key.banned',
  'usage.threshold',
  'limit.would_refuse',
  'usage.reported',
  'endpoint.paused'
]

/** An endpoint as operators see it, in the CLI's --json and the admin API: never its secret. */
export function describeEndpoint(record: WebhookEndpointRecord) {
  return {
    id: record.id,
    url: record.url,
    events: record.events,
    description: record.description,
    paused: record.pausedAt !== null,
    pausedAt: record.pausedAt?.toISOString() ?? null,
    failingSince: record.failingSince?.toISOString() ?? null,
    previousSecretUntil: record.previousSecretUntil?.toISOString() ?? null,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString()
  }
}

export function describeDelivery(record: WebhookDeliveryRecord) {
  return {
    eventId: record.eventId,
    type: record.type,
    status: record.status,
    attempts: record.attempts,
    createdAt: record.createdAt.toISOString(),
    nextAttemptAt: record.nextAttemptAt?.toISOString() ?? null,
    lastAttemptAt: record.lastAttemptAt?.toISOString() ?? null,
    lastStatus: record.lastStatus,
    lastResponse: record.lastResponse,
    finishedAt: record.finishedAt?.toISOString() ?? null
  }
}

function checkUrl(url: string, policy: AddressPolicy): string {
  try {
    return checkEndpointUrl(url, policy).toString()
  } catch (error) {
    if (error instanceof RefusedAddressError) throw new InvalidInputError(`url: ${error.message}`)
    throw error
  }
}

function checkEvents(events: string[]): string[] {
  if (events.length === 0) throw new InvalidInputError('events must name at least one event type')
  const unknown = events.filter((type) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type))
  if (unknown.length) {
    throw new InvalidInputError(`events has ${unknown.join(', ')}; the types are ${WEBHOOK_EVENT_TYPES.join(', ')}`)
  }
  return [...new Set(events)]
}

const audited = (record: WebhookEndpointRecord) => ({
  url: record.url,
  events: record.events,
  description: record.description,
  pausedAt: record.pausedAt
})

/** Registers an endpoint; its secret is in this answer only. */
export async function createEndpoint(
  db: Db,
  actor: Actor,
  fields: { url: string; events: string[]; description?: string | null },
  policy: AddressPolicy
): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
  const url = checkUrl(fields.url, policy)
  const events = checkEvents(fields.events)
  const description = checkName('description', fields.description) ?? null
  const secret = newWebhookSecret()
  const endpoint = await db.transaction().execute(async (trx) => {
    const endpoint = await insertWebhookEndpoint(trx, { url, events, description, secret })
    await appendAuditEvent(trx, {
      ...actor,
      action: 'webhook.created',
      accountId: null,
      keyId: null,
      changes: { endpointId: { before: null, after: String(endpoint.id) }, ...changedFields(null, audited(endpoint)) }
    })
    return endpoint
  })
  return { endpoint, secret }
}

export async function getEndpoint(db: Db, id: bigint): Promise<WebhookEndpointRecord> {
  return (await getWebhookEndpoint(db, id)) ?? notFound(id)
}

/** Endpoints in ascending id order, `limit` at a time, and whether more follow. */
export async function listEndpoints(db: Db, page: { limit?: number; afterId?: bigint } = {}) {
  const { limit, afterId } = page
  const endpoints = await listWebhookEndpoints(db, { afterId, limit: limit === undefined ? undefined : limit + 1 })
  const hasMore = limit !== undefined && endpoints.length > limit
  if (hasMore) endpoints.pop()
  return { endpoints, hasMore }
}

/** Changes the URL, the events, the description, or pauses or resumes the endpoint. */
export async function changeEndpoint(
  db: Db,
  actor: Actor,
  id: bigint,
  changes: { url?: string; events?: string[]; description?: string | null; paused?: boolean },
  policy: AddressPolicy
): Promise<WebhookEndpointRecord> {
  const url = changes.url === undefined ? undefined : checkUrl(changes.url, policy)
  const events = changes.events === undefined ? undefined : checkEvents(changes.events)
  const description = checkName('description', changes.description)
  return db.transaction().execute(async (trx) => {
    const current = (await lockWebhookEndpoint(trx, id)) ?? notFound(id)
    const updated = (await updateWebhookEndpoint(trx, id, { url, events, description, paused: changes.paused }))!
    if (current.pausedAt !== null && updated.pausedAt === null) await makePendingDeliveriesDue(trx, id)
    const fields = changedFields(audited(current), audited(updated))
    if (Object.keys(fields).length) {
      await appendAuditEvent(trx, {
        ...actor,
        action: 'webhook.changed',
        accountId: null,
        keyId: null,
        changes: { endpointId: { before: String(id), after: String(id) }, ...fields }
      })
    }
    return updated
  })
}

/** A new secret, shown once; the previous one keeps signing for `graceSeconds` (default a day). */
export async function rotateEndpointSecret(
  db: Db,
  actor: Actor,
  id: bigint,
  graceSeconds = 24 * 3600
): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
  checkGraceSeconds(graceSeconds)
  const secret = newWebhookSecret()
  const endpoint = await db.transaction().execute(async (trx) => {
    const endpoint = (await rotateWebhookEndpointSecret(trx, id, secret, graceSeconds)) ?? notFound(id)
    await appendAuditEvent(trx, {
      ...actor,
      action: 'webhook.secret_rotated',
      accountId: null,
      keyId: null,
      changes: {
        endpointId: { before: String(id), after: String(id) },
        previousSecretUntil: { before: null, after: endpoint.previousSecretUntil?.toISOString() ?? null }
      }
    })
    return endpoint
  })
  return { endpoint, secret }
}

/** Deletes the endpoint and its deliveries, sent or not. */
export async function deleteEndpoint(db: Db, actor: Actor, id: bigint): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const current = (await lockWebhookEndpoint(trx, id)) ?? notFound(id)
    await deleteWebhookEndpoint(trx, id)
    await appendAuditEvent(trx, {
      ...actor,
      action: 'webhook.deleted',
      accountId: null,
      keyId: null,
      changes: { endpointId: { before: String(id), after: null }, url: { before: current.url, after: null } }
    })
  })
}

/** The endpoint's deliveries newest first, `limit` at a time, and whether more follow. */
export async function listDeliveries(
  db: Db,
  id: bigint,
  page: { status?: WebhookDeliveryStatus; beforeEventId?: bigint; limit?: number } = {}
) {
  await getEndpoint(db, id)
  const { limit } = page
  const deliveries = await listWebhookDeliveries(db, id, {
    ...page,
    limit: limit === undefined ? undefined : limit + 1
  })
  const hasMore = limit !== undefined && deliveries.length > limit
  if (hasMore) deliveries.pop()
  return { deliveries, hasMore }
}

/**
 * Sends a failed delivery again, with 24 hours of attempts afresh, and records its audit event; only
 * a failed delivery can be retried.
 */
export async function retryDelivery(db: Db, actor: Actor, id: bigint, eventId: bigint): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await getEndpoint(trx, id)
    if (!(await retryWebhookDelivery(trx, id, eventId))) {
      throw new InvalidInputError(`Endpoint ${id} has no failed delivery of event ${eventId}`)
    }
    await appendAuditEvent(trx, {
      ...actor,
      action: 'webhook.delivery_retried',
      accountId: null,
      keyId: null,
      changes: {
        endpointId: { before: String(id), after: String(id) },
        eventId: { before: String(eventId), after: String(eventId) },
        status: { before: 'failed', after: 'pending' }
      }
    })
  })
}

function notFound(id: bigint): never {
  throw new NotFoundError(`No webhook endpoint with id ${id}`)
}
