import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { sql, type Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js'
import type { Database } from '../../src/db/schema.js'
import { isDatabaseUnavailable } from '../../src/errors.js'
import { findPet, listPets } from '../../src/repositories/pets.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { ROOT, run } from '../../harness/processes.js'

// A query that sleeps stands for one whose server stopped answering: the client cannot tell them apart.
// Past the query timeout its connection is ended, so the query fails as a lost connection.
let database: TestDatabase
let handle: DatabaseHandle
const QUERY_TIMEOUT_MS = 500

beforeAll(async () => {
  database = await createTestDatabase()
  handle = connectDatabase({ url: database.url, poolMax: 3, timeoutMs: 1000, queryTimeoutMs: QUERY_TIMEOUT_MS })
})
afterAll(async () => {
  await handle?.close()
  await database?.drop()
})

// Read on the connection before it hangs: once the timeout has ended it, Postgres ends the backend
// too within client_connection_check_interval (1 s), which a loaded machine may take to look.
const backendPid = async (db: Kysely<Database> = handle.db) =>
  (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db)).rows[0]!.pid

async function failure(work: Promise<unknown>): Promise<{ error: Error; ms: number }> {
  const started = performance.now()
  const error = await work.then(
    () => new Error('it answered'),
    (reason: Error) => reason
  )
  return { error, ms: performance.now() - started }
}

it('fails a query that gets no answer within the query timeout, as unavailable, and never reuses its connection', async () => {
  let hung: number | undefined
  const { error, ms } = await failure(
    handle.db.connection().execute(async (db) => {
      hung = await backendPid(db)
      await sql`SELECT pg_sleep(3.1)`.execute(db)
    })
  )
  expect(error.message).toBe('Connection terminated unexpectedly')
  expect(isDatabaseUnavailable(error)).toBe(true)
  expect(ms).toBeLessThan(QUERY_TIMEOUT_MS + 1000)
  expect(hung).toBeDefined()

  // The connection still waiting for the sleep is closed, not handed to the next query.
  expect(handle.pool.totalCount).toBe(0)
  const pids = await Promise.all([backendPid(), backendPid(), backendPid()])
  expect(pids).not.toContain(hung)
})

it('fails a transaction whose query times out at once: the rollback does not wait on the same connection', async () => {
  let hung: number | undefined
  const { error } = await failure(
    handle.db.transaction().execute(async (trx) => {
      hung = await backendPid(trx)
      await sql`SELECT pg_sleep(3.2)`.execute(trx)
    })
  )
  expect(error.message).toBe('Connection terminated unexpectedly')
  expect(hung).toBeDefined()
  const pids = await Promise.all([backendPid(), backendPid(), backendPid()])
  expect(pids).not.toContain(hung)
})

it('discards the connection of a prepared statement that timed out, too', async () => {
  // The pool hands out the connection released last.
  const hung = (await handle.pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid
  const { error } = await failure(handle.pool.query({ name: 'sleep', text: 'SELECT pg_sleep(3.3)' }))
  expect(error.message).toBe('Connection terminated unexpectedly')
  const pids = await Promise.all([backendPid(), backendPid(), backendPid()])
  expect(pids).not.toContain(hung)
})

it('leaves queries without a time limit when none is asked for (migrations, the CLI)', async () => {
  const unlimited = connectDatabase({ url: database.url, poolMax: 1 })
  try {
    const { rows } = await sql<{ slept: string }>`SELECT pg_sleep(1)::text AS slept`.execute(unlimited.db)
    expect(rows).toEqual([{ slept: '' }])
  } finally {
    await unlimited.close()
  }
})

describe('prepared statements', () => {
  /** The names of the statements prepared on the one connection of a pool of one, after a list and a get. */
  async function preparedAfterRequests(options: { directUrl?: string }): Promise<string[]> {
    const single = connectDatabase({ url: database.url, poolMax: 1, ...options })
    try {
      await listPets(single.pool, { limit: 5 })
      await findPet(single.pool, 1n)
      const { rows } = await single.pool.query<{ name: string }>(
        'SELECT name FROM pg_prepared_statements ORDER BY name'
      )
      return rows.map((row) => row.name)
    } finally {
      await single.close()
    }
  }

  it('prepares the hot statements under a name when DATABASE_URL holds sessions of its own', async () => {
    const names = await preparedAfterRequests({})
    expect(names).toHaveLength(2)
    for (const name of names) expect(name).toMatch(/^animal_store_\d+$/)
  })

  it('prepares nothing under a name when a DATABASE_DIRECT_URL of its own says DATABASE_URL may be a transaction pooler', async () => {
    const direct = new URL(database.url)
    direct.searchParams.set('application_name', 'direct')
    expect(await preparedAfterRequests({ directUrl: direct.toString() })).toEqual([])
  })

  it("plans the limiter's statements once on its counting connections where sessions are held, and nowhere else", async () => {
    const modes = async (options: { directUrl?: string }) => {
      const handle = connectDatabase({ url: database.url, poolMax: 1, ...options })
      try {
        const mode = async (pool: typeof handle.pool) =>
          (await pool.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).rows[0]!.plan_cache_mode
        return { counting: await mode(handle.counting), requests: await mode(handle.pool) }
      } finally {
        await handle.close()
      }
    }
    expect(await modes({})).toEqual({ counting: 'force_generic_plan', requests: 'auto' })
    const direct = new URL(database.url)
    direct.searchParams.set('application_name', 'direct')
    expect(await modes({ directUrl: direct.toString() })).toEqual({ counting: 'auto', requests: 'auto' })
  })

  it('hands out a new counting connection once that setting is made, never with its first query queued behind it', async () => {
    // pg 8 warns once a process, as a deprecation, of a query sent while another runs; pg 9 refuses it.
    // In a process of its own, so that the warning is not spent, made to throw.
    const connect = pathToFileURL(resolve(ROOT, 'dist/src/db/connect.js')).href
    const script = `
      const { connectDatabase } = await import(${JSON.stringify(connect)})
      const handle = connectDatabase({ url: process.env.URL })
      const modes = await Promise.all([1, 2, 3].map(() => handle.counting.query('SHOW plan_cache_mode')))
      console.log(modes.map(({ rows }) => rows[0].plan_cache_mode).join(' '))
      await handle.close()`
    const result = await run(process.execPath, ['--throw-deprecation', '--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', URL: database.url }
    })
    expect(result).toEqual({
      code: 0,
      stdout: 'force_generic_plan force_generic_plan force_generic_plan\n',
      stderr: ''
    })
  })
})
