import type { Kysely, Transaction } from 'kysely'
import type { Database, Metadata, PlanName } from '../db/schema.js'
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.js'
import { reportWindows } from '../limits/windows.js'
import { INT64_MAX } from '../schemas/int64.js'
import {
  databaseNow,
  deleteCredits,
  findAccountByExternalId,
  getAccount,
  insertAccount,
  listAccounts as listAccountRows,
  lockAccount,
  lockCredits,
  replaceOverrides,
  updateAccount,
  upsertCredits,
  type AccountRecord,
  type Credits,
  type Override
} from '../repositories/accounts.js'
import { appendAuditEvent, listAuditEvents, type AuditEvent } from '../repositories/audit-events.js'
import { getPlan, WINDOWS } from '../repositories/plans.js'
import { readAccountKeyBans, readStanding } from '../repositories/rate-limits.js'
import { readAccountUsage, type DayOfUsage } from '../repositories/usage.js'
import { appendWebhookEvent } from '../repositories/webhook-events.js'
import { checkLimits, checkPlanExists, describeLimit, MAX_LIMIT, planEvent, type LimitInput } from './plans.js'
import {
  auditedMetadata,
  changedFields,
  checkExternalId,
  checkInstant,
  checkMetadata,
  checkName,
  isExternalId,
  type Actor
} from './rules.js'

// What the CLI and the admin API do with accounts (their plan, overrides and credits) and the audit
// trail. Nothing here knows of HTTP or of the terminal; every change is written with its event in one
// transaction.

type Db = Kysely<Database>

const DAY_MS = 86_400_000

/** An override as a request gives it: a limit, and optionally the instant it ends. */
export interface OverrideInput extends LimitInput {
  until?: string | Date | null
}

/** `perMinute` and `perDay` as what they stand for: overrides of the minute and the day, for good. */
export function shorthandLimits(
  perMinute: number | undefined,
  perDay: number | undefined
): { perMinute?: number; perDay?: number } | null {
  if (perMinute === undefined && perDay === undefined) return null
  for (const [field, value] of [
    ['perMinute', perMinute],
    ['perDay', perDay]
  ] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > MAX_LIMIT)) {
      throw new InvalidInputError(`${field} must be an integer from 1 to ${MAX_LIMIT}`)
    }
  }
  return { perMinute, perDay }
}

/**
 * Overrides checked: at most one per window, each limit as a plan's but on the calendar's month, and an
 * `until` that lies ahead by the database's clock.
 */
async function checkOverrides(trx: Transaction<Database>, inputs: readonly OverrideInput[]): Promise<Override[]> {
  const limits = checkLimits(inputs, 'overrides', 0)
  const anchored = inputs.findIndex((input) => input.anchor !== undefined && input.anchor !== 'calendar')
  if (anchored >= 0) {
    throw new InvalidInputError(`overrides[${anchored}].anchor: an override's month is the calendar month`)
  }
  const byWindow = new Map(inputs.map((input) => [input.window, input]))
  const now = inputs.some((input) => input.until != null) ? await databaseNow(trx) : undefined
  return limits.map(({ anchor: _anchor, ...limit }) => {
    const until = byWindow.get(limit.window)!.until
    if (until == null) return { ...limit, until: null }
    const field = `overrides[${inputs.indexOf(byWindow.get(limit.window)!)}].until`
    const instant = checkInstant(field, until)
    if (instant <= now!) throw new InvalidInputError(`${field} must be in the future`)
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

const describeOverride = (override: Override) => ({
  ...describeLimit(override),
  until: override.until?.toISOString() ?? null
})

const auditedPlan = (record: { plan: PlanName; perMinute: number | null; perDay: number | null }) => ({
  plan: record.plan,
  perMinute: record.perMinute,
  perDay: record.perDay
})
export const auditedAccountPlan = (record: AccountRecord) => ({
  ...auditedPlan(record),
  overrides: record.overrides.map(describeOverride)
})

/**
 * The plan in force for an account, as its `plan.changed` event carries it: the plan's limits with its
 * overrides in place of theirs (those not past their `until`, by the database's clock), and its costs;
 * with the account, where its anchored months start.
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
  return {
    account: { id: String(account.id), cycleAnchor: account.cycleAnchor.toISOString() },
    plan: { ...planEvent(plan), limits }
  }
}

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
  if (given.length > 1) throw new InvalidInputError('Name the account once: accountId or externalId, not both')
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
  if (!isExternalId(account)) {
    throw new InvalidInputError('account must be an id, or an externalId of A-Z, a-z, 0-9, ".", "_", ":" and "-"')
  }
  const id = /^[1-9][0-9]{0,18}$/.test(account) ? BigInt(account) : undefined
  const byId = id !== undefined && id <= INT64_MAX ? await getAccount(db, id) : undefined
  const byExternalId = await findAccountByExternalId(db, account)
  if (byId && byExternalId && byId.id !== byExternalId.id) {
    throw new InvalidInputError(
      `'${account}' is the id of account ${byId.id} and the externalId of account ${byExternalId.id}: send accountId or externalId`
    )
  }
  return byId ?? byExternalId ?? refuse(`No account has the id or externalId '${account}'`)
}

function refuse(message: string): never {
  throw new InvalidInputError(message)
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
    throw new InvalidInputError('Give overrides, or perMinute and perDay, not both')
  }
  if (changes.overrides !== undefined) return checkOverrides(trx, changes.overrides)
  if (movesPlan || shorthand) return withShorthand(movesPlan ? [] : current, shorthand ?? {})
  return undefined
}

async function setOverrides(trx: Transaction<Database>, accountId: bigint, overrides: Override[]) {
  await replaceOverrides(trx, accountId, overrides)
}

/** Gives a new account the overrides of its request (none without them). */
async function startOverrides(
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
  /** Where the account's anchored months start: an RFC 3339 instant, past or ahead. */
  cycleAnchor?: string | Date
}

/**
 * Sets an account's name, metadata, plan, overrides and cycleAnchor, with its audit event and, when its
 * limits or their months may have changed, a `plan.changed` event; the account's row locked.
 * `overrides` replaces them all; `perMinute`/`perDay` replace the minute's and the day's; a move to
 * another plan without either drops them, since they replaced the old plan's limits.
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
  const cycleAnchor = changes.cycleAnchor === undefined ? undefined : checkInstant('cycleAnchor', changes.cycleAnchor)
  await updateAccount(trx, accountId, {
    plan: changes.plan,
    name: changes.name,
    metadata: changes.metadata,
    cycleAnchor
  })
  if (overrides !== undefined) await setOverrides(trx, accountId, overrides)
  const updated = (await getAccount(trx, accountId))!
  const fields = (record: AccountRecord) => ({
    name: record.name,
    ...auditedAccountPlan(record),
    cycleAnchor: record.cycleAnchor.toISOString(),
    metadata: auditedMetadata(record.metadata)
  })
  const accountChanges = changedFields(fields(current), fields(updated))
  if (Object.keys(accountChanges).length) {
    await appendAuditEvent(trx, { ...actor, action: 'account.changed', accountId, keyId, changes: accountChanges })
  }
  // A new cycleAnchor moves when the account's anchored months end and their limits start again.
  if (accountChanges.plan || accountChanges.overrides || accountChanges.cycleAnchor) {
    await appendWebhookEvent(trx, { type: 'plan.changed', accountId, data: await accountPlanEvent(trx, updated) })
  }
  return updated
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

export interface AccountFields {
  externalId?: string | null
  name?: string | null
  plan: PlanName
  perMinute?: number
  perDay?: number
  overrides?: readonly OverrideInput[]
  /** A JSON object as parsed from a request. */
  metadata?: unknown
  /** Where its anchored months start; its creation when absent. */
  cycleAnchor?: string | Date
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
    cycleAnchor: record.cycleAnchor.toISOString(),
    createdAt: record.createdAt.toISOString(),
    closedAt: record.closedAt?.toISOString() ?? null
  }
}

/** The most units a balance holds: inside a double's exact integers, so its JSON number is exact. */
const MOST_CREDITS = 1_000_000_000_000_000n

export const describeCredits = (credits: Credits) => ({
  // At most MOST_CREDITS (changeCredits): inside a double's exact integers.
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
  const cycleAnchor = fields.cycleAnchor === undefined ? undefined : checkInstant('cycleAnchor', fields.cycleAnchor)
  try {
    return await db.transaction().execute(async (trx) => {
      await checkPlanExists(trx, fields.plan)
      const id = await insertAccount(trx, { externalId, name, plan: fields.plan, metadata, cycleAnchor })
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
          cycleAnchor: audited.cycleAnchor.toISOString(),
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
  if (change.add !== undefined && change.set !== undefined) throw new InvalidInputError('Give add or set, not both')
  if (change.add === undefined && change.set === undefined && change.refill === undefined) {
    throw new InvalidInputError('Give add, set or refill')
  }
  return db.transaction().execute(async (trx) => {
    const account = (await getAccount(trx, id)) ?? notFound(id)
    if (account.closedAt) throw new ConflictError('account_closed', `Account ${id} is closed`)
    const before = await lockCredits(trx, id)
    if (!before && change.add === undefined && change.set === undefined) {
      throw new InvalidInputError('The account has no credits; a refill needs a balance: give add or set with it')
    }
    const big = (value: number | undefined) => (value === undefined ? undefined : BigInt(value))
    const { add, set, refill } = change
    // The row is locked, so adds at once see each other's; an account without credits starts at 0.
    if (add !== undefined && (before?.remaining ?? 0n) + BigInt(add) > MOST_CREDITS) {
      throw new InvalidInputError(`add would take the balance past ${MOST_CREDITS}, the most it holds`)
    }
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
    windows: reportWindows(standing.windows, standing.shadows),
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
  throw new NotFoundError(`No account with id ${id}`)
}
