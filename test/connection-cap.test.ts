import { connect, type AddressInfo, type Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, issueTestKey } from './helpers/app.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'

let database: TestDatabase
let app: FastifyInstance
let port: number
let key: string
const sockets: Socket[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database, {
    env: { MAX_CONNECTIONS: '2', UNAUTHENTICATED_PER_SECOND: '1', SHED_HOLD_MS: '20000' }
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  port = (app.server.address() as AddressInfo).port
  key = await issueTestKey(database)
})
afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await app.close()
  await database.drop()
})

/** A raw keep-alive connection: what it received, and whether and when it closed. */
async function open() {
  const socket = connect(port, '127.0.0.1')
  sockets.push(socket)
  let received = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => (received += chunk))
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  return {
    socket,
    closed,
    received: () => received,
    /** Sends a request and waits for its whole answer; resolves with its status line. */
    async ask(path = '/health/live'): Promise<string> {
      const before = received.length
      socket.write(`GET ${path} HTTP/1.1\r\nHost: cap\r\n\r\n`)
      for (;;) {
        const answer = received.slice(before)
        const length = /content-length: (\d+)/i.exec(answer)
        const bodyAt = answer.indexOf('\r\n\r\n')
        if (length && bodyAt >= 0 && answer.length >= bodyAt + 4 + Number(length[1])) return answer.split('\r\n')[0]!
        if (socket.destroyed) throw new Error(`closed after ${JSON.stringify(answer)}`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    },
    /** A request the server has begun and cannot finish: its body is still to come. */
    begin() {
      socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: cap\r\nAuthorization: Bearer ${key}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 52\r\n\r\n{"name":"Held",'
      )
    },
    finish() {
      socket.write('"categoryId":1,"status":"available"} ')
    }
  }
}

describe('MAX_CONNECTIONS', () => {
  it('closes the keep-alive connection idle the longest for a new one, and refuses one when none is idle', async () => {
    const busy = await open()
    busy.begin()
    const idle = await open()
    expect(await idle.ask()).toBe('HTTP/1.1 200 OK')

    // The third connection: the idle one makes room, the busy one is left alone.
    const third = await open()
    await idle.closed
    expect(await third.ask()).toBe('HTTP/1.1 200 OK')

    const fourth = await open()
    await third.closed
    fourth.begin()
    // Both connections have a request in flight: a fifth is closed unanswered.
    const refused = await open()
    await refused.closed
    expect(refused.received()).toBe('')

    busy.finish()
    fourth.finish()
    await expect.poll(() => busy.received()).toMatch(/^HTTP\/1\.1 201 /)
    await expect.poll(() => fourth.received()).toMatch(/^HTTP\/1\.1 201 /)
    expect(busy.socket.destroyed).toBe(false)
  })

  it('counts a connection whose request waits only for its shed answer as idle', async () => {
    for (const socket of sockets.splice(0)) socket.destroy()
    const connections = () => new Promise<number>((resolve) => app.server.getConnections((_error, n) => resolve(n)))
    await expect.poll(connections).toBe(0)

    const busy = await open()
    busy.begin()
    const flooder = await open()
    // The ceiling's one request a second is answered; the next is shed, its 429 held for 10 to 20 s.
    expect(await flooder.ask('/v1/pets')).toBe('HTTP/1.1 401 Unauthorized')
    flooder.socket.write('GET /v1/pets HTTP/1.1\r\nHost: cap\r\n\r\n')
    const held = async () =>
      (await app.metrics.registry.getSingleMetricAsString('animal_store_shed_held')).split(' ').at(-1)
    await expect.poll(held).toBe('1')

    const newcomer = await open()
    await flooder.closed
    expect(await newcomer.ask()).toBe('HTTP/1.1 200 OK')
    expect(busy.socket.destroyed).toBe(false)
    busy.finish()
    await expect.poll(() => busy.received()).toMatch(/^HTTP\/1\.1 201 /)
  })
})
