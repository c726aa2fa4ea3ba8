import { setImmediate as turn } from 'node:timers/promises'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import type { Queryable } from '../../../src/db/statements.js'
import { ApiError } from '../../../src/errors.js'
import { QuotaCounter } from '../../../src/limits/quota-counter.js'
import {
  countRequests,
  type QuotaRequest,
  type QuotaState,
  type UsageReport
} from '../../../src/repositories/rate-limits.js'

// The counting statement, answered only when a test says: what each one carried, and its outcome.
vi.mock('../../../src/repositories/rate-limits.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../../src/repositories/rate-limits.js')>()),
  countRequests: vi.fn()
}))

interface Statement {
  subjects: string[]
  usage: readonly UsageReport[]
  answer(states: QuotaState[]): void
  fail(error: Error): void
}

let statements: Statement[]
beforeEach(() => {
  statements = []
  vi.mocked(countRequests).mockImplementation(
    (_db, requests, usage = []) =>
      new Promise((answer, fail) =>
        statements.push({ subjects: requests.map(({ subject }) => subject), usage, answer, fail })
      )
  )
})

const db = {} as Queryable
const MINUTE = Date.UTC(2027, 0, 1, 12, 0)
const HOUR = Date.UTC(2027, 0, 1, 12)
const KEY = 41n
const OTHER_KEY = 42n

const REQUEST: QuotaRequest = {
  subject: 'account:0',
  apiKeyId: null,
  minuteStart: MINUTE,
  dayStart: Date.UTC(2027, 0, 1),
  now: MINUTE,
  want: 1,
  returned: 0,
  perMinute: 60,
  perDay: null,
  banAfter: null,
  banSeconds: 900
}
const request = (subject: string, apiKeyId: bigint | null = null): QuotaRequest => ({ ...REQUEST, subject, apiKeyId })

/** What the database answers for a subject: granted tells the subjects apart. */
const state = (subject: string, granted: number): QuotaState => ({
  subject,
  granted,
  minuteStart: MINUTE,
  minuteUsed: granted,
  dayStart: REQUEST.dayStart,
  dayUsed: granted,
  bannedUntil: null,
  newlyBanned: false
})

/** A key's requests in a statement's usage, whichever hours they fall in. */
function usageOf(statement: Statement, apiKeyId: bigint) {
  const reports = statement.usage.filter((report) => report.apiKeyId === apiKeyId)
  return {
    admitted: reports.reduce((sum, report) => sum + report.admitted, 0),
    refused: reports.reduce((sum, report) => sum + report.refused, 0)
  }
}

/** Waits until `count` statements have gone to the database. */
const sent = (count: number) => vi.waitFor(() => expect(statements).toHaveLength(count))

describe('QuotaCounter', () => {
  it('counts the requests of one event-loop turn in one statement', async () => {
    const alone = new QuotaCounter(db)
    const counted = [alone.count(request('account:1'))]
    await sent(1)
    expect(statements[0]!.subjects).toEqual(['account:1'])
    statements[0]!.answer([state('account:1', 1)])
    await expect(counted[0]).resolves.toEqual(state('account:1', 1))

    const together = new QuotaCounter(db)
    const both = [together.count(request('account:2')), together.count(request('account:3'))]
    await sent(2)
    expect(statements[1]!.subjects).toEqual(['account:2', 'account:3'])
    statements[1]!.answer([state('account:3', 3), state('account:2', 2)])
    expect(await Promise.all(both)).toEqual([state('account:2', 2), state('account:3', 3)])
  })

  it('counts the subjects that fall due while a statement runs together in the next, each answered with its own state', async () => {
    const observed: [number, boolean][] = []
    const counter = new QuotaCounter(db, (subjects, seconds, failed) => {
      // In seconds: each statement here is answered within moments of being sent.
      expect(seconds).toBeGreaterThan(0)
      expect(seconds).toBeLessThan(5)
      observed.push([subjects, failed])
    })
    const first = counter.count(request('account:1'))
    await sent(1)
    const queued = ['account:2', 'account:3', 'account:4'].map((subject) => counter.count(request(subject)))
    await turn()
    // Nothing goes while the first statement runs.
    expect(statements).toHaveLength(1)
    expect(counter.depth).toBe(3)

    statements[0]!.answer([state('account:1', 1)])
    await expect(first).resolves.toEqual(state('account:1', 1))
    await sent(2)
    expect(statements[1]!.subjects).toEqual(['account:2', 'account:3', 'account:4'])
    expect(counter.depth).toBe(0)
    statements[1]!.answer([state('account:4', 4), state('account:2', 2), state('account:3', 3)])
    expect(await Promise.all(queued)).toEqual([state('account:2', 2), state('account:3', 3), state('account:4', 4)])
    expect(observed).toEqual([
      [1, false],
      [3, false]
    ])
    await turn()
    expect(statements).toHaveLength(2)
  })

  it('fails the requests queued behind a failed statement with it, and counts afresh after', async () => {
    const observed: [number, boolean][] = []
    const counter = new QuotaCounter(db, (subjects, seconds, failed) => {
      expect(seconds).toBeGreaterThan(0)
      expect(seconds).toBeLessThan(5)
      observed.push([subjects, failed])
    })
    const first = counter.count(request('account:1'))
    await sent(1)
    const queued = [counter.count(request('account:2')), counter.count(request('account:3'))]
    const timeout = new Error('Query read timeout')
    statements[0]!.fail(timeout)

    await expect(first).rejects.toBe(timeout)
    for (const behind of queued) await expect(behind).rejects.toBe(timeout)
    expect(counter.depth).toBe(0)
    expect(observed).toEqual([[1, true]])
    // The queued requests failed without a statement of their own.
    await turn()
    expect(statements).toHaveLength(1)

    const next = counter.count(request('account:4'))
    await sent(2)
    expect(statements[1]!.subjects).toEqual(['account:4'])
    statements[1]!.answer([state('account:4', 4)])
    await expect(next).resolves.toEqual(state('account:4', 4))
  })

  it("carries the usage of its requests' keys, and puts it back for the next report when the statement fails", async () => {
    const counter = new QuotaCounter(db)
    counter.tally(KEY, HOUR, 'admitted')
    counter.tally(KEY, HOUR, 'admitted')
    counter.tally(KEY, HOUR, 'refused')
    counter.tally(OTHER_KEY, HOUR, 'admitted')

    const counted = counter.count(request('account:1', KEY))
    await sent(1)
    expect(usageOf(statements[0]!, KEY)).toEqual({ admitted: 2, refused: 1 })
    // Another key's usage waits for the report.
    expect(usageOf(statements[0]!, OTHER_KEY)).toEqual({ admitted: 0, refused: 0 })
    statements[0]!.fail(new Error('Connection terminated'))
    await expect(counted).rejects.toThrow('Connection terminated')

    const report = counter.reportUsage()
    await sent(2)
    expect(statements[1]!.subjects).toEqual([])
    expect(usageOf(statements[1]!, KEY)).toEqual({ admitted: 2, refused: 1 })
    expect(usageOf(statements[1]!, OTHER_KEY)).toEqual({ admitted: 1, refused: 0 })
    statements[1]!.answer([])
    await report

    // Reported once: nothing is left to send.
    await counter.reportUsage()
    expect(statements).toHaveLength(2)
  })

  it('sends the usage a statement carried only once when it succeeds', async () => {
    const counter = new QuotaCounter(db)
    counter.tally(KEY, HOUR, 'admitted')
    const counted = counter.count(request('account:1', KEY))
    await sent(1)
    expect(usageOf(statements[0]!, KEY)).toEqual({ admitted: 1, refused: 0 })
    statements[0]!.answer([state('account:1', 1)])
    await counted
    await counter.reportUsage()
    expect(statements).toHaveLength(1)
  })

  it('keeps the usage of a report that failed for the next one, and adds what came since', async () => {
    const counter = new QuotaCounter(db)
    counter.tally(KEY, HOUR, 'admitted')
    const failing = counter.reportUsage()
    await sent(1)
    expect(statements[0]!.subjects).toEqual([])
    expect(usageOf(statements[0]!, KEY)).toEqual({ admitted: 1, refused: 0 })
    counter.tally(KEY, HOUR, 'refused')
    statements[0]!.fail(new Error('Connection terminated'))
    await expect(failing).rejects.toThrow('Connection terminated')

    const retried = counter.reportUsage()
    await sent(2)
    expect(usageOf(statements[1]!, KEY)).toEqual({ admitted: 1, refused: 1 })
    statements[1]!.answer([])
    await retried
  })

  it('queues at most maxDue subjects behind the statement under way, and refuses the next at once with a 503', async () => {
    const counter = new QuotaCounter(db, () => {}, 3)
    const first = counter.count(request('account:under-way'))
    await sent(1)
    expect(counter.depth).toBe(0)

    const queued = ['a', 'b', 'c'].map((name) => counter.count(request(`account:${name}`)))
    expect(counter.depth).toBe(3)
    const refused = await counter.count(request('account:d')).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused).toMatchObject({
      statusCode: 503,
      code: 'service_unavailable',
      message: 'Too many requests are waiting to be counted; retry later',
      headers: { 'retry-after': '1' }
    })
    expect(counter.depth).toBe(3)

    // The queued three are counted next; the refused one never reaches the database.
    statements[0]!.answer([state('account:under-way', 1)])
    await first
    await sent(2)
    expect(statements[1]!.subjects).toEqual(['account:a', 'account:b', 'account:c'])
    statements[1]!.answer(['a', 'b', 'c'].map((name, index) => state(`account:${name}`, index)))
    expect((await Promise.all(queued)).map(({ subject }) => subject)).toEqual(['account:a', 'account:b', 'account:c'])
  })

  it('takes subjects again once the queue has gone into a statement', async () => {
    const counter = new QuotaCounter(db, () => {}, 1)
    void counter.count(request('account:first')).catch(() => {})
    await sent(1)
    void counter.count(request('account:second')).catch(() => {})
    await expect(counter.count(request('account:third'))).rejects.toMatchObject({ statusCode: 503 })
    statements[0]!.answer([])
    await sent(2)
    expect(counter.depth).toBe(0)
    void counter.count(request('account:fourth')).catch(() => {})
    expect(counter.depth).toBe(1)
  })
})
