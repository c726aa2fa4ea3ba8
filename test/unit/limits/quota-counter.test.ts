import { setImmediate as turn } from 'node:timers/promises'
import { beforeEach, describe, expect, it, vi, type Mock } from 'vitest'
import { DatabaseClock } from '../../../src/db/clock.js'
import type { Queryable } from '../../../src/db/statements.js'
import { ApiError } from '../../../src/errors.js'
import { QuotaCounter, type StatementObserver } from '../../../src/limits/quota-counter.js'
import type { QuotaRequest, QuotaState, UsageReport } from '../../../src/repositories/rate-limits.js'

interface Statement {
  /** The keys of the requests it counts, in the order it carries them. */
  keys: bigint[]
  usage: readonly UsageReport[]
  answer(states: QuotaState[]): void
  fail(error: Error): void
}

const db = {} as Queryable
const NOW = Date.UTC(2027, 0, 1, 12, 0, 30)
const HOUR = Date.UTC(2027, 0, 1, 12)
const KEY = 41n
const OTHER_KEY = 42n

let statements: Statement[]
/** This instance's own clock, which the test moves. */
let local: number
let clock: DatabaseClock
/** The counting statement, answered only when a test says: what each one carried, and its outcome. */
let countUnits: Mock<
  (db: Queryable, requests: readonly QuotaRequest[], usage?: readonly UsageReport[]) => Promise<QuotaState[]>
>
beforeEach(() => {
  statements = []
  local = NOW
  clock = new DatabaseClock(() => local)
  countUnits = vi.fn(
    (_db, requests, usage = []) =>
      new Promise((answer, fail) =>
        statements.push({ keys: requests.map(({ apiKeyId }) => apiKeyId), usage, answer, fail })
      )
  )
})

/** A request of one key, of its own account unless told. */
const request = (apiKeyId: bigint, rest: Partial<QuotaRequest> = {}): QuotaRequest => ({
  apiKeyId,
  accountId: apiKeyId + 1_000n,
  cost: 1,
  want: 1,
  returned: 0,
  returnedAt: 0,
  banAfter: null,
  banSeconds: 900,
  ...rest
})

/** What the database answers for a key: granted tells the requests apart. */
const state = (apiKeyId: bigint, granted: number, now = NOW): QuotaState => ({
  apiKeyId,
  admitted: true,
  granted,
  now,
  leaseUntil: now + 1_000,
  reason: null,
  retryAt: null,
  bannedUntil: null,
  newlyBanned: false,
  windows: [
    { name: 'minute', algorithm: 'fixed', limit: 60, remaining: 60 - granted, resetAt: Date.UTC(2027, 0, 1, 12, 1) }
  ],
  shadows: [],
  credits: null
})

/** A key's requests and units in a statement's usage, whichever hours they fall in. */
function usageOf(statement: Statement, apiKeyId: bigint) {
  const reports = statement.usage.filter((report) => report.apiKeyId === apiKeyId)
  const sum = (field: 'admitted' | 'refused' | 'units') => reports.reduce((total, report) => total + report[field], 0)
  return { admitted: sum('admitted'), refused: sum('refused'), units: sum('units') }
}

/** What a counter told of its statements: each one's subjects and whether it failed. */
function observing() {
  const observed: [number, boolean][] = []
  const observe: StatementObserver = (subjects, seconds, failed) => {
    // In seconds: each statement here is answered within moments of being sent.
    expect(seconds).toBeGreaterThan(0)
    expect(seconds).toBeLessThan(5)
    observed.push([subjects, failed])
  }
  return { observed, observe }
}

/** Waits until `count` statements have gone to the database. */
const sent = (count: number) => vi.waitFor(() => expect(statements).toHaveLength(count))

describe('QuotaCounter', () => {
  it('counts the requests of one event-loop turn in one statement', async () => {
    const alone = new QuotaCounter(db, clock, { countUnits })
    const counted = [alone.count(request(1n))]
    await sent(1)
    expect(statements[0]!.keys).toEqual([1n])
    statements[0]!.answer([state(1n, 1)])
    await expect(counted[0]).resolves.toEqual(state(1n, 1))

    const together = new QuotaCounter(db, clock, { countUnits })
    const both = [together.count(request(2n)), together.count(request(3n))]
    await sent(2)
    expect(statements[1]!.keys).toEqual([2n, 3n])
    statements[1]!.answer([state(3n, 3), state(2n, 2)])
    expect(await Promise.all(both)).toEqual([state(2n, 2), state(3n, 3)])
  })

  it('hands the requests to the statement as they were asked', async () => {
    const counter = new QuotaCounter(db, clock, { countUnits })
    const asked = request(KEY, { cost: 5, want: 50, returned: 15, returnedAt: NOW - 400, banAfter: 3, banSeconds: 60 })
    void counter.count(asked)
    await sent(1)
    expect(countUnits).toHaveBeenCalledExactlyOnceWith(db, [asked], [])
    statements[0]!.answer([state(KEY, 50)])
  })

  it('answers requests of the same key in one statement in turn, each with its own state', async () => {
    const counter = new QuotaCounter(db, clock, { countUnits })
    const counted = [counter.count(request(KEY)), counter.count(request(OTHER_KEY)), counter.count(request(KEY))]
    await sent(1)
    expect(statements[0]!.keys).toEqual([KEY, OTHER_KEY, KEY])
    statements[0]!.answer([state(OTHER_KEY, 9), state(KEY, 1), state(KEY, 2)])
    expect(await Promise.all(counted)).toEqual([state(KEY, 1), state(OTHER_KEY, 9), state(KEY, 2)])
  })

  it('counts the requests that fall due while a statement runs together in the next, each answered with its own state', async () => {
    const { observed, observe } = observing()
    const counter = new QuotaCounter(db, clock, { countUnits, observe })
    const first = counter.count(request(1n))
    await sent(1)
    const queued = [2n, 3n, 4n].map((key) => counter.count(request(key)))
    await turn()
    // Nothing goes while the first statement runs.
    expect(statements).toHaveLength(1)
    expect(counter.depth).toBe(3)

    statements[0]!.answer([state(1n, 1)])
    await expect(first).resolves.toEqual(state(1n, 1))
    await sent(2)
    expect(statements[1]!.keys).toEqual([2n, 3n, 4n])
    expect(counter.depth).toBe(0)
    statements[1]!.answer([state(4n, 4), state(2n, 2), state(3n, 3)])
    expect(await Promise.all(queued)).toEqual([state(2n, 2), state(3n, 3), state(4n, 4)])
    expect(observed).toEqual([
      [1, false],
      [3, false]
    ])
    await turn()
    expect(statements).toHaveLength(2)
  })

  it('fails the requests queued behind a failed statement with it, and counts afresh after', async () => {
    const { observed, observe } = observing()
    const counter = new QuotaCounter(db, clock, { countUnits, observe })
    const first = counter.count(request(1n))
    await sent(1)
    const queued = [counter.count(request(2n)), counter.count(request(3n))]
    const timeout = new Error('Query read timeout')
    statements[0]!.fail(timeout)

    await expect(first).rejects.toBe(timeout)
    for (const behind of queued) await expect(behind).rejects.toBe(timeout)
    expect(counter.depth).toBe(0)
    expect(observed).toEqual([[1, true]])
    // The queued requests failed without a statement of their own.
    await turn()
    expect(statements).toHaveLength(1)

    const next = counter.count(request(4n))
    await sent(2)
    expect(statements[1]!.keys).toEqual([4n])
    statements[1]!.answer([state(4n, 4)])
    await expect(next).resolves.toEqual(state(4n, 4))
  })

  it("sets the database's clock from the first state's now, timed by the statement's round trip", async () => {
    const counter = new QuotaCounter(db, clock, { countUnits })
    const counted = counter.count(request(1n))
    await sent(1)
    // Sent at NOW and answered 40 ms later, local time: the database read its clock 5 s ahead of ours.
    local = NOW + 40
    statements[0]!.answer([state(1n, 1, NOW + 20 + 5_000)])
    await counted
    expect(clock.offset).toBe(5_000)
    expect(clock.now()).toBe(NOW + 40 + 5_000)
    // Known to within half the round trip.
    expect(clock.surelyBefore(NOW + 40 + 5_000 + 20)).toBe(false)
    expect(clock.surelyBefore(NOW + 40 + 5_000 + 21)).toBe(true)

    // The first state's instant is the one taken; a statement that fails, or answers no state, leaves the clock.
    const both = [counter.count(request(2n)), counter.count(request(3n))]
    await sent(2)
    statements[1]!.answer([state(2n, 1, NOW + 40 + 3_000), state(3n, 1, NOW + 40 + 9_000)])
    await Promise.all(both)
    expect(clock.offset).toBe(3_000)
    const failing = counter.count(request(4n))
    await sent(3)
    statements[2]!.fail(new Error('Connection terminated'))
    await expect(failing).rejects.toThrow('Connection terminated')
    counter.tally(KEY, HOUR, 'admitted', 1)
    const report = counter.reportUsage()
    await sent(4)
    statements[3]!.answer([])
    await report
    expect(clock.offset).toBe(3_000)
  })

  it("carries the usage of its requests' keys, and puts it back for the next report when the statement fails", async () => {
    const counter = new QuotaCounter(db, clock, { countUnits })
    counter.tally(KEY, HOUR, 'admitted', 1)
    counter.tally(KEY, HOUR, 'admitted', 5)
    counter.tally(KEY, HOUR, 'refused')
    counter.tally(OTHER_KEY, HOUR, 'admitted', 2)

    const counted = counter.count(request(KEY))
    await sent(1)
    expect(usageOf(statements[0]!, KEY)).toEqual({ admitted: 2, refused: 1, units: 6 })
    // Another key's usage waits for the report.
    expect(usageOf(statements[0]!, OTHER_KEY)).toEqual({ admitted: 0, refused: 0, units: 0 })
    statements[0]!.fail(new Error('Connection terminated'))
    await expect(counted).rejects.toThrow('Connection terminated')

    const report = counter.reportUsage()
    await sent(2)
    expect(statements[1]!.keys).toEqual([])
    expect(usageOf(statements[1]!, KEY)).toEqual({ admitted: 2, refused: 1, units: 6 })
    expect(usageOf(statements[1]!, OTHER_KEY)).toEqual({ admitted: 1, refused: 0, units: 2 })
    statements[1]!.answer([])
    await report

    // Reported once: nothing is left to send.
    await counter.reportUsage()
    expect(statements).toHaveLength(2)
  })

  it('sends the usage a statement carried only once when it succeeds', async () => {
    const counter = new QuotaCounter(db, clock, { countUnits })
    counter.tally(KEY, HOUR, 'admitted', 3)
    const counted = counter.count(request(KEY))
    await sent(1)
    expect(usageOf(statements[0]!, KEY)).toEqual({ admitted: 1, refused: 0, units: 3 })
    statements[0]!.answer([state(KEY, 1)])
    await counted
    await counter.reportUsage()
    expect(statements).toHaveLength(1)
  })

  it('keeps the usage of a report that failed for the next one, and adds what came since', async () => {
    const counter = new QuotaCounter(db, clock, { countUnits })
    counter.tally(KEY, HOUR, 'admitted', 2)
    const failing = counter.reportUsage()
    await sent(1)
    expect(statements[0]!.keys).toEqual([])
    expect(usageOf(statements[0]!, KEY)).toEqual({ admitted: 1, refused: 0, units: 2 })
    counter.tally(KEY, HOUR, 'refused')
    counter.tally(KEY, HOUR, 'admitted', 4)
    statements[0]!.fail(new Error('Connection terminated'))
    await expect(failing).rejects.toThrow('Connection terminated')

    const retried = counter.reportUsage()
    await sent(2)
    expect(usageOf(statements[1]!, KEY)).toEqual({ admitted: 2, refused: 1, units: 6 })
    statements[1]!.answer([])
    await retried
  })

  it('queues at most maxDue requests behind the statement under way, and refuses the next at once with a 503', async () => {
    const counter = new QuotaCounter(db, clock, { countUnits, maxDue: 3 })
    const first = counter.count(request(10n))
    await sent(1)
    expect(counter.depth).toBe(0)

    const queued = [11n, 12n, 13n].map((key) => counter.count(request(key)))
    expect(counter.depth).toBe(3)
    const refused = await counter.count(request(14n)).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused).toMatchObject({
      statusCode: 503,
      code: 'service_unavailable',
      message: 'Too many requests are waiting to be counted; retry later',
      headers: { 'retry-after': '1' }
    })
    expect(counter.depth).toBe(3)

    // The queued three are counted next; the refused one never reaches the database.
    statements[0]!.answer([state(10n, 1)])
    await first
    await sent(2)
    expect(statements[1]!.keys).toEqual([11n, 12n, 13n])
    statements[1]!.answer([11n, 12n, 13n].map((key, index) => state(key, index)))
    expect((await Promise.all(queued)).map(({ apiKeyId }) => apiKeyId)).toEqual([11n, 12n, 13n])
  })

  it('takes requests again once the queue has gone into a statement', async () => {
    const counter = new QuotaCounter(db, clock, { countUnits, maxDue: 1 })
    void counter.count(request(1n)).catch(() => {})
    await sent(1)
    void counter.count(request(2n)).catch(() => {})
    await expect(counter.count(request(3n))).rejects.toMatchObject({ statusCode: 503 })
    statements[0]!.answer([state(1n, 1)])
    await sent(2)
    expect(counter.depth).toBe(0)
    void counter.count(request(4n)).catch(() => {})
    expect(counter.depth).toBe(1)
  })
})

describe('QuotaCounter on count_units', () => {
  /** A database that takes one statement at a time, as pg does, and answers it when the test says. */
  function fakeDatabase() {
    const calls: { text: string; values: unknown[]; answer: (rows: unknown[]) => void }[] = []
    const database: Queryable = {
      query: ((
        query: { text: string; values: unknown[] },
        callback: (error: Error | null, result?: { rows: unknown[] }) => void
      ) => {
        calls.push({ text: query.text, values: query.values, answer: (rows) => callback(null, { rows }) })
      }) as unknown as Queryable['query']
    }
    return { database, calls }
  }

  it('sends the requests and the usage as 13 arrays, and reads each row into its key’s state', async () => {
    const { database, calls } = fakeDatabase()
    const counter = new QuotaCounter(database, clock)
    counter.tally(KEY, HOUR, 'admitted', 7)
    counter.tally(KEY, HOUR, 'refused')
    const counted = [
      counter.count(
        request(KEY, { cost: 5, want: 25, returned: 10, returnedAt: NOW - 300, banAfter: 2, banSeconds: 60 })
      ),
      counter.count(request(OTHER_KEY))
    ]
    await vi.waitFor(() => expect(calls).toHaveLength(1))
    expect(calls[0]!.text).toContain('count_units(')
    expect(calls[0]!.values).toEqual([
      [KEY, OTHER_KEY],
      [KEY + 1_000n, OTHER_KEY + 1_000n],
      [5, 1],
      [25, 1],
      [10, 0],
      [NOW - 300, 0],
      [2, null],
      [60, 900],
      [KEY],
      [HOUR],
      [1],
      [1],
      [7]
    ])

    // Sent at NOW and answered 40 ms later, local time; the database's clock runs 5 s ahead of ours.
    local = NOW + 40
    const databaseNow = NOW + 20 + 5_000
    calls[0]!.answer([
      {
        apiKeyId: String(OTHER_KEY),
        admitted: false,
        granted: 0,
        now: databaseNow,
        leaseUntil: databaseNow,
        reason: 'credits_exhausted',
        retryAt: null,
        bannedUntil: null,
        newlyBanned: false,
        windows: null,
        algorithms: null,
        limits: null,
        remaining: null,
        resets: null,
        credits: '0'
      },
      {
        apiKeyId: String(KEY),
        admitted: true,
        granted: 25,
        now: databaseNow,
        leaseUntil: databaseNow + 1_000,
        reason: null,
        retryAt: null,
        bannedUntil: null,
        newlyBanned: false,
        // A shadow window's counter is stored as `minute:shadow`; past its limit it is below 0.
        windows: ['second', 'minute', 'minute:shadow'],
        algorithms: ['bucket', 'fixed', 'fixed'],
        limits: [10, 600, 20],
        remaining: ['4', '575', '-5'],
        resets: [databaseNow + 600, Date.UTC(2027, 0, 1, 12, 1), Date.UTC(2027, 0, 1, 12, 1)],
        credits: '12345'
      }
    ])
    expect(await Promise.all(counted)).toEqual([
      {
        apiKeyId: KEY,
        admitted: true,
        granted: 25,
        now: databaseNow,
        leaseUntil: databaseNow + 1_000,
        reason: null,
        retryAt: null,
        bannedUntil: null,
        newlyBanned: false,
        windows: [
          { name: 'second', algorithm: 'bucket', limit: 10, remaining: 4, resetAt: databaseNow + 600 },
          { name: 'minute', algorithm: 'fixed', limit: 600, remaining: 575, resetAt: Date.UTC(2027, 0, 1, 12, 1) }
        ],
        shadows: [
          { name: 'minute', algorithm: 'fixed', limit: 20, remaining: -5, resetAt: Date.UTC(2027, 0, 1, 12, 1) }
        ],
        credits: 12_345
      },
      {
        apiKeyId: OTHER_KEY,
        admitted: false,
        granted: 0,
        now: databaseNow,
        leaseUntil: databaseNow,
        reason: 'credits_exhausted',
        retryAt: null,
        bannedUntil: null,
        newlyBanned: false,
        windows: [],
        shadows: [],
        credits: 0
      }
    ])
    expect(clock.offset).toBe(5_000)
  })

  it('reports usage alone with empty request arrays, and sends nothing when there is nothing to report', async () => {
    const { database, calls } = fakeDatabase()
    const counter = new QuotaCounter(database, clock)
    await counter.reportUsage()
    expect(calls).toHaveLength(0)

    counter.tally(KEY, HOUR, 'admitted', 3)
    counter.tally(KEY, HOUR + 3_600_000, 'refused')
    const report = counter.reportUsage()
    await vi.waitFor(() => expect(calls).toHaveLength(1))
    expect(calls[0]!.values).toEqual([
      ...Array(8).fill([]),
      [KEY, KEY],
      [HOUR, HOUR + 3_600_000],
      [1, 0],
      [0, 1],
      [3, 0]
    ])
    calls[0]!.answer([])
    await report
    expect(clock.offset).toBe(0)
  })
})
