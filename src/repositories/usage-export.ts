import { sql, type Kysely } from 'kysely'
import type { Database } from '../db/schema.js'

/** One key's usage in one UTC hour or day. */
export interface UsageExportRow {
  start: Date
  accountId: bigint
  keyId: bigint
  admitted: bigint
  refused: bigint
  units: bigint
}

/** Rows read per query: the export holds at most this many at once, whatever the range. */
const PAGE = 5000
const DAY_MS = 86_400_000

/**
 * Usage per key in [from, to), by UTC hour or day, ordered by period then key, read a page at a time
 * (keyset on period and key), so a range of any length and any number of keys is never held whole.
 */
export async function* readUsageExport(
  db: Kysely<Database>,
  range: { from: Date; to: Date; granularity: 'hour' | 'day'; accountId?: bigint }
): AsyncGenerator<UsageExportRow> {
  if (range.granularity === 'hour') {
    yield* pages(db, range.from, range.to, range.accountId, 'hour')
    return
  }
  // A day is the sum of its hours: one day's keys at a time, each day paged by key.
  for (let day = range.from.getTime(); day < range.to.getTime(); day += DAY_MS) {
    yield* pages(db, new Date(day), new Date(day + DAY_MS), range.accountId, 'day')
  }
}

/** Where a page of usage starts: after this period's row of this key. */
export interface UsagePosition {
  start: Date
  keyId: bigint
}

/**
 * One page of usage per key in [from, to), by UTC hour or day (the sum of its hours), ordered by
 * period then key, after `after`: at most `limit` rows, in one query.
 */
export async function readUsagePage(
  db: Kysely<Database>,
  page: {
    from: Date
    to: Date
    granularity: 'hour' | 'day'
    accountId?: bigint
    after?: UsagePosition
    limit: number
  }
): Promise<UsageExportRow[]> {
  const start = page.granularity === 'hour' ? sql<Date>`u.hour` : sql<Date>`date_trunc('day', u.hour, 'UTC')`
  let query = db
    .selectFrom('api_key_usage as u')
    .innerJoin('api_keys as k', 'k.id', 'u.api_key_id')
    .where('u.hour', '>=', page.from)
    .where('u.hour', '<', page.to)
  if (page.accountId !== undefined) query = query.where('k.account_id', '=', page.accountId)
  if (page.after) {
    query = query.where(sql<boolean>`(${start}, u.api_key_id) > (${page.after.start}, ${page.after.keyId})`)
  }
  if (page.granularity === 'hour') {
    // A key's hour is one row: read as stored, along the (hour, api_key_id) index.
    return query
      .select([
        'u.hour as start',
        'k.account_id as accountId',
        'u.api_key_id as keyId',
        'u.admitted',
        'u.refused',
        'u.units'
      ])
      .orderBy('u.hour')
      .orderBy('u.api_key_id')
      .limit(page.limit)
      .execute()
  }
  const rows = await query
    .select((eb) => [
      start.as('start'),
      'k.account_id as accountId',
      'u.api_key_id as keyId',
      eb.fn.sum<bigint>('u.admitted').as('admitted'),
      eb.fn.sum<bigint>('u.refused').as('refused'),
      eb.fn.sum<bigint>('u.units').as('units')
    ])
    .groupBy([start, 'k.account_id', 'u.api_key_id'])
    .orderBy(start)
    .orderBy('u.api_key_id')
    .limit(page.limit)
    .execute()
  return rows.map((row) => ({
    start: row.start,
    accountId: row.accountId,
    keyId: row.keyId,
    admitted: BigInt(row.admitted),
    refused: BigInt(row.refused),
    units: BigInt(row.units)
  }))
}

async function* pages(db: Kysely<Database>, from: Date, to: Date, accountId: bigint | undefined, by: 'hour' | 'day') {
  let after: UsagePosition | undefined
  for (;;) {
    const rows = await readUsagePage(db, { from, to, granularity: by, accountId, after, limit: PAGE })
    yield* rows
    if (rows.length < PAGE) return
    const last = rows.at(-1)!
    after = { start: last.start, keyId: last.keyId }
  }
}
