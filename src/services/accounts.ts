import type { Kysely } from 'kysely'
import type { Database, PlanName } from '../db/schema.js'
import { reportWindow } from '../limits/windows.js'
import {
  closeAccount as closeAccountRow,
  deleteCredits,
  getAccount,
  insertAccount,
  listAccounts as listAccountRows,
  lockAccount,
  lockCredits,
  upsertCredits,
  type AccountRecord,
  type Credits
} from '../repositories/accounts.js'
import { ApiKeyError } from '../repositories/api-keys.js'
import { appendAuditEvent, listAuditEvents, type AuditEvent } from '../repositories/audit-events.js'
import { appendWebhookEvent } from '../repositories/webhook-events.js'
import { readAccountKeyBans, readStanding } from '../repositories/rate-limits.js'
import { readAccountUsage, type DayOfUsage } from '../repositories/usage.js'
import {
  accountEvent,
  changePlan,
  describeOverride,
  fillDays,
  lastDays,
  startOverrides,
  type OverrideInput,
  type PlanChanges
} from './api-keys.js'
import { checkPlanExists } from './plans.js'
import {
  auditedMetadata,
  changedFields,
  checkExternalId,
  checkMetadata,
  checkName,
  ConflictError,
  type Actor
} from './rules.js'

// What the CLI and the admin API do with accounts and the audit trail. Nothing here knows of HTTP or
// of the terminal; every change is written with its event in one transaction.

type Db = Kysely<Database>

/** No account has this id. */
export class AccountNotFoundError extends Error {}

export interface AccountFields {
  externalId?: string | null
  name?: string | null
  plan: PlanName
  perMinute?: number
  perDay?: number
  overrides?: readonly OverrideInput[]
  /** A JSON object as parsed from a request. */
  metadata?: unknown
}

/** An account as operators see it, in the CLI's --json and the admin API. */
export function describeAccount(record: AccountRecord) {
  return {
    id: record.id,
    externalId: record.externalId,
    name: record.name,
    plan: record.plan,
    perMinute: record.perMinute === null ? null : BigInt(record.perMinute),
    perDay: record.perDay === null ? null : BigInt(record.perDay),
    overrides: record.overrides.map(describeOverride),
    credits: record.credits && describeCredits(record.credits),
    metadata: record.metadata,
    createdAt: record.createdAt.toISOString(),
    closedAt: record.closedAt?.toISOString() ?? null
  }
}

export const describeCredits = (credits: Credits) => ({
  // A balance is at most 1e12 per add (CreditChange): far inside a double's exact integers.
  remaining: Number(credits.remaining),
  refill: credits.refill && { amount: Number(credits.refill.amount), every: credits.refill.every },
  refilledAt: credits.refilledAt.toISOString()
})

/** An event as the admin API and `audit list --json` show it. */
export function describeEvent(event: AuditEvent) {
  return {
    id: event.id,
    at: event.at.toISOString(),
    actor: event.actor,
    action: event.action,
    accountId: event.accountId,
    keyId: event.keyId,
    changes: event.changes,
    requestId: event.requestId,
    onBehalfOf: event.onBehalfOf ?? null
  }
}

const UNIQUE_VIOLATION = '23505'

export async function createAccount(db: Db, actor: Actor, fields: AccountFields): Promise<AccountRecord> {
  const externalId = fields.externalId == null ? null : checkExternalId(fields.externalId)
  const name = checkName('name', fields.name) ?? null
  const metadata = checkMetadata(fields.metadata)
  try {
    return await db.transaction().execute(async (trx) => {
      await checkPlanExists(trx, fields.plan)
      const id = await insertAccount(trx, { externalId, name, plan: fields.plan, metadata })
      await startOverrides(trx, id, fields)
      const account = (await getAccount(trx, id))!
      const { id: _id, createdAt: _createdAt, closedAt: _closedAt, credits: _credits, ...audited } = account
      await appendAuditEvent(trx, {
        ...actor,
        action: 'account.created',
        accountId: account.id,
        keyId: null,
        changes: changedFields(null, {
          ...audited,
          overrides: audited.overrides.map(describeOverride),
          metadata: auditedMetadata(audited.metadata)
        })
      })
      await appendWebhookEvent(trx, {
        type: 'account.created',
        accountId: account.id,
        data: accountEvent(account)
      })
      return account
    })
  } catch (error) {
    if ((error as { code?: unknown }).code === UNIQUE_VIOLATION) {
      throw new ConflictError('account_exists', `An account with externalId '${externalId}' exists already`)
    }
    throw error
  }
}

export async function getAccountById(db: Db, id: bigint): Promise<AccountRecord> {
  return (await getAccount(db, id)) ?? notFound(id)
}

/** Accounts in ascending id order, `limit` at a time, and whether more follow; optionally the one with `externalId`. */
export async function listAccounts(db: Db, page: { limit?: number; afterId?: bigint; externalId?: string } = {}) {
  const { limit, afterId, externalId } = page
  const accounts = await listAccountRows(db, {
    afterId,
    externalId,
    limit: limit === undefined ? undefined : limit + 1
  })
  const hasMore = limit !== undefined && accounts.length > limit
  if (hasMore) accounts.pop()
  return { accounts, hasMore }
}

/** Changes the account's name, metadata, plan or limits; every key of it follows, on every instance within a second. */
export async function changeAccount(
  db: Db,
  actor: Actor,
  id: bigint,
  changes: Omit<PlanChanges, 'metadata'> & { metadata?: unknown }
): Promise<AccountRecord> {
  const name = checkName('name', changes.name)
  const metadata = checkMetadata(changes.metadata)
  return db.transaction().execute(async (trx) => {
    if (!(await lockAccount(trx, id))) notFound(id)
    return changePlan(trx, actor, id, { ...changes, name, metadata })
  })
}

/**
 * Changes the account's credits: `add` units (one statement, so that adds at once all count; an account
 * without credits starts at 0), or `set` the balance, and set or (null) remove the refill. With its
 * audit event; the credits' row locked.
 */
export async function changeCredits(
  db: Db,
  actor: Actor,
  id: bigint,
  change: { add?: number; set?: number; refill?: { amount: number; every: 'day' | 'month' } | null }
): Promise<Credits> {
  if (change.add !== undefined && change.set !== undefined) throw new ApiKeyError('Give add or set, not both')
  if (change.add === undefined && change.set === undefined && change.refill === undefined) {
    throw new ApiKeyError('Give add, set or refill')
  }
  return db.transaction().execute(async (trx) => {
    const account = (await getAccount(trx, id)) ?? notFound(id)
    if (account.closedAt) throw new ConflictError('account_closed', `Account ${id} is closed`)
    const before = await lockCredits(trx, id)
    if (!before && change.add === undefined && change.set === undefined) {
      throw new ApiKeyError('The account has no credits; a refill needs a balance: give add or set with it')
    }
    const big = (value: number | undefined) => (value === undefined ? undefined : BigInt(value))
    const { add, set, refill } = change
    await upsertCredits(trx, id, {
      add: big(add),
      set: big(set),
      refill: refill && { amount: BigInt(refill.amount), every: refill.every }
    })
    const after = (await getAccount(trx, id))!.credits!
    await appendAuditEvent(trx, {
      ...actor,
      action: 'account.credits',
      accountId: id,
      keyId: null,
      changes: changedFields(before ? creditFields(before) : null, creditFields(after))
    })
    return after
  })
}

const creditFields = (credits: Credits) => ({
  remaining: credits.remaining,
  refill: credits.refill && { amount: String(credits.refill.amount), every: credits.refill.every }
})

/** Removes the account's credits: it has no balance to spend down. Removing none changes nothing. */
export async function removeCredits(db: Db, actor: Actor, id: bigint): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await getAccountById(trx, id)
    const before = await lockCredits(trx, id)
    if (!before || !(await deleteCredits(trx, id))) return
    await appendAuditEvent(trx, {
      ...actor,
      action: 'account.credits',
      accountId: id,
      keyId: null,
      changes: changedFields(creditFields(before), { remaining: null, refill: null })
    })
  })
}

/** Closes the account and revokes all of its keys in one transaction; closing it again changes nothing. */
export async function closeAccount(db: Db, actor: Actor, id: bigint): Promise<AccountRecord> {
  return db.transaction().execute(async (trx) => {
    const current = (await lockAccount(trx, id)) ?? notFound(id)
    if (current.closedAt) return current
    const revoked = await closeAccountRow(trx, id)
    const closed = (await getAccount(trx, id))!
    await appendAuditEvent(trx, {
      ...actor,
      action: 'account.closed',
      accountId: id,
      keyId: null,
      changes: {
        ...changedFields({ closedAt: current.closedAt }, { closedAt: closed.closedAt }),
        revokedKeys: { before: [], after: revoked.map(String) }
      }
    })
    return closed
  })
}

/** The account's usage, all keys together, on each of the last `days` UTC days, today first. */
export async function accountUsage(db: Db, id: bigint, days: number, now: number): Promise<DayOfUsage[]> {
  await getAccountById(db, id)
  const dates = lastDays(days, now)
  return fillDays(dates, await readAccountUsage(db, id, dates.at(-1)!))
}

/**
 * The account's windows and credits as the database holds them at its clock's now, and the running
 * bans of its keys. A count includes the units an instance has leased ahead and not yet served.
 * 3 queries, the last two at once.
 */
export async function accountWindows(db: Db, id: bigint) {
  await getAccountById(db, id)
  const [standing, bans] = await Promise.all([readStanding(db, id, null), readAccountKeyBans(db, id)])
  return {
    windows: standing.windows.map(reportWindow),
    credits: standing.credits,
    bans: bans.map((ban) => ({ keyId: ban.apiKeyId, prefix: ban.prefix, bannedUntil: ban.bannedUntil.toISOString() }))
  }
}

/** Audit events newest first, `limit` at a time, and whether more follow. */
export async function listEvents(
  db: Db,
  page: { limit?: number; beforeId?: bigint; accountId?: bigint; keyId?: bigint; since?: Date }
) {
  const { limit } = page
  const events = await listAuditEvents(db, { ...page, limit: limit === undefined ? undefined : limit + 1 })
  const hasMore = limit !== undefined && events.length > limit
  if (hasMore) events.pop()
  return { events, hasMore }
}

function notFound(id: bigint): never {
  throw new AccountNotFoundError(`No account with id ${id}`)
}
