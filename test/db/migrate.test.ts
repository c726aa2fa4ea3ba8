import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { connectDatabase } from '../../src/db/connect.js'
import { freePort } from '../../src/db/embedded.js'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import { migrations } from '../../migrations/index.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { runCli } from '../../harness/processes.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase({ migrate: false })
})
afterAll(async () => {
  await database.drop()
})

it('migrates once when several instances start at the same moment', async () => {
  const instances = Array.from({ length: 4 }, () => connectDatabase({ url: database.url, poolMax: 2 }))
  try {
    const outcomes = await Promise.allSettled(instances.map((instance) => migrateToLatestOrThrow(instance.db)))
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'])
    const applied = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? outcome.value : []))
    expect(applied.filter((result) => result.status === 'Success')).toHaveLength(Object.keys(migrations).length)
  } finally {
    await Promise.all(instances.map((instance) => instance.close()))
  }
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(database.db)
  expect(rows.map((row) => row.name)).toEqual(Object.keys(migrations).sort())
})

it('npm run cli -- migrate brings an empty database up to date', async () => {
  const empty = await createTestDatabase({ migrate: false })
  try {
    const result = await runCli(['migrate'], { DATABASE_URL: empty.url })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe(`Applied ${Object.keys(migrations).join(', ')}`)
    const { rows } = await sql<{ name: string }>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_name IN ('pets', 'api_keys') ORDER BY 1`.execute(empty.db)
    expect(rows).toEqual([{ name: 'api_keys' }, { name: 'pets' }])
  } finally {
    await empty.drop()
  }
})

it('npm run cli -- migrate exits 1 without showing the password when the database cannot be reached', async () => {
  const url = `postgres://animal:never-print-me@127.0.0.1:${await freePort()}/animal_store`
  const result = await runCli(['migrate'], { DATABASE_URL: url, DATABASE_TIMEOUT_MS: '500' })
  expect(result.code).toBe(1)
  expect(result.stderr).toMatch(/^Error: /)
  expect(result.stdout + result.stderr).not.toContain('never-print-me')
})

it('npm run cli -- migrate reports an up-to-date schema and exits 0', async () => {
  const result = await runCli(['migrate'], { DATABASE_URL: database.url })
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  expect(result.stdout.trim()).toBe('The schema is up to date')
})
