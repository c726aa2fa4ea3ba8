import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../db/schema.js'

type Db = Kysely<Database> | Transaction<Database>

/** The kinds of event the outbox carries; docs/webhooks.md gives each one's `data`. */
export type WebhookEventType =
  | 'key.created'
  | 'key.rotated'
  | 'key.revoked'
  | 'account.created'
  | 'plan.changed'
  | 'key.banned'
  | 'usage.threshold'
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
 * exists exactly when the change does; the delivery worker sends it after the commit.
 */
export async function appendWebhookEvent(db: Db, event: NewWebhookEvent): Promise<void> {
  await db
    .insertInto('webhook_events')
    .values({
      type: event.type,
      account_id: event.accountId === null ? null : BigInt(event.accountId),
      // An id that slipped through as a bigint is written as its digits, as the admin API shows it.
      data: JSON.stringify(event.data, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))
    })
    .execute()
}
