import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, PlanName } from '../db/schema.js'
import type { CustomLimits } from './api-keys.js'

type Db = Kysely<Database> | Transaction<Database>

/** The customer: the plan and both windows that all of its keys share. */
export interface AccountRecord {
  id: bigint
  externalId: string | null
  name: string | null
  plan: PlanName
  perMinute: number
  perDay: number
  createdAt: Date
  closedAt: Date | null
}

/** An account's limit in force for one window now, its override's or its plan's (migrations/0019). */
export const limitInForce = (window: 'minute' | 'day') =>
  sql<number>`(SELECT l."limit" FROM account_limits(a.id, service_now()) l WHERE l."window" = ${sql.lit(window)})`

const accountColumns = (db: Db) =>
  db
    .selectFrom('accounts as a')
    .select([
      'a.id',
      'a.external_id as externalId',
      'a.name',
      'a.plan',
      limitInForce('minute').as('perMinute'),
      limitInForce('day').as('perDay'),
      'a.created_at as createdAt',
      'a.closed_at as closedAt'
    ])

export async function insertAccount(
  db: Db,
  fields: { externalId: string | null; name: string | null; plan: PlanName; limits: CustomLimits | null }
): Promise<AccountRecord> {
  const { id } = await db
    .insertInto('accounts')
    .values({
      external_id: fields.externalId,
      name: fields.name,
      plan: fields.plan
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  if (fields.limits) await replaceCustomLimits(db, id, fields.limits)
  return (await getAccount(db, id))!
}

export async function getAccount(db: Db, id: bigint): Promise<AccountRecord | undefined> {
  return accountColumns(db).where('a.id', '=', id).executeTakeFirst()
}

export async function findAccountByExternalId(db: Db, externalId: string): Promise<AccountRecord | undefined> {
  return accountColumns(db).where('a.external_id', '=', externalId).executeTakeFirst()
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
  return query.execute()
}

export interface AccountChanges {
  name?: string | null
  plan?: PlanName
  /** Both set for an enterprise account, both null for the others. */
  limits?: CustomLimits | null
}

export async function updateAccount(db: Db, id: bigint, changes: AccountChanges): Promise<AccountRecord | undefined> {
  const { name, plan, limits } = changes
  const row = await db
    .updateTable('accounts')
    .set({
      ...(name === undefined ? {} : { name }),
      ...(plan === undefined ? {} : { plan })
    })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst()
  if (row && limits !== undefined) await replaceCustomLimits(db, row.id, limits)
  return row && getAccount(db, row.id)
}

/** The account's own minute and day limits, for good, in place of those it had; null: none, its plan's apply. */
export async function replaceCustomLimits(db: Db, accountId: bigint, limits: CustomLimits | null): Promise<void> {
  await db
    .deleteFrom('account_limit_overrides')
    .where('account_id', '=', accountId)
    .where('window', 'in', ['minute', 'day'])
    .execute()
  if (!limits) return
  await db
    .insertInto('account_limit_overrides')
    .values([
      { account_id: accountId, window: 'minute', limit: limits.perMinute, burst: null, until: null },
      { account_id: accountId, window: 'day', limit: limits.perDay, burst: null, until: null }
    ])
    .execute()
}

/** Closes the account and revokes every key of it still usable; returns the ids of the keys revoked. */
export async function closeAccount(db: Db, id: bigint): Promise<bigint[]> {
  await db
    .updateTable('accounts')
    .set({ closed_at: sql`coalesce(closed_at, now())` })
    .where('id', '=', id)
    .execute()
  const revoked = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql`now()` })
    .where('account_id', '=', id)
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute()
  return revoked.map((row) => row.id)
}
