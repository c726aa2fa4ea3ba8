import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/app.js'
import { cliOn } from '../helpers/cli.js'

const context = useTestApp()

const { run, cli, json } = cliOn(() => context.database.url)

describe('plans on the CLI', () => {
  it('put a plan with a bucket, a month and a route cost, show it, list it, and record it in the audit trail', async () => {
    const plan = await json(
      'plans',
      'put',
      'growth',
      '--limit',
      'minute=60:bucket:120',
      '--limit',
      'day=1000',
      '--limit',
      'month=20000',
      '--cost',
      'POST /v1/pets=5'
    )
    expect(plan).toMatchObject({
      name: 'growth',
      limits: [
        { window: 'minute', algorithm: 'bucket', limit: 60, burst: 120 },
        { window: 'day', algorithm: 'fixed', limit: 1000, burst: null },
        { window: 'month', algorithm: 'fixed', limit: 20000, burst: null }
      ],
      costs: { 'POST /v1/pets': 5 }
    })
    expect(await json('plans', 'show', 'growth')).toEqual(plan)
    const listed = await cli('plans', 'list')
    expect(listed).toMatch(/^growth\s+60\/minute bucket burst 120, 1000\/day, 20000\/month\s+POST \/v1\/pets=5$/m)
    const rows = await context.database.db
      .selectFrom('plan_limits')
      .select(['window', 'limit'])
      .where('plan', '=', 'growth')
      .orderBy('window')
      .execute()
    expect(rows).toEqual([
      { window: 'day', limit: 1000 },
      { window: 'minute', limit: 60 },
      { window: 'month', limit: 20000 }
    ])
    const event = await context.database.db
      .selectFrom('audit_events')
      .select(['action', 'actor'])
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    expect(event).toMatchObject({ action: 'plan.created', actor: expect.stringMatching(/^cli:/) })
  }, 60_000)

  it('put a plan with a shadow limit beside an enforced one in a window, and in an account-anchored month', async () => {
    const plan = await json(
      'plans',
      'put',
      'tighter',
      '--limit',
      'minute=60',
      '--limit',
      'minute=30:shadow',
      '--limit',
      'month=1000:account:shadow'
    )
    expect(plan).toMatchObject({
      limits: [
        { window: 'minute', limit: 60, shadow: false },
        { window: 'minute', limit: 30, shadow: true },
        { window: 'month', limit: 1000, shadow: true, anchor: 'account' }
      ]
    })
    expect(await cli('plans', 'list')).toMatch(
      /^tighter\s+60\/minute, 30\/minute shadow, 1000\/month from the account’s cycle anchor shadow\s/m
    )
    const rows = await context.database.db
      .selectFrom('plan_limits')
      .select(['window', 'limit', 'shadow', 'anchor'])
      .where('plan', '=', 'tighter')
      .orderBy(['window', 'shadow'])
      .execute()
    expect(rows).toEqual([
      { window: 'minute', limit: 60, shadow: false, anchor: 'calendar' },
      { window: 'minute', limit: 30, shadow: true, anchor: 'calendar' },
      { window: 'month', limit: 1000, shadow: true, anchor: 'account' }
    ])
  }, 60_000)

  it.each([
    [
      ['plans', 'put', 'x'],
      "required option '--limit <WINDOW=N[:bucket[:BURST]][:shadow]|month=N:account[:shadow]>' not specified"
    ],
    [['plans', 'put', 'x', '--limit', 'day=5:shadow:bucket'], '--limit must read WINDOW=N[:bucket[:BURST]][:shadow]'],
    [['plans', 'put', 'x', '--limit', 'week=5'], 'limits[0].window must be one of second, minute, hour, day, month'],
    [['plans', 'put', 'x', '--limit', 'day'], '--limit must read WINDOW=N[:bucket[:BURST]]'],
    [['plans', 'put', 'x', '--limit', 'day=5', '--cost', 'DELETE /v1/pets=1'], "costs names 'DELETE /v1/pets'"],
    [['accounts', 'create', '--plan', 'gold'], "No plan is named 'gold'"],
    [['accounts', 'credits', '1', '--add', '0'], '--add must be a whole number from 1'],
    [['accounts', 'overrides', '1'], 'give --limit, once per window, or --clear']
  ])('refuse %j with a one-line error and exit code 2', async (args, message) => {
    const result = await run(...args)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain(message)
  })

  it('answer an unknown plan with a one-line error', async () => {
    const result = await run('plans', 'show', 'gold')
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toBe("Error: No plan is named 'gold'")
  })
})

describe('overrides and credits on the CLI', () => {
  it('set and clear an account’s overrides, and add to, refill and remove its credits', async () => {
    const account = await json('accounts', 'create', '--plan', 'pro', '--external-id', 'cus_credits')
    const overridden = await json(
      'accounts',
      'overrides',
      'cus_credits',
      '--limit',
      'day=50000@2099-01-01T00:00:00Z',
      '--limit',
      'minute=10'
    )
    expect(overridden).toMatchObject({
      perMinute: 10,
      perDay: 50000,
      overrides: [
        { window: 'minute', limit: 10, until: null },
        { window: 'day', limit: 50000, until: '2099-01-01T00:00:00.000Z' }
      ]
    })
    expect(await cli('accounts', 'overrides', 'cus_credits', '--clear')).toContain(
      "no overrides: its plan's limits apply"
    )

    expect(await json('accounts', 'credits', 'cus_credits', '--add', '100', '--refill', '500/month')).toMatchObject({
      remaining: 100,
      refill: { amount: 500, every: 'month' }
    })
    expect(await cli('accounts', 'credits', 'cus_credits', '--add', '5')).toContain('105 credits')
    const stored = await context.database.db
      .selectFrom('account_credits')
      .select(['remaining', 'refill_amount', 'refill_every'])
      .where('account_id', '=', BigInt(account.id))
      .executeTakeFirstOrThrow()
    expect(stored).toEqual({ remaining: 105n, refill_amount: 500n, refill_every: 'month' })
    expect(await cli('accounts', 'credits', 'cus_credits', '--remove')).toContain('has no credits')
    expect((await json('accounts', 'show', 'cus_credits')).credits).toBeNull()
  }, 90_000)
})
