import { beforeEach, describe, expect, it } from 'vitest'
import type { StoredStanding } from '../../../../src/repositories/rate-limits.js'
import { StandingSnapshots } from '../../../../src/routes/rate-limit/standings.js'

const START = Date.UTC(2027, 0, 1, 12, 0, 5)
const MINUTE_END = Date.UTC(2027, 0, 1, 12, 1)
const DAY_END = Date.UTC(2027, 0, 2)

/** The instance's estimate of the database's clock, which the test moves. */
let now: number
/** Each read, with the instant it was started at. */
let reads: { apiKeyId: bigint; accountId: bigint; now: number }[]
/** What the next read finds. */
let inDatabase: StoredStanding
let snapshots: StandingSnapshots

/** A standing with `used` units taken from each window: `used` tells the reads apart. */
const standing = (used: number, bannedUntil = 0): StoredStanding => ({
  now: START,
  windows: [
    { name: 'minute', algorithm: 'fixed', limit: 60, remaining: 60 - used, resetAt: MINUTE_END },
    { name: 'day', algorithm: 'fixed', limit: 1_000, remaining: 1_000 - used, resetAt: DAY_END }
  ],
  shadows: [],
  credits: null,
  bannedUntil
})
const usedIn = (stored: StoredStanding) => 60 - stored.windows[0]!.remaining
const make = (options: { maxKeys?: number } = {}) =>
  new StandingSnapshots(async (apiKeyId, accountId) => {
    reads.push({ apiKeyId, accountId, now })
    return inDatabase
  }, options)
const ask = async (apiKeyId = 1n) => (await snapshots.standing(apiKeyId, 7n, now)).standing

beforeEach(() => {
  now = START
  reads = []
  inDatabase = standing(1)
  snapshots = make()
})

describe('StandingSnapshots', () => {
  it('answers a read younger than a second again, and reads afresh after', async () => {
    expect(await ask()).toEqual(standing(1))
    expect(reads).toEqual([{ apiKeyId: 1n, accountId: 7n, now: START }])
    inDatabase = standing(2)
    now += 999
    expect(await ask()).toEqual(standing(1))
    expect(reads).toHaveLength(1)
    now += 1
    expect(await ask()).toEqual(standing(2))
    expect(reads.map((read) => read.now)).toEqual([START, START + 1_000])
  })

  it('lets a key start 10 reads at once and one every 3 s after, answering its last read between', async () => {
    const answers = []
    for (let second = 0; second < 30; second++) {
      now = START + second * 1_000
      inDatabase = standing(second)
      answers.push(usedIn(await ask()))
    }
    // The burst, with the second earned every 3 s meanwhile, lasts 14 reads; then one every 3 s.
    const readAt = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 18, 21, 24, 27]
    expect(reads.map((read) => (read.now - START) / 1_000)).toEqual(readAt)
    expect(answers).toEqual(answers.map((_, second) => readAt.findLast((at) => at <= second)))
  })

  it('earns its reads back while the key is quiet, up to the burst', async () => {
    const askEverySecondFor = async (seconds: number) => {
      for (let i = 0; i < seconds; i++, now += 1_000) await ask()
    }
    await askEverySecondFor(15)
    expect(reads).toHaveLength(14)
    now += 10 * 60_000
    await askEverySecondFor(15)
    expect(reads).toHaveLength(28)
  })

  it('lets callers that ask while a read runs wait for it rather than read again', async () => {
    let finish!: () => void
    snapshots = new StandingSnapshots(async (apiKeyId, accountId) => {
      reads.push({ apiKeyId, accountId, now })
      await new Promise<void>((resolve) => (finish = resolve))
      return inDatabase
    })
    const asked = [ask(), ask(), ask()]
    await Promise.resolve()
    expect(reads).toHaveLength(1)
    finish()
    expect(await Promise.all(asked)).toEqual([standing(1), standing(1), standing(1)])
    now += 5_000
    const again = ask()
    await Promise.resolve()
    expect(reads).toHaveLength(2)
    finish()
    await again
  })

  it('reads a key it has nothing for, its reads spent or not, and fails with the read', async () => {
    let failing = true
    snapshots = new StandingSnapshots(async (apiKeyId, accountId) => {
      reads.push({ apiKeyId, accountId, now })
      if (failing) throw new Error('database down')
      return inDatabase
    })
    for (let i = 0; i < 15; i++) await expect(ask()).rejects.toThrow('database down')
    failing = false
    expect(await ask()).toEqual(standing(1))
    expect(reads).toHaveLength(16)
    expect(await ask()).toEqual(standing(1))
    expect(reads).toHaveLength(16)
  })

  it('tells when the read it answers with started, on the monotonic clock, however often it answers it', async () => {
    let finish!: () => void
    snapshots = new StandingSnapshots(async () => {
      await new Promise<void>((resolve) => (finish = resolve))
      return inDatabase
    })
    const before = performance.now()
    const first = snapshots.standing(1n, 7n, now)
    await new Promise((resolve) => setTimeout(resolve, 5))
    const answeredFrom = performance.now()
    finish()
    const { startedAt } = await first
    expect(startedAt).toBeGreaterThanOrEqual(before)
    expect(startedAt).toBeLessThan(answeredFrom)
    now += 500
    expect((await snapshots.standing(1n, 7n, now)).startedAt).toBe(startedAt)
  })

  it("reads again once after a fixed window's end, its reads spent or not, and not after a bucket's", async () => {
    // Asked every second, the key has spent its reads by the minute's end, 55 s on.
    const minuteEnd = (MINUTE_END - START) / 1_000
    for (let second = 0; second < minuteEnd; second++) {
      now = START + second * 1_000
      await ask()
    }
    expect(reads.map((read) => (read.now - START) / 1_000).slice(-2)).toEqual([51, 54])
    inDatabase = standing(0)
    for (const at of [MINUTE_END, MINUTE_END + 100, MINUTE_END + 1_500]) {
      now = at
      expect(usedIn(await ask())).toBe(0)
    }
    expect(reads.map((read) => read.now).slice(-2)).toEqual([START + 54_000, MINUTE_END])

    // A bucket's reset is when it is full again, and passes unremarked.
    snapshots = make()
    reads = []
    inDatabase = {
      ...standing(1),
      windows: [{ name: 'minute', algorithm: 'bucket', limit: 60, remaining: 59, resetAt: START + 1_000 }]
    }
    for (let second = 0; second < 30; second++) {
      now = START + second * 1_000
      await ask()
    }
    expect(reads).toHaveLength(19)
  })

  it('takes no read as fresh once the clock has moved back', async () => {
    await ask()
    now -= 1
    await ask()
    expect(reads.map((read) => read.now)).toEqual([START, START - 1])
  })

  it('keeps the keys asked last, up to its cap', async () => {
    snapshots = make({ maxKeys: 2 })
    await ask(1n)
    await ask(2n)
    await ask(1n)
    await ask(3n)
    expect(snapshots.size).toBe(2)
    expect(reads.map((read) => read.apiKeyId)).toEqual([1n, 2n, 3n])
    await ask(1n)
    await ask(2n)
    expect(reads.map((read) => read.apiKeyId)).toEqual([1n, 2n, 3n, 2n])
  })
})
