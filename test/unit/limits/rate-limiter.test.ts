import { beforeEach, describe, expect, it } from 'vitest'
import { DatabaseClock } from '../../../src/db/clock.js'
import type { Queryable } from '../../../src/db/statements.js'
import { RateLimiter, type Ask } from '../../../src/limits/rate-limiter.js'
import { FakeCounter } from './fake-counter.js'

const NOON = Date.UTC(2027, 0, 1, 12)
const noDatabase: Queryable = {
  query: () => {
    throw new Error('the limiter reached the database past its counter')
  }
}
const ask = (accountId: bigint, apiKeyId: bigint, rest: Partial<Ask> = {}): Ask => ({
  accountId,
  apiKeyId,
  cost: 1,
  banAfter: null,
  banSeconds: 60,
  ...rest
})
const busy = [
  { window: 'minute' as const, limit: 100_000 },
  { window: 'day' as const, limit: 1_000_000 }
]

/** The database's clock: the instance reads it with no error once a statement was timed. */
let now: number
let clock: DatabaseClock
let counter: FakeCounter
let limiter: RateLimiter
const make = (options: { maxAccounts?: number } = {}) => new RateLimiter(noDatabase, clock, { counter, ...options })

beforeEach(() => {
  now = NOON + 1_000
  clock = new DatabaseClock(() => now)
  clock.observe(now, now, now)
  counter = new FakeCounter(() => now)
  counter.limits.set(2n, busy)
  limiter = make()
})

/** Sends `n` requests one after the other. */
async function send(n: number, request: Ask) {
  const outcomes = []
  for (let i = 0; i < n; i++) outcomes.push((await limiter.consume(request)).outcome)
  return outcomes
}

describe('RateLimiter', () => {
  it('counts a slow account’s request with a statement asking for its cost', async () => {
    const decision = await limiter.consume(ask(1n, 1n))
    expect(decision).toEqual({
      outcome: 'admitted',
      credits: null,
      windows: [
        { name: 'minute', algorithm: 'fixed', limit: 5, remaining: 4, resetAt: NOON + 60_000 },
        { name: 'day', algorithm: 'fixed', limit: 100, remaining: 99, resetAt: Date.UTC(2027, 0, 2) }
      ],
      shadows: []
    })
    expect(counter.requests).toEqual([
      { apiKeyId: 1n, accountId: 1n, cost: 1, want: 1, returned: 0, returnedAt: 0, banAfter: null, banSeconds: 60 }
    ])
    expect(limiter.unusedLease(1n)).toBe(0)
  })

  it('leases a block to a busy account and admits from it without a statement', async () => {
    expect(await send(20, ask(2n, 2n))).toEqual(Array(20).fill('admitted'))
    const leased = counter.requests.at(-1)!.want
    expect(leased).toBeGreaterThan(1)
    const statements = counter.requests.length
    const held = limiter.unusedLease(2n)
    expect(held).toBeGreaterThan(0)
    const decision = await limiter.consume(ask(2n, 2n))
    expect(decision.outcome).toBe('admitted')
    // What is leased here is counted in the database but not yet used.
    expect(decision.windows[0]!.remaining).toBe(100_000 - counter.usedIn(2n, 'minute') + held - 1)
    expect(limiter.unusedLease(2n)).toBe(held - 1)
    expect(counter.requests).toHaveLength(statements)
    expect(counter.tallied.at(-1)).toEqual({ apiKeyId: 2n, hourStart: NOON, outcome: 'admitted', units: 1 })
  })

  it('spends a route’s cost from a lease, and asks for whole requests of it', async () => {
    const costly = ask(2n, 2n, { cost: 5 })
    await send(20, costly)
    expect(counter.requests.every((request) => request.want % 5 === 0)).toBe(true)
    const held = limiter.unusedLease(2n)
    expect(held).toBeGreaterThanOrEqual(5)
    await limiter.consume(costly)
    expect(limiter.unusedLease(2n)).toBe(held - 5)
    expect(counter.tallied.at(-1)!.units).toBe(5)
  })

  it('stops using a lease when the database’s clock reaches its end, and hands the rest back', async () => {
    await send(20, ask(2n, 2n))
    const held = limiter.unusedLease(2n)
    expect(held).toBeGreaterThan(0)
    const leasedAt = now
    now += 1_000
    expect(limiter.unusedLease(2n)).toBe(0)
    const statements = counter.requests.length
    await limiter.consume(ask(2n, 2n))
    expect(counter.requests).toHaveLength(statements + 1)
    expect(counter.requests.at(-1)).toMatchObject({ returned: held, returnedAt: leasedAt })
  })

  it('says it holds an account while it leases units of it or has units to hand back, and not after', async () => {
    expect(limiter.holds(2n)).toBe(false)
    await send(20, ask(2n, 2n))
    expect(limiter.holds(2n)).toBe(true)
    now += 1_000
    // The lease ended with units unused: they go back with the account's next statement.
    expect(limiter.holds(2n)).toBe(true)
    await limiter.consume(ask(2n, 2n))
    await send(1, ask(1n, 1n))
    expect(limiter.holds(1n)).toBe(false)
  })
  it('never uses a lease past its end by the clock error the last statement measured', async () => {
    await send(20, ask(2n, 2n))
    const leaseUntil = now + 1_000
    // A statement that took 200 ms: the database's clock is known to ±100 ms.
    clock.observe(now, now - 100, now + 100)
    now = leaseUntil - 100
    expect(limiter.unusedLease(2n)).toBe(0)
    now = leaseUntil - 101
    expect(limiter.unusedLease(2n)).toBeGreaterThan(0)
  })

  it('refuses the request past the minute limit, and the next ones without a statement until the minute ends', async () => {
    expect(await send(7, ask(1n, 1n))).toEqual([...Array(5).fill('admitted'), 'rate_limited', 'rate_limited'])
    expect(counter.requests).toHaveLength(6)
    const refused = await limiter.consume(ask(1n, 1n))
    expect(refused).toMatchObject({ outcome: 'rate_limited', retryAt: NOON + 60_000 })
    now = NOON + 60_000
    expect((await limiter.consume(ask(1n, 1n))).outcome).toBe('admitted')
    expect(counter.requests).toHaveLength(7)
  })

  it('counts each refusal of a key that can be banned, so that its streak is the database’s', async () => {
    await send(8, ask(1n, 1n, { banAfter: 2 }))
    expect(counter.requests).toHaveLength(8)
  })

  it('answers a ban the statement reports, and the key’s next requests from memory', async () => {
    counter.bans.set(1n, now + 30_000)
    expect(await limiter.consume(ask(1n, 1n, { banAfter: 2 }))).toMatchObject({
      outcome: 'key_banned',
      retryAt: now + 30_000
    })
    expect(counter.confirmed).toEqual([1n])
    const statements = counter.requests.length
    expect((await limiter.consume(ask(1n, 1n, { banAfter: 2 }))).outcome).toBe('key_banned')
    expect(counter.requests).toHaveLength(statements)
    expect(counter.confirmed).toEqual([1n])
    expect(counter.tallied.at(-1)).toMatchObject({ apiKeyId: 1n, outcome: 'refused' })
    now += 30_000
    expect((await limiter.consume(ask(1n, 1n, { banAfter: 2 }))).outcome).toBe('admitted')
  })

  it('keeps a banned key’s account while the ban runs, idle or not, and refuses the key from memory with its windows', async () => {
    counter.bans.set(1n, now + 30_000)
    const banned = await limiter.consume(ask(1n, 1n, { banAfter: 2 }))
    now += 11_000
    await limiter.reportUsage()
    const statements = counter.requests.length
    expect(await limiter.consume(ask(1n, 1n, { banAfter: 2 }))).toMatchObject({
      outcome: 'key_banned',
      windows: banned.windows
    })
    expect(counter.requests).toHaveLength(statements)
    // Idle past the ban's end, it is let go.
    now += 30_000
    await limiter.reportUsage()
    expect(limiter.subjects).toEqual({ cached: 0, holding: 0 })
  })

  it('counts a known ban’s first request when it knows none of the account’s windows, and the next ones from memory', async () => {
    counter.bans.set(3n, now + 10_000)
    await limiter.announcedBan(3n)
    const first = await limiter.consume(ask(2n, 3n))
    expect(first).toMatchObject({ outcome: 'key_banned', retryAt: now + 10_000 })
    expect(first.windows.map((window) => window.name)).toEqual(['minute', 'day'])
    expect(counter.requests).toHaveLength(1)
    expect((await limiter.consume(ask(2n, 3n))).windows).toEqual(first.windows)
    expect(counter.requests).toHaveLength(1)
  })

  it('tells of a ban it read only once the standby holds it, and fails the request when that cannot be known', async () => {
    counter.bans.set(1n, now + 30_000)
    counter.confirmBan = () => Promise.reject(new Error('timeout: no answer within 2000 ms'))
    await expect(limiter.consume(ask(1n, 1n, { banAfter: 2 }))).rejects.toThrow('timeout')
    expect(limiter.knownBan(1n)).toBe(0)
    // The ban ended (an operator lifted it) between the statement and its confirmation.
    counter.confirmBan = async () => undefined
    await expect(limiter.consume(ask(1n, 1n, { banAfter: 2 }))).rejects.toMatchObject({
      code: 'service_unavailable',
      headers: { 'retry-after': '1' }
    })
    await expect(
      limiter.decideCounted(ask(1n, 1n), await counter.count({ ...ask(1n, 1n), want: 1, returned: 0, returnedAt: 0 }))
    ).rejects.toMatchObject({
      code: 'service_unavailable'
    })
  })

  it('refuses a key whose ban the database announced once the standby holds it, even while its account holds a lease', async () => {
    await send(20, ask(2n, 2n))
    expect(limiter.unusedLease(2n)).toBeGreaterThan(0)
    counter.bans.set(3n, now + 10_000)
    await limiter.announcedBan(3n)
    expect(counter.confirmed).toEqual([3n])
    expect((await limiter.consume(ask(2n, 3n))).outcome).toBe('key_banned')
    expect((await limiter.consume(ask(2n, 2n))).outcome).toBe('admitted')
    expect(limiter.knownBan(3n)).toBe(now + 10_000)
    now += 10_000
    expect(limiter.knownBan(3n)).toBe(0)
  })

  it('lets requests that arrive during a statement wait for it and share what it leased', async () => {
    await send(20, ask(2n, 2n))
    now += 1_000
    counter.hold = true
    const statements = counter.requests.length
    const waiting = [limiter.consume(ask(2n, 2n)), limiter.consume(ask(2n, 2n)), limiter.consume(ask(2n, 2n))]
    await new Promise((resolve) => setImmediate(resolve))
    expect(counter.pending).toHaveLength(1)
    counter.release()
    expect((await Promise.all(waiting)).map((decision) => decision.outcome)).toEqual(Array(3).fill('admitted'))
    expect(counter.requests).toHaveLength(statements + 1)
  })

  it('fails the requests waiting for a statement that fails, and hands its returned units back later', async () => {
    await send(20, ask(2n, 2n))
    const held = limiter.unusedLease(2n)
    now += 1_000
    counter.hold = true
    const first = limiter.consume(ask(2n, 2n))
    const second = limiter.consume(ask(2n, 2n))
    await new Promise((resolve) => setImmediate(resolve))
    counter.fail(new Error('database gone'))
    await expect(first).rejects.toThrow('database gone')
    await expect(second).rejects.toThrow('database gone')
    counter.hold = false
    await limiter.consume(ask(2n, 2n))
    expect(counter.requests.at(-1)!.returned).toBe(held)
  })

  it('admits a route that costs nothing without spending a unit', async () => {
    await send(5, ask(1n, 1n))
    expect((await limiter.consume(ask(1n, 1n, { cost: 0 }))).outcome).toBe('admitted')
    expect(counter.usedIn(1n, 'minute')).toBe(5)
  })

  it('reports usage through its counter', async () => {
    await limiter.reportUsage()
    expect(counter.reports).toBe(1)
  })
})

describe('RateLimiter eviction', () => {
  it('keeps an account that holds leased units until it uses them, so none is lost', async () => {
    limiter = make({ maxAccounts: 1 })
    await send(20, ask(2n, 2n))
    const held = limiter.unusedLease(2n)
    expect(held).toBeGreaterThan(0)
    await limiter.consume(ask(1n, 1n))
    expect(limiter.subjects).toEqual({ cached: 1, holding: 1 })
    expect(limiter.unusedLease(2n)).toBe(held)
  })

  it('lets an account go once it has been idle for 10 s, and counts its next request afresh', async () => {
    await send(2, ask(1n, 1n))
    now += 9_999
    await limiter.reportUsage()
    expect(limiter.subjects).toEqual({ cached: 1, holding: 0 })
    now += 1
    await limiter.reportUsage()
    expect(limiter.subjects).toEqual({ cached: 0, holding: 0 })
    const statements = counter.requests.length
    expect((await limiter.consume(ask(1n, 1n))).outcome).toBe('admitted')
    expect(counter.requests.slice(statements)).toEqual([expect.objectContaining({ accountId: 1n, want: 1 })])
  })

  it('lets go of the idle accounts behind one in use', async () => {
    await limiter.consume(ask(1n, 1n))
    await limiter.consume(ask(3n, 3n))
    now += 5_000
    await limiter.consume(ask(1n, 1n))
    now += 5_000
    await limiter.reportUsage()
    expect(limiter.subjects).toEqual({ cached: 1, holding: 0 })
    expect(limiter.lastCounted(1n)).toBeDefined()
    expect(limiter.lastCounted(3n)).toBeUndefined()
  })

  it('lets an account go that holds nothing once its statement is done', async () => {
    limiter = make({ maxAccounts: 1 })
    await limiter.consume(ask(1n, 1n))
    await limiter.consume(ask(3n, 3n))
    expect(limiter.subjects).toEqual({ cached: 1, holding: 0 })
  })
})

describe('RateLimiter hand-backs', () => {
  /** A busy account's lease, counted now: the units it leaves unused and the instant it was counted at. */
  async function lease() {
    await send(20, ask(2n, 2n))
    const held = limiter.unusedLease(2n)
    expect(held).toBeGreaterThan(0)
    return { held, leasedAt: now }
  }

  it('hands back the units of an account idle for 10 s, then lets it go', async () => {
    const { held, leasedAt } = await lease()
    const dayUsed = counter.usedIn(2n, 'day')
    now += 9_999
    await limiter.reportUsage()
    expect(counter.handedBack).toEqual([])
    now += 1
    await limiter.reportUsage()
    expect(counter.handedBack).toEqual([[{ accountId: 2n, units: held, countedAt: leasedAt }]])
    expect(counter.usedIn(2n, 'day')).toBe(dayUsed - held)
    expect(limiter.subjects).toEqual({ cached: 0, holding: 0 })
    expect(limiter.holds(2n)).toBe(false)
    // Its next request carries nothing back: each unit went back once.
    await limiter.consume(ask(2n, 2n))
    expect(counter.requests.at(-1)).toMatchObject({ accountId: 2n, returned: 0 })
    await limiter.reportUsage()
    expect(counter.handedBack).toHaveLength(1)
  })

  it('hands back the units of every idle account in one statement', async () => {
    counter.limits.set(3n, busy)
    const first = await lease()
    await send(20, ask(3n, 3n))
    const second = limiter.unusedLease(3n)
    now += 10_000
    await limiter.reportUsage()
    expect(counter.handedBack).toEqual([
      [
        { accountId: 2n, units: first.held, countedAt: first.leasedAt },
        { accountId: 3n, units: second, countedAt: first.leasedAt }
      ]
    ])
  })

  it('keeps the units when the hand-back fails, and hands them back with the next sweep', async () => {
    const { held, leasedAt } = await lease()
    const handBack = counter.handBack.bind(counter)
    counter.handBack = () => Promise.reject(new Error('database gone'))
    now += 10_000
    await expect(limiter.reportUsage()).rejects.toThrow('database gone')
    // The usage report goes all the same.
    expect(counter.reports).toBe(1)
    expect(limiter.subjects).toEqual({ cached: 1, holding: 0 })
    expect(limiter.holds(2n)).toBe(true)
    counter.handBack = handBack
    await limiter.reportUsage()
    expect(counter.handedBack).toEqual([[{ accountId: 2n, units: held, countedAt: leasedAt }]])
    expect(limiter.subjects).toEqual({ cached: 0, holding: 0 })
  })

  it('hands back the units of an account the cache let go once its lease ends, then lets it go for good', async () => {
    limiter = make({ maxAccounts: 1 })
    const { held, leasedAt } = await lease()
    await limiter.consume(ask(1n, 1n))
    expect(limiter.subjects).toEqual({ cached: 1, holding: 1 })
    await limiter.reportUsage()
    // Its lease still runs: nothing goes back yet.
    expect(counter.handedBack).toEqual([])
    now += 1_000
    await limiter.reportUsage()
    expect(counter.handedBack).toEqual([[{ accountId: 2n, units: held, countedAt: leasedAt }]])
    expect(limiter.subjects).toEqual({ cached: 1, holding: 0 })
  })

  it.each([
    ['succeeds', undefined],
    ['fails', new Error('database gone')]
  ] as const)(
    'hands each unit back once when the account sends during a hand-back that then %s',
    async (_outcome, failure) => {
      const { held } = await lease()
      now += 10_000
      counter.holdHandBacks = true
      const sweep = limiter.reportUsage()
      await new Promise((resolve) => setImmediate(resolve))
      expect(counter.pendingHandBacks).toHaveLength(1)
      // The request's statement does not carry the units the hand-back carries.
      expect((await limiter.consume(ask(2n, 2n))).outcome).toBe('admitted')
      expect(counter.requests.at(-1)).toMatchObject({ accountId: 2n, returned: 0 })
      counter.settleHandBacks(failure)
      if (failure) await expect(sweep).rejects.toThrow(failure.message)
      else await sweep
      // The account sends again: kept, and what the hand-back did not take back goes with its next statement.
      expect(limiter.subjects).toEqual({ cached: 1, holding: 0 })
      now += 1_000
      await limiter.consume(ask(2n, 2n))
      expect(counter.requests.at(-1)).toMatchObject({ accountId: 2n, returned: failure ? held : 0 })
      expect(counter.handedBack.map((returns) => returns.map((given) => given.units))).toEqual([[held]])
    }
  )

  it('keeps units of two instants to hand back together, given back to the windows that hold the earlier', async () => {
    const first = await lease()
    now += 10_000
    counter.holdHandBacks = true
    const sweep = limiter.reportUsage()
    // A burst during the hand-back leases again; the hand-back then fails, while that lease runs.
    await send(20, ask(2n, 2n))
    const second = limiter.unusedLease(2n)
    expect(second).toBeGreaterThan(0)
    counter.settleHandBacks(new Error('database gone'))
    await expect(sweep).rejects.toThrow('database gone')
    now += 1_000
    await limiter.consume(ask(2n, 2n))
    expect(counter.requests.at(-1)).toMatchObject({ returned: first.held + second, returnedAt: first.leasedAt })
  })

  it('hands back at shutdown every unit it holds, leases still running included', async () => {
    const { held, leasedAt } = await lease()
    await limiter.handBackAll()
    expect(counter.handedBack).toEqual([[{ accountId: 2n, units: held, countedAt: leasedAt }]])
    expect(limiter.unusedLease(2n)).toBe(0)
    expect(limiter.holds(2n)).toBe(false)
  })

  it('waits at shutdown for a hand-back under way, and hands back again what it failed to', async () => {
    const { held, leasedAt } = await lease()
    now += 10_000
    counter.holdHandBacks = true
    const sweep = limiter.reportUsage()
    await new Promise((resolve) => setImmediate(resolve))
    const closing = limiter.handBackAll()
    counter.settleHandBacks(new Error('database gone'))
    await expect(sweep).rejects.toThrow('database gone')
    await new Promise((resolve) => setImmediate(resolve))
    counter.settleHandBacks()
    await closing
    expect(counter.handedBack).toEqual([
      [{ accountId: 2n, units: held, countedAt: leasedAt }],
      [{ accountId: 2n, units: held, countedAt: leasedAt }]
    ])
    expect(limiter.holds(2n)).toBe(false)
  })
})
