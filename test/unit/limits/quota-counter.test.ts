import { setImmediate as turn } from 'node:timers/promises'
import { describe, expect, it, vi } from 'vitest'
import type { Queryable } from '../../../src/db/statements.js'
import { ApiError } from '../../../src/errors.js'
import { QuotaCounter } from '../../../src/limits/quota-counter.js'
import type { QuotaRequest } from '../../../src/repositories/rate-limits.js'

const MINUTE = Date.UTC(2027, 0, 1, 12, 0)
const DAY = Date.UTC(2027, 0, 1)

const request = (subject: string): QuotaRequest => ({
  subject,
  apiKeyId: null,
  minuteStart: MINUTE,
  dayStart: DAY,
  now: MINUTE,
  want: 1,
  returned: 0,
  perMinute: 60,
  perDay: null,
  banAfter: null,
  banSeconds: 900
})

type Callback = (error: Error | null, result: { rows: unknown[] }) => void

/** A database that takes every statement (as pg does, with a callback) and answers only when the test says. */
function silentDatabase() {
  const statements: Callback[] = []
  const db = {
    query: (_query: unknown, callback: Callback) => {
      statements.push(callback)
    }
  } as unknown as Queryable
  return { db, statements }
}

describe('QuotaCounter', () => {
  it('queues at most maxDue subjects behind the statement under way, and refuses the next at once with a 503', async () => {
    const { db, statements } = silentDatabase()
    const counter = new QuotaCounter(db, () => {}, 3)
    void counter.count(request('addr:under-way'))
    await turn()
    expect(statements).toHaveLength(1)
    expect(counter.depth).toBe(0)

    const queued = ['a', 'b', 'c'].map((name) => counter.count(request(`addr:${name}`)))
    expect(counter.depth).toBe(3)
    const refused = await counter.count(request('addr:d')).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused).toMatchObject({
      statusCode: 503,
      code: 'service_unavailable',
      headers: { 'retry-after': '1' }
    })
    expect(counter.depth).toBe(3)
    expect(statements).toHaveLength(1)
    expect(queued).toHaveLength(3)
  })

  it('takes subjects again once the queue has gone into a statement', async () => {
    const { db, statements: answers } = silentDatabase()
    const counter = new QuotaCounter(db, () => {}, 1)
    void counter.count(request('addr:first')).catch(() => {})
    await turn()
    void counter.count(request('addr:second')).catch(() => {})
    await expect(counter.count(request('addr:third'))).rejects.toMatchObject({ statusCode: 503 })
    answers[0]!(null, { rows: [] })
    await vi.waitFor(() => expect(answers).toHaveLength(2))
    expect(counter.depth).toBe(0)
    void counter.count(request('addr:fourth')).catch(() => {})
    expect(counter.depth).toBe(1)
  })
})
