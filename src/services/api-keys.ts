import type { Kysely, Transaction } from 'kysely'
import type { Database, Metadata, PlanName } from '../db/schema.js'
import {
  databaseNow,
  getAccount,
  findAccountByExternalId,
  lockAccount,
  replaceOverrides,
  updateAccount,
  type AccountRecord,
  type Override
} from '../repositories/accounts.js'
import {
  ApiKeyError,
  getApiKey,
  issueApiKey,
  listApiKeys,
  lockApiKey,
  newApiKeySecret,
  revokeApiKey,
  rotateApiKey,
  updateApiKey,
  type ApiKeyDetails,
  type IssuedApiKey
} from '../repositories/api-keys.js'
import { appendAuditEvent } from '../repositories/audit-events.js'
import { appendWebhookEvent } from '../repositories/webhook-events.js'
import { getPlan, WINDOWS } from '../repositories/plans.js'
import { readDatabaseNow } from '../repositories/rate-limits.js'
import { readUsage, type DayOfUsage } from '../repositories/usage.js'
import { checkLimits, checkPlanExists, describeLimit, planEvent, type LimitInput } from './plans.js'
import {
  auditedMetadata,
  changedFields,
  checkAllowedAddresses,
  checkExpiry,
  checkGraceSeconds,
  checkInstant,
  checkMetadata,
  checkName,
  checkScopes,
  ConflictError,
  type Actor
} from './rules.js'

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
  /** The account's overrides, replaced whole (on a change). */
  overrides?: readonly OverrideInput[]
  expiresAt?: string | Date | null
  scopes?: string[]
  /** CIDR ranges or bare addresses the key may be used from; null or none: any. */
  allowedAddresses?: readonly string[] | null
  /** The key's metadata, a JSON object as parsed from a request; replaced whole (on a change). */
  metadata?: unknown
}

/** An override as a request gives it: a limit, and optionally the instant it ends. */
export interface OverrideInput extends LimitInput {
  until?: string | Date | null
}

/** `perMinute` and `perDay` as what they stand for: overrides of the minute and the day, for good. */
function shorthandLimits(
  perMinute: number | undefined,
  perDay: number | undefined
): { perMinute?: number; perDay?: number } | null {
  if (perMinute === undefined && perDay === undefined) return null
  return { perMinute, perDay }
}

/**
 * Overrides checked: at most one per window, each limit as a plan's, and an `until` that lies ahead
 * by the database's clock.
 */
async function checkOverrides(trx: Transaction<Database>, inputs: readonly OverrideInput[]): Promise<Override[]> {
  const limits = checkLimits(inputs, 'overrides', 0)
  const byWindow = new Map(inputs.map((input) => [input.window, input]))
  const now = inputs.some((input) => input.until != null) ? await databaseNow(trx) : undefined
  return limits.map((limit) => {
    const until = byWindow.get(limit.window)!.until
    if (until == null) return { ...limit, until: null }
    const field = `overrides[${inputs.indexOf(byWindow.get(limit.window)!)}].until`
    const instant = checkInstant(field, until)
    if (instant <= now!) throw new ApiKeyError(`${field} must be in the future`)
    return { ...limit, until: instant }
  })
}

/** The shorthand's minute and day overrides put in place of those windows' among `overrides`. */
function withShorthand(overrides: readonly Override[], limits: { perMinute?: number; perDay?: number }): Override[] {
  const set = (window: 'minute' | 'day', limit: number | undefined, list: Override[]) =>
    limit === undefined
      ? list
      : [
          ...list.filter((o) => o.window !== window),
          { window, algorithm: 'fixed' as const, limit, burst: null, until: null }
        ]
  return set('day', limits.perDay, set('minute', limits.perMinute, [...overrides])).sort(
    (a, b) => WINDOWS.indexOf(a.window) - WINDOWS.indexOf(b.window)
  )
}

export const describeOverride = (override: Override) => ({
  ...describeLimit(override),
  until: override.until?.toISOString() ?? null
})

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
const auditedPlan = (record: { plan: PlanName; perMinute: number | null; perDay: number | null }) => ({
  plan: record.plan,
  perMinute: record.perMinute,
  perDay: record.perDay
})
const auditedAccountPlan = (record: AccountRecord) => ({
  ...auditedPlan(record),
  overrides: record.overrides.map(describeOverride)
})

/**
 * The plan in force for an account, as its `plan.changed` event carries it: the plan's limits with its
 * overrides in place of theirs (those not past their `until`, by the database's clock), and its costs.
 */
async function accountPlanEvent(trx: Transaction<Database>, account: AccountRecord) {
  const plan = (await getPlan(trx, account.plan))!
  const now = await databaseNow(trx)
  const overrides = account.overrides.filter((override) => override.until === null || override.until > now)
  const limits = WINDOWS.flatMap((window) => {
    const override = overrides.find((o) => o.window === window)
    if (override) return [describeOverride(override)]
    const limit = plan.limits.find((l) => l.window === window)
    return limit ? [{ ...describeLimit(limit), until: null }] : []
  })
  return { account: { id: String(account.id) }, plan: { ...planEvent(plan), limits } }
}

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
      throw new ApiKeyError("A key of an existing account has the account's plan and limits; change them there")
    }
    const account = await resolveAccount(trx, fields)
    const locked = (await lockAccount(trx, account.id))!
    if (locked.closedAt) throw new ConflictError('account_closed', `Account ${account.id} is closed`)
    issued = await issueApiKey(trx, { accountId: account.id, ...keyFields })
  } else {
    if (fields.plan === undefined) throw new ApiKeyError('A key needs a plan, or an account whose plan it shares')
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
 * Moving to enterprise needs both limits (unless the account is enterprise already); moving away drops them.
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

/** The account's overrides after `changes` (undefined: as they are), checked. */
async function overridesAfter(
  trx: Transaction<Database>,
  current: readonly Override[],
  changes: Pick<PlanChanges, 'perMinute' | 'perDay' | 'overrides'>,
  movesPlan: boolean
): Promise<Override[] | undefined> {
  const shorthand = shorthandLimits(changes.perMinute, changes.perDay)
  if (changes.overrides !== undefined && shorthand) {
    throw new ApiKeyError('Give overrides, or perMinute and perDay, not both')
  }
  if (changes.overrides !== undefined) return checkOverrides(trx, changes.overrides)
  if (movesPlan || shorthand) return withShorthand(movesPlan ? [] : current, shorthand ?? {})
  return undefined
}

async function setOverrides(trx: Transaction<Database>, accountId: bigint, overrides: Override[]) {
  await replaceOverrides(trx, accountId, overrides)
}

/** Gives a new account the overrides of its request (none without them). */
export async function startOverrides(
  trx: Transaction<Database>,
  accountId: bigint,
  changes: Pick<PlanChanges, 'perMinute' | 'perDay' | 'overrides'>
): Promise<void> {
  const overrides = await overridesAfter(trx, [], changes, false)
  if (overrides?.length) await setOverrides(trx, accountId, overrides)
}

/** What a change to an account's plan may carry: a plan, its overrides, or the minute and day shorthand. */
export interface PlanChanges {
  plan?: PlanName
  perMinute?: number
  perDay?: number
  overrides?: readonly OverrideInput[]
  name?: string | null
  /** Checked (checkMetadata) by the caller. */
  metadata?: Metadata
}

/**
 * Sets an account's name, metadata, plan and overrides, with its audit event and, when its limits may have
 * changed, a `plan.changed` event; the account's row locked. `overrides` replaces them all;
 * `perMinute`/`perDay` replace the minute's and the day's; a move to another plan without either
 * drops them, since they replaced the old plan's limits.
 */
export async function changePlan(
  trx: Transaction<Database>,
  actor: Actor,
  accountId: bigint,
  changes: PlanChanges,
  keyId: bigint | null = null
) {
  const current = (await lockAccount(trx, accountId))!
  if (current.closedAt) throw new ConflictError('account_closed', `Account ${accountId} is closed`)
  if (changes.plan !== undefined) await checkPlanExists(trx, changes.plan)
  const movesPlan = changes.plan !== undefined && changes.plan !== current.plan
  const overrides = await overridesAfter(trx, current.overrides, changes, movesPlan)
  await updateAccount(trx, accountId, { plan: changes.plan, name: changes.name, metadata: changes.metadata })
  if (overrides !== undefined) await setOverrides(trx, accountId, overrides)
  const updated = (await getAccount(trx, accountId))!
  const fields = (record: AccountRecord) => ({
    name: record.name,
    ...auditedAccountPlan(record),
    metadata: auditedMetadata(record.metadata)
  })
  const accountChanges = changedFields(fields(current), fields(updated))
  if (Object.keys(accountChanges).length) {
    await appendAuditEvent(trx, { ...actor, action: 'account.changed', accountId, keyId, changes: accountChanges })
  }
  if (accountChanges.plan || accountChanges.overrides) {
    await appendWebhookEvent(trx, { type: 'plan.changed', accountId, data: await accountPlanEvent(trx, updated) })
  }
  return updated
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
