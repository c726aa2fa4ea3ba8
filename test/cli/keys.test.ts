import { userInfo } from 'node:os'
import { describe, expect, it } from 'vitest'
import { run, ROOT, runCli } from '../../harness/processes.js'
import { useTestApp } from '../helpers/app.js'
import { cliOn } from '../helpers/cli.js'
import { holdDatabaseClock } from '../helpers/traffic.js'

const context = useTestApp()

const { run: runHere } = cliOn(() => context.database.url)
const cli = (...args: string[]) => runHere('keys', ...args)
const countKeys = async () => Number((await context.database.pool.query('SELECT count(*) FROM api_keys')).rows[0].count)
const status = async (key: string) =>
  (await context.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${key}` } })).statusCode

async function createJson(...args: string[]) {
  const result = await cli('create', ...args, '--json')
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  const lines = result.stdout.trim().split('\n')
  expect(lines).toHaveLength(1)
  return JSON.parse(lines[0]!)
}

describe('keys create', () => {
  it.concurrent.each([
    ['free', [], 60, 1000],
    ['pro', [], 300, 10000],
    ['business', [], 1000, 100000],
    ['enterprise', ['--per-minute', '5000', '--per-day', '2000000'], 5000, 2000000]
  ] as const)('issues a %s key as one JSON object whose key works at once', async (plan, extra, perMinute, perDay) => {
    const created = await createJson('--plan', plan, '--name', `${plan} client`, ...extra)
    expect(created).toMatchObject({ plan, perMinute, perDay, name: `${plan} client`, expiresAt: null })
    expect(created.id).toEqual(expect.any(Number))
    expect(created.key).toMatch(/^ask_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}_[0-9A-Za-z]{6}$/)
    expect(created.key.startsWith(`${created.prefix}_`)).toBe(true)
    expect(await status(created.key)).toBe(200)
  })

  it('prints the secret once in text form too', async () => {
    const result = await cli('create', '--plan', 'free')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /^Created key \d+ \(account \d+, free plan: 60\/minute, 1000\/day; pets:read pets:write\)\nSecret, shown only this once; store it now:\nask_\S+\n$/
    )
    expect(await status(result.stdout.trim().split('\n').at(-1)!)).toBe(200)
  })

  it('sets an expiry', async () => {
    const created = await createJson('--plan', 'pro', '--expires-at', '2099-01-01T00:00:00Z')
    expect(created.expiresAt).toBe('2099-01-01T00:00:00.000Z')
    const past = await cli('create', '--plan', 'pro', '--expires-at', '2001-01-01T00:00:00Z')
    expect(past.code).toBe(2)
    expect(past.stderr.trim()).toBe('expiresAt must be in the future')
  })

  it.each([
    [['--plan', 'gold'], "No plan is named 'gold'"],
    [[], 'plan'],
    [['--plan', 'enterprise', '--per-minute', '0', '--per-day', '5'], 'per-minute'],
    [['--plan', 'enterprise', '--per-minute', 'many', '--per-day', '5'], 'per-minute'],
    [['--plan', 'free', '--expires-at', 'soon'], 'expiresAt'],
    [['--plan', 'free', '--expires-at', '2016-12-31T23:59:60Z'], 'expiresAt must be a real instant'],
    [['--plan', 'free', '--name', 'clear\u001b[2J'], 'control characters'],
    [['--plan', 'free', '--scopes', 'pets:delete'], 'unknown scope'],
    [['--plan', 'free', '--colour', 'red'], 'colour']
  ])('refuses %j with a one-line error and a non-zero exit, issuing nothing', async (args, mentioned) => {
    const before = await countKeys()
    const result = await cli('create', ...args)
    expect(result.code).not.toBe(0)
    expect(result.stdout).toBe('')
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(mentioned)
    expect(await countKeys()).toBe(before)
  })
})

describe('keys list, revoke, rotate and set-plan', () => {
  it('lists keys without ever printing a secret', async () => {
    const created = await createJson('--plan', 'pro', '--name', 'listed')
    const text = await cli('list')
    const json = await cli('list', '--json')
    for (const output of [text.stdout, json.stdout]) {
      expect(output).toContain(created.prefix)
      expect(output).not.toContain(created.key)
    }
    expect(text.stdout.split('\n')[0]).toMatch(/^ID\s+PREFIX\s+PLAN\s+PER_MINUTE\s+PER_DAY\s+STATE/)
    const listed = JSON.parse(json.stdout).find((key: { id: number }) => key.id === created.id)
    expect(listed).toMatchObject({ prefix: created.prefix, plan: 'pro', perMinute: 300, perDay: 10000, name: 'listed' })
    expect(listed).not.toHaveProperty('key')
  })

  it('revokes a key: it stops working and is listed as revoked', async () => {
    const created = await createJson('--plan', 'free')
    expect(await status(created.key)).toBe(200)
    const result = await cli('revoke', String(created.id))
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe(`Revoked key ${created.id} (${created.prefix})`)
    await expect.poll(() => status(created.key), { timeout: 1000 }).toBe(401)
    expect((await cli('list')).stdout).toMatch(new RegExp(`^${created.id}\\s.*\\srevoked\\s`, 'm'))
  })

  it('rotates a key: a new secret is printed once and the old one stops working', async () => {
    const created = await createJson('--plan', 'business')
    const result = await cli('rotate', String(created.id), '--json')
    expect(result.code).toBe(0)
    const rotated = JSON.parse(result.stdout)
    expect(rotated).toMatchObject({ id: created.id, plan: 'business' })
    expect(rotated.key).not.toBe(created.key)
    await expect.poll(() => status(created.key), { timeout: 1000 }).toBe(401)
    expect(await status(rotated.key)).toBe(200)
  })

  it('moves a key to another plan', async () => {
    const created = await createJson('--plan', 'free')
    const toPro = await cli('set-plan', String(created.id), '--plan', 'pro')
    expect(toPro.stdout.trim()).toBe(
      `Key ${created.id} is now on the account ${created.accountId}, pro plan: 300/minute, 10000/day`
    )
    const toEnterprise = await cli(
      'set-plan',
      String(created.id),
      '--plan',
      'enterprise',
      '--per-minute',
      '7',
      '--per-day',
      '70',
      '--json'
    )
    expect(JSON.parse(toEnterprise.stdout)).toMatchObject({
      id: created.id,
      plan: 'enterprise',
      perMinute: 7,
      perDay: 70
    })
    const refused = await cli('set-plan', String(created.id), '--plan', 'gold')
    expect(refused.code).toBe(2)
    expect(refused.stderr.trim()).toBe(
      "No plan is named 'gold'; the plans are business, enterprise, free, pro (see plans list)"
    )
    expect(refused.stderr.trim().split('\n')).toHaveLength(1)
  })

  it.concurrent.each([
    [['revoke'], "missing required argument 'id'"],
    [['revoke', 'abc'], 'abc'],
    [['revoke', '99999'], 'No key with id 99999'],
    [['rotate', '99999'], 'No key with id 99999'],
    [['set-plan', '99999', '--plan', 'pro'], 'No key with id 99999'],
    [['destroy', '1'], 'destroy']
  ])('refuses %j with a one-line error and a non-zero exit', async (args, mentioned) => {
    const result = await cli(...args)
    expect(result.code).not.toBe(0)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain(mentioned)
  })

  it.concurrent.each([['create'], ['list'], ['revoke'], ['rotate'], ['set-plan'], ['set-addresses'], ['set-metadata']])(
    'keys %s --help prints its usage',
    async (command) => {
      const result = await cli(command, '--help')
      expect(result.code).toBe(0)
      expect(result.stdout).toMatch(new RegExp(`^Usage: npm run --silent cli -- keys ${command}`))
    }
  )

  it('keys --help lists its commands, made from their definitions', async () => {
    const help = await cli('--help')
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Usage: npm run --silent cli -- keys \[options\] \[command\]$/m)
    expect(help.stdout).toMatch(/^ {2}set-plan \[options\] <id> +Move the key's account to a plan/m)
    expect((await cli('set-plan', '--help')).stdout).toMatch(/^ {2}--plan <name> +a plan's name .*\(required\)$/m)
    expect(await runHere('kees')).toEqual({
      code: 2,
      stdout: '',
      stderr: "unknown command 'kees' (Did you mean keys?)\n"
    })
  })
})

describe('the CLI as a process', () => {
  const env = () => ({ DATABASE_URL: context.database.url })

  // Exit code 1 as a process: test/exit-codes.test.ts.
  it('node dist/src/cli.js: help exits 0, a refusal 2 with one line on stderr', async () => {
    const top = await runCli(['--help'], env())
    expect(top.code).toBe(0)
    expect(top.stdout).toMatch(/^ {2}keys +Issue, list, revoke and rotate API keys/m)
    expect(top.stdout).toMatch(/^ {2}migrate +/m)
    const refused = await runCli(['keys', 'create', '--plan', 'gold'], env())
    expect([refused.code, refused.stdout, refused.stderr]).toEqual([
      2,
      '',
      "No plan is named 'gold'; the plans are business, enterprise, free, pro (see plans list)\n"
    ])
  }, 120_000)

  it('npm run cli runs the same program from the sources, ids past 2^53 printed as exact digits', async () => {
    await context.database.pool.query("SELECT setval(pg_get_serial_sequence('accounts', 'id'), 9007199254740992)")
    const result = await run(
      'npm',
      ['run', '--silent', 'cli', '--', 'accounts', 'create', '--plan', 'free', '--json'],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: context.database.url }
      }
    )
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^\{"id":9007199254740993,/)
    const { rows } = await context.database.pool.query('SELECT actor FROM audit_events WHERE account_id = $1', [
      '9007199254740993'
    ])
    expect(rows).toEqual([{ actor: `cli:${userInfo().username}` }])
  }, 120_000)
})

describe('keys rotate with a grace period', () => {
  const auditOf = async (id: number) =>
    (
      await context.database.pool.query(
        'SELECT actor, action, changes FROM audit_events WHERE key_id = $1 ORDER BY id DESC LIMIT 1',
        [id]
      )
    ).rows[0]

  it('keeps the old secret working for --grace-seconds, says until when, and records the grace', async () => {
    const created = await createJson('--plan', 'pro')
    expect(await status(created.key)).toBe(200)
    const before = Date.now()
    const result = await cli('rotate', String(created.id), '--grace-seconds', '3600', '--json')
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const rotated = JSON.parse(result.stdout)
    expect(rotated).toMatchObject({ id: created.id, previousPrefix: created.prefix })
    const ends = Date.parse(rotated.previousSecretExpiresAt)
    expect(ends).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000)
    expect(ends).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000)
    expect(await status(created.key)).toBe(200)
    expect(await status(rotated.key)).toBe(200)
    expect(await auditOf(created.id)).toMatchObject({
      actor: expect.stringMatching(/^cli:/),
      action: 'key.rotated',
      changes: {
        prefix: { before: created.prefix, after: rotated.prefix },
        previousPrefix: { before: null, after: created.prefix },
        previousSecretExpiresAt: { before: null, after: rotated.previousSecretExpiresAt },
        graceSeconds: { before: null, after: 3600 }
      }
    })

    const text = await cli('rotate', String(created.id), '--grace-seconds', '60')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(
      new RegExp(
        `^Rotated key ${created.id} \\(.*\\)\nThe previous secret \\(${rotated.prefix}\\) keeps working until \\S+Z\\.\n` +
          'Secret, shown only this once; store it now:\nask_\\S+\n$'
      )
    )
    // The secret before, still in its grace, stops at once: a key keeps one previous secret.
    await expect.poll(() => status(created.key), { timeout: 1000 }).toBe(401)
    expect(await status(rotated.key)).toBe(200)
  })

  it('without --grace-seconds stops the old secret at once, and says so', async () => {
    const created = await createJson('--plan', 'free')
    const text = await cli('rotate', String(created.id))
    expect(text.code).toBe(0)
    expect(text.stdout).toContain('\nThe previous secret has stopped working.\n')
    await expect.poll(() => status(created.key), { timeout: 1000 }).toBe(401)
  })

  it.each([
    [['--grace-seconds', '604801'], 'graceSeconds must be a whole number from 0 to 604800'],
    [['--grace-seconds', '1.5'], "--grace-seconds must be a whole number of seconds, not '1.5'"],
    [['--grace-seconds', 'an hour'], "--grace-seconds must be a whole number of seconds, not 'an hour'"],
    [['--grace-seconds'], "option '--grace-seconds <seconds>' argument missing"]
  ])('refuses %j with exit code 2 and one line, and the key keeps its secret', async (args, message) => {
    const created = await createJson('--plan', 'free')
    const result = await cli('rotate', String(created.id), ...args)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr.trim().split('\n')).toEqual([message])
    expect(await status(created.key)).toBe(200)
    expect((await auditOf(created.id)).action).toBe('key.created')
  })
})

describe('keys allowed addresses and metadata', () => {
  const from = (remoteAddress: string, key: string) =>
    context.app.inject({ method: 'GET', url: '/v1/pets', remoteAddress, headers: { authorization: `Bearer ${key}` } })

  it('sets them on create, changes them with set-addresses and set-metadata, and shows them in --json', async () => {
    const created = await createJson(
      '--plan',
      'free',
      '--allowed-addresses',
      '203.0.113.0/24, 2001:DB8::1',
      '--metadata',
      '{"crm":"A-1","seats":9007199254740991}'
    )
    expect(created).toMatchObject({
      allowedAddresses: ['203.0.113.0/24', '2001:db8::1/128'],
      metadata: { crm: 'A-1', seats: 9007199254740991 }
    })
    expect((await from('203.0.113.5', created.key)).statusCode).toBe(200)
    expect((await from('192.0.2.1', created.key)).statusCode).toBe(403)

    const opened = await cli('set-addresses', String(created.id), '--any')
    expect(opened.stdout.trim()).toBe(`Key ${created.id} may be used from any address`)
    await expect.poll(async () => (await from('192.0.2.1', created.key)).statusCode, { timeout: 1000 }).toBe(200)
    const limited = await cli('set-addresses', String(created.id), '--allowed-addresses', '192.0.2.0/24', '--json')
    expect(JSON.parse(limited.stdout).allowedAddresses).toEqual(['192.0.2.0/24'])
    const text = await cli('set-addresses', String(created.id), '--allowed-addresses', '192.0.2.0/24,198.51.100.1')
    expect(text.stdout.trim()).toBe(`Key ${created.id} may be used from 192.0.2.0/24, 198.51.100.1/32 only`)

    const metadata = await cli('set-metadata', String(created.id), '--metadata', '{"crm":"B-2"}', '--json')
    expect(JSON.parse(metadata.stdout).metadata).toEqual({ crm: 'B-2' })
    const listed = JSON.parse((await cli('list', '--json')).stdout).find((key: { id: number }) => key.id === created.id)
    expect(listed).toMatchObject({ metadata: { crm: 'B-2' }, allowedAddresses: ['192.0.2.0/24', '198.51.100.1/32'] })
  })

  it.each([
    [['create', '--plan', 'free', '--allowed-addresses', '10.0.0.1/8'], 'has bits set past its /8 prefix'],
    [['create', '--plan', 'free', '--metadata', '{"a":'], `--metadata must be a JSON object, not '{"a":'`],
    [['create', '--plan', 'free', '--metadata', '[1]'], 'metadata must be a JSON object'],
    [
      ['create', '--plan', 'free', '--metadata', `{"a":"${'x'.repeat(2100)}"}`],
      'metadata must take at most 2048 bytes'
    ],
    [['set-addresses', '1'], 'give --allowed-addresses CIDR,... or --any, one of them'],
    [['set-addresses', '1', '--any', '--allowed-addresses', '10.0.0.0/8'], 'one of them'],
    [['set-metadata', '1'], "required option '--metadata <json>' not specified"]
  ])('refuses %j with exit code 2 and one line, changing nothing', async (args, mentioned) => {
    const before = await countKeys()
    const result = await cli(...args)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(mentioned)
    expect(await countKeys()).toBe(before)
  })

  it('gives accounts metadata on create and with accounts set-metadata', async () => {
    const account = JSON.parse(
      (await runHere('accounts', 'create', '--plan', 'free', '--metadata', '{"crm":"C-3"}', '--json')).stdout
    )
    expect(account.metadata).toEqual({ crm: 'C-3' })
    const changed = await runHere('accounts', 'set-metadata', String(account.id), '--metadata', '{}', '--json')
    expect(changed.code).toBe(0)
    expect(JSON.parse(changed.stdout).metadata).toEqual({})
  })
})

describe('keys usage', () => {
  it('prints the requests admitted and refused on each of the last days, today first, as text and JSON', async () => {
    const created = await createJson('--plan', 'enterprise', '--per-minute', '3', '--per-day', '100')
    await holdDatabaseClock(context.database)
    const sent = await Promise.all(
      Array.from({ length: 5 }, () =>
        context.app.inject({ method: 'GET', url: '/v1/pets', headers: { authorization: `Bearer ${created.key}` } })
      )
    )
    expect(sent.map((response) => response.statusCode).sort()).toEqual([200, 200, 200, 429, 429])
    const today = new Date().toISOString().slice(0, 10)
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)

    const json = await cli('usage', String(created.id), '--days', '2', '--json')
    expect(json.stderr).toBe('')
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual({
      days: [
        { date: today, admitted: 3, refused: 2 },
        { date: yesterday, admitted: 0, refused: 0 }
      ]
    })

    const text = await cli('usage', String(created.id), '--days', '2')
    expect(text.code).toBe(0)
    expect(
      text.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/))
    ).toEqual([
      ['DATE', 'ADMITTED', 'REFUSED'],
      [today, '3', '2'],
      [yesterday, '0', '0']
    ])
    const thirty = await cli('usage', String(created.id), '--json')
    expect(JSON.parse(thirty.stdout).days).toHaveLength(30)
  })

  it.each([
    [['usage', '99999'], 1, 'Error: No key with id 99999'],
    [['usage', '1', '--days', '0'], 2, '--days'],
    [['usage', '1', '--days', '401'], 2, '--days'],
    [['usage', '1', '--days', 'week'], 2, 'week'],
    [['usage'], 2, "missing required argument 'id'"]
  ])('refuses %j with exit code %i and one line on stderr', async (args, code, mentioned) => {
    const result = await cli(...args)
    expect(result.code).toBe(code)
    expect(result.stdout).toBe('')
    const lines = result.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(mentioned)
  })
})
