import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueTestKey } from '../helpers/app.js'
import { createTestDatabase, whilePetsLocked, type TestDatabase } from '../helpers/database.js'
import { startNginx, startReplica, type Nginx, type Replica } from '../helpers/processes.js'

// Two built replicas behind nginx running deploy/nginx.conf (the compose topology on loopback); a
// client creates pets with Idempotency-Key and retries every failure; one replica gets SIGKILL.
let database: TestDatabase
let a: Replica
let b: Replica
let lb: Nginx
let auth: { authorization: string }

beforeAll(async () => {
  database = await createTestDatabase()
  auth = { authorization: `Bearer ${await issueTestKey(database)}` }
  // A claim left by the killed replica lapses after a second, so the retries take it over quickly.
  const env = { DATABASE_URL: database.url, TRUST_PROXY: '1', IDEMPOTENCY_CLAIM_MS: '1000', LOG_LEVEL: 'warn' }
  ;[a, b] = await Promise.all([startReplica(env), startReplica(env)])
  lb = await startNginx([a.port, b.port])
})
afterAll(async () => {
  await lb?.stop()
  await Promise.all([a?.stop(), b?.stop()])
  await database?.drop()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Acknowledged {
  n: number
  id: number
  replayed: boolean
  attempts: number
}

describe('a replica killed mid-run behind nginx', () => {
  it('loses and duplicates nothing: every acknowledged pet exists exactly once', async () => {
    const total = 240
    const acknowledged: Acknowledged[] = []
    const failures: string[] = []
    let next = 0
    let killedAt = 0

    // Retries until the pet is acknowledged, with the same key and body, as a careful client does.
    async function createWithRetries(n: number) {
      const body = JSON.stringify({ name: `crash-${n}`, categoryId: n, status: 'available' })
      for (let attempt = 1; attempt <= 200; attempt++) {
        try {
          const response = await fetch(`${lb.url}/v1/pets`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': `crash-run-${n}` },
            body
          })
          const text = await response.text()
          if (response.status === 201) {
            const pet = JSON.parse(text) as { id: number; name: string }
            expect(pet.name).toBe(`crash-${n}`)
            acknowledged.push({ n, id: pet.id, replayed: response.headers.get('idempotent-replayed') === 'true', attempts: attempt })
            return
          }
          failures.push(`${response.status} ${text}`)
        } catch (error) {
          failures.push(String((error as Error & { cause?: unknown }).cause ?? error))
        }
        await sleep(Math.min(50 * attempt, 500))
      }
      throw new Error(`pet ${n} was never acknowledged: ${failures.slice(-3).join(' | ')}`)
    }

    async function client() {
      while (next < total) await createWithRetries(next++)
    }

    async function killReplicaA() {
      while (acknowledged.length < total / 3) await sleep(10)
      // Creation waits behind a lock, so both replicas hold claimed requests when A dies.
      await whilePetsLocked(database, 'SHARE', async () => {
        await sleep(300)
        killedAt = Date.now()
        a.child.kill('SIGKILL')
        await sleep(200)
      })
    }

    await Promise.all([...Array.from({ length: 8 }, client), killReplicaA()])

    expect(await a.exited).toMatchObject({ signal: 'SIGKILL' })
    expect(killedAt).toBeGreaterThan(0)
    // The kill did cost the client requests, which it retried.
    expect(failures.length).toBeGreaterThan(0)
    expect(acknowledged.some((ack) => ack.attempts > 1)).toBe(true)

    // Every pet acknowledged once, with one id each, and the database holds exactly those pets.
    expect(acknowledged.map((ack) => ack.n).sort((x, y) => x - y)).toEqual(Array.from({ length: total }, (_, n) => n))
    expect(new Set(acknowledged.map((ack) => ack.id)).size).toBe(total)
    const { rows } = await database.pool.query<{ id: string; name: string }>(
      "SELECT id::text, name FROM pets WHERE name LIKE 'crash-%' ORDER BY id"
    )
    expect(rows).toHaveLength(total)
    const byName = new Map(rows.map((row) => [row.name, Number(row.id)]))
    expect(byName.size).toBe(total)
    for (const ack of acknowledged) expect(byName.get(`crash-${ack.n}`)).toBe(ack.id)
    const { rows: keys } = await database.pool.query<{ done: number }>(
      'SELECT count(*)::int AS done FROM idempotency_keys WHERE pet_id IS NOT NULL'
    )
    expect(keys[0]!.done).toBe(total)
  })
})
