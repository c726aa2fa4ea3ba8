import type { Kysely, Transaction } from 'kysely'
import { sql } from 'kysely'
import type { Database } from '../db/schema.js'

type Db = Kysely<Database> | Transaction<Database>

/** One field's value before and after a change; null where it had none. */
export interface FieldChange {
  before: unknown
  after: unknown
}

export interface NewAuditEvent {
  actor: string
  onBehalfOf?: string | null
  action: string
  accountId: bigint | null
  keyId: bigint | null
  changes: Record<string, FieldChange>
  requestId: string | null
  /** The SHA-256 of the token presented: needed for a `bootstrap` or `operator:` actor (migrations/0029). */
  credential?: Buffer | null
}

export interface AuditEvent extends Omit<NewAuditEvent, 'credential'> {
  id: bigint
  at: Date
}

/**
 * Appends one event, written in the transaction of the change it records, through the one function
 * that may (migration 0021): it stamps the database's now() and the next id itself, and refuses an
 * actor of no known shape or naming no operator or key.
 */
export async function appendAuditEvent(db: Db, event: NewAuditEvent): Promise<void> {
  await sql`
    SELECT append_audit_event(${event.actor}, ${event.action}, ${event.accountId}, ${event.keyId},
      ${JSON.stringify(event.changes)}::jsonb, ${event.requestId}, ${event.onBehalfOf ?? null}, ${event.credential ?? null}::bytea)
  `.execute(db)
}

/** Events newest first: a page of `limit` before `beforeId`, filtered by account, key and earliest instant. */
export async function listAuditEvents(
  db: Db,
  page: { beforeId?: bigint; limit?: number; accountId?: bigint; keyId?: bigint; since?: Date }
): Promise<AuditEvent[]> {
  let query = db
    .selectFrom('audit_events')
    .select([
      'id',
      'at',
      'actor',
      'action',
      'account_id as accountId',
      'key_id as keyId',
      'changes',
      'request_id as requestId',
      'on_behalf_of as onBehalfOf'
    ])
    .orderBy('id', 'desc')
  if (page.beforeId !== undefined) query = query.where('id', '<', page.beforeId)
  if (page.accountId !== undefined) query = query.where('account_id', '=', page.accountId)
  if (page.keyId !== undefined) query = query.where('key_id', '=', page.keyId)
  if (page.since !== undefined) query = query.where('at', '>=', page.since)
  if (page.limit !== undefined) query = query.limit(page.limit)
  const rows = await query.execute()
  return rows.map((row) => ({ ...row, changes: row.changes as Record<string, FieldChange> }))
}

/**
 * Deletes events older than `days` whole days, through the one function that may (migrations 0015,
 * 0021): the service's role has no DELETE on the table, the function counts from the database's
 * clock and refuses fewer days than the floor the schema's owner keeps in audit_retention.
 */
export async function deleteAuditEventsOlderThan(db: Db, days: number): Promise<number> {
  const { rows } = await sql<{ deleted: string }>`SELECT delete_audit_events_older_than(${days}) AS deleted`.execute(db)
  return Number(rows[0]!.deleted)
}
