import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/schema.js'
import { issueApiKey, type IssuedApiKey } from '../../src/repositories/api-keys.js'
import { countUnits, type QuotaRequest, type QuotaState } from '../../src/repositories/rate-limits.js'
import { manualClock } from '../helpers/app.js'
import { createTestDatabaseAt, functionCalls, rowsOfCounting, type TestDatabase } from '../helpers/database.js'

// decide_account in fewer instructions (0046): the same answers and the same rows as 0045's, for
// refusals, bans, leases handed back, credits and their refills, buckets, shadows, anchored months and
// thresholds, across a second, a minute, an hour, a day and a month's end.
describe('count_units after 0046', () => {
  let before: TestDatabase
  let after: TestDatabase
  beforeAll(async () => {
    ;[before, after] = await Promise.all([
      createTestDatabaseAt('0045_plan_limits_in_one_row'),
      // 0049 takes credits as stored: the lease units these batches hand back no longer reach them.
      createTestDatabaseAt('0046_count_units_decided_in_fewer_instructions')
    ])
  })
  afterAll(async () => {
    await before?.drop()
    await after?.drop()
  })

  // Two minutes before the last day of February ends: the minute, hour, day and month roll over.
  const start = Date.parse('2027-02-28T23:58:50Z')

  /** The same plans, accounts, keys, overrides and credits; the ids are the same in both databases. */
  async function setUp(db: Kysely<Database>) {
    await sql`INSERT INTO plans (name) VALUES ('metered'), ('bursting'), ('leased'), ('credited'), ('unmetered')`.execute(
      db
    )
    await sql`
      INSERT INTO plan_limits (plan, "window", algorithm, "limit", burst, shadow, anchor) VALUES
        ('metered', 'minute', 'fixed', 6, NULL, false, 'calendar'),
        ('metered', 'minute', 'fixed', 3, NULL, true, 'calendar'),
        ('metered', 'hour', 'fixed', 9, NULL, false, 'calendar'),
        ('metered', 'month', 'fixed', 14, NULL, false, 'account'),
        ('metered', 'month', 'fixed', 5, NULL, true, 'account'),
        ('bursting', 'second', 'bucket', 2, 4, false, 'calendar'),
        ('bursting', 'minute', 'bucket', 3, NULL, true, 'calendar'),
        ('bursting', 'day', 'fixed', 10, NULL, false, 'calendar'),
        ('leased', 'second', 'fixed', 5, NULL, false, 'calendar'),
        ('leased', 'minute', 'fixed', 12, NULL, false, 'calendar'),
        ('leased', 'hour', 'fixed', 20, NULL, false, 'calendar'),
        ('leased', 'day', 'fixed', 25, NULL, false, 'calendar'),
        ('credited', 'minute', 'fixed', 8, NULL, false, 'calendar'),
        ('credited', 'day', 'fixed', 30, NULL, false, 'calendar')
    `.execute(db)
    const plans = [
      'metered',
      'metered',
      'bursting',
      'unmetered',
      'leased',
      'leased',
      'credited',
      'credited',
      'credited'
    ]
    const keys: IssuedApiKey[] = []
    for (const plan of plans) keys.push(await issueApiKey(db, { plan }))
    // Two keys of one account: a round each.
    keys.push(await issueApiKey(db, { plan: 'metered', accountId: keys[1]!.accountId }))
    const account = (i: number) => keys[i]!.accountId
    // One account's months start at 00:00:30 on the 1st, another's (made before 0043) on its creation.
    await sql`UPDATE accounts SET created_at = '2026-10-15T12:00:00Z', cycle_anchor = '2026-10-15T12:00:00Z'`.execute(
      db
    )
    await sql`UPDATE accounts SET cycle_anchor = '2026-12-01T00:00:30Z' WHERE id = ${account(0)}`.execute(db)
    await sql`
      UPDATE accounts SET cycle_anchor = NULL, created_at = '2026-12-28T23:59:30Z' WHERE id = ${account(1)}
    `.execute(db)
    // An override in force until 23:59:40, one for good.
    await sql`
      INSERT INTO account_limit_overrides (account_id, "window", algorithm, "limit", burst, until) VALUES
        (${account(5)}, 'minute', 'bucket', 4, 6, '2027-02-28T23:59:40Z'),
        (${account(4)}, 'hour', 'fixed', 16, NULL, NULL)
    `.execute(db)
    // Credits refilled each hour, each day, and never.
    await sql`
      INSERT INTO account_credits (account_id, remaining, refill_amount, refill_every, refilled_at, updated_at) VALUES
        (${account(6)}, 3, 5, 'hour', '2027-02-28T23:00:00Z', '2027-02-28T23:00:00Z'),
        (${account(7)}, 2, 4, 'day', '2027-02-28T00:00:00Z', '2027-02-28T00:00:00Z'),
        (${account(8)}, 6, NULL, NULL, '2027-02-01T00:00:00Z', '2027-02-01T00:00:00Z')
    `.execute(db)
    return keys
  }

  it('answers, counts and writes every row as 0045 did', async () => {
    const [keysBefore, keysAfter] = await Promise.all([setUp(before.db), setUp(after.db)])
    expect(keysAfter.map((key) => key.id)).toEqual(keysBefore.map((key) => key.id))
    const clocks = [manualClock(start, () => before), manualClock(start, () => after)]
    const ask = (i: number, cost: number, rest: Partial<QuotaRequest> = {}): QuotaRequest => ({
      apiKeyId: keysAfter[i]!.id,
      accountId: keysAfter[i]!.accountId,
      cost,
      want: cost,
      returned: 0,
      returnedAt: 0,
      banAfter: null,
      banSeconds: 60,
      ...rest
    })
    const counted: QuotaState[] = []
    try {
      let previous = start
      for (const at of [0, 0.4, 1, 5, 10, 30, 45, 55, 65, 69.5, 70, 71, 90, 100, 130, 131]) {
        const now = start + at * 1000
        await Promise.all(clocks.map((clock) => clock.set(now)))
        const batch = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((i) => [
          ask(i, 1, { banAfter: i % 3 === 0 ? 1 : null }),
          // Leases asked for, and units of the one before handed back.
          ask(i, 2, { want: 4, returned: i % 2, returnedAt: previous, banAfter: i % 2 === 0 ? 2 : null }),
          ask(i, i === 2 ? 0 : 3)
        ])
        const [was, is] = await Promise.all([countUnits(before.pool, batch), countUnits(after.pool, batch)])
        expect(is).toEqual(was)
        counted.push(...is)
        previous = now
      }
    } finally {
      await Promise.all(clocks.map((clock) => clock.release()))
    }
    const [was, is] = await Promise.all([rowsOfCounting(before.db), rowsOfCounting(after.db)])
    expect(is).toEqual(was)
    // The comparison saw each kind of answer and event.
    const types = (is[2] as { type: string }[]).map((event) => event.type)
    expect(new Set(types)).toEqual(new Set(['usage.threshold', 'limit.would_refuse', 'key.banned']))
    expect(new Set(counted.map((state) => state.reason))).toEqual(
      new Set([null, 'rate_limited', 'credits_exhausted', 'key_banned'])
    )
    expect(counted.some((state) => state.granted > 2)).toBe(true)
    expect(counted.some((state) => state.windows.some((window) => window.algorithm === 'bucket'))).toBe(true)
  })

  it('calls epoch_ms, window_start and window_end inlined, never as functions of their own', async () => {
    const { rows: keys } = await sql<{ id: string; account_id: string }>`
      SELECT id::text, account_id::text FROM api_keys ORDER BY id
    `.execute(after.db)
    const clock = manualClock(start + 140_000, () => after)
    try {
      await clock.set(start + 140_000)
      // Every account of the test before: buckets, shadows, anchored months, overrides, credits, bans.
      const calls = await functionCalls(after, (client) =>
        countUnits(
          client,
          keys.map((key, i) => ({
            apiKeyId: BigInt(key.id),
            accountId: BigInt(key.account_id),
            cost: 2,
            want: 2,
            returned: 1,
            returnedAt: start + 131_000,
            banAfter: i % 2 === 0 ? 0 : null,
            banSeconds: 60
          }))
        )
      )
      // Webhook events' triggers beside them: thresholds and bans.
      expect(Object.keys(calls).sort()).toEqual([
        'account_window_arrays',
        'announce_webhook_deliveries',
        'count_units',
        'decide_account',
        'fan_out_webhook_event',
        'service_now'
      ])
    } finally {
      await clock.release()
    }
  })
})
