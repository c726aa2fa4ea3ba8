import { beforeEach, describe, expect, it } from 'vitest'
import type { Queryable } from '../../../src/db/statements.js'
import { RateLimiter, type SubjectLimits } from '../../../src/limits/rate-limiter.js'
import { FakeCounter } from './fake-counter.js'

const NOON = Date.UTC(2027, 0, 1, 12)
const MINUTE_START = NOON
const DAY_START = Date.UTC(2027, 0, 1)
const noDatabase: Queryable = {
  query: () => {
    throw new Error('the limiter reached the database past its counter')
  }
}
const free: SubjectLimits = { perMinute: 5, perDay: 100, banAfter: null, banSeconds: 60 }
const busy: SubjectLimits = { perMinute: 100_000, perDay: 1_000_000, banAfter: null, banSeconds: 60 }

let now: number
let counter: FakeCounter
let limiter: RateLimiter
const make = (options: { maxSubjects?: number } = {}) => new RateLimiter(noDatabase, () => now, { counter, ...options })

beforeEach(() => {
  now = NOON + 1_000
  counter = new FakeCounter()
  limiter = make()
})

/** Sends `n` requests in one second, one after the other. */
async function send(n: number, subject: string, limits: SubjectLimits, apiKeyId: bigint) {
  const outcomes = []
  for (let i = 0; i < n; i++) outcomes.push((await limiter.consume(subject, limits, apiKeyId)).outcome)
  return outcomes
}

describe('RateLimiter', () => {
  it('counts a slow subject’s request with a statement asking for one unit', async () => {
    const decision = await limiter.consume('account:1', free, 1n)
    expect(decision).toEqual({
      outcome: 'admitted',
      windows: [
        { name: 'minute', limit: 5, remaining: 4, resetAt: MINUTE_START + 60_000, seconds: 60 },
        { name: 'day', limit: 100, remaining: 99, resetAt: DAY_START + 86_400_000, seconds: 86_400 }
      ]
    })
    expect(counter.requests).toEqual([
      {
        subject: 'account:1',
        apiKeyId: 1n,
        minuteStart: MINUTE_START,
        dayStart: DAY_START,
        now,
        want: 1,
        returned: 0,
        perMinute: 5,
        perDay: 100,
        banAfter: null,
        banSeconds: 60
      }
    ])
    expect(limiter.unusedLease('account:1', now)).toBe(0)
  })

  it('leases a block to a busy subject and admits from it without a statement', async () => {
    expect(await send(20, 'account:2', busy, 2n)).toEqual(Array(20).fill('admitted'))
    const leased = counter.requests.at(-1)!.want
    expect(leased).toBeGreaterThan(1)
    const statements = counter.requests.length
    const held = limiter.unusedLease('account:2', now)
    expect(held).toBeGreaterThan(0)
    expect(held).toBeLessThan(leased)
    const decision = await limiter.consume('account:2', busy, 2n)
    expect(decision.outcome).toBe('admitted')
    // What is leased here is counted in the database but not yet used.
    const used = counter.rows.get('account:2')!.minuteUsed - (held - 1)
    expect(decision.windows[0]!.remaining).toBe(busy.perMinute - used)
    expect(limiter.unusedLease('account:2', now)).toBe(held - 1)
    expect(counter.requests).toHaveLength(statements)
    expect(counter.tallied.at(-1)).toEqual({ apiKeyId: 2n, hourStart: NOON, outcome: 'admitted' })
  })

  it('refuses the request past the minute limit, and the next ones without a statement', async () => {
    expect(await send(5, 'account:4', free, 4n)).toEqual(Array(5).fill('admitted'))
    const refusal = await limiter.consume('account:4', free, 4n)
    expect(refusal).toMatchObject({ outcome: 'rate_limited', retryAt: MINUTE_START + 60_000 })
    expect(refusal.windows[0]!.remaining).toBe(0)
    expect(counter.requests).toHaveLength(6)
    expect((await limiter.consume('account:4', free, 4n)).outcome).toBe('rate_limited')
    expect(await limiter.consume('account:4', free, 4n)).toMatchObject({ outcome: 'rate_limited' })
    expect(counter.requests).toHaveLength(6)
  })

  it('asks again in the next minute', async () => {
    await send(6, 'account:5', free, 5n)
    now = NOON + 60_000
    expect((await limiter.consume('account:5', free, 5n)).outcome).toBe('admitted')
    expect(counter.requests).toHaveLength(7)
    expect(counter.requests.at(-1)).toMatchObject({ minuteStart: NOON + 60_000, dayStart: DAY_START })
  })

  it('refuses on the day limit until the day ends', async () => {
    const daily: SubjectLimits = { perMinute: 10, perDay: 3, banAfter: null, banSeconds: 60 }
    expect(await send(4, 'account:6', daily, 6n)).toEqual(['admitted', 'admitted', 'admitted', 'rate_limited'])
    now = NOON + 120_000
    const refusal = await limiter.consume('account:6', daily, 6n)
    expect(refusal).toMatchObject({ outcome: 'rate_limited', retryAt: DAY_START + 86_400_000 })
  })

  it('hands the units leased in a minute back with the first statement of the next', async () => {
    await send(20, 'account:7', busy, 7n)
    const held = limiter.unusedLease('account:7', now)
    expect(held).toBeGreaterThan(0)
    now = NOON + 60_500
    expect(limiter.unusedLease('account:7', now)).toBe(0)
    await limiter.consume('account:7', busy, 7n)
    expect(counter.requests.at(-1)).toMatchObject({ minuteStart: NOON + 60_000, returned: held })
    // Handed back once only: the next minute hands back what this one leased and left.
    const heldNext = limiter.unusedLease('account:7', now)
    now = NOON + 120_500
    await limiter.consume('account:7', busy, 7n)
    expect(counter.requests.at(-1)).toMatchObject({ returned: heldNext })
  })

  it('forgets units leased on an earlier day', async () => {
    now = DAY_START + 86_400_000 - 2_000
    await send(20, 'account:8', busy, 8n)
    expect(limiter.unusedLease('account:8', now)).toBeGreaterThan(0)
    now = DAY_START + 86_400_000 + 1_000
    await limiter.consume('account:8', busy, 8n)
    expect(counter.requests.at(-1)).toMatchObject({ dayStart: DAY_START + 86_400_000, returned: 0 })
  })

  it('hands leased units back on a plan change, so none is admitted under the new limits', async () => {
    await send(20, 'account:9', busy, 9n)
    const held = limiter.unusedLease('account:9', now)
    const statements = counter.requests.length
    const smaller: SubjectLimits = { ...busy, perMinute: 50 }
    await limiter.consume('account:9', smaller, 9n)
    expect(counter.requests).toHaveLength(statements + 1)
    expect(counter.requests.at(-1)).toMatchObject({ perMinute: 50, returned: held })
  })

  it('keeps refusing without asking until the plan changes', async () => {
    await send(6, 'account:10', free, 10n)
    const larger: SubjectLimits = { ...free, perMinute: 10 }
    expect((await limiter.consume('account:10', larger, 10n)).outcome).toBe('admitted')
    expect(counter.requests).toHaveLength(7)
  })

  it('answers a ban the statement reports, and the following requests from memory', async () => {
    const banning: SubjectLimits = { perMinute: 5, perDay: null, banAfter: 2, banSeconds: 600 }
    counter.bans.set('account:11', now + 600_000)
    counter.hold = true
    const waiting = limiter.consume('account:11', banning, 11n)
    await Promise.resolve()
    counter.pending.splice(0)[0]!.resolve({
      subject: 'account:11',
      granted: 0,
      minuteStart: MINUTE_START,
      minuteUsed: 5,
      dayStart: DAY_START,
      dayUsed: 5,
      bannedUntil: now + 600_000,
      newlyBanned: true
    })
    expect(await waiting).toMatchObject({ outcome: 'key_banned', retryAt: now + 600_000, newlyBanned: true })
    counter.hold = false
    expect(await limiter.consume('account:11', banning, 11n)).toMatchObject({
      outcome: 'key_banned',
      newlyBanned: false
    })
    expect(counter.tallied).toEqual([{ apiKeyId: 11n, hourStart: NOON, outcome: 'refused' }])
    expect(counter.pending).toHaveLength(0)
    expect(counter.requests).toHaveLength(1)
  })

  it('refuses only the banned key: another key of the account is counted as usual', async () => {
    const banning: SubjectLimits = { perMinute: 5, perDay: null, banAfter: 2, banSeconds: 600 }
    counter.bans.set('account:16', now + 600_000)
    expect(await limiter.consume('account:16', banning, 16n)).toMatchObject({ outcome: 'key_banned' })
    // count_requests keeps bans per key: the account's other key is not banned there.
    counter.bans.delete('account:16')
    expect(await limiter.consume('account:16', banning, 17n)).toMatchObject({ outcome: 'admitted' })
    expect(await limiter.consume('account:16', banning, 16n)).toMatchObject({
      outcome: 'key_banned',
      retryAt: now + 600_000
    })
    expect(counter.requests.map(({ apiKeyId }) => apiKeyId)).toEqual([16n, 17n])
  })

  it('does not remember a refusal of a subject that can be banned: each refusal is counted', async () => {
    const banning: SubjectLimits = { perMinute: 1, perDay: null, banAfter: 5, banSeconds: 60 }
    expect(await send(3, 'account:12', banning, 12n)).toEqual(['admitted', 'rate_limited', 'rate_limited'])
    expect(counter.requests).toHaveLength(3)
  })

  it('lets requests that arrive during a statement wait for it and share what it leased', async () => {
    counter.hold = true
    const first = limiter.consume('account:13', free, 13n)
    const second = limiter.consume('account:13', free, 13n)
    await Promise.resolve()
    expect(counter.pending).toHaveLength(1)
    counter.hold = false
    counter.release()
    expect((await first).outcome).toBe('admitted')
    expect((await second).outcome).toBe('admitted')
    expect(counter.requests).toHaveLength(2)
  })

  it('fails the requests waiting for a statement that fails, and hands its units back later', async () => {
    await send(20, 'account:14', busy, 14n)
    const held = limiter.unusedLease('account:14', now)
    now = NOON + 60_500
    counter.hold = true
    const first = limiter.consume('account:14', busy, 14n)
    const second = limiter.consume('account:14', busy, 14n)
    await Promise.resolve()
    counter.fail(new Error('database down'))
    await expect(first).rejects.toThrow('database down')
    await expect(second).rejects.toThrow('database down')
    counter.hold = false
    await limiter.consume('account:14', busy, 14n)
    expect(counter.requests.at(-1)).toMatchObject({ returned: held })
  })

  it('hands back units leased for a minute that ended while the statement ran', async () => {
    await send(20, 'account:15', busy, 15n)
    now = NOON + 59_999
    await limiter.consume('account:15', busy, 15n)
    while (limiter.unusedLease('account:15', now) > 0) await limiter.consume('account:15', busy, 15n)
    counter.hold = true
    const late = limiter.consume('account:15', busy, 15n)
    await Promise.resolve()
    now = NOON + 60_100
    const asked = counter.pending[0]!.request.want
    counter.release()
    counter.hold = false
    expect((await late).outcome).toBe('admitted')
    expect(limiter.unusedLease('account:15', now)).toBe(0)
    await limiter.consume('account:15', busy, 15n)
    expect(counter.requests.at(-1)).toMatchObject({ minuteStart: NOON + 60_000, returned: asked - 1 })
  })

  it('tells what its statements last counted in the current windows, leases included', async () => {
    expect(limiter.lastCounted('key:16', now)).toBeUndefined()
    counter.rows.set('key:16', { minuteStart: MINUTE_START, minuteUsed: 3, dayStart: DAY_START, dayUsed: 40 })
    await send(20, 'key:16', busy, 16n)
    const row = counter.rows.get('key:16')!
    expect(row.minuteUsed).toBeGreaterThan(23)
    expect(limiter.lastCounted('key:16', now)).toEqual({ minute: row.minuteUsed, day: row.dayUsed })
    expect(limiter.knownBan('key:16', 16n)).toBe(0)
    now = NOON + 60_000
    expect(limiter.lastCounted('key:16', now)).toBeUndefined()
  })

  it('reports usage through its counter', async () => {
    await limiter.reportUsage()
    expect(counter.reports).toBe(1)
  })
})

describe('RateLimiter eviction', () => {
  it('lets the least recently used key go first', async () => {
    limiter = make({ maxSubjects: 2 })
    await send(6, 'account:a', free, 10n)
    await send(1, 'account:b', free, 11n)
    // key:a is used again, so key:b is the least recently used when key:c comes.
    expect(await send(1, 'account:a', free, 10n)).toEqual(['rate_limited'])
    await send(1, 'account:c', free, 12n)
    expect(limiter.subjects).toEqual({ cached: 2, holding: 0 })
    // account:a's refusal is still known here: no statement.
    const statements = counter.requests.length
    expect(await send(1, 'account:a', free, 10n)).toEqual(['rate_limited'])
    expect(counter.requests).toHaveLength(statements)
    await limiter.consume('account:b', free, 11n)
    expect(counter.requests).toHaveLength(statements + 1)
  })

  it('keeps a subject that holds leased units until it uses them, so none is lost', async () => {
    limiter = make({ maxSubjects: 1 })
    await send(20, 'account:busy', busy, 20n)
    const held = limiter.unusedLease('account:busy', now)
    expect(held).toBeGreaterThan(0)
    await send(1, 'account:other', free, 21n)
    expect(limiter.subjects).toEqual({ cached: 1, holding: 1 })
    expect(limiter.unusedLease('account:busy', now)).toBe(held)
    const statements = counter.requests.length
    expect((await limiter.consume('account:busy', busy, 20n)).outcome).toBe('admitted')
    expect(counter.requests).toHaveLength(statements)
    expect(limiter.unusedLease('account:busy', now)).toBe(held - 1)
    // Back in the cache, in place of the subject that holds nothing.
    expect(limiter.subjects).toEqual({ cached: 1, holding: 0 })
  })

  it('hands back the units of a subject let go, with its next statement', async () => {
    limiter = make({ maxSubjects: 1 })
    await send(20, 'account:busy', busy, 20n)
    const held = limiter.unusedLease('account:busy', now)
    await send(1, 'account:other', free, 21n)
    now = NOON + 60_500
    await limiter.consume('account:busy', busy, 20n)
    expect(counter.requests.at(-1)).toMatchObject({ subject: 'account:busy', returned: held })
  })

  it('never starts a second statement for a subject let go while its first is under way', async () => {
    limiter = make({ maxSubjects: 1 })
    counter.hold = true
    const first = limiter.consume('account:a', free, 10n)
    await Promise.resolve()
    const other = limiter.consume('account:b', free, 11n)
    const again = limiter.consume('account:a', free, 10n)
    await Promise.resolve()
    expect(counter.pending.map(({ request }) => request.subject)).toEqual(['account:a', 'account:b'])
    counter.hold = false
    counter.release()
    expect((await first).outcome).toBe('admitted')
    expect((await other).outcome).toBe('admitted')
    expect((await again).outcome).toBe('admitted')
    expect(counter.requests.map(({ subject }) => subject)).toEqual(['account:a', 'account:b', 'account:a'])
  })

  it('lets a subject go that holds nothing once its statement is done', async () => {
    limiter = make({ maxSubjects: 1 })
    counter.hold = true
    const first = limiter.consume('account:a', free, 10n)
    await Promise.resolve()
    const second = limiter.consume('account:b', free, 11n)
    expect(limiter.subjects.holding).toBe(1)
    counter.release()
    await first
    await second
    expect(limiter.subjects).toEqual({ cached: 1, holding: 0 })
  })

  it('lets go, at the usage report, a subject holding only units of an earlier day', async () => {
    limiter = make({ maxSubjects: 1 })
    await send(20, 'account:busy', busy, 20n)
    await send(1, 'account:other', free, 21n)
    await limiter.reportUsage()
    expect(limiter.subjects.holding).toBe(1)
    now = DAY_START + 86_400_000
    await limiter.reportUsage()
    expect(limiter.subjects.holding).toBe(0)
  })
})
