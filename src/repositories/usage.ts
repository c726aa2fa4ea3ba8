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
