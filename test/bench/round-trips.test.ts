import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openBenchDatabase, roundTrips, type BenchDatabase } from '../../bench/database.js'

// The bench's round trips a request must count each statement a server sends when it ends, not when
// the server's connection next publishes its transactions (about once a second).
let database: BenchDatabase

beforeAll(async () => {
  database = await openBenchDatabase({}, { countStatements: true })
}, 120_000)

afterAll(async () => {
  await database?.stop()
})

it('counts the statements of another connection as soon as they are answered', async () => {
  expect(database.counted).toBe(true)
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    await client.query('SELECT 1')
    const before = await roundTrips(database)
    for (let i = 0; i < 25; i++) await client.query('SELECT count(*) FROM pets WHERE id = $1', [i])
    for (let i = 0; i < 25; i++) await client.query('SELECT name FROM pets WHERE id = $1', [i])
    // The 50 statements and the bench's own reading before.
    expect((await roundTrips(database)) - before).toBe(51)
  } finally {
    await client.end()
  }
})
