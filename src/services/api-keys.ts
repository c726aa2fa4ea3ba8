import type { Kysely, Transaction } from 'kysely'
import type { Database, PlanName } from '../db/schema.js'
import { getAccount, findAccountByExternalId, lockAccount, updateAccount } from '../repositories/accounts.js'
import {
  ApiKeyError,
  getApiKey,
  issueApiKey,
  listApiKeys,
  lockApiKey,
  revokeApiKey,
  rotateApiKey,
  updateApiKey,
  type ApiKeyRecord,
  type CustomLimits,
  type IssuedApiKey
} from '../repositories/api-keys.js'
import { appendAuditEvent } from '../repositories/audit-events.js'
import { appendWebhookEvent } from '../repositories/webhook-events.js'
import { readUsage, type DayOfUsage } from '../repositories/usage.js'
import { changedFields, checkExpiry, checkName, checkScopes, ConflictError, type Actor } from './rules.js'

// What the CLI and the admin API do with keys: the rules of plans, limits, scopes and expiry, "no such
// key", and an audit event in the transaction of every change. Nothing here knows of HTTP or of the terminal.

type Db = Kysely<Database>

const DAY_MS = 86_400_000

/** No key has this id. */
export class KeyNotFoundError extends Error {}

export interface KeyFields {
  /** For a key in an account of its own, made with it; a key of an existing account takes the account's. */
  plan?: PlanName
  /** The account by its id. */
  accountId?: bigint
  /** The account by its externalId. */
  externalId?: string
  /** An account's id or its externalId, refused when it could name two accounts (kept for older callers). */
  account?: string
  name?: string | null
  perMinute?: number
  perDay?: number
  expiresAt?: string | Date | null
  scopes?: string[]
}

/** An enterprise plan carries its own limits, both of them; the other plans carry none. */
export function limitsFor(
  plan: PlanName,
  perMinute: number | undefined,
  perDay: number | undefined
): CustomLimits | null {
  if (plan !== 'enterprise') {
    if (perMinute !== undefined || perDay !== undefined) {
      throw new ApiKeyError(`The ${plan} plan has fixed limits; per-minute and per-day limits are for enterprise`)
    }
    return null
  }
  if (perMinute === undefined || perDay === undefined) {
    throw new ApiKeyError('The enterprise plan needs its own per-minute and per-day limits, both of them')
  }
  return { perMinute, perDay }
}

/** A key as operators see it, in the CLI's --json and the admin API: its fields, never its secret's hash. */
export function describeKey(record: ApiKeyRecord) {
  return {
    id: record.id,
    accountId: record.accountId,
    prefix: record.prefix,
    name: record.name,
    scopes: record.scopes,
    plan: record.plan,
    perMinute: record.perMinute,
    perDay: record.perDay,
    createdAt: record.createdAt.toISOString(),
    expiresAt: record.expiresAt?.toISOString() ?? null,
    revokedAt: record.revokedAt?.toISOString() ?? null
  }
}

/** What an audit event records of a key: the fields that can change, never a secret or its hash. */
const auditedKey = (record: ApiKeyRecord) => ({
  name: record.name,
  scopes: record.scopes,
  expiresAt: record.expiresAt,
  revokedAt: record.revokedAt
})
const auditedPlan = (record: { plan: PlanName; perMinute: number; perDay: number }) => ({
  plan: record.plan,
  perMinute: record.perMinute,
  perDay: record.perDay
})

/** A key as webhook events carry it (docs/webhooks.md). */
const keyEvent = (record: ApiKeyRecord) => ({
  key: {
    id: String(record.id),
    prefix: record.prefix,
    name: record.name,
    accountId: String(record.accountId),
    scopes: record.scopes
  }
})

/** An account as its `account.created` event carries it. */
export const accountEvent = (account: {
  id: bigint
  name: string | null
  externalId: string | null
  plan: string
}) => ({
  account: { id: String(account.id), name: account.name, externalId: account.externalId, plan: account.plan }
})

/**
 * The account named by `accountId` or `externalId`, one of them, or by `account`, text that may be
 * either: it names the account whose id or externalId it is, and is refused when it is one
 * account's id and another's externalId.
 */
export async function resolveAccount(
  db: Db | Transaction<Database>,
  named: { accountId?: bigint; externalId?: string; account?: string }
) {
  const given = [named.accountId, named.externalId, named.account].filter((value) => value !== undefined)
  if (given.length > 1) throw new ApiKeyError('Name the account once: accountId or externalId, not both')
  if (named.accountId !== undefined) {
    return (await getAccount(db, named.accountId)) ?? refuse(`No account has the id ${named.accountId}`)
  }
  if (named.externalId !== undefined) {
    return (
      (await findAccountByExternalId(db, named.externalId)) ??
      refuse(`No account has the externalId '${named.externalId}'`)
    )
  }
  const account = named.account!
  const byId = /^[1-9][0-9]{0,18}$/.test(account) ? await getAccount(db, BigInt(account)) : undefined
  const byExternalId = await findAccountByExternalId(db, account)
  if (byId && byExternalId && byId.id !== byExternalId.id) {
    throw new ApiKeyError(
      `'${account}' is the id of account ${byId.id} and the externalId of account ${byExternalId.id}: send accountId or externalId`
    )
  }
  return byId ?? byExternalId ?? refuse(`No account has the id or externalId '${account}'`)
}

function refuse(message: string): never {
  throw new ApiKeyError(message)
}

/**
 * Issues a key: in the account named, or in a new account of its own with `plan` (and its limits),
 * so that a customer with one key needs no account of its own making.
 */
export async function createKey(db: Db, actor: Actor, fields: KeyFields, now: number): Promise<IssuedApiKey> {
  const name = checkName('name', fields.name) ?? undefined
  const expiresAt = checkExpiry(fields.expiresAt, now) ?? undefined
  const scopes = checkScopes(fields.scopes)
  return db.transaction().execute(async (trx) => {
    let issued: IssuedApiKey
    if (fields.account !== undefined || fields.accountId !== undefined || fields.externalId !== undefined) {
      if (fields.plan !== undefined || fields.perMinute !== undefined || fields.perDay !== undefined) {
        throw new ApiKeyError("A key of an existing account has the account's plan and limits; change them there")
      }
      const account = await resolveAccount(trx, fields)
      const locked = (await lockAccount(trx, account.id))!
      if (locked.closedAt) throw new ConflictError('account_closed', `Account ${account.id} is closed`)
      issued = await issueApiKey(trx, { accountId: account.id, name, expiresAt, scopes })
    } else {
      if (fields.plan === undefined) throw new ApiKeyError('A key needs a plan, or an account whose plan it shares')
      const limits = limitsFor(fields.plan, fields.perMinute, fields.perDay) ?? undefined
      issued = await issueApiKey(trx, { plan: fields.plan, limits, name, expiresAt, scopes })
      await appendAuditEvent(trx, {
        ...actor,
        action: 'account.created',
        accountId: issued.accountId,
        keyId: null,
        changes: changedFields(null, auditedPlan(issued))
      })
      const account = (await getAccount(trx, issued.accountId))!
      await appendWebhookEvent(trx, {
        type: 'account.created',
        accountId: account.id,
        data: accountEvent(account)
      })
    }
    await appendAuditEvent(trx, {
      ...actor,
      action: 'key.created',
      accountId: issued.accountId,
      keyId: issued.id,
      changes: changedFields(null, { prefix: issued.prefix, ...auditedKey(issued) })
    })
    await appendWebhookEvent(trx, { type: 'key.created', accountId: issued.accountId, data: keyEvent(issued) })
    return issued
  })
}

/** Keys in ascending id order, every one or `limit` at a time, and whether more follow. */
export async function listKeys(db: Db, page: { limit?: number; afterId?: bigint; accountId?: bigint } = {}) {
  const { limit, afterId, accountId } = page
  const keys = await listApiKeys(db, { afterId, accountId, limit: limit === undefined ? undefined : limit + 1 })
  const hasMore = limit !== undefined && keys.length > limit
  if (hasMore) keys.pop()
  return { keys, hasMore }
}

export async function getKey(db: Db, id: bigint): Promise<ApiKeyRecord> {
  return (await getApiKey(db, id)) ?? notFound(id)
}

async function lockUsableKey(trx: Transaction<Database>, id: bigint, verb: string): Promise<ApiKeyRecord> {
  const key = (await lockApiKey(trx, id)) ?? notFound(id)
  if (key.revokedAt) throw new ConflictError('key_revoked', `Key ${id} is revoked; a revoked key cannot be ${verb}`)
  return key
}

/**
 * Changes the fields given and keeps the others, in one transaction with the key's row locked. The
 * plan and limits are the account's: changing them through a key changes them for all of its keys.
 * Moving to enterprise needs both limits (unless the account is enterprise already); moving away drops them.
 */
export async function changeKey(
  db: Db,
  actor: Actor,
  id: bigint,
  changes: Omit<KeyFields, 'account' | 'accountId' | 'externalId'>,
  now: number
): Promise<ApiKeyRecord> {
  const name = checkName('name', changes.name)
  const expiresAt = checkExpiry(changes.expiresAt, now)
  const scopes = checkScopes(changes.scopes)
  return db.transaction().execute(async (trx) => {
    const current = await lockUsableKey(trx, id, 'changed')
    const touchesPlan = changes.plan !== undefined || changes.perMinute !== undefined || changes.perDay !== undefined
    if (touchesPlan) await changePlan(trx, actor, current.accountId, changes, id)
    const updated = (await updateApiKey(trx, id, { name, expiresAt, scopes }))!
    const keyChanges = changedFields(auditedKey(current), auditedKey(updated))
    if (Object.keys(keyChanges).length) {
      await appendAuditEvent(trx, {
        ...actor,
        action: 'key.changed',
        accountId: updated.accountId,
        keyId: id,
        changes: keyChanges
      })
    }
    return updated
  })
}

/** Sets an account's plan and limits, with its event; the account's row locked. */
export async function changePlan(
  trx: Transaction<Database>,
  actor: Actor,
  accountId: bigint,
  changes: { plan?: PlanName; perMinute?: number; perDay?: number; name?: string | null },
  keyId: bigint | null = null
) {
  const current = (await lockAccount(trx, accountId))!
  if (current.closedAt) throw new ConflictError('account_closed', `Account ${accountId} is closed`)
  const plan = changes.plan ?? current.plan
  const touchesLimits = changes.plan !== undefined || changes.perMinute !== undefined || changes.perDay !== undefined
  const stays = plan === 'enterprise' && current.plan === 'enterprise'
  const limits = touchesLimits
    ? limitsFor(
        plan,
        changes.perMinute ?? (stays ? current.perMinute : undefined),
        changes.perDay ?? (stays ? current.perDay : undefined)
      )
    : undefined
  const updated = (await updateAccount(trx, accountId, { plan: changes.plan, limits, name: changes.name }))!
  const fields = (record: typeof current) => ({ name: record.name, ...auditedPlan(record) })
  const accountChanges = changedFields(fields(current), fields(updated))
  if (Object.keys(accountChanges).length) {
    await appendAuditEvent(trx, { ...actor, action: 'account.changed', accountId, keyId, changes: accountChanges })
  }
  return updated
}

/** Revokes the key; revoking it again changes nothing and records nothing. */
export async function revokeKey(db: Db, actor: Actor, id: bigint): Promise<ApiKeyRecord> {
  return db.transaction().execute(async (trx) => {
    const current = (await lockApiKey(trx, id)) ?? notFound(id)
    if (current.revokedAt) return current
    const revoked = (await revokeApiKey(trx, id))!
    await appendAuditEvent(trx, {
      ...actor,
      action: 'key.revoked',
      accountId: revoked.accountId,
      keyId: id,
      changes: changedFields(auditedKey(current), auditedKey(revoked))
    })
    await appendWebhookEvent(trx, { type: 'key.revoked', accountId: revoked.accountId, data: keyEvent(revoked) })
    return revoked
  })
}

/** A new secret, shown once; the old one stops working. A revoked key cannot be rotated. */
export async function rotateKey(db: Db, actor: Actor, id: bigint): Promise<IssuedApiKey> {
  return db.transaction().execute(async (trx) => {
    const current = await lockUsableKey(trx, id, 'rotated')
    const rotated = (await rotateApiKey(trx, id))!
    await appendAuditEvent(trx, {
      ...actor,
      action: 'key.rotated',
      accountId: rotated.accountId,
      keyId: id,
      changes: { prefix: { before: current.prefix, after: rotated.prefix } }
    })
    await appendWebhookEvent(trx, { type: 'key.rotated', accountId: rotated.accountId, data: keyEvent(rotated) })
    return rotated
  })
}

/** The UTC days, today first, from `now` back over `days` days, as YYYY-MM-DD. */
export function lastDays(days: number, now: number): string[] {
  const today = now - (now % DAY_MS)
  return Array.from({ length: days }, (_, ago) => new Date(today - ago * DAY_MS).toISOString().slice(0, 10))
}

/** Stored days in the order of `dates`; days without requests count 0. */
export function fillDays(dates: string[], stored: DayOfUsage[]): DayOfUsage[] {
  const byDate = new Map(stored.map((day) => [day.date, day]))
  return dates.map((date) => byDate.get(date) ?? { date, admitted: 0, refused: 0 })
}

/** The key's usage on each of the last `days` UTC days, today first; days without requests count 0. */
export async function keyUsage(db: Db, id: bigint, days: number, now: number): Promise<DayOfUsage[]> {
  await getKey(db, id)
  const dates = lastDays(days, now)
  return fillDays(dates, await readUsage(db, id, dates.at(-1)!))
}

function notFound(id: bigint): never {
  throw new KeyNotFoundError(`No key with id ${id}`)
}
