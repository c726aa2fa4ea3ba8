import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminTokens, ConfigError, loadConfig } from '../../src/config.js'
import { createTestAdminApp, logCapture } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const OLD_TOKEN = 'admin-token-being-retired-0123456789abcdef'
const NEW_TOKEN = 'admin-token-rolling-out-fedcba9876543210xyz'
const WRONG_TOKEN = 'admin-token-nobody-was-given-00000000000000'

let database: TestDatabase
let admin: FastifyInstance
const logs = logCapture()
beforeAll(async () => {
  database = await createTestDatabase()
  admin = await createTestAdminApp(database, {
    env: { ADMIN_TOKEN: `${OLD_TOKEN}, ${NEW_TOKEN}`, LOG_LEVEL: 'warn' },
    logStream: logs.stream
  })
})
afterAll(async () => {
  await admin?.close()
  await database?.drop()
})

const list = (remoteAddress: string, token?: string) =>
  admin.inject({
    method: 'GET',
    url: '/admin/v1/keys',
    remoteAddress,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` }
  })
const refusalsFrom = (address: string) =>
  logs.lines.filter((line) => line.level === 40 && line.client === address && line.throttled !== undefined)

describe('ADMIN_TOKEN', () => {
  it('accepts one token or two, comma-separated', () => {
    expect(adminTokens(OLD_TOKEN)).toEqual([OLD_TOKEN])
    expect(adminTokens(`${OLD_TOKEN},${NEW_TOKEN}`)).toEqual([OLD_TOKEN, NEW_TOKEN])
    expect(loadConfig({ ADMIN_TOKEN: `${OLD_TOKEN}, ${NEW_TOKEN}` }).ADMIN_TOKEN).toBe(`${OLD_TOKEN}, ${NEW_TOKEN}`)
    // base64 with its padding, as `openssl rand -base64 32` makes it.
    expect(adminTokens('q8Vd3+Lx0/ZbT1eKm9R2cWfYh7NjUoPsA4gBiE6tC5w=')).toEqual([
      'q8Vd3+Lx0/ZbT1eKm9R2cWfYh7NjUoPsA4gBiE6tC5w='
    ])
  })

  it.each([
    ['a third token', `${OLD_TOKEN},${NEW_TOKEN},${WRONG_TOKEN}`, /ADMIN_TOKEN holds 3 tokens; at most 2/],
    ['a short second token', `${OLD_TOKEN},short-one`, /each token in ADMIN_TOKEN must be at least 32 characters/],
    ['an empty second token', `${OLD_TOKEN},`, /each token in ADMIN_TOKEN must be at least 32 characters/],
    ['32 identical characters', 'a'.repeat(32), /must carry at least 128 bits of entropy/],
    ['two characters alternating', 'ab'.repeat(32), /must carry at least 128 bits of entropy/],
    ['a word repeated', 'password'.repeat(8), /must carry at least 128 bits of entropy/],
    ['a weak second token', `${OLD_TOKEN},${'0'.repeat(40)}`, /must carry at least 128 bits of entropy/],
    [
      'a token no bearer header can carry',
      'k7#Qp2!vX9$mL4&rT8*wZ1^bN6@cF3%dY5',
      /must be of the characters a bearer token may hold/
    ],
    ['a second token with a space in it', `${OLD_TOKEN},${NEW_TOKEN} x`, /characters a bearer token may hold/],
    ["'=' before its end", `${NEW_TOKEN}=x`, /characters a bearer token may hold/]
  ])('stops start-up on %s with one line naming the variable, never a token', (_label, value, message) => {
    let error: unknown
    try {
      loadConfig({ ADMIN_TOKEN: value })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    const text = (error as Error).message
    expect(text).toMatch(message)
    expect(text).not.toContain('\n')
    for (const token of [OLD_TOKEN, NEW_TOKEN, WRONG_TOKEN, 'short-one', 'a'.repeat(32), 'password', 'k7#Qp2']) {
      expect(text).not.toContain(token)
    }
  })
})

describe('the admin API', () => {
  it('admits either token while both are set', async () => {
    expect((await list('192.0.2.1', OLD_TOKEN)).statusCode).toBe(200)
    expect((await list('192.0.2.1', NEW_TOKEN)).statusCode).toBe(200)
    expect((await list('192.0.2.1', WRONG_TOKEN)).statusCode).toBe(401)
  })

  it('answers everything from an address with 10 failures in its minute with 429, the right token included, and not other addresses', async () => {
    const address = '192.0.2.10'
    for (let attempt = 1; attempt <= 10; attempt++) {
      const response = await list(address, attempt % 2 === 0 ? WRONG_TOKEN : undefined)
      expect(response.statusCode, `attempt ${attempt}`).toBe(401)
    }
    const throttled = await list(address, WRONG_TOKEN)
    expect(throttled.statusCode).toBe(429)
    expect(throttled.json()).toMatchObject({ code: 'rate_limited', status: 429 })
    const retryAfter = Number(throttled.headers['retry-after'])
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)

    // Nothing tells a guess from the token any more: the same status, body and headers.
    const right = await list(address, NEW_TOKEN)
    expect(right.statusCode).toBe(429)
    expect(right.json()).toEqual(throttled.json())
    expect((await list(address, OLD_TOKEN)).statusCode).toBe(429)
    expect((await list(address, WRONG_TOKEN)).statusCode).toBe(429)
    expect((await list('192.0.2.11', WRONG_TOKEN)).statusCode).toBe(401)
    expect((await list('192.0.2.11', NEW_TOKEN)).statusCode).toBe(200)
  })

  it('counts a guess before checking it: of 300 concurrent operator-shaped guesses, at most 10 are checked', async () => {
    const made = await admin.inject({
      method: 'POST',
      url: '/admin/v1/operators',
      remoteAddress: '192.0.2.30',
      headers: { authorization: `Bearer ${NEW_TOKEN}` },
      payload: { name: 'guessed', role: 'viewer' }
    })
    expect(made.statusCode, made.body).toBe(201)
    const real: string = made.json().token
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
    const random = (length: number) =>
      Array.from(randomBytes(length), (byte) => alphabet[byte % alphabet.length]).join('')
    const guesses = Array.from({ length: 300 }, (_, index) => (index === 150 ? real : `aso_${random(8)}_${random(32)}`))
    const address = '192.0.2.31'
    const answers = await Promise.all(
      guesses.map((token) =>
        admin.inject({
          method: 'GET',
          url: '/admin/v1/whoami',
          remoteAddress: address,
          headers: { authorization: `Bearer ${token}` }
        })
      )
    )
    const statuses = answers.map((answer) => answer.statusCode)
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(10)
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([])
    expect(statuses[150]).toBe(429)
    expect(refusalsFrom(address).filter((line) => line.throttled === false).length).toBeLessThanOrEqual(10)
    // The real token from another address still works.
    const elsewhere = await admin.inject({
      method: 'GET',
      url: '/admin/v1/whoami',
      remoteAddress: '192.0.2.32',
      headers: { authorization: `Bearer ${real}` }
    })
    expect(elsewhere.statusCode).toBe(200)
  })

  it('lets an operator send more requests at once than the budget, none refused', async () => {
    const made = await admin.inject({
      method: 'POST',
      url: '/admin/v1/operators',
      remoteAddress: '192.0.2.40',
      headers: { authorization: `Bearer ${NEW_TOKEN}` },
      payload: { name: 'busy', role: 'viewer' }
    })
    const token: string = made.json().token
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        admin.inject({
          method: 'GET',
          url: '/admin/v1/whoami',
          remoteAddress: '192.0.2.41',
          headers: { authorization: `Bearer ${token}` }
        })
      )
    )
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array.from({ length: 40 }, () => 200))
  })

  it('logs each failure once, as a warning with the address, and never the token', async () => {
    const address = '192.0.2.20'
    for (let attempt = 1; attempt <= 12; attempt++) await list(address, WRONG_TOKEN)
    await list(address, NEW_TOKEN)

    const refusals = refusalsFrom(address)
    expect(refusals).toHaveLength(13)
    expect(refusals.filter((line) => line.throttled === true)).toHaveLength(3)
    expect(
      logs.lines.filter((line) => line.level === 40 && line.msg === 'unauthorized: invalid authorization header')
    ).toHaveLength(0)
    for (const token of [WRONG_TOKEN, NEW_TOKEN, OLD_TOKEN]) expect(logs.text()).not.toContain(token)
  })
})
