import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { countUnits, handBackUnits, type QuotaRequest } from '../../src/repositories/rate-limits.js'
import { manualClock } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { addPlan } from '../helpers/plans.js'

// The function that hands back leased units without a request: it takes them off the windows that
// count_units would take a request's `returned` off, and leaves every other window as count_units
// will find it.
let database: TestDatabase
const at = (instant: string) => Date.parse(instant)
const clock = manualClock(at('2027-01-01T12:00:30Z'), () => database)

beforeAll(async () => {
  database = await createTestDatabase()
  await addPlan(database.db, 'hand-back', [
    ['minute', 1000],
    ['day', 10000],
    { window: 'month', limit: 100000, anchor: 'account' }
  ])
})
afterAll(async () => {
  await clock.release()
  await database.drop()
})
beforeEach(async () => {
  await clock.set(at('2027-01-01T12:00:30Z'))
})

/** A key of a new account on the plan, whose months start on the 15th at 08:00. */
async function account() {
  const { id, accountId } = await issueApiKey(database.db, { plan: 'hand-back' })
  await sql`UPDATE accounts SET cycle_anchor = '2026-11-15T08:00:00Z' WHERE id = ${accountId}`.execute(database.db)
  return { id, accountId }
}

/** Counts a request of one unit with `leased` more, at the database's now, as an instance leasing a block does. */
async function lease(key: { id: bigint; accountId: bigint }, leased: number, returned = 0, returnedAt = 0) {
  const request: QuotaRequest = {
    apiKeyId: key.id,
    accountId: key.accountId,
    cost: 1,
    want: 1 + leased,
    returned,
    returnedAt,
    banAfter: null,
    banSeconds: 60
  }
  const [state] = await countUnits(database.pool, [request])
  expect(state!.granted).toBe(1 + leased)
}

/** The account's stored windows: each one's start and what it counts. */
async function counters(accountId: bigint) {
  const { rows } = await sql<{ window: string; started_at: Date; used: string }>`
    SELECT "window", started_at, used::text FROM limit_counters WHERE account_id = ${accountId} ORDER BY "window"
  `.execute(database.db)
  return Object.fromEntries(
    rows.map((row) => [row.window, { from: row.started_at.toISOString(), used: Number(row.used) }])
  )
}

it('takes the units off every window that holds the instant they were counted at, never below 0', async () => {
  const key = await account()
  await lease(key, 9)
  await clock.set(at('2027-01-01T12:00:40Z'))
  await handBackUnits(database.pool, [{ accountId: key.accountId, units: 4, countedAt: at('2027-01-01T12:00:30Z') }])
  expect(await counters(key.accountId)).toEqual({
    day: { from: '2027-01-01T00:00:00.000Z', used: 6 },
    minute: { from: '2027-01-01T12:00:00.000Z', used: 6 },
    month: { from: '2026-12-15T08:00:00.000Z', used: 6 }
  })
  await handBackUnits(database.pool, [{ accountId: key.accountId, units: 100, countedAt: at('2027-01-01T12:00:30Z') }])
  expect(Object.values(await counters(key.accountId)).map((window) => window.used)).toEqual([0, 0, 0])
})

it('leaves a window that started after the instant as it is', async () => {
  const key = await account()
  await lease(key, 9)
  await clock.set(at('2027-01-01T12:01:10Z'))
  await lease(key, 2)
  await handBackUnits(database.pool, [{ accountId: key.accountId, units: 4, countedAt: at('2027-01-01T12:00:30Z') }])
  expect(await counters(key.accountId)).toMatchObject({
    day: { used: 9 },
    minute: { from: '2027-01-01T12:01:00.000Z', used: 3 },
    month: { used: 9 }
  })
})

it.each([
  ['a minute still running', '2027-01-01T23:59:50Z', { minute: 6, day: 6, month: 6 }],
  ['the minute and the day ended', '2027-01-02T00:00:10Z', { minute: 10, day: 10, month: 6 }],
  ['every window ended', '2027-01-15T08:00:10Z', { minute: 10, day: 10, month: 10 }]
])(
  'with %s, leaves what ended as it is and counts on as count_units does with the units returned',
  async (_, next, used) => {
    const countedAt = at('2027-01-01T23:59:30Z')
    const handedBack = await account()
    const returned = await account()
    await clock.set(countedAt)
    await lease(handedBack, 9)
    await lease(returned, 9)
    await clock.set(at(next))
    await handBackUnits(database.pool, [{ accountId: handedBack.accountId, units: 4, countedAt }])
    const stored = await counters(handedBack.accountId)
    expect(Object.fromEntries(Object.entries(stored).map(([window, counter]) => [window, counter.used]))).toEqual(used)
    expect(Object.values(stored).map((counter) => counter.from)).toEqual([
      '2027-01-01T00:00:00.000Z',
      '2027-01-01T23:59:00.000Z',
      '2026-12-15T08:00:00.000Z'
    ])
    // The next count starts an ended window afresh: the same counts as a request that carried the units back.
    await lease(handedBack, 0)
    await lease(returned, 0, 4, countedAt)
    expect(await counters(handedBack.accountId)).toEqual(await counters(returned.accountId))
  }
)

it('hands back many accounts in one call, and makes no counters for an account without any', async () => {
  const first = await account()
  const second = await account()
  const uncounted = await account()
  await lease(first, 9)
  await lease(second, 19)
  const countedAt = at('2027-01-01T12:00:30Z')
  await handBackUnits(database.pool, [
    { accountId: second.accountId, units: 5, countedAt },
    { accountId: uncounted.accountId, units: 5, countedAt },
    { accountId: first.accountId, units: 3, countedAt },
    { accountId: first.accountId, units: 0, countedAt }
  ])
  expect((await counters(first.accountId)).day!.used).toBe(7)
  expect((await counters(second.accountId)).day!.used).toBe(15)
  expect(await counters(uncounted.accountId)).toEqual({})
})

it('is the service role’s to call, and commits without waiting for the flush, as a count does', async () => {
  const key = await account()
  await lease(key, 9)
  const client = await database.pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SET LOCAL ROLE animal_store_app')
    await handBackUnits(client, [{ accountId: key.accountId, units: 4, countedAt: at('2027-01-01T12:00:30Z') }])
    const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')
    expect(rows).toEqual([{ synchronous_commit: 'off' }])
    await client.query('COMMIT')
  } finally {
    client.release()
  }
  expect((await counters(key.accountId)).day!.used).toBe(6)
  const { rows } = await sql<{ public: boolean }>`
    SELECT has_function_privilege('public', 'hand_back_units(bigint[], integer[], double precision[])', 'EXECUTE') AS public
  `.execute(database.db)
  expect(rows).toEqual([{ public: false }])
})
