import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, Metadata, PlanName } from '../db/schema.js'
import { WINDOWS, type Limit } from './plans.js'

type Db = Kysely<Database> | Transaction<Database>

/** An account's own limit for one window, for good (until null) or until an instant. */
export interface Override extends Limit {
  until: Date | null
}

/** Prepaid units; null refill: none. */
export interface Credits {
  remaining: bigint
  refill: { amount: bigint; every: 'day' | 'month' } | null
  refilledAt: Date
}

/** The customer: the plan, the overrides and the credits that all of its keys share. */
export interface AccountRecord {
  id: bigint
  externalId: string | null
  name: string | null
  plan: PlanName
  /** The minute and day limits in force now: an override's not past its until, else the plan's; null: none. */
  perMinute: number | null
  perDay: number | null
  overrides: Override[]
  credits: Credits | null
  metadata: Metadata
  /** Where the account's months start, for a plan whose month follows it: anchor + k months, k any integer. */
  cycleAnchor: Date
  createdAt: Date
  closedAt: Date | null
}

/** An account's own minute and day limits (overrides for good); a window not given keeps its plan's. */
export interface CustomLimits {
  perMinute?: number
  perDay?: number
}

/** An account's limit in force for one window now, its override's or its plan's (account_limits in db/schema.sql). */
export const limitInForce = (window: 'minute' | 'day') =>
  sql<number>`(SELECT l."limit" FROM account_limits(a.id, service_now()) l WHERE l."window" = ${sql.lit(window)})`

const accountColumns = (db: Db) =>
  db
    .selectFrom('accounts as a')
    .leftJoin('account_credits as c', 'c.account_id', 'a.id')
    .select([
      'a.id',
      'a.external_id as externalId',
      'a.name',
      'a.plan',
      limitInForce('minute').as('perMinute'),
      limitInForce('day').as('perDay'),
      sql<OverrideRow[]>`coalesce((
        SELECT json_agg(json_build_object('window', o."window", 'algorithm', o.algorithm, 'limit', o."limit",
          'burst', o.burst, 'until', o.until))
        FROM account_limit_overrides o WHERE o.account_id = a.id
      ), '[]')`.as('overrides'),
      'c.remaining',
      'c.refill_amount as refillAmount',
      'c.refill_every as refillEvery',
      'c.refilled_at as refilledAt',
      'a.metadata',
      // Null for an account made before anchors were kept: its months start at its creation.
      sql<Date>`coalesce(a.cycle_anchor, a.created_at)`.as('cycleAnchor'),
      'a.created_at as createdAt',
      'a.closed_at as closedAt'
    ])

type OverrideRow = Omit<Override, 'until'> & { until: string | null }
type AccountRow = Awaited<ReturnType<ReturnType<typeof accountColumns>['executeTakeFirstOrThrow']>>

function accountRecord(row: AccountRow): AccountRecord {
  const { remaining, refillAmount, refillEvery, refilledAt, overrides, ...account } = row
  return {
    ...account,
    overrides: overrides
      .map((override) => ({ ...override, until: override.until === null ? null : new Date(override.until) }))
      .sort((a, b) => WINDOWS.indexOf(a.window) - WINDOWS.indexOf(b.window)),
    credits:
      remaining === null || refilledAt === null
        ? null
        : {
            remaining: BigInt(remaining),
            refill:
              refillAmount === null || refillEvery === null
                ? null
                : { amount: BigInt(refillAmount), every: refillEvery as 'day' | 'month' },
            refilledAt
          }
  }
}

export async function insertAccount(
  db: Db,
  fields: { externalId: string | null; name: string | null; plan: PlanName; metadata?: Metadata; cycleAnchor?: Date }
): Promise<bigint> {
  const { id } = await db
    .insertInto('accounts')
    .values({
      external_id: fields.externalId,
      name: fields.name,
      plan: fields.plan,
      ...(fields.metadata ? { metadata: JSON.stringify(fields.metadata) } : {}),
      // Without one, the account's creation: the column's default is the insert's now(), as created_at's.
      ...(fields.cycleAnchor ? { cycle_anchor: fields.cycleAnchor } : {})
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return id
}

export async function getAccount(db: Db, id: bigint): Promise<AccountRecord | undefined> {
  const row = await accountColumns(db).where('a.id', '=', id).executeTakeFirst()
  return row && accountRecord(row)
}

export async function findAccountByExternalId(db: Db, externalId: string): Promise<AccountRecord | undefined> {
  const row = await accountColumns(db).where('a.external_id', '=', externalId).executeTakeFirst()
  return row && accountRecord(row)
}

/** The account, its row locked until the transaction ends, so that changes to it queue. */
export async function lockAccount(db: Transaction<Database>, id: bigint): Promise<AccountRecord | undefined> {
  const row = await db.selectFrom('accounts').select('id').where('id', '=', id).forUpdate().executeTakeFirst()
  return row && getAccount(db, row.id)
}

/** Accounts in ascending id order, a page of `limit` after `afterId`; with `externalId`, that one only. */
export async function listAccounts(
  db: Db,
  page: { afterId?: bigint; limit?: number; externalId?: string } = {}
): Promise<AccountRecord[]> {
  let query = accountColumns(db).orderBy('a.id')
  if (page.afterId !== undefined) query = query.where('a.id', '>', page.afterId)
  if (page.externalId !== undefined) query = query.where('a.external_id', '=', page.externalId)
  if (page.limit !== undefined) query = query.limit(page.limit)
  return (await query.execute()).map(accountRecord)
}

export interface AccountChanges {
  name?: string | null
  plan?: PlanName
  metadata?: Metadata
  cycleAnchor?: Date
}

export async function updateAccount(db: Db, id: bigint, changes: AccountChanges): Promise<void> {
  const { name, plan, metadata, cycleAnchor } = changes
  if (name === undefined && plan === undefined && metadata === undefined && cycleAnchor === undefined) return
  await db
    .updateTable('accounts')
    .set({
      ...(name === undefined ? {} : { name }),
      ...(plan === undefined ? {} : { plan }),
      ...(metadata === undefined ? {} : { metadata: JSON.stringify(metadata) }),
      ...(cycleAnchor === undefined ? {} : { cycle_anchor: cycleAnchor })
    })
    .where('id', '=', id)
    .execute()
}

/** Closes the account (its keys are the caller's to revoke); closing it again keeps the first instant. */
export async function closeAccount(db: Db, id: bigint): Promise<void> {
  await db
    .updateTable('accounts')
    .set({ closed_at: sql`coalesce(closed_at, now())` })
    .where('id', '=', id)
    .execute()
}

/** Replaces the account's overrides with these (none: it has none left). */
export async function replaceOverrides(db: Db, accountId: bigint, overrides: Override[]): Promise<void> {
  await db.deleteFrom('account_limit_overrides').where('account_id', '=', accountId).execute()
  if (overrides.length === 0) return
  await db
    .insertInto('account_limit_overrides')
    .values(overrides.map((override) => ({ account_id: accountId, ...override })))
    .execute()
}

/** The database's clock now: what an `until` or any other instant is compared with. */
export async function databaseNow(db: Db): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(db)
  return rows[0]!.now
}

/** The account's credits, the row locked until the transaction ends; undefined: it has none. */
export async function lockCredits(db: Transaction<Database>, accountId: bigint): Promise<Credits | undefined> {
  await db.selectFrom('account_credits').select('account_id').where('account_id', '=', accountId).forUpdate().execute()
  return (await getAccount(db, accountId))?.credits ?? undefined
}

/**
 * Changes the account's credits in one statement: `add` units to the balance (starting one at 0), or
 * `set` it; `refill` sets or (null) removes the refill and leaves it when undefined. Two adds at once
 * both count: the sum is taken on the row as it stands when the statement writes it.
 */
export async function upsertCredits(
  db: Db,
  accountId: bigint,
  change: { add?: bigint; set?: bigint; refill?: { amount: bigint; every: 'day' | 'month' } | null }
): Promise<void> {
  const { add, set, refill } = change
  const refillColumns =
    refill === undefined ? {} : { refill_amount: refill?.amount ?? null, refill_every: refill?.every ?? null }
  await db
    .insertInto('account_credits')
    .values({ account_id: accountId, remaining: set ?? add ?? 0n, ...refillColumns })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        ...(add !== undefined
          ? { remaining: sql`account_credits.remaining + excluded.remaining` }
          : set !== undefined
            ? { remaining: set }
            : {}),
        ...(refill === undefined
          ? {}
          : { refill_amount: sql`excluded.refill_amount`, refill_every: sql`excluded.refill_every` }),
        updated_at: sql`now()`
      })
    )
    .execute()
}

/** Removes the account's credits: it has no balance to spend down. */
export async function deleteCredits(db: Db, accountId: bigint): Promise<boolean> {
  const result = await db.deleteFrom('account_credits').where('account_id', '=', accountId).executeTakeFirst()
  return result.numDeletedRows > 0n
}
/** The account's own minute and day limits, for good, in place of those it had; null: none, its plan's apply. */
export async function replaceCustomLimits(db: Db, accountId: bigint, limits: CustomLimits | null): Promise<void> {
  await db
    .deleteFrom('account_limit_overrides')
    .where('account_id', '=', accountId)
    .where('window', 'in', ['minute', 'day'])
    .execute()
  const rows = [
    { window: 'minute' as const, limit: limits?.perMinute },
    { window: 'day' as const, limit: limits?.perDay }
  ].flatMap(({ window, limit }) =>
    limit === undefined ? [] : [{ account_id: accountId, window, limit, burst: null, until: null }]
  )
  if (rows.length > 0) await db.insertInto('account_limit_overrides').values(rows).execute()
}

/** How many accounts, open or closed, are on each of these plans; a plan none is on is left out. */
export async function countAccountsOnPlans(db: Db, plans: string[]): Promise<Map<string, number>> {
  if (plans.length === 0) return new Map()
  const rows = await db
    .selectFrom('accounts')
    .select(['plan', (eb) => eb.fn.countAll<string>().as('count')])
    .where('plan', 'in', plans)
    .groupBy('plan')
    .execute()
  return new Map(rows.map((row) => [row.plan, Number(row.count)]))
}
