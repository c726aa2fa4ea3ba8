import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import { issueApiKey, type IssuedApiKey } from '../../src/repositories/api-keys.js'
import { startDebianCluster, type DebianCluster } from '../helpers/cluster.js'
import { startReplica, type Replica } from '../../harness/processes.js'
import { startHaproxy, type TcpProxy } from '../../harness/programs.js'
import { describeWith } from '../helpers/requirements.js'

// Debian's PostgreSQL as a primary and a streaming standby, behind HAProxy, the one address the built
// service knows. The primary crashes; HAProxy is switched to the standby, which is then promoted.
let primary: DebianCluster
let standby: DebianCluster
let proxy: TcpProxy
let service: Replica
const fresh: Replica[] = []
let writer: IssuedApiKey
let daily: IssuedApiKey
let banned: IssuedApiKey

/** The readiness statuses `service` answers, one request after another, while `step` runs and once after it. */
const bearer = (key: IssuedApiKey) => ({ authorization: `Bearer ${key.key}` })
const env = () => ({
  DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/store`,
  BAN_AFTER: '2',
  BAN_SECONDS: '900',
  LOG_LEVEL: 'warn'
})

describeWith('pg_ctlcluster', 'haproxy')('a failover to a promoted standby', () => {
  beforeAll(async () => {
    primary = await startDebianCluster()
    const admin = new pg.Client({ connectionString: primary.url() })
    await admin.connect()
    await admin.query('CREATE DATABASE store')
    await admin.end()
    const direct = connectDatabase({ url: primary.url('store'), poolMax: 2 })
    await migrateToLatestOrThrow(direct.db)
    // The database's clock held still for the file: the daily key's count (7, then 8 after the
    // failover and 9 on a newcomer) stays in one UTC day whenever the test runs, where a midnight
    // between them would start it again, and the ban runs from that one instant. It is a row of the
    // primary's, which the standby replays and the promoted standby keeps.
    await sql`INSERT INTO service_clock (at) VALUES (clock_timestamp())`.execute(direct.db)
    writer = await issueApiKey(direct.db, { plan: 'enterprise', limits: { perMinute: 100_000, perDay: 1_000_000 } })
    daily = await issueApiKey(direct.db, { plan: 'enterprise', limits: { perMinute: 1000, perDay: 20 } })
    banned = await issueApiKey(direct.db, { plan: 'enterprise', limits: { perMinute: 2, perDay: 100_000 } })
    await direct.close()
    standby = await startDebianCluster({ standbyOf: primary })
    proxy = await startHaproxy({ primary: primary.port, standby: standby.port })
    service = await startReplica(env())
  })
  afterAll(async () => {
    await Promise.all([service?.stop(), ...fresh.map((replica) => replica.stop())])
    await proxy?.stop()
    await standby?.destroy()
    await primary?.destroy()
  })

  it('recovers by itself within 5 s of the promotion, with keys, pets, counts and bans; readiness is 503 in between, on the standby too', async () => {
    const created: number[] = []
    for (const name of ['Rex', 'Tom', 'Kiwi']) {
      const response = await fetch(`${service.url}/v1/pets`, {
        method: 'POST',
        headers: { ...bearer(writer), 'content-type': 'application/json' },
        body: JSON.stringify({ name, categoryId: 1 })
      })
      expect(response.status).toBe(201)
      created.push(((await response.json()) as { id: number }).id)
    }
    for (let i = 0; i < 7; i++) {
      const response = await fetch(`${service.url}/v1/pets?limit=1`, { headers: bearer(daily) })
      expect(response.status).toBe(200)
      if (i === 6) expect(response.headers.get('x-ratelimit-remaining')).toBe('13')
    }
    const codes: string[] = []
    while (!codes.includes('key_banned') && codes.length < 20) {
      const response = await fetch(`${service.url}/v1/pets?limit=1`, { headers: bearer(banned) })
      codes.push(response.status === 200 ? 'ok' : ((await response.json()) as { code: string }).code)
    }
    expect(codes.at(-1)).toBe('key_banned')

    // Streaming replication is asynchronous: the standby has what it has replayed when the primary dies.
    await standby.catchUpWith(primary)
    await primary.crash()

    // Between the crash and the switch the service cannot reach a primary, and says so.
    const ready = await fetch(`${service.url}/health/ready`)
    expect(ready.status).toBe(503)
    const list = await fetch(`${service.url}/v1/pets`, { headers: bearer(writer) })
    expect(list.status).toBe(503)
    expect(await list.json()).toMatchObject({ code: 'service_unavailable', status: 503 })
    expect(Number(list.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(service.child.exitCode).toBeNull()

    // A proxy that switches before the promotion leads to a read-only standby: writes answer 503, and
    // readiness stays 503 though the standby answers queries.
    await proxy.switchTo('standby')
    const onStandby = await fetch(`${service.url}/v1/pets`, {
      method: 'POST',
      headers: { ...bearer(writer), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Early', categoryId: 2 })
    })
    expect(onStandby.status).toBe(503)
    for (let i = 0; i < 5; i++) {
      expect((await fetch(`${service.url}/health/ready`)).status).toBe(503)
      await sleep(100)
    }
    await standby.promote()
    const promoted = performance.now()
    let recoveredAfter: number | undefined
    while (performance.now() - promoted < 10_000) {
      const [readiness, pets] = await Promise.all([
        fetch(`${service.url}/health/ready`),
        fetch(`${service.url}/v1/pets`, { headers: bearer(writer) })
      ])
      if (readiness.status === 200 && pets.status === 200) {
        recoveredAfter = performance.now() - promoted
        expect(((await pets.json()) as { id: number }[]).map((pet) => pet.id)).toEqual(created)
        break
      }
      await sleep(100)
    }
    expect(recoveredAfter, 'recovered within 10 s').toBeDefined()
    expect(recoveredAfter!).toBeLessThan(5000)

    // Writes go to the new primary; the day's count went on from 7, and the ban holds.
    const after = await fetch(`${service.url}/v1/pets`, {
      method: 'POST',
      headers: { ...bearer(writer), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Promoted', categoryId: 2 })
    })
    expect(after.status).toBe(201)
    const counted = await fetch(`${service.url}/v1/pets?limit=1`, { headers: bearer(daily) })
    expect(counted.status).toBe(200)
    expect(counted.headers.get('x-ratelimit-remaining')).toBe('12')

    // An instance started after the failover knows only what the new primary holds.
    const newcomer = await startReplica(env())
    fresh.push(newcomer)
    // A 503 with Retry-After (its first statements outlasting the database timeout on a loaded
    // machine) is retried, as a client would; the ban must answer, never an admission.
    let stillBanned = await fetch(`${newcomer.url}/v1/pets?limit=1`, { headers: bearer(banned) })
    for (let tries = 0; stillBanned.status === 503 && stillBanned.headers.has('retry-after') && tries < 5; tries++) {
      await sleep(1000)
      stillBanned = await fetch(`${newcomer.url}/v1/pets?limit=1`, { headers: bearer(banned) })
    }
    const stillBannedBody = await stillBanned.text()
    expect(stillBanned.status, stillBannedBody).toBe(429)
    expect(JSON.parse(stillBannedBody)).toMatchObject({ code: 'key_banned' })
    const next = await fetch(`${newcomer.url}/v1/pets?limit=1`, { headers: bearer(daily) })
    expect(next.headers.get('x-ratelimit-remaining')).toBe('11')
  }, 60_000)
})
