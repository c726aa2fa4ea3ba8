import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../src/db/embedded.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { startStoppableCluster, type StoppableCluster } from '../helpers/cluster.js'
import { startServer, type RunningServer } from '../helpers/processes.js'

// The built server on a Postgres cluster of this file's own, which the test stops and starts again.
let cluster: StoppableCluster
let server: RunningServer
let auth: { authorization: string }

beforeAll(async () => {
  cluster = await startStoppableCluster()
  server = await startServer({ DATABASE_URL: cluster.database.url, PORT: String(await freePort()) })
  auth = { authorization: `Bearer ${(await issueApiKey(cluster.database.db, { plan: 'enterprise', limits: { perMinute: 100_000, perDay: 1_000_000 } })).key}` }
})
afterAll(async () => {
  await server?.stop()
  await cluster?.destroy()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const origin = () => server.url.replace(/\/v1$/, '')

interface Timed {
  label: string
  status: number
  contentType: string | null
  retryAfter: string | null
  body: unknown
  ms: number
}

async function timed(label: string, path: string, init: RequestInit = {}): Promise<Timed> {
  const started = performance.now()
  const response = await fetch(`${origin()}${path}`, init)
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  return {
    label,
    status: response.status,
    contentType: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
    body,
    ms: performance.now() - started
  }
}

const post = (payload: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { ...auth, 'content-type': 'application/json', ...headers },
  body: JSON.stringify(payload)
})

// Every kind of request the service serves, with and without a key.
function everyKindOfRequest(round: number): Promise<Timed>[] {
  return [
    timed('list', '/v1/pets?limit=5', { headers: auth }),
    timed('list with filter', '/v1/pets?status=sold', { headers: auth }),
    timed('get one', '/v1/pets/1', { headers: auth }),
    timed('create', '/v1/pets', post({ name: `down-${round}`, categoryId: 1 })),
    timed('idempotent create', '/v1/pets', post({ name: `down-${round}`, categoryId: 1 }, { 'idempotency-key': `outage-${round}` })),
    timed('no key', '/v1/pets'),
    timed('unknown key', '/v1/pets', { headers: { authorization: 'Bearer ask_00000000_00000000000000000000000000000000' } })
  ]
}

describe('a database outage', () => {
  it('answers 503 within 2 s while Postgres is down, turns readiness 503, and recovers by itself within 5 s', async () => {
    expect((await timed('before', '/v1/pets', { headers: auth })).status).toBe(200)
    expect((await timed('ready before', '/health/ready')).status).toBe(200)
    const pid = server.child.pid

    await cluster.stop()

    // Several rounds, each wider than the pool (10 connections), so nothing may queue behind it.
    const answers: Timed[] = []
    for (let round = 0; round < 4; round++) {
      const burst = await Promise.all(Array.from({ length: 3 }, () => everyKindOfRequest(round)).flat())
      answers.push(...burst)
    }
    expect(answers.length).toBe(84)
    for (const answer of answers) {
      expect(answer, answer.label).toMatchObject({
        status: 503,
        contentType: 'application/json; charset=utf-8',
        body: { code: 'service_unavailable', message: expect.any(String), status: 503 }
      })
      expect(Number(answer.retryAfter), answer.label).toBeGreaterThanOrEqual(1)
      expect(answer.ms, answer.label).toBeLessThan(2000)
    }
    const ready = await timed('ready while down', '/health/ready')
    expect(ready).toMatchObject({ status: 503, body: { code: 'service_unavailable', status: 503 } })
    expect(ready.ms).toBeLessThan(2000)
    // The process is alive and says so.
    expect((await timed('live while down', '/health/live')).status).toBe(200)

    await cluster.start()
    const back = performance.now()
    let recoveredAfter: number | undefined
    while (performance.now() - back < 10_000) {
      const [list, readiness] = await Promise.all([timed('list', '/v1/pets', { headers: auth }), timed('ready', '/health/ready')])
      if (list.status === 200 && readiness.status === 200) {
        recoveredAfter = performance.now() - back
        break
      }
      await sleep(100)
    }
    expect(recoveredAfter, 'recovered within 10 s').toBeDefined()
    expect(recoveredAfter!).toBeLessThan(5000)

    // The same process, with no restart, serves every kind of request again.
    expect(server.child.exitCode).toBeNull()
    expect(server.child.pid).toBe(pid)
    const created = await timed('create after', '/v1/pets', post({ name: 'after', categoryId: 2 }, { 'idempotency-key': 'after-outage' }))
    expect(created).toMatchObject({ status: 201, body: { name: 'after', categoryId: 2 } })
    const { rows } = await cluster.database.pool.query<{ name: string }>('SELECT name FROM pets ORDER BY id')
    // Nothing sent during the outage was stored.
    expect(rows.map((row) => row.name)).toEqual(['after'])
  })
})
