import { randomBytes } from 'node:crypto'
import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import type { Database } from '../../src/db/schema.js'
import { issueApiKey, type IssuedApiKey } from '../../src/repositories/api-keys.js'
import { deletePlan, lockOrCreatePlan, replacePlan, type PlanLimit } from '../../src/repositories/plans.js'
import { countUnits, type QuotaRequest, type QuotaState } from '../../src/repositories/rate-limits.js'
import { manualClock } from '../helpers/app.js'
import {
  admin,
  createTestDatabase,
  createTestDatabaseAt,
  functionCalls,
  lockWaiters,
  rowsOfCounting,
  type TestDatabase
} from '../helpers/database.js'

// Each plan's limits in one row of plan_windows, kept by a trigger on plan_limits (0045), and
// count_units reading it: the same answers as when it read account_windows for every account.

/** Every row of plan_windows, by plan. */
async function stored(db: Kysely<Database>) {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT plan, windows, algorithms, limits, capacities, shadows, account_months, anchored
    FROM plan_windows ORDER BY plan
  `.execute(db)
  return rows
}

/** What plan_windows should hold, read from plan_limits: enforced limits first, each shortest first. */
async function expected(db: Kysely<Database>) {
  const { rows } = await sql<{
    plan: string
    window: string
    algorithm: string
    limit: number
    burst: number | null
    shadow: boolean
    anchor: string
  }>`SELECT * FROM plan_limits`.execute(db)
  const order = ['second', 'minute', 'hour', 'day', 'month']
  const plans = [...new Set(rows.map((row) => row.plan))].sort()
  return plans.map((plan) => {
    const limits = rows
      .filter((row) => row.plan === plan)
      .sort((a, b) => Number(a.shadow) - Number(b.shadow) || order.indexOf(a.window) - order.indexOf(b.window))
    return {
      plan,
      windows: limits.map((row) => row.window),
      algorithms: limits.map((row) => row.algorithm),
      limits: limits.map((row) => row.limit),
      capacities: limits.map((row) => row.burst ?? row.limit),
      shadows: limits.map((row) => row.shadow),
      account_months: limits.map((row) => row.anchor === 'account'),
      anchored: limits.some((row) => row.anchor === 'account')
    }
  })
}

const limit = (window: PlanLimit['window'], value: number, rest: Partial<PlanLimit> = {}): PlanLimit => ({
  window,
  algorithm: 'fixed',
  limit: value,
  burst: null,
  shadow: false,
  anchor: 'calendar',
  ...rest
})

/** Puts a plan as the service does: its row locked, its limits replaced. */
const putPlan = (db: Kysely<Database>, name: string, limits: PlanLimit[]) =>
  db.transaction().execute(async (trx) => {
    await lockOrCreatePlan(trx, name)
    await replacePlan(trx, name, limits, {})
  })

describe('plan_windows', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    await database?.drop()
  })

  it("holds each plan's limits in one row, in count_units' order, through puts, edits, deletes, a rename and a plan's delete", async () => {
    const { db } = database
    // The plans 0028 seeds, filled by 0045.
    expect((await stored(db)).map((row) => row.plan)).toEqual(['business', 'enterprise', 'free', 'pro'])
    expect(await stored(db)).toEqual(await expected(db))

    await putPlan(db, 'metered', [
      limit('month', 12, { anchor: 'account' }),
      limit('minute', 3, { shadow: true }),
      limit('second', 2, { algorithm: 'bucket', burst: 4 }),
      limit('month', 5, { shadow: true, anchor: 'account' }),
      limit('hour', 8)
    ])
    expect((await stored(db)).find((row) => row.plan === 'metered')).toEqual({
      plan: 'metered',
      windows: ['second', 'hour', 'month', 'minute', 'month'],
      algorithms: ['bucket', 'fixed', 'fixed', 'fixed', 'fixed'],
      limits: [2, 8, 12, 3, 5],
      capacities: [4, 8, 12, 3, 5],
      shadows: [false, false, false, true, true],
      account_months: [false, false, true, false, true],
      anchored: true
    })
    await putPlan(db, 'metered', [limit('day', 100), limit('minute', 10)])
    expect(await stored(db)).toEqual(await expected(db))

    await sql`UPDATE plan_limits SET "limit" = 20, algorithm = 'bucket', burst = 30 WHERE plan = 'metered' AND "window" = 'minute'`.execute(
      db
    )
    await sql`INSERT INTO plan_limits (plan, "window", "limit", anchor) VALUES ('metered', 'month', 1000, 'account')`.execute(
      db
    )
    expect(await stored(db)).toEqual(await expected(db))
    await sql`DELETE FROM plan_limits WHERE plan = 'metered' AND "window" <> 'day'`.execute(db)
    expect((await stored(db)).find((row) => row.plan === 'metered')).toMatchObject({
      windows: ['day'],
      anchored: false
    })
    // A plan left without limits has no row.
    await sql`DELETE FROM plan_limits WHERE plan = 'metered'`.execute(db)
    expect((await stored(db)).map((row) => row.plan)).not.toContain('metered')
    await putPlan(db, 'metered', [limit('hour', 7)])

    // A rename moves the row by the foreign key's cascade; a limit moved to another plan, both rows.
    await sql`UPDATE plans SET name = 'measured' WHERE name = 'metered'`.execute(db)
    expect((await stored(db)).map((row) => row.plan)).toEqual(['business', 'enterprise', 'free', 'measured', 'pro'])
    await sql`UPDATE plan_limits SET plan = 'free' WHERE plan = 'measured'`.execute(db)
    await sql`UPDATE plan_limits SET plan = 'measured' WHERE plan = 'free' AND "window" = 'day'`.execute(db)
    expect(await stored(db)).toEqual(await expected(db))

    await db.transaction().execute((trx) => deletePlan(trx, 'measured'))
    expect((await stored(db)).map((row) => row.plan)).toEqual(['business', 'enterprise', 'free', 'pro'])
    expect(await stored(db)).toEqual(await expected(db))
  })

  it('is emptied by a truncate of plan_limits, and of plans through its cascade', async () => {
    const scratch = await createTestDatabase()
    try {
      await sql`TRUNCATE plan_limits`.execute(scratch.db)
      expect(await stored(scratch.db)).toEqual([])
      await putPlan(scratch.db, 'free', [limit('minute', 60)])
      expect(await stored(scratch.db)).toEqual(await expected(scratch.db))
      await sql`TRUNCATE plans CASCADE`.execute(scratch.db)
      expect(await stored(scratch.db)).toEqual([])
    } finally {
      await scratch.drop()
    }
  })

  it("keeps both of two writers of one plan that do not lock its row: the second waits for the first's commit", async () => {
    await sql`INSERT INTO plans (name) VALUES ('shared')`.execute(database.db)
    const first = await database.pool.connect()
    try {
      await first.query('BEGIN')
      await first.query(`INSERT INTO plan_limits (plan, "window", "limit") VALUES ('shared', 'minute', 10)`)
      const second = sql`INSERT INTO plan_limits (plan, "window", "limit") VALUES ('shared', 'day', 100)`.execute(
        database.db
      )
      await lockWaiters(database)
      await first.query('COMMIT')
      await second
    } finally {
      first.release()
    }
    expect((await stored(database.db)).find((row) => row.plan === 'shared')).toMatchObject({
      windows: ['minute', 'day'],
      limits: [10, 100]
    })
  })

  it("is kept when the service's role writes plan_limits, which may read it and not write it", async () => {
    const role = `plan_windows_${randomBytes(4).toString('hex')}`
    const password = randomBytes(12).toString('hex')
    await admin((client) => client.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}' IN ROLE animal_store_app`))
    const url = new URL(database.url)
    url.username = role
    url.password = password
    const service = connectDatabase({ url: url.toString(), poolMax: 1 })
    try {
      await putPlan(service.db, 'starter', [limit('minute', 30), limit('day', 500, { shadow: true })])
      await sql`UPDATE plans SET name = 'beginner' WHERE name = 'starter'`.execute(service.db)
      expect(await stored(service.db)).toEqual(await expected(database.db))
      expect((await stored(service.db)).map((row) => row.plan)).toContain('beginner')
      await expect(sql`DELETE FROM plan_windows`.execute(service.db)).rejects.toThrow(/permission denied/)
    } finally {
      await service.close()
      await admin((client) => client.query(`DROP ROLE ${role}`))
    }
  })
})

describe('count_units on plan_windows', () => {
  // The release before 0045 and the head, given the same plans, accounts and requests on one clock.
  let before: TestDatabase
  let after: TestDatabase
  beforeAll(async () => {
    ;[before, after] = await Promise.all([
      createTestDatabaseAt('0044_usage_by_route_and_hour_reports'),
      createTestDatabase()
    ])
  })
  afterAll(async () => {
    await before?.drop()
    await after?.drop()
  })

  const start = Date.parse('2027-02-28T09:58:50Z')

  /** The same plans, accounts, keys and overrides; the ids are the same in both databases. */
  async function setUp(db: Kysely<Database>) {
    await sql`INSERT INTO plans (name) VALUES ('metered'), ('bursting'), ('unmetered')`.execute(db)
    await sql`
      INSERT INTO plan_limits (plan, "window", algorithm, "limit", burst, shadow, anchor) VALUES
        ('metered', 'minute', 'fixed', 6, NULL, false, 'calendar'),
        ('metered', 'minute', 'fixed', 3, NULL, true, 'calendar'),
        ('metered', 'hour', 'fixed', 9, NULL, false, 'calendar'),
        ('metered', 'month', 'fixed', 14, NULL, false, 'account'),
        ('metered', 'month', 'fixed', 5, NULL, true, 'account'),
        ('bursting', 'second', 'bucket', 2, 4, false, 'calendar'),
        ('bursting', 'day', 'fixed', 10, NULL, false, 'calendar')
    `.execute(db)
    const plans = ['metered', 'metered', 'bursting', 'unmetered', 'metered', 'metered', 'bursting', 'metered']
    const keys: IssuedApiKey[] = []
    for (const plan of plans) keys.push(await issueApiKey(db, { plan }))
    // Two keys of one account: a round each.
    keys.push(await issueApiKey(db, { plan: 'metered', accountId: keys[7]!.accountId }))
    const account = (i: number) => keys[i]!.accountId
    // Every account made at one instant in both databases; one anchored so that its month starts at
    // 10:00, and one made before 0043 (no anchor: its creation).
    await sql`UPDATE accounts SET created_at = '2026-10-15T12:00:00Z', cycle_anchor = '2026-10-15T12:00:00Z'`.execute(
      db
    )
    await sql`UPDATE accounts SET cycle_anchor = '2027-01-31T10:00:00Z' WHERE id = ${account(0)}`.execute(db)
    await sql`
      UPDATE accounts SET cycle_anchor = NULL, created_at = '2026-12-28T09:59:30Z' WHERE id = ${account(1)}
    `.execute(db)
    // Overrides in force (one for good, one until 09:59:40) and one ended before the first count.
    await sql`
      INSERT INTO account_limit_overrides (account_id, "window", algorithm, "limit", burst, until) VALUES
        (${account(4)}, 'minute', 'fixed', 4, NULL, NULL),
        (${account(5)}, 'hour', 'bucket', 3, 5, '2027-02-28T09:59:40Z'),
        (${account(5)}, 'month', 'fixed', 8, NULL, '2027-02-28T09:59:40Z'),
        (${account(6)}, 'second', 'fixed', 1, NULL, '2027-02-28T09:00:00Z')
    `.execute(db)
    return keys
  }

  it('answers, counts and writes events as before, with and without an override in force', async () => {
    const [keysBefore, keysAfter] = await Promise.all([setUp(before.db), setUp(after.db)])
    expect(keysAfter.map((key) => key.id)).toEqual(keysBefore.map((key) => key.id))
    const clocks = [manualClock(start, () => before), manualClock(start, () => after)]
    const ask = (i: number, cost = 1, banAfter: number | null = null): QuotaRequest => ({
      apiKeyId: keysAfter[i]!.id,
      accountId: keysAfter[i]!.accountId,
      cost,
      want: cost,
      returned: 0,
      returnedAt: 0,
      banAfter,
      banSeconds: 60
    })
    const batch = [0, 1, 2, 3, 4, 5, 6, 7, 8].flatMap((i) => [ask(i), ask(i, 2, i % 2 === 0 ? 1 : null)])
    const counted: QuotaState[][] = []
    try {
      // Across a minute, an hour and an anchored month's start (10:00), and past an override's end.
      for (const at of [0, 5, 10, 30, 45, 55, 65, 70, 90, 130]) {
        await Promise.all(clocks.map((clock) => clock.set(start + at * 1000)))
        const [was, is] = await Promise.all([countUnits(before.pool, batch), countUnits(after.pool, batch)])
        expect(is).toEqual(was)
        counted.push(is)
      }
    } finally {
      await Promise.all(clocks.map((clock) => clock.release()))
    }
    const [was, is] = await Promise.all([rowsOfCounting(before.db), rowsOfCounting(after.db)])
    expect(is).toEqual(was)
    const types = (is[2] as { type: string }[]).map((event) => event.type)
    expect(new Set(types)).toEqual(new Set(['usage.threshold', 'limit.would_refuse', 'key.banned']))

    // Each enforced window as the answer names it, a bucket by its capacity.
    const windowsOf = (i: number, at: number) =>
      counted[at]!.find((state) => state.apiKeyId === keysAfter[i]!.id)!.windows.map(
        (window) => `${window.name} ${window.algorithm} ${window.limit}`
      )
    const plan = ['minute fixed 6', 'hour fixed 9', 'month fixed 14']
    // The override in force for good, over the plan's other windows.
    expect(windowsOf(4, 0)).toEqual(['minute fixed 4', 'hour fixed 9', 'month fixed 14'])
    // An override until 09:59:40, then the plan's row.
    expect(windowsOf(5, 4)).toEqual(['minute fixed 6', 'hour bucket 5', 'month fixed 8'])
    expect(windowsOf(5, 5)).toEqual(plan)
    // An override that had ended, and a plan without limits.
    expect(windowsOf(6, 0)).toEqual(['second bucket 4', 'day fixed 10'])
    expect(windowsOf(3, 0)).toEqual([])
  })

  it('calls account_window_arrays for an account with an override in force alone', async () => {
    const keys = await sql<{ id: string; account_id: string }>`
      SELECT id::text, account_id::text FROM api_keys ORDER BY id
    `.execute(after.db)
    const clock = manualClock(start + 130_000, () => after)
    try {
      await clock.set(start + 130_000)
      // The test before's accounts: two on plans, one whose override is in force for good, two whose ended.
      const calls = await functionCalls(after, (client) =>
        countUnits(
          client,
          [0, 3, 4, 5, 6].map((i) => ({
            apiKeyId: BigInt(keys.rows[i]!.id),
            accountId: BigInt(keys.rows[i]!.account_id),
            cost: 0,
            want: 0,
            returned: 0,
            returnedAt: 0,
            banAfter: null,
            banSeconds: 60
          }))
        )
      )
      expect(calls).toEqual({
        account_window_arrays: 1,
        count_units: 1,
        decide_account: 5,
        service_now: 1
      })
    } finally {
      await clock.release()
    }
  })
})
