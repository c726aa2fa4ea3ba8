import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { countUnits } from '../../src/repositories/rate-limits.js'
import { manualClock } from '../helpers/app.js'
import { startStoppableCluster, type StoppableCluster } from '../helpers/cluster.js'
import { startServer, type RunningServer } from '../../harness/processes.js'
import { startPgBouncer, type PgBouncer } from '../../harness/programs.js'
import { describeWith } from '../helpers/requirements.js'

// The built server on a Postgres cluster of this file's own, which the test crashes.
let cluster: StoppableCluster

beforeAll(async () => {
  cluster = await startStoppableCluster()
})
afterAll(async () => {
  await cluster?.destroy()
})

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

async function serve(): Promise<RunningServer> {
  return startServer({
    DATABASE_URL: cluster.database.url,
    BAN_AFTER: '2',
    BAN_SECONDS: '900'
  })
}

/** Waits until the WAL holds, on disk, everything written so far: asynchronous commits included. */
async function walFlushed() {
  const { rows } = await cluster.database.pool.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')
  await vi.waitFor(
    async () => {
      const { rows: flushed } = await cluster.database.pool.query<{ done: boolean }>(
        'SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS done',
        [rows[0]!.lsn]
      )
      expect(flushed[0]!.done).toBe(true)
    },
    { timeout: 10_000, interval: 20 }
  )
}

describe('a Postgres crash', () => {
  it("keeps the day's count and the bans: a key that used 11 of 20 has 8 left after one more", async () => {
    const db = cluster.database.db
    // The database's clock stands still in the middle of a minute, through the crash too: no minute
    // or day rolls over between the requests, before and after.
    const clock = manualClock(Date.parse('2027-01-01T12:00:30Z'), () => cluster.database)
    await clock.set(clock())
    const daily = await issueApiKey(db, { plan: 'enterprise', limits: { perMinute: 1000, perDay: 20 } })
    const banned = await issueApiKey(db, { plan: 'enterprise', limits: { perMinute: 2, perDay: 100_000 } })
    const before = await serve()
    const pets = `${before.url}/pets?limit=1`
    try {
      const remaining: string[] = []
      for (let i = 0; i < 11; i++) {
        const response = await fetch(pets, { headers: bearer(daily.key) })
        expect(response.status).toBe(200)
        remaining.push(response.headers.get('x-ratelimit-remaining')!)
      }
      expect(remaining.at(-1)).toBe('9')
      const codes: string[] = []
      while (!codes.includes('key_banned') && codes.length < 20) {
        const response = await fetch(pets, { headers: bearer(banned.key) })
        codes.push(response.status === 200 ? 'ok' : ((await response.json()) as { code: string }).code)
      }
      expect(codes).toEqual(['ok', 'ok', 'rate_limited', 'rate_limited', 'rate_limited', 'key_banned'])

      // Counts commit asynchronously: what the WAL writer has flushed, within a fraction of a second, survives.
      await walFlushed()
      await cluster.crash()
    } finally {
      await before.stop()
    }
    await cluster.start()

    // A fresh instance knows only what Postgres kept.
    const after = await serve()
    try {
      // The windows are the account's; the ban is the key's own.
      const { rows } = await cluster.database.pool.query<{ account: bigint; day_used: bigint; banned: boolean }>(
        `SELECT k.account_id AS account, c.used AS day_used, coalesce(b.banned_until > now(), false) AS banned
         FROM api_keys k JOIN limit_counters c ON c.account_id = k.account_id AND c."window" = 'day'
         LEFT JOIN api_key_bans b ON b.api_key_id = k.id
         WHERE k.id = ANY($1) ORDER BY k.id`,
        [[daily.id, banned.id]]
      )
      expect(rows).toEqual([
        { account: daily.accountId, day_used: 11n, banned: false },
        { account: banned.accountId, day_used: 2n, banned: true }
      ])
      const next = await fetch(`${after.url}/pets?limit=1`, { headers: bearer(daily.key) })
      expect(next.status).toBe(200)
      expect(next.headers.get('x-ratelimit-limit')).toBe('20')
      expect(next.headers.get('x-ratelimit-remaining')).toBe('8')
      const stillBanned = await fetch(`${after.url}/pets?limit=1`, { headers: bearer(banned.key) })
      expect(stillBanned.status).toBe(429)
      expect(await stillBanned.json()).toMatchObject({ code: 'key_banned', status: 429 })
      expect(Number(stillBanned.headers.get('retry-after'))).toBeGreaterThan(800)
    } finally {
      await after.stop()
      await clock.release()
    }
  })
})

// With a synchronous standby named that never connects, every synchronous commit waits for it forever.
async function withAbsentSynchronousStandby(during: () => Promise<void>) {
  const admin = cluster.database.pool
  await admin.query("ALTER SYSTEM SET synchronous_standby_names = 'absent_standby'")
  await admin.query('SELECT pg_reload_conf()')
  try {
    await during()
  } finally {
    await admin.query('ALTER SYSTEM RESET synchronous_standby_names')
    await admin.query('SELECT pg_reload_conf()')
  }
}

/** One connection, so that every statement runs in the same session (or on the same PgBouncer client). */
const oneConnection = (url: string) => connectDatabase({ url, poolMax: 1, queryTimeoutMs: 3000 })

/** A session sees the new setting once it has read the reloaded configuration. */
async function seesAbsentStandby(connection: DatabaseHandle) {
  await vi.waitFor(
    async () => {
      const { rows } = await connection.pool.query<{ names: string }>(
        "SELECT current_setting('synchronous_standby_names') AS names"
      )
      expect(rows[0]!.names).toBe('absent_standby')
    },
    { timeout: 10_000, interval: 20 }
  )
}

/** A key, made before any write has to wait for the absent standby. */
async function newKey() {
  const { id, accountId } = await issueApiKey(cluster.database.db, { plan: 'free' })
  return { accountId, apiKeyId: id }
}

async function countOnce(connection: DatabaseHandle, key: { accountId: bigint; apiKeyId: bigint }) {
  const [state] = await countUnits(connection.counting, [
    { ...key, cost: 1, want: 1, returned: 0, returnedAt: 0, banAfter: 10, banSeconds: 900 }
  ])
  expect(state).toMatchObject({ admitted: true, granted: 1 })
  expect(state!.windows.map((window) => window.limit - window.remaining)).toEqual([1, 1])
}

/** Asserts the session commits synchronously again: SHOW says so, and a write waits for the absent standby. */
async function commitsSynchronously(connection: DatabaseHandle, accountId: bigint) {
  const { rows } = await connection.pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit')
  expect(rows[0]!.synchronous_commit).toBe('on')
  await expect(
    connection.pool.query('UPDATE account_counters SET used = used WHERE account_id = $1', [accountId])
  ).rejects.toThrow('Connection terminated unexpectedly')
}

describe('the counting statement', () => {
  it('commits asynchronously, for itself alone: the next write on the connection commits synchronously', async () => {
    const connection = oneConnection(cluster.database.url)
    const key = await newKey()
    try {
      await withAbsentSynchronousStandby(async () => {
        await seesAbsentStandby(connection)
        // Were it synchronous, the count would wait for the standby like any other write.
        await countOnce(connection, key)
        await commitsSynchronously(connection, key.accountId)
      })
    } finally {
      await connection.close()
    }
  })
})

describeWith('pgbouncer')('the counting statement through PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer
  beforeAll(async () => {
    // One server connection, so the next client is handed the session the count ran in.
    bouncer = await startPgBouncer(cluster.database.url, { poolSize: 1 })
  })
  afterAll(async () => {
    await bouncer?.stop()
  })

  it('commits asynchronously and leaves nothing behind for the next client of the server connection', async () => {
    const counting = oneConnection(bouncer.url)
    const next = oneConnection(bouncer.url)
    const key = await newKey()
    try {
      await withAbsentSynchronousStandby(async () => {
        await seesAbsentStandby(counting)
        await countOnce(counting, key)
        await commitsSynchronously(next, key.accountId)
      })
    } finally {
      await Promise.all([counting.close(), next.close()])
    }
  })
})
