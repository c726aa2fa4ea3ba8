import type { Kysely, Transaction } from 'kysely'
import type { Database, PlanName } from '../db/schema.js'
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.js'
import { getAccount, lockAccount } from '../repositories/accounts.js'
import {
  getApiKey,
  issueApiKey,
  listApiKeys,
  lockApiKey,
  lockKeysBySecrets,
  newApiKeySecret,
  revokeApiKey,
  rotateApiKey,
  updateApiKey,
  type ApiKeyDetails,
  type IssuedApiKey
} from '../repositories/api-keys.js'
import { appendAuditEvent } from '../repositories/audit-events.js'
import { readDatabaseNow } from '../repositories/rate-limits.js'
import { readUsage, type DayOfUsage } from '../repositories/usage.js'
import { appendWebhookEvent } from '../repositories/webhook-events.js'
import {
  accountEvent,
  auditedAccountPlan,
  changePlan,
  fillDays,
  lastDays,
  resolveAccount,
  shorthandLimits,
  type OverrideInput
} from './accounts.js'
import { checkPlanExists } from './plans.js'
import {
  auditedMetadata,
  changedFields,
  checkAllowedAddresses,
  checkExpiry,
  checkGraceSeconds,
  checkMetadata,
  checkName,
  checkScopes,
  type Actor
} from './rules.js'

// What the CLI and the admin API do with keys: the rules of scopes and expiry, rotation, revocation, "no
// such key", and an audit event in the transaction of every change. A key's plan and limits are its
// account's (services/accounts.ts). Nothing here knows of HTTP or of the terminal.

type Db = Kysely<Database>

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
  /** The account's overrides, replaced whole (on a change). */
  overrides?: readonly OverrideInput[]
  expiresAt?: string | Date | null
  scopes?: string[]
  /** CIDR ranges or bare addresses the key may be used from; null or none: any. */
  allowedAddresses?: readonly string[] | null
  /** The key's metadata, a JSON object as parsed from a request; replaced whole (on a change). */
  metadata?: unknown
}

/** A key as operators see it, in the CLI's --json and the admin API: its fields, never its secret's hash. */
export function describeKey(record: ApiKeyDetails) {
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
    revokedAt: record.revokedAt?.toISOString() ?? null,
    previousPrefix: record.previousPrefix,
    previousSecretExpiresAt: record.previousSecretExpiresAt?.toISOString() ?? null,
    allowedAddresses: record.allowedAddresses,
    metadata: record.metadata
  }
}

/** What an audit event records of a key: the fields that can change, never a secret or its hash. */
const auditedKey = (record: ApiKeyDetails) => ({
  name: record.name,
  scopes: record.scopes,
  expiresAt: record.expiresAt,
  revokedAt: record.revokedAt,
  allowedAddresses: record.allowedAddresses,
  metadata: auditedMetadata(record.metadata)
})
/** A key as webhook events carry it (docs/webhooks.md). */
const keyEvent = (record: ApiKeyDetails) => ({
  key: {
    id: String(record.id),
    prefix: record.prefix,
    name: record.name,
    accountId: String(record.accountId),
    scopes: record.scopes
  }
})

/**
 * Issues a key: in the account named, or in a new account of its own with `plan` (and its limits),
 * so that a customer with one key needs no account of its own making.
 */
export async function createKey(db: Db, actor: Actor, fields: KeyFields, now: number): Promise<IssuedApiKey> {
  return db.transaction().execute((trx) => createKeyIn(trx, actor, fields, now))
}

/** createKey within a transaction the caller holds. */
export async function createKeyIn(
  trx: Transaction<Database>,
  actor: Actor,
  fields: KeyFields,
  now: number
): Promise<IssuedApiKey> {
  const name = checkName('name', fields.name) ?? undefined
  const expiresAt = checkExpiry(fields.expiresAt, now) ?? undefined
  const scopes = checkScopes(fields.scopes)
  const allowedAddresses = checkAllowedAddresses(fields.allowedAddresses)
  const metadata = checkMetadata(fields.metadata)
  const keyFields = { name, expiresAt, scopes, allowedAddresses, metadata }
  let issued: IssuedApiKey
  if (fields.account !== undefined || fields.accountId !== undefined || fields.externalId !== undefined) {
    if (fields.plan !== undefined || fields.perMinute !== undefined || fields.perDay !== undefined) {
      throw new InvalidInputError("A key of an existing account has the account's plan and limits; change them there")
    }
    const account = await resolveAccount(trx, fields)
    const locked = (await lockAccount(trx, account.id))!
    if (locked.closedAt) throw new ConflictError('account_closed', `Account ${account.id} is closed`)
    issued = await issueApiKey(trx, { accountId: account.id, ...keyFields })
  } else {
    if (fields.plan === undefined) throw new InvalidInputError('A key needs a plan, or an account whose plan it shares')
    await checkPlanExists(trx, fields.plan)
    const limits = shorthandLimits(fields.perMinute, fields.perDay) ?? undefined
    issued = await issueApiKey(trx, { plan: fields.plan, limits, ...keyFields })
    await appendAuditEvent(trx, {
      ...actor,
      action: 'account.created',
      accountId: issued.accountId,
      keyId: null,
      changes: changedFields(null, auditedAccountPlan((await getAccount(trx, issued.accountId))!))
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
}

/** Keys in ascending id order, every one or `limit` at a time, and whether more follow. */
export async function listKeys(db: Db, page: { limit?: number; afterId?: bigint; accountId?: bigint } = {}) {
  const { limit, afterId, accountId } = page
  const keys = await listApiKeys(db, { afterId, accountId, limit: limit === undefined ? undefined : limit + 1 })
  const hasMore = limit !== undefined && keys.length > limit
  if (hasMore) keys.pop()
  return { keys, hasMore }
}

export async function getKey(db: Db, id: bigint): Promise<ApiKeyDetails> {
  return (await getApiKey(db, id)) ?? notFound(id)
}

/**
 * Which keys a change may reach: those of `accountId` only, when given (another account's key is "no
 * such key"), and those `allow` does not refuse, when given; it sees the key locked.
 */
export interface KeyReach {
  accountId?: bigint
  allow?: (key: ApiKeyDetails) => void
}

/** The key, its row locked, when `reach` reaches it; else "no such key", whether it exists or not. */
async function lockReachableKey(trx: Transaction<Database>, id: bigint, reach: KeyReach): Promise<ApiKeyDetails> {
  const key = await lockApiKey(trx, id)
  if (!key || (reach.accountId !== undefined && key.accountId !== reach.accountId)) notFound(id)
  reach.allow?.(key)
  return key
}

async function lockUsableKey(
  trx: Transaction<Database>,
  id: bigint,
  verb: string,
  reach: KeyReach = {}
): Promise<ApiKeyDetails> {
  const key = await lockReachableKey(trx, id, reach)
  if (key.revokedAt) throw new ConflictError('key_revoked', `Key ${id} is revoked; a revoked key cannot be ${verb}`)
  return key
}

/**
 * Changes the fields given and keeps the others, in one transaction with the key's row locked. The
 * plan and limits are the account's: changing them through a key changes them for all of its keys.
 * A move to another plan drops the account's overrides unless the change gives new ones (changePlan).
 */
export async function changeKey(
  db: Db,
  actor: Actor,
  id: bigint,
  changes: Omit<KeyFields, 'account' | 'accountId' | 'externalId'>,
  now: number
): Promise<ApiKeyDetails> {
  const name = checkName('name', changes.name)
  const expiresAt = checkExpiry(changes.expiresAt, now)
  const scopes = checkScopes(changes.scopes)
  const allowedAddresses = checkAllowedAddresses(changes.allowedAddresses)
  const metadata = checkMetadata(changes.metadata)
  return db.transaction().execute(async (trx) => {
    const current = await lockUsableKey(trx, id, 'changed')
    const { plan, perMinute, perDay, overrides } = changes
    const touchesPlan = plan !== undefined || perMinute !== undefined || perDay !== undefined || overrides !== undefined
    // The key's name and metadata are its own, never its account's.
    if (touchesPlan) await changePlan(trx, actor, current.accountId, { plan, perMinute, perDay, overrides }, id)
    const updated = (await updateApiKey(trx, id, { name, expiresAt, scopes, allowedAddresses, metadata }))!
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

/** Revokes the key; revoking it again changes nothing and records nothing. */
export async function revokeKey(db: Db, actor: Actor, id: bigint): Promise<ApiKeyDetails> {
  return db.transaction().execute((trx) => revokeKeyIn(trx, actor, id))
}

/** revokeKey within a transaction the caller holds, on a key `reach` reaches. */
export async function revokeKeyIn(
  trx: Transaction<Database>,
  actor: Actor,
  id: bigint,
  reach: KeyReach = {}
): Promise<ApiKeyDetails> {
  const current = await lockReachableKey(trx, id, reach)
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
}

/** The keys a leak report matched, and those of them it revoked (the others were revoked already). */
export interface LeakedKeys {
  matched: bigint[]
  revoked: bigint[]
}

/**
 * Secrets reported leaked (by a secret scanner): every key one of them is, by its current secret or
 * a previous one still working, is revoked (its audit event and `key.revoked`, as revokeKey) and a
 * `key.leaked` event is written for it, revoked before or not; all in one transaction. A secret that
 * matches no key is left out of the answer.
 */
export async function revokeLeakedKeys(db: Db, actor: Actor, secrets: readonly string[]): Promise<LeakedKeys> {
  return db.transaction().execute(async (trx) => {
    const matched = await lockKeysBySecrets(trx, secrets)
    const revoked: bigint[] = []
    for (const id of matched) {
      const before = await lockReachableKey(trx, id, {})
      const record = before.revokedAt ? before : await revokeKeyIn(trx, actor, id)
      if (!before.revokedAt) revoked.push(id)
      await appendWebhookEvent(trx, {
        type: 'key.leaked',
        accountId: record.accountId,
        data: { ...keyEvent(record), revokedBefore: before.revokedAt !== null }
      })
    }
    return { matched, revoked }
  })
}

/**
 * A new secret, shown once. The old one keeps working for `graceSeconds` (0 to a week, by the
 * database's clock), on the same key, account and windows; with 0 it stops at once. A secret still in
 * the grace of an earlier rotation stops at once either way: a key has at most one previous secret.
 * A revoked key cannot be rotated.
 */
export async function rotateKey(db: Db, actor: Actor, id: bigint, graceSeconds = 0): Promise<IssuedApiKey> {
  checkGraceSeconds(graceSeconds)
  return db.transaction().execute((trx) => rotateKeyIn(trx, actor, id, graceSeconds))
}

/** rotateKey within a transaction the caller holds, on a key `reach` reaches; `graceSeconds` checked. */
export async function rotateKeyIn(
  trx: Transaction<Database>,
  actor: Actor,
  id: bigint,
  graceSeconds: number,
  reach: KeyReach = {}
): Promise<IssuedApiKey> {
  const current = await lockUsableKey(trx, id, 'rotated', reach)
  const secret = newApiKeySecret()
  const previousSecretExpiresAt = graceSeconds > 0 ? new Date((await readDatabaseNow(trx)) + graceSeconds * 1000) : null
  const previousPrefix = previousSecretExpiresAt ? current.prefix : null
  // Appended before the change: a key that rotates itself acts under the prefix it gives up, which
  // the audit trail's function finds only while the key still has it. Every rotation records the
  // same fields, the grace given included, whatever changed.
  await appendAuditEvent(trx, {
    ...actor,
    action: 'key.rotated',
    accountId: current.accountId,
    keyId: id,
    changes: {
      prefix: { before: current.prefix, after: secret.prefix },
      previousPrefix: { before: current.previousPrefix, after: previousPrefix },
      previousSecretExpiresAt: {
        before: current.previousSecretExpiresAt?.toISOString() ?? null,
        after: previousSecretExpiresAt?.toISOString() ?? null
      },
      graceSeconds: { before: null, after: graceSeconds }
    }
  })
  const rotated = (await rotateApiKey(trx, id, previousSecretExpiresAt, secret))!
  await appendWebhookEvent(trx, {
    type: 'key.rotated',
    accountId: rotated.accountId,
    data: {
      ...keyEvent(rotated),
      previousPrefix: current.prefix,
      previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null
    }
  })
  return rotated
}

/** The key's usage on each of the last `days` UTC days, today first; days without requests count 0. */
export async function keyUsage(db: Db, id: bigint, days: number, now: number): Promise<DayOfUsage[]> {
  await getKey(db, id)
  const dates = lastDays(days, now)
  return fillDays(dates, await readUsage(db, id, dates.at(-1)!))
}

function notFound(id: bigint): never {
  throw new NotFoundError(`No key with id ${id}`)
}
