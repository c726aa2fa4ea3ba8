import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../src/db/embedded.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { startStoppableCluster, type StoppableCluster } from '../helpers/cluster.js'
import { startServer, type RunningServer } from '../../harness/processes.js'

// The built server on a Postgres cluster of this file's own, which the tests stop, freeze and start again.
let cluster: StoppableCluster
let server: RunningServer
let metricsPort: number
let auth: { authorization: string }
const DATABASE_TIMEOUT_MS = 2000
const POOL_MAX = 10

beforeAll(async () => {
  cluster = await startStoppableCluster()
  metricsPort = await freePort()
  server = await startServer({
    DATABASE_URL: cluster.database.url,
    METRICS_PORT: String(metricsPort),
    DATABASE_TIMEOUT_MS: String(DATABASE_TIMEOUT_MS),
    DATABASE_POOL_MAX: String(POOL_MAX)
  })
  auth = {
    authorization: `Bearer ${(await issueApiKey(cluster.database.db, { plan: 'enterprise', limits: { perMinute: 100_000, perDay: 1_000_000 } })).key}`
  }
})
afterAll(async () => {
  await server?.stop()
  await cluster?.destroy()
})

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

/** Milliseconds from `since` until a list and readiness both answer 200; undefined if not within 10 s. */
async function recoveredSince(since: number): Promise<number | undefined> {
  while (performance.now() - since < 10_000) {
    const [list, readiness] = await Promise.all([
      timed('list', '/v1/pets', { headers: auth }),
      timed('ready', '/health/ready')
    ])
    if (list.status === 200 && readiness.status === 200) return performance.now() - since
    await sleep(100)
  }
  return undefined
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
    timed(
      'idempotent create',
      '/v1/pets',
      post({ name: `down-${round}`, categoryId: 1 }, { 'idempotency-key': `outage-${round}` })
    ),
    timed('no key', '/v1/pets'),
    timed('unknown key', '/v1/pets', {
      headers: { authorization: 'Bearer ask_00000000_00000000000000000000000000000000' }
    })
  ]
}

/**
 * While the database cannot answer, a request with a key is a 503 with Retry-After; one without a key
 * is a 401, since its address's budget is counted in memory and needs no database. So is a made-up
 * key the membership filter rules out from memory (its address's budget spent, the change channel
 * still trusted, as it is for the first seconds of a freeze, and no key issued in the last five).
 */
function expectAnsweredWhileDown(answer: Timed) {
  if (answer.label === 'no key' || (answer.label === 'unknown key' && answer.status === 401)) {
    expect(answer, answer.label).toMatchObject({
      status: 401,
      contentType: 'application/json; charset=utf-8',
      body: { code: 'unauthorized', message: expect.any(String), status: 401 }
    })
    return
  }
  expect(answer, answer.label).toMatchObject({
    status: 503,
    contentType: 'application/json; charset=utf-8',
    body: { code: 'service_unavailable', message: expect.any(String), status: 503 }
  })
  expect(Number(answer.retryAfter), answer.label).toBeGreaterThanOrEqual(1)
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
      expectAnsweredWhileDown(answer)
      expect(answer.ms, answer.label).toBeLessThan(2000)
    }
    const ready = await timed('ready while down', '/health/ready')
    expect(ready).toMatchObject({ status: 503, body: { code: 'service_unavailable', status: 503 } })
    expect(ready.ms).toBeLessThan(2000)
    // The process is alive and says so.
    expect((await timed('live while down', '/health/live')).status).toBe(200)

    await cluster.start()
    const back = performance.now()
    const recoveredAfter = await recoveredSince(back)
    expect(recoveredAfter, 'recovered within 10 s').toBeDefined()
    expect(recoveredAfter!).toBeLessThan(5000)

    // The same process, with no restart, serves every kind of request again.
    expect(server.child.exitCode).toBeNull()
    expect(server.child.pid).toBe(pid)
    const created = await timed(
      'create after',
      '/v1/pets',
      post({ name: 'after', categoryId: 2 }, { 'idempotency-key': 'after-outage' })
    )
    expect(created).toMatchObject({ status: 201, body: { name: 'after', categoryId: 2 } })
    const { rows } = await cluster.database.pool.query<{ name: string }>('SELECT name FROM pets ORDER BY id')
    // Nothing sent during the outage was stored.
    expect(rows.map((row) => row.name)).toEqual(['after'])
  })
})

interface Held {
  pool: number
  idle: number
  backends: number
}

/**
 * Connections the service holds open to Postgres, as each of its pools reports them and as Postgres
 * sees them: the request pool, and the rate limiter's counting pool.
 */
async function connectionsHeld(): Promise<{ requests: Held; counting: Held }> {
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(metrics)![1])
  const { rows } = await cluster.database.pool.query<{ name: string; backends: number }>(
    "SELECT application_name AS name, count(*)::int AS backends FROM pg_stat_activity WHERE application_name LIKE 'animal-store%' GROUP BY 1"
  )
  const backends = (name: string) => rows.find((row) => row.name === name)?.backends ?? 0
  return {
    requests: {
      pool: gauge('animal_store_db_pool_connections'),
      idle: gauge('animal_store_db_pool_idle_connections'),
      backends: backends('animal-store')
    },
    counting: {
      pool: gauge('animal_store_db_counting_connections'),
      idle: gauge('animal_store_db_counting_idle_connections'),
      backends: backends('animal-store-counting')
    }
  }
}

const settled = (held: Held) => held.idle === held.pool && held.backends === held.pool

describe('a frozen database', () => {
  it('answers 503 within DATABASE_TIMEOUT_MS + 1 s while every Postgres process is stopped, and recovers within 5 s of the thaw', async () => {
    const existing = await timed('create before', '/v1/pets', post({ name: 'before-freeze', categoryId: 3 }))
    expect(existing.status).toBe(201)
    const { id } = existing.body as { id: number }
    // Warm: the pool holds open connections, which the freeze leaves open and silent.
    await Promise.all(Array.from({ length: 12 }, () => timed('before', '/v1/pets', { headers: auth })))
    expect((await timed('ready before', '/health/ready')).status).toBe(200)
    expect((await connectionsHeld()).requests.pool).toBeGreaterThan(0)
    const pid = server.child.pid

    await cluster.freeze()
    const answers: Timed[] = []
    try {
      // Bursts wider than the pool: the first finds connections that never answer, the next must open new ones.
      for (let round = 0; round < 2; round++) {
        const burst = await Promise.all([
          ...Array.from({ length: 3 }, () => everyKindOfRequest(100 + round)).flat(),
          timed('ready while frozen', '/health/ready')
        ])
        answers.push(...burst)
      }
      expect((await timed('live while frozen', '/health/live')).status).toBe(200)
    } finally {
      await cluster.thaw()
    }
    const thawed = performance.now()

    expect(answers.length).toBe(44)
    for (const answer of answers) {
      expectAnsweredWhileDown(answer)
      expect(answer.ms, answer.label).toBeLessThan(DATABASE_TIMEOUT_MS + 1000)
    }

    const recoveredAfter = await recoveredSince(thawed)
    expect(recoveredAfter, 'recovered within 10 s').toBeDefined()
    expect(recoveredAfter!).toBeLessThan(5000)
    expect(server.child.exitCode).toBeNull()
    expect(server.child.pid).toBe(pid)

    // No connection that timed out came back into use: a burst wider than the pool is served in full.
    const after = await Promise.all(
      Array.from({ length: 3 }, (_, round) => [
        timed('list after', '/v1/pets', { headers: auth }),
        timed('get after', `/v1/pets/${id}`, { headers: auth }),
        timed('create after', '/v1/pets', post({ name: `thawed-${round}`, categoryId: 3 }))
      ]).flat()
    )
    expect(after.map((answer) => answer.status)).toEqual([200, 200, 201, 200, 200, 201, 200, 200, 201])

    // Nothing leaked: once the pools are idle, Postgres holds exactly their connections, none they gave up.
    const settling = performance.now()
    let held = await connectionsHeld()
    while (!(settled(held.requests) && settled(held.counting)) && performance.now() - settling < 5000) {
      await sleep(100)
      held = await connectionsHeld()
    }
    expect(held.requests.pool).toBeGreaterThan(0)
    for (const pool of [held.requests, held.counting]) {
      expect(pool).toEqual({ pool: pool.pool, idle: pool.pool, backends: pool.pool })
    }
  })
})
