import { beforeAll, describe, expect, it, vi } from 'vitest'
import { issueApiKey, type IssuedApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp, manualClock, ADMIN_TOKEN, useTestAdminApp } from '../helpers/app.js'
import { bearer, fire, holdDatabaseClock, statuses } from '../helpers/traffic.js'
import { usageGrid } from '../helpers/usage.js'
import { addPlan } from '../helpers/plans.js'
const HOUR = 3_600_000
const DAY = 24 * HOUR

const context = useTestAdminApp()

const get = async (url: string, status = 200) => {
  const response = await context.admin.inject({
    method: 'GET',
    url,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` }
  })
  expect(response.statusCode, response.body).toBe(status)
  return response
}
const exported = (query: Record<string, string>) => get(`/admin/v1/usage?${new URLSearchParams(query).toString()}`)
const usage = (keyId: bigint, hour: number, admitted: number, refused: number, units: number) =>
  context.database.db
    .insertInto('api_key_usage')
    .values({ api_key_id: keyId, hour: new Date(hour), admitted, refused, units })
    .execute()

describe('usage export', () => {
  // Two days ago, UTC, so that the per-day usage of the keys (the last days) holds them.
  const day = Math.floor(Date.now() / DAY) * DAY - 2 * DAY
  let a1: IssuedApiKey, a2: IssuedApiKey, b1: IssuedApiKey

  beforeAll(async () => {
    a1 = await issueApiKey(context.database.db, { plan: 'pro', name: 'a1' })
    a2 = await issueApiKey(context.database.db, { accountId: a1.accountId, name: 'a2' })
    b1 = await issueApiKey(context.database.db, { plan: 'free', name: 'b1' })
    await usage(a1.id, day, 10, 1, 12)
    await usage(a1.id, day + HOUR, 7, 0, 7)
    await usage(a1.id, day + 23 * HOUR, 3, 2, 3)
    await usage(a2.id, day + 5 * HOUR, 100, 0, 250)
    await usage(b1.id, day + 5 * HOUR, 1, 9, 1)
    await usage(a1.id, day + DAY, 4, 0, 4) // the next day
  })

  it("exports a day's hours as CSV with a header row, exactly, ordered by hour then key", async () => {
    const response = await exported({ from: new Date(day).toISOString(), to: new Date(day + DAY).toISOString() })
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8')
    const at = (hours: number) => new Date(day + hours * HOUR).toISOString()
    expect(response.body).toBe(
      [
        'start,accountId,keyId,admitted,refused,units',
        `${at(0)},${a1.accountId},${a1.id},10,1,12`,
        `${at(1)},${a1.accountId},${a1.id},7,0,7`,
        `${at(5)},${a1.accountId},${a2.id},100,0,250`,
        `${at(5)},${b1.accountId},${b1.id},1,9,1`,
        `${at(23)},${a1.accountId},${a1.id},3,2,3`,
        ''
      ].join('\n')
    )
  })

  it("exports a day as the sum of its hours, equal to each key's usage of that day", async () => {
    const range = { from: new Date(day).toISOString(), to: new Date(day + 2 * DAY).toISOString() }
    const daily = await exported({ ...range, granularity: 'day', format: 'ndjson' })
    expect(daily.headers['content-type']).toBe('application/x-ndjson')
    const rows = daily.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    const first = new Date(day).toISOString()
    expect(rows).toEqual([
      { start: first, accountId: Number(a1.accountId), keyId: Number(a1.id), admitted: 20, refused: 3, units: 22 },
      { start: first, accountId: Number(a1.accountId), keyId: Number(a2.id), admitted: 100, refused: 0, units: 250 },
      { start: first, accountId: Number(b1.accountId), keyId: Number(b1.id), admitted: 1, refused: 9, units: 1 },
      {
        start: new Date(day + DAY).toISOString(),
        accountId: Number(a1.accountId),
        keyId: Number(a1.id),
        admitted: 4,
        refused: 0,
        units: 4
      }
    ])
    // The same figures as the hourly export summed, and as the key's own usage of that day.
    const hourly = await exported({ ...range, format: 'json' })
    const hours = hourly.json<{ keyId: number; start: string; admitted: number }[]>()
    const sumOf = (keyId: bigint, from: number) =>
      hours
        .filter(
          (row) => row.keyId === Number(keyId) && Date.parse(row.start) >= from && Date.parse(row.start) < from + DAY
        )
        .reduce((sum, row) => sum + row.admitted, 0)
    expect(sumOf(a1.id, day)).toBe(20)
    const keyUsage = await get(`/admin/v1/keys/${a1.id}/usage?days=5`)
    const ofDay = keyUsage.json<{ days: { date: string; admitted: number; refused: number }[] }>().days
    expect(ofDay.find((entry) => entry.date === first.slice(0, 10))).toEqual({
      date: first.slice(0, 10),
      admitted: 20,
      refused: 3
    })
  })

  it("keeps to one account's keys with accountId", async () => {
    const response = await exported({
      from: new Date(day).toISOString(),
      to: new Date(day + DAY).toISOString(),
      granularity: 'day',
      accountId: String(b1.accountId)
    })
    expect(response.body).toBe(
      `start,accountId,keyId,admitted,refused,units\n${new Date(day).toISOString()},${b1.accountId},${b1.id},1,9,1\n`
    )
  })

  it('streams more rows than one page holds, each once, in order', async () => {
    const response = await exported(await usageGrid(context.database, day - 300 * HOUR))
    const lines = response.body.trim().split('\n').slice(1)
    expect(lines).toHaveLength(6000)
    expect(new Set(lines).size).toBe(6000)
    const order = lines.map((line) => line.split(','))
    const sorted = [...order].sort((x, y) => Date.parse(x[0]!) - Date.parse(y[0]!) || Number(x[2]) - Number(y[2]))
    expect(order).toEqual(sorted)
    expect(lines.reduce((sum, line) => sum + Number(line.split(',')[5]), 0)).toBe(12_000)
  })

  it('refuses a range off the hour or day, reversed, or not an instant', async () => {
    const base = new Date(day).toISOString()
    const queries: Record<string, string>[] = [
      { from: new Date(day + 60_000).toISOString(), to: new Date(day + HOUR).toISOString() },
      { from: base, to: new Date(day + HOUR).toISOString(), granularity: 'day' },
      { from: new Date(day + HOUR).toISOString(), to: base },
      { from: 'yesterday', to: base }
    ]
    for (const query of queries) {
      const response = await context.admin.inject({
        method: 'GET',
        url: `/admin/v1/usage?${new URLSearchParams(query).toString()}`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` }
      })
      expect(response.statusCode, JSON.stringify(query)).toBe(400)
    }
  })

  it('shows in an hour the requests admitted in it', async () => {
    // The requests are counted in the hour of the database's clock: held, so that an hour's end
    // cannot put some or all of them in the hour after the one the export is asked for.
    const clock = await holdDatabaseClock(context.database)
    const api = await createTestApp(context.database)
    const key = await issueApiKey(context.database.db, { plan: 'pro', name: 'busy' })
    const hour = Math.floor(clock() / HOUR) * HOUR
    try {
      const statuses = []
      for (let i = 0; i < 40; i++) {
        const response = await api.inject({
          method: 'GET',
          url: '/v1/pets',
          headers: { authorization: `Bearer ${key.key}` }
        })
        statuses.push(response.statusCode)
      }
      const admitted = statuses.filter((status) => status === 200).length
      expect(admitted).toBe(40)
      const query = {
        from: new Date(hour).toISOString(),
        to: new Date(hour + HOUR).toISOString(),
        accountId: String(key.accountId),
        format: 'json'
      }
      // Reported within a reporting interval (about 5 s).
      const started = Date.now()
      let rows: { admitted: number }[] = []
      while (Date.now() - started < 15_000) {
        rows = (await exported(query)).json()
        if (rows[0]?.admitted === 40) break
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      expect(rows).toEqual([expect.objectContaining({ keyId: Number(key.id), admitted: 40, refused: 0 })])
    } finally {
      await api.close()
    }
  }, 30_000)

  it('shows in each hour of a busy boundary the requests admitted and refused in it, on the one clock, across two instances', async () => {
    const start = Date.parse('2027-03-15T10:59:59.000Z')
    const clock = manualClock(start, () => context.database)
    await clock.set(start)
    await addPlan(context.database.db, 'hourly', [
      ['minute', 100000],
      ['hour', 120]
    ])
    const key = await issueApiKey(context.database.db, { plan: 'hourly', name: 'boundary' })
    const apps = await Promise.all(
      [0, 1].map(() => createTestApp(context.database, { clock, env: { BAN_AFTER: '100000' } }))
    )
    const read = { method: 'GET' as const, url: '/v1/pets?limit=1', headers: bearer(key.key) }
    const across = async (n: number) => (await Promise.all(apps.map((app) => fire(app, n / 2, read, 5)))).flat()
    try {
      // The last second of 10:00 and the first of 11:00: the hour's limit (120) refuses the rest of 10:00.
      const before = statuses(await across(150))
      await clock.set(Date.parse('2027-03-15T11:00:00.500Z'))
      const after = statuses(await across(60))
      expect(before).toEqual({ 200: 120, 429: 30 })
      expect(after).toEqual({ 200: 60 })
      const expected = [
        { start: '2027-03-15T10:00:00.000Z', admitted: before[200], refused: before[429] },
        { start: '2027-03-15T11:00:00.000Z', admitted: after[200], refused: 0 }
      ].map((hour) => ({ ...hour, accountId: Number(key.accountId), keyId: Number(key.id), units: hour.admitted }))
      const query = {
        from: '2027-03-15T10:00:00.000Z',
        to: '2027-03-15T12:00:00.000Z',
        accountId: String(key.accountId),
        format: 'json'
      }
      // Each instance reports within a reporting interval (about 5 s).
      await vi.waitFor(async () => expect((await exported(query)).json()).toEqual(expected), {
        timeout: 15_000,
        interval: 250
      })
      // The day is the sum of its hours.
      const day = await exported({
        ...query,
        to: '2027-03-16T00:00:00.000Z',
        from: '2027-03-15T00:00:00.000Z',
        granularity: 'day',
        format: 'csv'
      })
      expect(day.body).toBe(
        `start,accountId,keyId,admitted,refused,units\n2027-03-15T00:00:00.000Z,${key.accountId},${key.id},180,30,180\n`
      )
    } finally {
      await Promise.all(apps.map((app) => app.close()))
      await clock.release()
    }
  }, 60_000)
})
