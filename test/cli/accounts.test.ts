import { userInfo } from 'node:os'
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/app.js'
import { runCli } from '../helpers/processes.js'

const context = useTestApp()

const cli = async (...args: string[]) => {
  const result = await runCli(args, { DATABASE_URL: context.database.url })
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  return result.stdout
}
const json = async (...args: string[]) => JSON.parse(await cli(...args, '--json'))
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
    const reader = await json('keys', 'create', '--account', 'cus_cli', '--scopes', 'pets:read')
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
      'account.changed',
      'key.created',
      'account.created'
    ])
    expect(new Set(trail.map((event: { actor: string }) => event.actor))).toEqual(
      new Set([`cli:${userInfo().username}`])
    )
    expect(await cli('audit', 'list', '--key', String(reader.id))).toMatch(/key\.created/)
    // Each command is a process of its own that opens the database.
  }, 180_000)

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
