import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../db/schema.js'
import type { RouteUsage } from '../limits/route-usage.js'

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

/**
 * Deletes the usage of days before `firstKept` (YYYY-MM-DD), by key and by route, and the record of
 * their hours' usage.reported events; returns how many hours' rows of usage by key.
 */
export async function deleteUsageBefore(db: Db, firstKept: string): Promise<number> {
  const before = startOf(firstKept)
  const result = await db.deleteFrom('api_key_usage').where('hour', '<', before).executeTakeFirst()
  await db.deleteFrom('api_key_route_usage').where('hour', '<', before).execute()
  await db.deleteFrom('usage_reported_hours').where('hour', '<', before).execute()
  return Number(result.numDeletedRows)
}

/**
 * Adds requests counted by key, hour and route to what is stored, in key order (as the counting
 * statement takes its rows), leaving out keys deleted meanwhile.
 */
export async function addRouteUsage(db: Db, usage: readonly RouteUsage[]): Promise<void> {
  if (usage.length === 0) return
  const column = <K extends keyof RouteUsage>(field: K) => usage.map((report) => report[field])
  await sql`
    INSERT INTO api_key_route_usage AS u (api_key_id, hour, route, admitted, refused, units)
    SELECT r.key_id, to_timestamp(r.hour_ms / 1000.0), r.route, r.admitted, r.refused, r.units
    FROM unnest(${column('apiKeyId').map(String)}::bigint[], ${column('hour')}::double precision[],
      ${column('route')}::text[], ${column('admitted')}::bigint[], ${column('refused')}::bigint[],
      ${column('units')}::bigint[]) AS r(key_id, hour_ms, route, admitted, refused, units)
    WHERE EXISTS (SELECT FROM api_keys k WHERE k.id = r.key_id)
    ORDER BY r.key_id, r.hour_ms, r.route
    ON CONFLICT (api_key_id, hour, route) DO UPDATE SET
      admitted = u.admitted + excluded.admitted,
      refused = u.refused + excluded.refused,
      units = u.units + excluded.units
  `.execute(db)
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
