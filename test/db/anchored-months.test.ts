import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

// The period arithmetic of anchored months (anchored_month_start and anchored_month_end in
// db/schema.sql): each period starts at the anchor plus a whole number of months, in UTC.
let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.drop()
})

/** The anchored month that holds `at`, as ISO instants. */
async function period(anchor: string, at: string) {
  const { rows } = await sql<{ start: Date; end: Date }>`
    SELECT anchored_month_start(${anchor}::timestamptz, ${at}::timestamptz) AS start,
      anchored_month_end(${anchor}::timestamptz, ${at}::timestamptz) AS "end"
  `.execute(database.db)
  return [rows[0]!.start.toISOString(), rows[0]!.end.toISOString()]
}

it.each([
  // On the 31st: the last day of each shorter month, then the 31st again (never stepped from February).
  ['2027-01-31T10:00:00Z', '2027-02-15T00:00:00Z', '2027-01-31T10:00:00.000Z', '2027-02-28T10:00:00.000Z'],
  ['2027-01-31T10:00:00Z', '2027-02-28T10:00:00Z', '2027-02-28T10:00:00.000Z', '2027-03-31T10:00:00.000Z'],
  ['2027-01-31T10:00:00Z', '2027-03-31T09:59:59.999Z', '2027-02-28T10:00:00.000Z', '2027-03-31T10:00:00.000Z'],
  ['2027-01-31T10:00:00Z', '2027-04-30T10:00:00Z', '2027-04-30T10:00:00.000Z', '2027-05-31T10:00:00.000Z'],
  // A leap year's February.
  ['2028-01-31T00:00:00Z', '2028-02-29T12:00:00Z', '2028-02-29T00:00:00.000Z', '2028-03-31T00:00:00.000Z'],
  ['2028-02-29T08:00:00Z', '2029-02-28T08:00:00Z', '2029-02-28T08:00:00.000Z', '2029-03-29T08:00:00.000Z'],
  ['2028-02-29T08:00:00Z', '2028-03-29T07:00:00Z', '2028-02-29T08:00:00.000Z', '2028-03-29T08:00:00.000Z'],
  // On the 30th.
  ['2027-01-30T00:00:00Z', '2027-03-01T00:00:00Z', '2027-02-28T00:00:00.000Z', '2027-03-30T00:00:00.000Z'],
  // A time of day, to the millisecond; now exactly at a boundary belongs to the period it starts.
  ['2026-11-05T13:14:15.678Z', '2026-12-05T13:14:15.678Z', '2026-12-05T13:14:15.678Z', '2027-01-05T13:14:15.678Z'],
  ['2026-11-05T13:14:15.678Z', '2026-12-05T13:14:15.677Z', '2026-11-05T13:14:15.678Z', '2026-12-05T13:14:15.678Z'],
  // Across a year.
  ['2026-12-31T23:00:00Z', '2027-01-31T22:59:59Z', '2026-12-31T23:00:00.000Z', '2027-01-31T23:00:00.000Z'],
  // An anchor ahead: the periods before it, anchor minus whole months, end at it.
  ['2027-05-31T10:00:00Z', '2027-05-01T00:00:00Z', '2027-04-30T10:00:00.000Z', '2027-05-31T10:00:00.000Z'],
  ['2027-05-31T10:00:00Z', '2027-02-28T12:00:00Z', '2027-02-28T10:00:00.000Z', '2027-03-31T10:00:00.000Z'],
  // The anchor itself starts a period.
  ['2027-01-31T10:00:00Z', '2027-01-31T10:00:00Z', '2027-01-31T10:00:00.000Z', '2027-02-28T10:00:00.000Z']
])('anchored on %s, %s lies in [%s, %s)', async (anchor, at, start, end) => {
  expect(await period(anchor, at)).toEqual([start, end])
})

it('reckons in UTC whatever the session’s time zone', async () => {
  const { rows } = await sql<{ start: Date; end: Date }>`
    SELECT set_config('TimeZone', 'America/New_York', false),
      anchored_month_start('2027-01-31T03:00:00Z', '2027-03-01T01:00:00Z') AS start,
      anchored_month_end('2027-01-31T03:00:00Z', '2027-03-01T01:00:00Z') AS "end"
  `.execute(database.db)
  await sql`RESET TimeZone`.execute(database.db)
  expect([rows[0]!.start.toISOString(), rows[0]!.end.toISOString()]).toEqual([
    '2027-02-28T03:00:00.000Z',
    '2027-03-31T03:00:00.000Z'
  ])
})

it('is inlined where it is used: no call of its own', async () => {
  const client = await database.pool.connect()
  try {
    await client.query("BEGIN; SET LOCAL track_functions = 'all'")
    await client.query(
      "SELECT anchored_month_end(a, '2027-02-15T00:00:00Z') FROM unnest(ARRAY['2027-01-31T10:00:00Z'::timestamptz]) AS a"
    )
    const { rows } = await client.query<{ name: string }>(
      "SELECT funcname AS name FROM pg_stat_xact_user_functions WHERE funcname LIKE 'anchored%'"
    )
    expect(rows).toEqual([])
  } finally {
    await client.query('ROLLBACK')
    client.release()
  }
})
