import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { issueTestKey } from '../helpers/app.js'
import { createTestDatabase, lockWaiters, type TestDatabase } from '../helpers/database.js'
import { startReplica, type Replica } from '../../harness/processes.js'

let database: TestDatabase
let headers: Record<string, string>
const started: Replica[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  headers = { authorization: `Bearer ${await issueTestKey(database)}` }
})
afterEach(async () => {
  await Promise.all(started.splice(0).map((replica) => replica.stop()))
})
afterAll(async () => {
  await database.drop()
})

async function replica(env: Record<string, string> = {}) {
  const server = await startReplica({ DATABASE_URL: database.url, ...env })
  started.push(server)
  return server
}

const messages = (server: Replica) => server.logs().map((line) => line.msg)

describe('the built server’s shutdown', () => {
  it('exits 0 on SIGINT as on SIGTERM, after closing the pool', async () => {
    const server = await replica()
    expect((await fetch(`${server.url}/v1/pets`, { headers })).status).toBe(200)
    const sentAt = Date.now()
    server.child.kill('SIGINT')
    const exit = await server.exited
    expect(exit).toMatchObject({ code: 0, signal: null })
    expect(exit.at - sentAt).toBeLessThan(3000)
    expect(server.logs().find((line) => line.msg === 'shutting down')).toMatchObject({ signal: 'SIGINT' })
    expect(messages(server)).toContain('shut down cleanly')
  })

  it('gives up after SHUTDOWN_GRACE_MS when a request will not finish, and exits 1', async () => {
    const server = await replica({ SHUTDOWN_GRACE_MS: '600' })
    const locker = await database.pool.connect()
    try {
      await locker.query('BEGIN')
      await locker.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE')
      const stuck = fetch(`${server.url}/v1/pets`, { headers }).then(
        (response) => response.status,
        () => 'dropped'
      )
      await lockWaiters(database)
      const sentAt = Date.now()
      server.child.kill('SIGTERM')
      const exit = await server.exited
      expect(exit.code).toBe(1)
      expect(exit.at - sentAt).toBeGreaterThanOrEqual(550)
      expect(exit.at - sentAt).toBeLessThan(3000)
      expect(server.logs()).toContainEqual(expect.objectContaining({ level: 50, msg: 'killed by timeout (600ms)' }))
      expect(messages(server)).not.toContain('shut down cleanly')
      expect(await stuck).toBe('dropped')
    } finally {
      await locker.query('ROLLBACK')
      locker.release()
    }
  })
})
