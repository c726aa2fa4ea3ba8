import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../db/schema.js'

type Db = Kysely<Database> | Transaction<Database>

export interface DayOfUsage {
  /** The UTC day, YYYY-MM-DD. */
  date: string
  admitted: number
  refused: number
}

/** The UTC day of a usage row's hour, YYYY-MM-DD: a day's usage is the sum of its hours. */
const dayOf = sql<string>`to_char(u.hour AT TIME ZONE 'UTC', 'YYYY-MM-DD')`

/** The first instant of a UTC day given as YYYY-MM-DD. */
const startOf = (day: string) => new Date(`${day}T00:00:00Z`)

/**
 * A key's usage on the UTC days from `firstDay` (YYYY-MM-DD) on, the latest first; days without a
 * row are left out. The counting statement writes these rows, one per hour (countRequests, rate-limits.ts).
 */
export async function readUsage(db: Db, apiKeyId: bigint, firstDay: string): Promise<DayOfUsage[]> {
  const rows = await db
    .selectFrom('api_key_usage as u')
    .select((eb) => [
      dayOf.as('day'),
      eb.fn.sum<string>('u.admitted').as('admitted'),
      eb.fn.sum<string>('u.refused').as('refused')
    ])
    .where('u.api_key_id', '=', apiKeyId)
    .where('u.hour', '>=', startOf(firstDay))
    .groupBy(dayOf)
    .orderBy('day', 'desc')
    .execute()
  return rows.map((row) => ({ date: row.day, admitted: Number(row.admitted), refused: Number(row.refused) }))
}

/** Deletes the usage of days before `firstKept` (YYYY-MM-DD); returns how many hours' rows. */
export async function deleteUsageBefore(db: Db, firstKept: string): Promise<number> {
  const result = await db.deleteFrom('api_key_usage').where('hour', '<', startOf(firstKept)).executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** An account's usage, all of its keys together, on the UTC days from `firstDay` on, the latest first. */
export async function readAccountUsage(db: Db, accountId: bigint, firstDay: string): Promise<DayOfUsage[]> {
  const rows = await db
    .selectFrom('api_key_usage as u')
    .innerJoin('api_keys as k', 'k.id', 'u.api_key_id')
    .select((eb) => [
      dayOf.as('day'),
      eb.fn.sum<string>('u.admitted').as('admitted'),
      eb.fn.sum<string>('u.refused').as('refused')
    ])
    .where('k.account_id', '=', accountId)
    .where('u.hour', '>=', startOf(firstDay))
    .groupBy(dayOf)
    .orderBy('day', 'desc')
    .execute()
  return rows.map((row) => ({ date: row.day, admitted: Number(row.admitted), refused: Number(row.refused) }))
}
