import type { InjectOptions } from 'fastify'
import { beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_TOKEN, useTestAdminApp } from '../helpers/app.js'

const context = useTestAdminApp()
const tokens: Record<'viewer' | 'operator' | 'admin', string> = { viewer: '', operator: '', admin: '' }

beforeAll(async () => {
  for (const role of ['viewer', 'operator', 'admin'] as const) {
    const made = await as(ADMIN_TOKEN, {
      method: 'POST',
      url: '/admin/v1/operators',
      payload: { name: `${role}-1`, role }
    })
    expect(made.statusCode, made.body).toBe(201)
    tokens[role] = made.json().token
  }
})

const as = (token: string, options: InjectOptions) =>
  context.admin.inject({ ...options, headers: { authorization: `Bearer ${token}`, ...options.headers } })

/** Every route of the admin API's own OpenAPI document, with its path parameters filled in. */
async function everyRoute(): Promise<{ method: string; url: string }[]> {
  const document = (await as(ADMIN_TOKEN, { method: 'GET', url: '/admin/v1/openapi.json' })).json<{
    paths: Record<string, Record<string, unknown>>
  }>()
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => ({
      method: method.toUpperCase(),
      url: path.replace(/\{[^}]+\}/g, '1')
    }))
  )
}

describe('operators', () => {
  it('are made by an admin with a token shown once and stored only as its hash', async () => {
    const made = await as(ADMIN_TOKEN, {
      method: 'POST',
      url: '/admin/v1/operators',
      payload: { name: 'dana', role: 'viewer' }
    })
    expect(made.statusCode).toBe(201)
    const { token, ...operator } = made.json()
    expect(token).toMatch(/^aso_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}$/)
    expect(operator).toMatchObject({ name: 'dana', role: 'viewer', prefix: token.slice(0, 12), revokedAt: null })
    const listed = await as(ADMIN_TOKEN, { method: 'GET', url: '/admin/v1/operators' })
    expect(listed.body).not.toContain(token)
    const { rows } = await context.database.pool.query(
      "SELECT encode(token_hash, 'hex') AS hash FROM operators WHERE name = 'dana'"
    )
    expect(rows[0].hash).toHaveLength(64)
    expect(JSON.stringify(rows)).not.toContain(token.slice(13))
    const again = await as(ADMIN_TOKEN, {
      method: 'POST',
      url: '/admin/v1/operators',
      payload: { name: 'dana', role: 'admin' }
    })
    expect(again.statusCode).toBe(409)
    expect(again.json().code).toBe('operator_exists')
  })

  it('sign in with their token and are told their name and role', async () => {
    const me = await as(tokens.operator, { method: 'GET', url: '/admin/v1/whoami' })
    expect(me.json()).toEqual({ actor: 'operator:operator-1', name: 'operator-1', role: 'operator' })
    const bootstrap = await as(ADMIN_TOKEN, { method: 'GET', url: '/admin/v1/whoami' })
    expect(bootstrap.json()).toEqual({ actor: 'bootstrap', name: 'bootstrap', role: 'admin' })
  })

  it('as a viewer read everything and change nothing: 403 insufficient_role on every other route', async () => {
    const routes = await everyRoute()
    expect(routes.length).toBeGreaterThan(10)
    for (const { method, url } of routes) {
      const response = await as(tokens.viewer, { method, url, payload: method === 'GET' ? undefined : {} })
      if (method === 'GET') {
        expect(response.statusCode === 403 && !url.includes('/operators'), `${method} ${url}`).toBe(false)
        if (url.includes('/operators')) expect(response.statusCode, `${method} ${url}`).toBe(403)
      } else {
        expect(response.statusCode, `${method} ${url}`).toBe(403)
        expect(response.json(), `${method} ${url}`).toMatchObject({ code: 'insufficient_role', status: 403 })
      }
    }
  })

  it('as an operator change accounts and keys, and not operators', async () => {
    const key = await as(tokens.operator, { method: 'POST', url: '/admin/v1/keys', payload: { plan: 'free' } })
    expect(key.statusCode).toBe(201)
    for (const { method, url } of (await everyRoute()).filter((route) => route.url.includes('/operators'))) {
      const response = await as(tokens.operator, { method, url, payload: method === 'GET' ? undefined : {} })
      expect(response.statusCode, `${method} ${url}`).toBe(403)
      expect(response.json()).toMatchObject({ code: 'insufficient_role', status: 403 })
    }
  })

  it('as an admin make and revoke operators; a revoked token is refused from its next request', async () => {
    const made = await as(tokens.admin, {
      method: 'POST',
      url: '/admin/v1/operators',
      payload: { name: 'erin', role: 'operator' }
    })
    expect(made.statusCode).toBe(201)
    const erin = made.json()
    expect((await as(erin.token, { method: 'GET', url: '/admin/v1/keys' })).statusCode).toBe(200)
    const revoked = await as(tokens.admin, { method: 'POST', url: `/admin/v1/operators/${erin.id}/revoke` })
    expect(revoked.statusCode).toBe(200)
    expect(revoked.json().revokedAt).not.toBeNull()
    expect((await as(erin.token, { method: 'GET', url: '/admin/v1/keys' })).statusCode).toBe(401)
  })
})

describe('a method a path does not serve', () => {
  it('is 405 with an Allow header, whatever body it carries, to any role that may read; 401 without a token', async () => {
    const byPath = new Map<string, string[]>()
    for (const { method, url } of await everyRoute()) byPath.set(url, [...(byPath.get(url) ?? []), method])
    expect(byPath.size).toBeGreaterThan(10)
    for (const [url, methods] of byPath) {
      const allowed = methods.includes('GET') ? [...methods, 'HEAD'] : methods
      for (const method of ['PUT', 'DELETE', 'PROPFIND'].filter((method) => !methods.includes(method))) {
        const label = `${method} ${url}`
        const wrong = { method, url, headers: { 'content-type': 'text/plain' }, payload: 'not read' } as const
        const response = await as(tokens.viewer, wrong)
        expect(response.statusCode, label).toBe(405)
        expect(response.json(), label).toEqual({
          code: 'method_not_allowed',
          message: `${method} is not allowed here; use ${response.headers.allow}`,
          status: 405
        })
        expect(String(response.headers.allow).split(', ').sort(), label).toEqual(allowed.sort())
      }
    }
    // Once: an address's failed attempts are throttled after ten.
    const withoutToken = await context.admin.inject({ method: 'DELETE', url: '/admin/v1/plans' })
    expect(withoutToken.statusCode).toBe(401)
  })
})

describe('the audit trail', () => {
  it('names the authenticated operator, and keeps X-Audit-Actor only as onBehalfOf', async () => {
    const made = await as(tokens.operator, {
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: { plan: 'free', externalId: 'forged-actor' },
      headers: { 'x-audit-actor': 'cli:root' }
    })
    expect(made.statusCode).toBe(201)
    const byBootstrap = await as(ADMIN_TOKEN, {
      method: 'PATCH',
      url: `/admin/v1/accounts/${made.json().id}`,
      payload: { name: 'Renamed' }
    })
    expect(byBootstrap.statusCode).toBe(200)
    const events = await as(tokens.viewer, { method: 'GET', url: `/admin/v1/events?accountId=${made.json().id}` })
    expect(
      events
        .json()
        .map((event: { actor: string; action: string; onBehalfOf: string | null }) => [
          event.action,
          event.actor,
          event.onBehalfOf
        ])
    ).toEqual([
      ['account.changed', 'bootstrap', null],
      ['account.created', 'operator:operator-1', 'cli:root']
    ])
    const operatorEvents = await as(ADMIN_TOKEN, { method: 'GET', url: '/admin/v1/events?limit=100' })
    const created = operatorEvents.json().filter((event: { action: string }) => event.action === 'operator.created')
    expect(created.map((event: { actor: string }) => event.actor)).toContain('bootstrap')
    expect(JSON.stringify(created)).not.toMatch(/aso_[0-9A-Za-z]{8}_/)
  })
})
