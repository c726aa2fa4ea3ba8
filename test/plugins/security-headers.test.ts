import { connect, type AddressInfo } from 'node:net'
import type { LightMyRequestResponse } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { issueTestKey, manualClock, useTestApp, withKey } from '../helpers/app.js'

// The middle of a minute that stands still while a test moves no clock: a key's minute never rolls
// over between its requests.
const MID_MINUTE = Date.parse('2027-01-01T12:00:30Z')
const clock = manualClock(MID_MINUTE, () => context.database)
const context = useTestApp({ clock })
afterEach(() => clock.release())

function expectSecurityHeaders(response: LightMyRequestResponse) {
  expect(response.headers['x-content-type-options']).toBe('nosniff')
  expect(response.headers['x-frame-options']).toBe('DENY')
  expect(response.headers['referrer-policy']).toBe('no-referrer')
}

const directives = (response: LightMyRequestResponse) =>
  Object.fromEntries(
    String(response.headers['content-security-policy'])
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .map(([name, ...values]) => [name, values])
  )

describe('security headers', () => {
  it('are on API responses, errors and refusals included, with a policy that lets nothing load or frame them', async () => {
    const { app, database } = context
    await clock.set(MID_MINUTE)
    const api = withKey(app, await issueTestKey(database))
    const tight = withKey(app, await issueTestKey(database, 'enterprise', { perMinute: 1, perDay: 100 }))
    await tight.inject({ method: 'GET', url: '/v1/pets' })
    const responses = {
      list: await api.inject({ method: 'GET', url: '/v1/pets' }),
      created: await api.inject({ method: 'POST', url: '/v1/pets', payload: { name: 'Rex', categoryId: 1 } }),
      invalid: await api.inject({ method: 'GET', url: '/v1/pets?limit=0' }),
      missing: await api.inject({ method: 'GET', url: '/v1/pets/999999' }),
      wrongMethod: await api.inject({ method: 'DELETE', url: '/v1/pets' }),
      limited: await tight.inject({ method: 'GET', url: '/v1/pets' }),
      noKey: await app.inject({ method: 'GET', url: '/v1/pets' }),
      unknownRoute: await app.inject({ method: 'GET', url: '/nowhere' }),
      malformedUrl: await app.inject({ method: 'GET', url: '/v1/pets/%zz' }),
      live: await app.inject({ method: 'GET', url: '/health/live' }),
      ready: await app.inject({ method: 'GET', url: '/health/ready' })
    }
    expect(
      Object.fromEntries(Object.entries(responses).map(([name, response]) => [name, response.statusCode]))
    ).toEqual({
      list: 200,
      created: 201,
      invalid: 400,
      missing: 404,
      wrongMethod: 405,
      limited: 429,
      noKey: 401,
      unknownRoute: 404,
      malformedUrl: 400,
      live: 200,
      ready: 200
    })
    for (const [name, response] of Object.entries(responses)) {
      if (name === 'malformedUrl') {
        // Refused before routing, where no hook runs: nosniff only.
        expect(response.headers['x-content-type-options']).toBe('nosniff')
        continue
      }
      expectSecurityHeaders(response)
      expect(directives(response), name).toEqual({
        'default-src': ["'none'"],
        'base-uri': ["'none'"],
        'form-action': ["'none'"],
        'frame-ancestors': ["'none'"]
      })
    }
  })

  it('give the documentation a policy of its own origin only, without inline code, never framed', async () => {
    const { app } = context
    for (const url of [
      '/v1/docs',
      '/v1/docs/',
      '/v1/docs/static/swagger-initializer.js',
      '/v1/docs/static/swagger-ui.css'
    ]) {
      const response = await app.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBeLessThan(400)
      expectSecurityHeaders(response)
      const policy = directives(response)
      expect(policy['default-src'], url).toEqual(["'self'"])
      expect(policy['script-src'], url).toEqual(["'self'"])
      expect(policy['style-src'], url).toEqual(["'self'"])
      expect(policy['frame-ancestors'], url).toEqual(["'none'"])
      expect(policy['object-src'], url).toEqual(["'none'"])
      // No other origin, and nothing inline or evaluated.
      expect(
        Object.values(policy)
          .flat()
          .filter((source) => !["'self'", "'none'", 'data:'].includes(source as string))
      ).toEqual([])
    }
  })

  it('keep responses for a key out of caches, and leave the public docs cacheable', async () => {
    const { app, database } = context
    await clock.set(MID_MINUTE)
    const api = withKey(app, await issueTestKey(database))
    const created = await api.inject({ method: 'POST', url: '/v1/pets', payload: { name: 'Rex', categoryId: 1 } })
    const id = created.json().id as string
    for (const response of [
      created,
      await api.inject({ method: 'GET', url: '/v1/pets' }),
      await api.inject({ method: 'GET', url: `/v1/pets/${id}` }),
      await api.inject({ method: 'GET', url: '/v1/pets/999999' })
    ]) {
      expect(response.headers['cache-control'], response.body).toBe('no-store')
    }
    const asset = await app.inject({ method: 'GET', url: '/v1/docs/static/swagger-ui.css' })
    expect(asset.headers['cache-control']).not.toContain('no-store')
  })

  it('send nosniff on requests refused before Fastify parses them', async () => {
    const { app } = context
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as AddressInfo
    const head = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      let text = ''
      socket.on('data', (chunk) => (text += chunk.toString('latin1')))
      socket.on('close', () => resolve(text))
      socket.on('connect', () => socket.end('GET /v1/pets HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n'))
    })
    expect(head).toMatch(/^HTTP\/1\.1 400 /)
    expect(head.toLowerCase()).toContain('\r\nx-content-type-options: nosniff\r\n')
  })
})
