import type { Kysely, Transaction } from 'kysely'
import type { Database } from '../db/schema.js'

type Db = Kysely<Database> | Transaction<Database>

export interface DayOfUsage {
  /** The UTC day, YYYY-MM-DD. */
  date: string
  admitted: number
  refused: number
}

/**
 * A key's usage on the UTC days from `firstDay` (YYYY-MM-DD) on, the latest first; days without a
 * row are left out. The counting statement writes these rows (countRequests, rate-limits.ts).
 */
export async function readUsage(db: Db, apiKeyId: bigint, firstDay: string): Promise<DayOfUsage[]> {
  const rows = await db
    .selectFrom('api_key_usage')
    .select(['day', 'admitted', 'refused'])
    .where('api_key_id', '=', apiKeyId)
    .where('day', '>=', firstDay)
    .orderBy('day', 'desc')
    .execute()
  return rows.map((row) => ({ date: row.day, admitted: Number(row.admitted), refused: Number(row.refused) }))
}

/** Deletes the usage of days before `firstKept` (YYYY-MM-DD); returns how many rows. */
export async function deleteUsageBefore(db: Db, firstKept: string): Promise<number> {
  const result = await db.deleteFrom('api_key_usage').where('day', '<', firstKept).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** An account's usage, all of its keys together, on the UTC days from `firstDay` on, the latest first. */
export async function readAccountUsage(db: Db, accountId: bigint, firstDay: string): Promise<DayOfUsage[]> {
  const rows = await db
    .selectFrom('api_key_usage as u')
    .innerJoin('api_keys as k', 'k.id', 'u.api_key_id')
    .select((eb) => [
      'u.day',
      eb.fn.sum<string>('u.admitted').as('admitted'),
      eb.fn.sum<string>('u.refused').as('refused')
    ])
    .where('k.account_id', '=', accountId)
    .where('u.day', '>=', firstDay)
    .groupBy('u.day')
    .orderBy('u.day', 'desc')
    .execute()
  return rows.map((row) => ({ date: row.day, admitted: Number(row.admitted), refused: Number(row.refused) }))
}
