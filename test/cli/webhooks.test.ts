import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { cliOn } from '../helpers/cli.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { usageGrid } from '../helpers/usage.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database?.drop()
})

const { run, cli, json } = cliOn(() => database.url)
const stored = (id: string) =>
  database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', BigInt(id)).executeTakeFirst()

describe('webhooks on the CLI', () => {
  it('create an endpoint with its secret shown once, list, show, update, pause, resume, rotate and delete it', async () => {
    const created = await json(
      'webhooks',
      'create',
      '--url',
      'https://hooks.example.com/store',
      '--events',
      'key.created,usage.threshold',
      '--description',
      'billing'
    )
    expect(created).toMatchObject({
      url: 'https://hooks.example.com/store',
      events: ['key.created', 'usage.threshold'],
      description: 'billing',
      paused: false,
      previousSecretUntil: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{20,}$/)
    })
    expect((await stored(created.id))!.secret).toBe(created.secret)
    // Never shown again.
    const listed = await cli('webhooks', 'list')
    expect(listed).toMatch(
      new RegExp(
        `^${created.id}\\s+https://hooks\\.example\\.com/store\\s+key\\.created,usage\\.threshold\\s+active\\s+billing$`,
        'm'
      )
    )
    expect(listed).not.toContain(created.secret)
    const shown = await json('webhooks', 'show', created.id)
    expect(shown).not.toHaveProperty('secret')
    expect(shown).toEqual((({ secret: _secret, ...endpoint }) => endpoint)(created))

    const paused = await json('webhooks', 'update', created.id, '--events', 'key.created,key.banned', '--pause')
    expect(paused).toMatchObject({ events: ['key.created', 'key.banned'], paused: true })
    expect(await cli('webhooks', 'show', created.id)).toMatch(/\spaused\s+billing$/m)
    const resumed = await json('webhooks', 'update', created.id, '--resume', '--url', 'https://hooks.example.com/v2')
    expect(resumed).toMatchObject({ url: 'https://hooks.example.com/v2', paused: false, pausedAt: null })

    const rotated = await cli('webhooks', 'rotate-secret', created.id, '--grace-seconds', '600')
    const secret = rotated.trim().split('\n').at(-1)!
    expect(secret).toMatch(/^whsec_/)
    expect(secret).not.toBe(created.secret)
    expect(rotated).toMatch(/the previous secret signs too until \d{4}-\d\d-\d\dT/)
    const row = (await stored(created.id))!
    expect(row.secret).toBe(secret)
    expect(row.previous_secret).toBe(created.secret)
    const graceMs = row.previous_secret_until!.getTime() - Date.now()
    expect(graceMs).toBeGreaterThan(590_000)
    expect(graceMs).toBeLessThanOrEqual(600_000)

    expect(await cli('webhooks', 'delete', created.id)).toBe(
      `Deleted webhook endpoint ${created.id} and its deliveries\n`
    )
    expect(await stored(created.id)).toBeUndefined()
    const trail = await database.db
      .selectFrom('audit_events')
      .select(['action', 'actor'])
      .where('action', 'like', 'webhook.%')
      .orderBy('id')
      .execute()
    expect(trail.map((event) => event.action)).toEqual([
      'webhook.created',
      'webhook.changed',
      'webhook.changed',
      'webhook.secret_rotated',
      'webhook.deleted'
    ])
    expect(trail.every((event) => /^cli:./.test(event.actor))).toBe(true)
    const changes = await database.db
      .selectFrom('audit_events')
      .select(sql<string>`changes::text`.as('changes'))
      .execute()
    expect(changes.some((event) => event.changes.includes('whsec_'))).toBe(false)
  }, 90_000)

  it("list an endpoint's deliveries with status, attempts, next attempt and last answer, the failed marked, and retry one", async () => {
    const endpoint = await json('webhooks', 'create', '--url', 'https://hooks.example.com/d', '--events', 'key.created')
    await cli('keys', 'create', '--plan', 'free', '--name', 'first')
    await cli('keys', 'create', '--plan', 'free', '--name', 'second')
    const events = await database.db
      .selectFrom('webhook_deliveries')
      .select('event_id')
      .where('endpoint_id', '=', BigInt(endpoint.id))
      .orderBy('event_id')
      .execute()
    expect(events).toHaveLength(2)
    const [failedId, pendingId] = events.map((row) => row.event_id)
    await sql`UPDATE webhook_deliveries SET status = 'failed', attempts = 31, last_status = 500,
        last_response = 'upstream down', last_attempt_at = now(), finished_at = now()
      WHERE endpoint_id = ${BigInt(endpoint.id)} AND event_id = ${failedId}`.execute(database.db)
    await sql`UPDATE webhook_deliveries SET attempts = 2, last_response = 'connect ECONNREFUSED 10.0.0.1:443',
        last_attempt_at = now(), next_attempt_at = '2099-01-01T00:00:00Z'
      WHERE endpoint_id = ${BigInt(endpoint.id)} AND event_id = ${pendingId}`.execute(database.db)

    const table = (await cli('webhooks', 'deliveries', endpoint.id)).trim().split('\n')
    expect(table[0]).toMatch(/^EVENT\s+TYPE\s+STATUS\s+ATTEMPTS\s+NEXT_ATTEMPT\s+LAST_ATTEMPT\s+LAST_ANSWER$/)
    expect(table[1]).toMatch(
      new RegExp(
        `^${pendingId}\\s+key\\.created\\s+pending\\s+2\\s+2099-01-01T00:00:00\\.000Z\\s+\\S+\\s+no answer connect ECONNREFUSED 10\\.0\\.0\\.1:443$`
      )
    )
    expect(table[2]).toMatch(
      new RegExp(`^${failedId}\\s+key\\.created\\s+FAILED\\s+31\\s+-\\s+\\S+\\s+500 upstream down$`)
    )
    expect(table).toHaveLength(3)

    const failed = await json('webhooks', 'deliveries', endpoint.id, '--status', 'failed')
    expect(failed).toEqual([
      expect.objectContaining({ eventId: Number(failedId), status: 'failed', attempts: 31, lastStatus: 500 })
    ])
    expect(await cli('webhooks', 'retry', endpoint.id, String(failedId))).toContain('pending again')
    const retried = await database.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'finished_at'])
      .where('event_id', '=', failedId!)
      .executeTakeFirstOrThrow()
    expect(retried).toEqual({ status: 'pending', finished_at: null })
  }, 60_000)

  it.each([
    [['webhooks', 'create', '--events', 'key.created'], "required option '--url <url>' not specified"],
    [
      ['webhooks', 'create', '--url', 'https://hooks.example.com/x'],
      "required option '--events <types>' not specified"
    ],
    [['webhooks', 'create', '--url', 'https://hooks.example.com/x', '--events', 'key.eaten'], 'events has key.eaten'],
    [['webhooks', 'create', '--url', 'http://hooks.example.com/x', '--events', 'key.created'], 'url: '],
    [['webhooks', 'create', '--url', 'https://10.1.2.3/x', '--events', 'key.created'], 'url: '],
    [['webhooks', 'update', '1', '--pause', '--resume'], '--pause and --resume exclude each other'],
    [['webhooks', 'update', '1'], 'give what to change'],
    [['webhooks', 'rotate-secret', '1', '--grace-seconds', 'soon'], '--grace-seconds must be a whole number'],
    [['webhooks', 'deliveries', '1', '--status', 'lost'], '--status must be one of pending, delivered, failed'],
    [['webhooks', 'show', 'x'], 'endpoint ID must be a positive whole number']
  ])('refuse %j with a one-line error, exit code 2, and change nothing', async (args, message) => {
    const before = await database.db.selectFrom('webhook_endpoints').select('id').execute()
    const result = await run(...args)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain(message)
    expect(await database.db.selectFrom('webhook_endpoints').select('id').execute()).toEqual(before)
  })

  it('answer an unknown endpoint with a one-line error', async () => {
    const result = await run('webhooks', 'rotate-secret', '999999')
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toBe('Error: No webhook endpoint with id 999999')
  })
})

describe('usage export on the CLI', () => {
  const HOUR = 3_600_000
  const day = Date.parse('2026-11-02T00:00:00Z')
  const at = (hours: number) => new Date(day + hours * HOUR).toISOString()

  it('writes hours as CSV with a header row, days as their sums, one account with --account-id', async () => {
    const a1 = await issueApiKey(database.db, { plan: 'pro', name: 'a1' })
    const a2 = await issueApiKey(database.db, { accountId: a1.accountId, name: 'a2' })
    const b1 = await issueApiKey(database.db, { plan: 'free', name: 'b1' })
    await database.db
      .insertInto('api_key_usage')
      .values([
        { api_key_id: a1.id, hour: new Date(day), admitted: 10, refused: 1, units: 12 },
        { api_key_id: a1.id, hour: new Date(day + 23 * HOUR), admitted: 3, refused: 2, units: 3 },
        { api_key_id: a2.id, hour: new Date(day + 5 * HOUR), admitted: 100, refused: 0, units: 250 },
        { api_key_id: b1.id, hour: new Date(day + 5 * HOUR), admitted: 1, refused: 9, units: 1 },
        { api_key_id: a1.id, hour: new Date(day + 24 * HOUR), admitted: 4, refused: 0, units: 4 }
      ])
      .execute()

    expect(await cli('usage', 'export', '--from', at(0), '--to', at(24))).toBe(
      [
        'start,accountId,keyId,admitted,refused,units',
        `${at(0)},${a1.accountId},${a1.id},10,1,12`,
        `${at(5)},${a1.accountId},${a2.id},100,0,250`,
        `${at(5)},${b1.accountId},${b1.id},1,9,1`,
        `${at(23)},${a1.accountId},${a1.id},3,2,3`,
        ''
      ].join('\n')
    )
    const days = JSON.parse(
      await cli('usage', 'export', '--from', at(0), '--to', at(48), '--granularity', 'day', '--format', 'json')
    )
    expect(days).toEqual([
      { start: at(0), accountId: Number(a1.accountId), keyId: Number(a1.id), admitted: 13, refused: 3, units: 15 },
      { start: at(0), accountId: Number(a1.accountId), keyId: Number(a2.id), admitted: 100, refused: 0, units: 250 },
      { start: at(0), accountId: Number(b1.accountId), keyId: Number(b1.id), admitted: 1, refused: 9, units: 1 },
      { start: at(24), accountId: Number(a1.accountId), keyId: Number(a1.id), admitted: 4, refused: 0, units: 4 }
    ])
    expect(
      await cli(
        'usage',
        'export',
        '--from',
        at(0),
        '--to',
        at(24),
        '--granularity',
        'day',
        '--account-id',
        String(b1.accountId)
      )
    ).toBe(`start,accountId,keyId,admitted,refused,units\n${at(0)},${b1.accountId},${b1.id},1,9,1\n`)
  }, 60_000)

  it('streams more rows than a page holds, each once, in order', async () => {
    const range = await usageGrid(database, day - 400 * HOUR)
    const lines = (await cli('usage', 'export', '--from', range.from, '--to', range.to, '--format', 'ndjson'))
      .trim()
      .split('\n')
    expect(lines).toHaveLength(6000)
    expect(new Set(lines).size).toBe(6000)
    const rows = lines.map((line) => JSON.parse(line) as { start: string; keyId: number; units: number })
    const sorted = [...rows].sort((x, y) => Date.parse(x.start) - Date.parse(y.start) || x.keyId - y.keyId)
    expect(rows).toEqual(sorted)
    expect(rows.reduce((sum, row) => sum + row.units, 0)).toBe(12_000)
  }, 60_000)

  it.each([
    [['usage', 'export', '--to', '2026-11-02T00:00:00Z'], "required option '--from <iso>' not specified"],
    [
      ['usage', 'export', '--from', '2026-11-02T00:30:00Z', '--to', '2026-11-02T01:00:00Z'],
      'from and to must start a UTC hour'
    ],
    [['usage', 'export', '--from', '2026-11-02T01:00:00Z', '--to', '2026-11-02T00:00:00Z'], 'to must be after from'],
    [
      ['usage', 'export', '--from', '2026-11-02T00:00:00Z', '--to', '2026-11-03T00:00:00Z', '--format', 'xml'],
      '--format must be one of csv, json, ndjson'
    ],
    [
      ['usage', 'export', '--from', '2026-11-02T00:00:00Z', '--to', '2026-11-03T00:00:00Z', '--granularity', 'week'],
      '--granularity must be one of hour, day'
    ]
  ])('refuse %j with a one-line error and exit code 2', async (args, message) => {
    const result = await run(...args)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain(message)
  })
})
