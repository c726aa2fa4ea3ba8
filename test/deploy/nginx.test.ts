import { setTimeout as sleep } from 'node:timers/promises'
import { get as httpGet, type IncomingHttpHeaders } from 'node:http'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { issueTestKey } from '../helpers/app.js'
import { createTestDatabase, whilePetsLocked, type TestDatabase } from '../helpers/database.js'
import { eventually, processEnv, run, startReplica, type Replica } from '../../harness/processes.js'
import { startNginx, type Nginx } from '../../harness/programs.js'
import { describeWith } from '../helpers/requirements.js'

// Two built replicas behind nginx running deploy/nginx.conf: the compose topology on loopback.
let database: TestDatabase
let a: Replica
let b: Replica
let lb: Nginx
let authorization: string

type LogLine = Record<string, unknown> & {
  reqId?: string
  msg?: string
  time?: number
  remoteAddress?: string
}
const logsOf = (replica: Replica) => replica.logs() as LogLine[]

describeWith('nginx')('behind nginx', () => {
  beforeAll(async () => {
    database = await createTestDatabase()
    authorization = `Bearer ${await issueTestKey(database)}`
    // nginx reaches the replicas from 127.0.0.1, the one peer whose X-Forwarded-For they believe.
    // No shedding on event loop delay, which the test machinery's own load causes (test/helpers/app.ts).
    const env = {
      DATABASE_URL: database.url,
      TRUST_PROXY: '127.0.0.1',
      SHUTDOWN_GRACE_MS: '5000',
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0'
    }
    ;[a, b] = await Promise.all([startReplica(env), startReplica(env)])
    lb = await startNginx([a.port, b.port])
  })
  afterAll(async () => {
    await lb?.stop()
    await Promise.all([a?.stop(), b?.stop()])
    await database?.drop()
  })
  it('spreads /v1 over both replicas and gives every response one request id, logged by the replica', async () => {
    const ids: string[] = []
    for (let i = 0; i < 10; i++) {
      const response = await fetch(`${lb.url}/v1/pets?limit=5`, { headers: { authorization } })
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual([])
      const id = response.headers.get('x-request-id')!
      // nginx's own $request_id: 32 hex digits, sent once (fetch would join two headers with a comma).
      expect(id).toMatch(/^[0-9a-f]{32}$/)
      ids.push(id)
    }
    const servedBy = (replica: Replica) => ids.filter((id) => logsOf(replica).some((line) => line.reqId === id))
    // Log lines travel through a pipe and may trail the responses a little.
    await eventually(() => (servedBy(a).length + servedBy(b).length === 10 ? true : undefined))
    const accessLog = await eventually(() => {
      const lines = lb
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { requestId: string; status: number })
      return ids.every((id) => lines.some((line) => line.requestId === id && line.status === 200)) ? lines : undefined
    })
    expect(accessLog.length).toBeGreaterThanOrEqual(10)
    expect(servedBy(a).length).toBeGreaterThan(0)
    expect(servedBy(b).length).toBeGreaterThan(0)
  })

  it('passes the client’s request id through, and the client address from X-Forwarded-For, not a forged one', async () => {
    // The client calls from 127.0.0.2 so that its address differs from nginx's own (127.0.0.1).
    const response = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((done, fail) => {
      const request = httpGet(
        {
          host: '127.0.0.1',
          port: lb.port,
          path: '/v1/pets/424242',
          localAddress: '127.0.0.2',
          headers: { authorization, 'x-request-id': 'client-trace-42', 'x-forwarded-for': '198.51.100.7' }
        },
        (incoming) => {
          let body = ''
          incoming.setEncoding('utf8').on('data', (chunk: string) => (body += chunk))
          incoming.on('end', () => done({ status: incoming.statusCode!, headers: incoming.headers, body }))
        }
      )
      request.on('error', fail)
    })
    expect(response.status).toBe(404)
    expect(response.headers['x-request-id']).toBe('client-trace-42')
    expect(JSON.parse(response.body)).toEqual({ code: 'not_found', message: 'No pet with id 424242', status: 404 })
    // The replica writes its last line just after the response leaves.
    const lines = await eventually(() => {
      const found = [...logsOf(a), ...logsOf(b)].filter((line) => line.reqId === 'client-trace-42')
      return found.length === 1 ? found : undefined
    })
    expect(lines.map((line) => line.msg)).toEqual(['request completed'])
    expect(lines[0]!.remoteAddress).toBe('127.0.0.2')
    expect(JSON.stringify(lines)).not.toContain('198.51.100.7')
  })

  it('serves the health endpoints without credentials, and keeps /metrics off the public port', async () => {
    const ready = await fetch(`${lb.url}/health/ready`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: 'ok' })
    const metrics = await fetch(`${lb.url}/metrics`)
    expect(metrics.status).toBe(404)
    expect(await metrics.json()).toMatchObject({ code: 'not_found', status: 404 })
  })

  it('stops a body over 16 KiB at nginx with the Error body, and lets one of exactly 16 KiB through', async () => {
    const post = (bytes: number) => {
      const body = JSON.stringify({ name: '', categoryId: 1 })
      return fetch(`${lb.url}/v1/pets`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: body.replace('""', `"${'x'.repeat(bytes - body.length)}"`)
      })
    }
    const atLimit = await post(16 * 1024)
    expect(atLimit.status).toBe(400)
    expect(await atLimit.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('name') })
    for (const bytes of [16 * 1024 + 1, 200_000]) {
      const response = await post(bytes)
      expect(response.status).toBe(413)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(await response.json()).toEqual({
        code: 'payload_too_large',
        message: 'The request body is larger than 16 KiB',
        status: 413
      })
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/)
    }
  })

  it('exposes each replica’s figures on its metrics port', async () => {
    await fetch(`${lb.url}/v1/pets`, { headers: { authorization } })
    const texts = await Promise.all(
      [a, b].map((replica) => fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`).then((r) => r.text()))
    )
    const served = texts.map((text) => {
      const line = text
        .split('\n')
        .find((entry) =>
          entry.startsWith('animal_store_http_requests_total{method="GET",route="/v1/pets",status="200"}')
        )
      return line ? Number(line.split(' ').pop()) : 0
    })
    expect(served[0]! + served[1]!).toBeGreaterThanOrEqual(11)
    for (const text of texts) expect(text).toMatch(/^animal_store_db_pool_connections \d+$/m)
  })

  it('never logs the database password', () => {
    const password = decodeURIComponent(new URL(database.url).password)
    // A server that needs no password (trust authentication) has none to leak; the URL must not show either way.
    for (const replica of [a, b]) {
      if (password) expect(replica.stdout() + replica.stderr()).not.toContain(password)
      expect(replica.stdout() + replica.stderr()).not.toContain(database.url)
    }
  })

  it('loses no request when a replica gets SIGTERM under load, and the replica exits 0', async () => {
    const total = 400
    const results: { n: number; status: number; error?: string }[] = []
    let next = 0
    let sigtermAt = 0

    async function client() {
      while (next < total) {
        const n = next++
        const create = n % 4 === 0
        try {
          const response = create
            ? await fetch(`${lb.url}/v1/pets`, {
                method: 'POST',
                headers: { authorization, 'content-type': 'application/json' },
                body: JSON.stringify({ name: `load-${n}`, categoryId: n })
              })
            : await fetch(`${lb.url}/v1/pets?limit=3`, { headers: { authorization } })
          await response.arrayBuffer()
          results.push({ n, status: response.status })
        } catch (error) {
          results.push({ n, status: 0, error: String((error as Error & { cause?: unknown }).cause ?? error) })
        }
        await sleep(25)
      }
    }

    async function terminateReplicaA() {
      while (results.length < 100) await sleep(10)
      // Requests pile up behind a table lock, so some are in flight on replica A when SIGTERM lands.
      await whilePetsLocked(database, 'ACCESS EXCLUSIVE', async () => {
        await sleep(150)
        sigtermAt = Date.now()
        a.child.kill('SIGTERM')
        await sleep(300)
      })
    }

    await Promise.all([...Array.from({ length: 8 }, client), terminateReplicaA()])

    expect(results.filter((result) => result.status !== 200 && result.status !== 201)).toEqual([])
    expect(results).toHaveLength(total)

    const exit = await a.exited
    expect(exit).toMatchObject({ code: 0, signal: null })
    expect(exit.at - sigtermAt).toBeLessThan(5000)

    const aLines = logsOf(a)
    const shutdownStart = aLines.findIndex((line) => line.msg === 'shutting down' && line.signal === 'SIGTERM')
    expect(shutdownStart).toBeGreaterThan(0)
    expect(aLines.slice(shutdownStart).some((line) => line.msg === 'shut down cleanly')).toBe(true)
    // Requests that were in flight on A when the signal came were answered, not dropped.
    const finishedDuringShutdown = aLines.slice(shutdownStart).filter((line) => line.msg === 'request completed')
    expect(finishedDuringShutdown.length).toBeGreaterThan(0)
    // B took the traffic once A had gone.
    expect(logsOf(b).filter((line) => line.msg === 'request completed' && line.time! > exit.at).length).toBeGreaterThan(
      10
    )

    // Every 201 is one row: nothing was lost, and nginx resent no POST.
    const created = results.filter((result) => result.status === 201).length
    expect(created).toBe(total / 4)
    const { rows } = await sql<{
      count: string
    }>`SELECT count(*)::text AS count FROM pets WHERE name LIKE 'load-%'`.execute(database.db)
    expect(Number(rows[0]!.count)).toBe(created)
  })

  it('the image’s HEALTHCHECK command passes on a ready replica and fails on a stopped one', async () => {
    const check = (port: number) =>
      run('node', ['dist/src/healthcheck.js'], {
        env: processEnv({ PORT: String(port), HOST: '0.0.0.0', DATABASE_URL: database.url })
      })
    expect((await check(b.port)).code).toBe(0)
    expect((await check(a.port)).code).toBe(1)
  })

  it('answers with the Error body itself when no replica is left', async () => {
    await b.stop('SIGTERM')
    expect((await b.exited).code).toBe(0)
    const response = await fetch(`${lb.url}/v1/pets`, { headers: { authorization } })
    expect(response.status).toBe(503)
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(response.headers.get('retry-after')).toBe('5')
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/)
    expect(await response.json()).toEqual({
      code: 'service_unavailable',
      message: 'No instance of the service can answer; retry later',
      status: 503
    })
  })
})
