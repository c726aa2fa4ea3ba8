import { setTimeout as sleep } from 'node:timers/promises'
import { connect, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, issueTestKey } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startServer, type RunningServer } from '../../harness/processes.js'

const HEADERS_TIMEOUT_MS = 1000
const REQUEST_TIMEOUT_MS = 2000

let database: TestDatabase
let server: RunningServer
let port: number
let auth: { authorization: string }

beforeAll(async () => {
  database = await createTestDatabase()
  auth = { authorization: `Bearer ${await issueTestKey(database)}` }
  server = await startServer({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'info',
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    KEEP_ALIVE_TIMEOUT_MS: '1000',
    MAX_HEADER_BYTES: '8192'
  })
  port = Number(new URL(server.url).port)
})
afterAll(async () => {
  await server?.stop()
  await database?.drop()
})

interface Abuser {
  socket: Socket
  connected: () => boolean
  /** Resolves with what the server sent and how long the connection lived, once the server closes it. */
  closed: Promise<{ received: string; livedMs: number }>
}

/** A connection that sends `first`, then one of `drip` every `everyMs`, until the server closes it. */
function abuser(first: string, drip: string, everyMs: number): Abuser {
  const opened = Date.now()
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('latin1')
  socket.on('data', (chunk: string) => (received += chunk))
  socket.on('error', () => {})
  let timer: NodeJS.Timeout | undefined
  let connected = false
  socket.on('connect', () => {
    connected = true
    if (first) socket.write(first)
    if (drip) timer = setInterval(() => socket.writable && socket.write(drip), everyMs)
  })
  const closed = new Promise<{ received: string; livedMs: number }>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer)
      resolve({ received, livedMs: Date.now() - opened })
    })
  )
  return { socket, connected: () => connected, closed }
}

/** Ordinary traffic while abusers are connected: every request must succeed. */
async function ordinaryTraffic(until: Promise<unknown>) {
  const stop = new AbortController()
  void until.then(() => stop.abort())
  const statuses: number[] = []
  while (!stop.signal.aborted) {
    const [list, create] = await Promise.all([
      fetch(`${server.url}/pets?limit=5`, { headers: auth }),
      fetch(`${server.url}/pets`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'ordinary', categoryId: statuses.length })
      })
    ])
    statuses.push(list.status, create.status)
    await Promise.all([list.arrayBuffer(), create.arrayBuffer()])
    await sleep(50)
  }
  return statuses
}

function expectShedWith408(results: { received: string; livedMs: number }[], atLeastMs: number) {
  for (const result of results) {
    expect(result.received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/)
    expect(result.received.slice(result.received.indexOf('\r\n\r\n') + 4)).toBe(
      JSON.stringify({ code: 'request_timeout', message: 'The request did not arrive in time', status: 408 })
    )
    // Never cut before the client had its full allowance.
    expect(result.livedMs).toBeGreaterThanOrEqual(atLeastMs - 50)
  }
}

describe('slow and abusive clients against the built server', () => {
  it('cuts off 200 clients that trickle their headers with 408 after HEADERS_TIMEOUT_MS, serving others meanwhile', async () => {
    const abusers = Array.from({ length: 200 }, (_, i) =>
      abuser(`GET /v1/pets HTTP/1.1\r\nHost: slow-${i}\r\n`, 'X-Drip: 1\r\n', 200)
    )
    const all = Promise.all(abusers.map((one) => one.closed))
    const statuses = await ordinaryTraffic(all)
    expectShedWith408(await all, HEADERS_TIMEOUT_MS)
    expect(statuses.length).toBeGreaterThan(0)
    expect(new Set(statuses)).toEqual(new Set([200, 201]))
  })

  it('cuts off 100 clients that trickle their bodies with 408 after REQUEST_TIMEOUT_MS, serving others meanwhile', async () => {
    const head = `POST /v1/pets HTTP/1.1\r\nHost: slow\r\nAuthorization: ${auth.authorization}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":"`
    const abusers = Array.from({ length: 100 }, () => abuser(head, 'x', 200))
    const all = Promise.all(abusers.map((one) => one.closed))
    const statuses = await ordinaryTraffic(all)
    expectShedWith408(await all, REQUEST_TIMEOUT_MS)
    expect(new Set(statuses)).toEqual(new Set([200, 201]))
    const { rows } = await database.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pets WHERE name <> 'ordinary'"
    )
    expect(rows[0]!.n).toBe(0)
  })

  it('holds 3000 idle connections without starving others, and closes every one of them', async () => {
    // Opened in batches, so that the listen backlog never overflows and every one connects.
    const idle: Abuser[] = []
    for (let batch = 0; batch < 10; batch++) {
      const opened = Array.from({ length: 300 }, () => abuser('', '', 0))
      await Promise.all(
        opened.map(
          (one) =>
            new Promise((resolve) => {
              one.socket.once('connect', resolve)
              one.socket.once('close', resolve)
            })
        )
      )
      idle.push(...opened)
    }
    expect(idle.filter((one) => one.connected()).length).toBe(3000)
    const all = Promise.all(idle.map((one) => one.closed))
    const statuses = await ordinaryTraffic(all)
    const results = await all
    // Connections that never sent a byte get no answer; they are simply closed.
    for (const result of results) expect(result.livedMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50)
    expect(statuses.length).toBeGreaterThan(0)
    expect(new Set(statuses)).toEqual(new Set([200, 201]))
  }, 60_000)

  it('answers a request head over MAX_HEADER_BYTES with 431 and the Error body, and serves the next client', async () => {
    const big = abuser(
      `GET /v1/pets HTTP/1.1\r\nHost: big\r\n${Array.from({ length: 200 }, (_, i) => `X-H${i}: ${'v'.repeat(60)}`).join('\r\n')}\r\n\r\n`,
      '',
      0
    )
    const { received } = await big.closed
    expect(received).toMatch(/^HTTP\/1\.1 431 /)
    expect(received).toContain('\r\nContent-Type: application/json; charset=utf-8\r\n')
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toEqual({
      code: 'headers_too_large',
      message: 'The request headers are too large',
      status: 431
    })
    expect((await fetch(`${server.url}/pets`, { headers: auth })).status).toBe(200)
    expect(server.child.exitCode).toBeNull()
  })
})

describe('overload', () => {
  it('sheds /v1 with 503 service_unavailable in a real process whose heap is over OVERLOAD_MAX_HEAP_USED_BYTES, keeping health up', async () => {
    const overloaded = await startServer({
      DATABASE_URL: database.url,
      OVERLOAD_MAX_HEAP_USED_BYTES: '1'
    })
    try {
      // The first sample is taken a second after start.
      let response = await fetch(`${overloaded.url}/pets`, { headers: auth })
      for (let i = 0; i < 50 && response.status !== 503; i++) {
        await sleep(100)
        response = await fetch(`${overloaded.url}/pets`, { headers: auth })
      }
      expect(response.status).toBe(503)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(response.headers.get('retry-after')).toBe('5')
      expect(await response.json()).toEqual({
        code: 'service_unavailable',
        message: 'The service is overloaded; retry later',
        status: 503
      })
      const live = await fetch(overloaded.url.replace(/\/v1$/, '/health/live'))
      expect(live.status).toBe(200)
    } finally {
      await overloaded.stop()
    }
  })

  it('sheds with 503 while the event loop lags past OVERLOAD_MAX_EVENT_LOOP_DELAY_MS, and serves again once it does not', async () => {
    const app = await createTestApp(database, { env: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '30' } })
    try {
      await app.listen({ host: '127.0.0.1', port: 0 })
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
      expect((await fetch(`${base}/v1/pets`, { headers: auth })).status).toBe(200)

      // Hog this process's event loop in 250 ms slices for over two sampling intervals (1 s each).
      const hogUntil = Date.now() + 3000
      const statuses: number[] = []
      while (Date.now() < hogUntil) {
        const busyUntil = Date.now() + 250
        while (Date.now() < busyUntil);
        const response = await fetch(`${base}/v1/pets`, { headers: auth })
        statuses.push(response.status)
        if (response.status === 503) {
          expect(await response.json()).toEqual({
            code: 'service_unavailable',
            message: 'The service is overloaded; retry later',
            status: 503
          })
        } else await response.arrayBuffer()
      }
      expect(statuses).toContain(503)

      let recovered = 0
      for (let i = 0; i < 100 && recovered !== 200; i++) {
        await sleep(100)
        recovered = (await fetch(`${base}/v1/pets`, { headers: auth })).status
      }
      expect(recovered).toBe(200)
    } finally {
      await app.close()
    }
  })
})
