import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import { issueApiKey, type IssuedApiKey } from '../../src/repositories/api-keys.js'
import { freezePostmaster, signal } from '../../harness/postmaster.js'
import { createTestApp } from '../helpers/app.js'
import { holdDatabaseClock } from '../helpers/traffic.js'
import { startDebianCluster, type DebianCluster } from '../helpers/cluster.js'
import type { TestDatabase } from '../helpers/database.js'
import { describeWith } from '../helpers/requirements.js'

// A primary with a synchronous standby, as the chaos run's pg_auto_failover keeps them. When the
// standby stops answering, a statement that bans a key waits for it; a backend whose wait is ended
// (its client gone, a demotion's shutdown) leaves the ban committed on the primary alone, where every
// other session sees it. A failover then loses it: no client may have been told of it before.
let primary: DebianCluster
let standby: DebianCluster
let database: TestDatabase
let superuser: pg.Client
let first: FastifyInstance
let second: FastifyInstance
let key: IssuedApiKey
let frozen: number[] = []

const env = { BAN_AFTER: '1', BAN_SECONDS: '600', DATABASE_TIMEOUT_MS: '1500' }
const listPets = () => ({
  method: 'GET' as const,
  url: '/v1/pets?limit=1',
  headers: { authorization: `Bearer ${key.key}` }
})

async function bannedOnPrimary(): Promise<boolean> {
  const { rows } = await superuser.query(
    'SELECT 1 FROM api_key_bans WHERE api_key_id = $1 AND banned_until > service_now()',
    [key.id]
  )
  return rows.length === 1
}

describeWith('pg_ctlcluster')('a ban the synchronous standby lacks', () => {
  beforeAll(async () => {
    primary = await startDebianCluster()
    superuser = new pg.Client({ connectionString: primary.url() })
    await superuser.connect()
    await superuser.query('CREATE DATABASE store')
    await superuser.end()
    const handle = connectDatabase({ url: primary.url('store'), poolMax: 2 })
    database = { ...handle, name: 'store', drop: () => handle.close() }
    await migrateToLatestOrThrow(database.db)
    key = await issueApiKey(database.db, { plan: 'enterprise', limits: { perMinute: 1, perDay: 1000 } })
    standby = await startDebianCluster({ standbyOf: primary })
    superuser = new pg.Client({ connectionString: primary.url('store') })
    await superuser.connect()
    await superuser.query(`ALTER SYSTEM SET synchronous_standby_names = '*'`)
    await superuser.query('SELECT pg_reload_conf()')
    await vi.waitFor(
      async () => {
        const { rows } = await superuser.query(`SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'`)
        expect(rows).toHaveLength(1)
      },
      { timeout: 20_000 }
    )
    first = await createTestApp(database, { env })
    second = await createTestApp(database, { env })
  }, 120_000)
  afterAll(async () => {
    for (const pid of frozen) signal(pid, 'SIGCONT')
    await first?.close()
    await second?.close()
    await superuser?.end()
    await database?.drop()
    await standby?.destroy()
    await primary?.destroy()
  })

  it('is told to no client until the standby holds it: 503 with Retry-After meanwhile, 429 key_banned after', async () => {
    // Counting commits without waiting for the standby: the key's request and first refusal answer as ever.
    await holdDatabaseClock(database)
    expect((await first.inject(listPets())).statusCode).toBe(200)
    frozen = await freezePostmaster(standby.dataDir)
    // Refusals until the one that bans the key, which waits for the frozen standby until the instance's timeout.
    const answers: number[] = []
    for (let i = 0; i < 5 && answers.at(-1) !== 503; i++) {
      const answer = await first.inject(listPets())
      answers.push(answer.statusCode)
      if (answer.statusCode === 429) expect(answer.json().code).toBe('rate_limited')
    }
    expect(answers.at(-1)).toBe(503)
    expect(answers.slice(0, -1).every((status) => status === 429)).toBe(true)
    // Its backend still waits; ending it (as a demotion does) leaves the ban on the primary alone.
    await superuser.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`)
    await vi.waitFor(async () => expect(await bannedOnPrimary()).toBe(true), { timeout: 10_000 })

    // Both instances read the ban (and the second was told of it on the change channel); neither says so.
    for (const app of [second, first]) {
      const answer = await app.inject(listPets())
      expect(answer.statusCode).toBe(503)
      expect(answer.headers['retry-after']).toBeDefined()
      expect(answer.json().code).not.toBe('key_banned')
    }

    // Once the standby holds the ban, it is the clients' to hear.
    for (const pid of frozen) signal(pid, 'SIGCONT')
    frozen = []
    await standby.catchUpWith(primary)
    for (const app of [second, first]) {
      const answer = await app.inject(listPets())
      expect(answer.statusCode).toBe(429)
      expect(answer.json().code).toBe('key_banned')
    }
  }, 60_000)
})
