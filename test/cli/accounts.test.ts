import { userInfo } from 'node:os'
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/app.js'
import { cliOn } from '../helpers/cli.js'
import { holdDatabaseClock } from '../helpers/traffic.js'

const context = useTestApp({ env: { BAN_AFTER: '1' } })

const { run, cli, json } = cliOn(() => context.database.url)
const status = async (key: string, method: 'GET' | 'POST' = 'GET') =>
  (
    await context.app.inject({
      method,
      url: '/v1/pets',
      headers: { authorization: `Bearer ${key}` },
      ...(method === 'POST' ? { payload: { name: 'Rex', categoryId: 1 } } : {})
    })
  ).statusCode

describe('accounts and audit on the CLI', () => {
  it('make an account, keys in it with scopes, change its plan and close it, each change in the audit trail as cli:<user>', async () => {
    const account = await json('accounts', 'create', '--plan', 'pro', '--external-id', 'cus_cli', '--name', 'CLI Co')
    expect(account).toMatchObject({ externalId: 'cus_cli', plan: 'pro', perMinute: 300 })
    const reader = await json('keys', 'create', '--external-id', 'cus_cli', '--scopes', 'pets:read')
    expect(reader).toMatchObject({ accountId: account.id, scopes: ['pets:read'], plan: 'pro' })
    expect(await status(reader.key)).toBe(200)
    expect(await status(reader.key, 'POST')).toBe(403)

    const replanned = await json('accounts', 'set-plan', 'cus_cli', '--plan', 'business')
    expect(replanned.perMinute).toBe(1000)
    const shown = await json('accounts', 'show', String(account.id))
    expect(shown.keys.map((key: { id: number }) => key.id)).toEqual([reader.id])
    expect(await json('accounts', 'list', '--external-id', 'cus_cli')).toHaveLength(1)

    expect(await cli('accounts', 'close', 'cus_cli')).toContain(`Closed account ${account.id}`)
    const trail = await json('audit', 'list', '--account', 'cus_cli')
    expect(trail.map((event: { action: string }) => event.action)).toEqual([
      'account.closed',
      'key.revoked',
      'account.changed',
      'key.created',
      'account.created'
    ])
    expect(new Set(trail.map((event: { actor: string }) => event.actor))).toEqual(
      new Set([`cli:${userInfo().username}`])
    )
    expect(await cli('audit', 'list', '--key', String(reader.id))).toMatch(/key\.revoked[^]*key\.created/)
  }, 180_000)

  it('start an account’s months at a cycle anchor, move it, refuse a malformed one, and anchor a plan’s month', async () => {
    const account = await json('accounts', 'create', '--plan', 'pro', '--cycle-anchor', '2027-01-31T10:00:00Z')
    expect(account.cycleAnchor).toBe('2027-01-31T10:00:00.000Z')
    expect(await cli('accounts', 'set-cycle-anchor', String(account.id), '2027-02-15T00:00:00+02:00')).toContain(
      `Account ${account.id} starts its months at 2027-02-14T22:00:00.000Z`
    )
    const refused = await run('accounts', 'set-cycle-anchor', String(account.id), '2027-02-30T00:00:00Z')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('cycleAnchor must be a real instant in RFC 3339 (2030-01-31T12:00:00Z)')
    expect((await json('accounts', 'show', String(account.id))).cycleAnchor).toBe('2027-02-14T22:00:00.000Z')

    const plan = await json('plans', 'put', 'billed', '--limit', 'day=1000', '--limit', 'month=20000:account')
    expect(plan.limits).toEqual([
      { window: 'day', algorithm: 'fixed', limit: 1000, burst: null, shadow: false },
      { window: 'month', algorithm: 'fixed', limit: 20000, burst: null, anchor: 'account', shadow: false }
    ])
    const dayAnchored = await run('plans', 'put', 'billed', '--limit', 'day=1000:account')
    expect(dayAnchored.code).toBe(2)
    expect(dayAnchored.stderr).toContain('limits[0].anchor account is for a fixed month')
  })

  it('show the account’s windows as they stand and the ban of the key that kept sending', async () => {
    const account = await json('accounts', 'create', '--plan', 'enterprise', '--per-minute', '2', '--per-day', '50')
    const noisy = await json('keys', 'create', '--account-id', String(account.id), '--name', 'noisy')
    const quiet = await json('keys', 'create', '--account', String(account.id), '--name', 'quiet')
    const clock = await holdDatabaseClock(context.database)
    const sent = []
    for (const key of [quiet, noisy, noisy, noisy, noisy]) sent.push(await status(key.key))
    // BAN_AFTER (1) refusals after the first, then the ban; refusals are not counted.
    expect(sent).toEqual([200, 200, 429, 429, 429])
    const now = clock()

    const shown = await json('accounts', 'show', String(account.id))
    expect(shown.windows).toEqual([
      {
        name: 'minute',
        algorithm: 'fixed',
        limit: 2,
        used: 2,
        remaining: 0,
        reset: Math.ceil(now / 60_000) * 60,
        shadow: false
      },
      {
        name: 'day',
        algorithm: 'fixed',
        limit: 50,
        used: 2,
        remaining: 48,
        reset: Math.ceil(now / 86_400_000) * 86_400,
        shadow: false
      }
    ])
    expect(shown.bans).toEqual([{ keyId: noisy.id, prefix: noisy.prefix, bannedUntil: expect.any(String) }])
    const bannedUntil = shown.bans[0].bannedUntil as string
    expect(Date.parse(bannedUntil) - now).toBeGreaterThan(800_000)

    const text = await cli('accounts', 'show', account.externalId ?? String(account.id))
    const minuteReset = new Date(Math.ceil(now / 60_000) * 60_000).toISOString()
    expect(text).toMatch(/^WINDOW +LIMIT +USED +REMAINING +RESET$/m)
    expect(text).toMatch(new RegExp(`^minute +2 +2 +0 +${minuteReset}$`, 'm'))
    expect(text).toMatch(/^day +50 +2 +48 +\d{4}-\d\d-\d\dT00:00:00\.000Z$/m)
    expect(text).toMatch(
      new RegExp(`^${noisy.id} +${noisy.prefix} +pets:read,pets:write +active +${bannedUntil} +noisy$`, 'm')
    )
    expect(text).toMatch(new RegExp(`^${quiet.id} +${quiet.prefix} +pets:read,pets:write +active +- +quiet$`, 'm'))
  }, 60_000)

  it('escapes control characters in what it prints: a stored name cannot drive the terminal', async () => {
    const created = await json('keys', 'create', '--plan', 'free')
    await context.database.pool.query('UPDATE api_keys SET name = $1 WHERE id = $2', [
      '\u001b[2J\u202Eevil',
      created.id
    ])
    const listed = await cli('keys', 'list')
    expect(listed).not.toContain('\u001b')
    expect(listed).not.toContain('\u202E')
    expect(listed).toContain('\\u{001b}[2J\\u{202e}evil')
  })
})
