import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { countUnits, type QuotaRequest } from '../../src/repositories/rate-limits.js'
import { manualClock } from '../helpers/app.js'
import { createTestDatabase, functionCalls, lockWaiters, migrateTo, type TestDatabase } from '../helpers/database.js'
import { addPlan } from '../helpers/plans.js'
import { holdDatabaseClock } from '../helpers/traffic.js'

// The counting function on its own: what a batch decides when it holds several requests of one account,
// and what it costs PostgreSQL to call.
let database: TestDatabase
/** A plan of 3 a minute and 100 a day. */
const addThreeAMinute = (db: TestDatabase['db']) =>
  addPlan(db, 'three-a-minute', [
    ['minute', 3],
    ['day', 100]
  ])
beforeAll(async () => {
  database = await createTestDatabase()
  await addThreeAMinute(database.db)
})
afterAll(async () => {
  await database.drop()
})

const ask = (apiKeyId: bigint, accountId: bigint, cost = 1): QuotaRequest => ({
  apiKeyId,
  accountId,
  cost,
  want: cost,
  returned: 0,
  returnedAt: 0,
  banAfter: null,
  banSeconds: 60
})

it('decides the requests of one account in one batch in turn, key by key, never past a limit', async () => {
  const first = await issueApiKey(database.db, { plan: 'three-a-minute' })
  const second = await issueApiKey(database.db, { plan: 'three-a-minute', accountId: first.accountId })
  const other = await issueApiKey(database.db, { plan: 'three-a-minute' })
  const states = await countUnits(database.pool, [
    ask(second.id, first.accountId),
    ask(first.id, first.accountId, 2),
    ask(other.id, other.accountId),
    ask(first.id, first.accountId),
    ask(second.id, first.accountId)
  ])
  const decided = (id: bigint) => states.filter((state) => state.apiKeyId === id)
  // The first key's requests come first (lower id), in the order asked: 2 units, then 1; the second
  // key's then find the minute spent.
  expect(decided(first.id).map((state) => [state.admitted, state.granted])).toEqual([
    [true, 2],
    [true, 1]
  ])
  expect(decided(second.id).map((state) => [state.admitted, state.reason])).toEqual([
    [false, 'rate_limited'],
    [false, 'rate_limited']
  ])
  expect(decided(other.id).map((state) => state.windows.map((window) => window.remaining))).toEqual([[2, 99]])
  const { rows } = await sql<{ used: string }>`
    SELECT used FROM limit_counters WHERE account_id = ${first.accountId} ORDER BY "window"
  `.execute(database.db)
  expect(rows.map((row) => Number(row.used))).toEqual([3, 3])
  const usage = await sql<{ admitted: number; refused: number; units: string }>`
    SELECT sum(admitted)::int AS admitted, sum(refused)::int AS refused, sum(units)::text AS units
    FROM api_key_usage WHERE api_key_id IN (${first.id}, ${second.id})
  `.execute(database.db)
  expect(usage.rows).toEqual([{ admitted: 2, refused: 2, units: '3' }])
})

it('decides each account in one call, with the window functions inline, not a call each per window', async () => {
  const keys = await Promise.all(Array.from({ length: 5 }, () => issueApiKey(database.db, { plan: 'three-a-minute' })))
  const calls = await functionCalls(database, (client) =>
    countUnits(
      client,
      keys.map((key) => ask(key.id, key.accountId))
    )
  )
  expect(calls).toEqual({
    count_units: 1,
    decide_account: 5,
    service_now: 1
  })
})

it('commits a count without waiting, and a count that bans a key as the session commits', async () => {
  // The window is the database's minute: held, it cannot end between the counts.
  await holdDatabaseClock(database)
  const { id, accountId } = await issueApiKey(database.db, { plan: 'three-a-minute' })
  const refusable = { ...ask(id, accountId), banAfter: 0 }
  await countUnits(database.pool, [ask(id, accountId), ask(id, accountId), ask(id, accountId)])
  const client = await database.pool.connect()
  const commitsAfter = async (request: QuotaRequest) => {
    await client.query('BEGIN')
    try {
      const [state] = await countUnits(client, [request])
      const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')
      return { newlyBanned: state!.newlyBanned, commit: rows[0]!.synchronous_commit }
    } finally {
      await client.query('COMMIT')
    }
  }
  try {
    expect(await commitsAfter(refusable)).toEqual({ newlyBanned: false, commit: 'off' })
    expect(await commitsAfter(refusable)).toEqual({ newlyBanned: true, commit: 'on' })
  } finally {
    client.release()
  }
})

it('keeps every counter through 0034 and back: a row a window before it, a row an account after, the same counts', async () => {
  const scratch = await createTestDatabase()
  try {
    await addThreeAMinute(scratch.db)
    // The window is the database's minute: held, through the migrations too, it cannot end between
    // the counts (the database is dropped before the test ends, so the clock is not let go).
    const held = manualClock(Date.now(), () => scratch)
    await held.set(held())
    const { id, accountId } = await issueApiKey(scratch.db, { plan: 'three-a-minute' })
    await countUnits(scratch.pool, [ask(id, accountId), ask(id, accountId, 2)])
    const windows = async () =>
      (
        await sql<{ window: string; used: string }>`
          SELECT "window", used::text FROM limit_counters WHERE account_id = ${accountId} ORDER BY "window"
        `.execute(scratch.db)
      ).rows
    const counted = [
      { window: 'day', used: '3' },
      { window: 'minute', used: '3' }
    ]
    expect(await windows()).toEqual(counted)
    await migrateTo(scratch.db, '0033_usage_read_scope')
    const { rows: tables } = await sql<{ kind: string }>`
      SELECT relkind::text AS kind FROM pg_class WHERE relname = 'limit_counters'
    `.execute(scratch.db)
    expect(tables).toEqual([{ kind: 'r' }])
    expect(await windows()).toEqual(counted)
    // The release before counts on the rows a window, and refuses past the minute's 3.
    expect((await countUnits(scratch.pool, [ask(id, accountId)]))[0]!.admitted).toBe(false)

    await migrateToLatestOrThrow(scratch.db)
    expect(await windows()).toEqual(counted)
    const { rows } = await sql<{ windows: string[]; used: string[] }>`
      SELECT windows, used::text[] AS used FROM account_counters WHERE account_id = ${accountId}
    `.execute(scratch.db)
    expect(rows).toEqual([{ windows: ['minute', 'day'], used: ['3', '3'] }])
    expect((await countUnits(scratch.pool, [ask(id, accountId)]))[0]!.admitted).toBe(false)
  } finally {
    await scratch.drop()
  }
})

it('decides a count that waited for the account on the clock as it stands once the account is locked', async () => {
  const { id, accountId } = await issueApiKey(database.db, { plan: 'three-a-minute' })
  const firstCount = Date.parse('2026-03-01T12:00:30Z')
  const clock = manualClock(firstCount, () => database)
  const holder = await database.pool.connect()
  try {
    await clock.set(firstCount)
    await countUnits(database.pool, [ask(id, accountId)])
    // One statement holds the account from the last instant of a minute into the next; another waits for it.
    await holder.query('BEGIN')
    await holder.query('SELECT FROM account_counters WHERE account_id = $1 FOR UPDATE', [accountId])
    const waiting = countUnits(database.pool, [ask(id, accountId)])
    await lockWaiters(database)
    await clock.set(Date.parse('2026-03-01T12:01:00.100Z'))
    const [held] = await countUnits(holder, [ask(id, accountId)])
    await holder.query('COMMIT')
    const [waited] = await waiting
    const [after] = await countUnits(database.pool, [ask(id, accountId)])
    // The minute of 12:01 holds all three: the one that waited is not counted in 12:00, which would
    // have started the minute's counter afresh for the next.
    expect([held, waited, after].map((state) => [state!.admitted, state!.windows[0]!.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0]
    ])
    expect((await countUnits(database.pool, [ask(id, accountId)]))[0]!.reason).toBe('rate_limited')
  } finally {
    await holder.query('ROLLBACK')
    holder.release()
    await clock.release()
  }
})

it("makes or locks each account's row in turn: a batch waiting to make one holds no row after it", async () => {
  const first = await issueApiKey(database.db, { plan: 'three-a-minute' })
  const second = await issueApiKey(database.db, { plan: 'three-a-minute' })
  const clock = manualClock(Date.parse('2026-03-01T12:00:10Z'), () => database)
  const other = await database.pool.connect()
  try {
    await clock.set(Date.parse('2026-03-01T12:00:10Z'))
    // The second account has its row; the first has none yet.
    await countUnits(database.pool, [ask(second.id, second.accountId)])
    // Another instance's statement has made the first account's row, not committed yet, and goes on
    // to lock the second's. The batch waits to make the first's, holding nothing after it, so the
    // other locks the second's at once. A batch holding the second's would make it wait until
    // PostgreSQL found the deadlock a second later; here it gives up after half of one.
    await other.query('BEGIN')
    await other.query("SET LOCAL lock_timeout = '500ms'")
    await other.query('INSERT INTO account_counters (account_id) VALUES ($1)', [first.accountId])
    const counted = countUnits(database.pool, [ask(first.id, first.accountId), ask(second.id, second.accountId)])
    await lockWaiters(database)
    await other.query('SELECT FROM account_counters WHERE account_id = $1 FOR UPDATE', [second.accountId])
    await other.query('COMMIT')
    const states = await counted
    expect(states.map((state) => [state.admitted, state.windows[0]!.remaining])).toEqual([
      [true, 2],
      [true, 1]
    ])
    const { rows } = await sql<{ account_id: string; used: string }>`
      SELECT account_id::text, used::text FROM limit_counters
      WHERE account_id IN (${first.accountId}, ${second.accountId}) AND "window" = 'minute' ORDER BY account_id
    `.execute(database.db)
    expect(rows.map((row) => Number(row.used))).toEqual([1, 2])
  } finally {
    await other.query('ROLLBACK')
    other.release()
    await clock.release()
  }
})

it('leaves credits as they are when a request hands back units leased before the account had credits', async () => {
  const { id, accountId } = await issueApiKey(database.db, { plan: 'three-a-minute' })
  const clock = manualClock(Date.parse('2026-03-01T12:00:10Z'), () => database)
  try {
    await clock.set(Date.parse('2026-03-01T12:00:10Z'))
    // A lease of the minute's three units, one of them used.
    const [leased] = await countUnits(database.pool, [{ ...ask(id, accountId), want: 3 }])
    expect([leased!.admitted, leased!.granted, leased!.credits]).toEqual([true, 3, null])
    await sql`INSERT INTO account_credits (account_id, remaining) VALUES (${accountId}, 100)`.execute(database.db)
    // The next request hands back the two unused: they go back to the minute, not to credits they never came from.
    const [counted] = await countUnits(database.pool, [{ ...ask(id, accountId), returned: 2, returnedAt: leased!.now }])
    expect([counted!.admitted, counted!.granted, counted!.credits]).toEqual([true, 1, 99])
    expect(counted!.windows[0]!.remaining).toBe(1)
    const { rows } = await sql<{ remaining: string }>`
      SELECT remaining::text FROM account_credits WHERE account_id = ${accountId}
    `.execute(database.db)
    expect(rows).toEqual([{ remaining: '99' }])
  } finally {
    await clock.release()
  }
})

it('writes one statement’s webhook events account by account, round by round, and none for outcomes without one', async () => {
  await addPlan(database.db, 'five-an-hour', [['hour', 5]])
  const first = await issueApiKey(database.db, { plan: 'five-an-hour' })
  const second = await issueApiKey(database.db, { plan: 'five-an-hour' })
  const quiet = await issueApiKey(database.db, { plan: 'three-a-minute' })
  const refusable = (key: typeof first) => ({ ...ask(key.id, key.accountId), banAfter: 0 })
  const clock = manualClock(Date.parse('2026-03-01T12:20:00Z'), () => database)
  try {
    await clock.set(Date.parse('2026-03-01T12:20:00Z'))
    const three = (key: typeof first) => [1, 2, 3].map(() => ask(key.id, key.accountId))
    await countUnits(database.pool, [...three(first), ...three(second)])
    const before = await sql<{ id: string }>`SELECT coalesce(max(id), 0)::text AS id FROM webhook_events`.execute(
      database.db
    )
    // Each account crosses 80 % in the first round and 100 % in the second; the second's key is refused
    // twice past the limit and banned in the fourth round; the quiet account has no event.
    await countUnits(database.pool, [
      ...[1, 2, 3, 4].map(() => refusable(second)),
      ask(quiet.id, quiet.accountId),
      ask(first.id, first.accountId),
      ask(first.id, first.accountId)
    ])
    const { rows } = await sql<{ type: string; account_id: string; data: Record<string, unknown> }>`
      SELECT type, account_id::text, data FROM webhook_events WHERE id > ${before.rows[0]!.id} ORDER BY id
    `.execute(database.db)
    const account = (id: string) =>
      id === String(first.accountId) ? 'first' : id === String(second.accountId) ? 'second' : id
    expect(rows.map((row) => [account(row.account_id), row.type, row.data.percent ?? null])).toEqual([
      ['first', 'usage.threshold', 80],
      ['second', 'usage.threshold', 80],
      ['first', 'usage.threshold', 100],
      ['second', 'usage.threshold', 100],
      ['second', 'key.banned', null]
    ])
    expect(rows[2]!.data).toEqual({
      account: { id: String(first.accountId) },
      window: 'hour',
      limit: 5,
      used: 5,
      percent: 100,
      windowStart: '2026-03-01T12:00:00Z',
      windowEnd: '2026-03-01T13:00:00Z'
    })
    expect(rows[4]!.data).toEqual({
      key: { id: String(second.id), accountId: String(second.accountId) },
      bannedUntil: '2026-03-01T12:21:00.000Z'
    })
  } finally {
    await clock.release()
  }
})
