import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import { FOLDED, migrations } from '../../migrations/index.js'
import { SCHEMA_FILE, schemaSql } from '../../scripts/schema-sql.js'
import { ROOT } from '../../harness/processes.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

// A database as release 2d40fdd left it: made by scripts/fold-release.ts from that release's migrations.
const RELEASE_DUMP = resolve(import.meta.dirname, 'release-2d40fdd.sql')

let released: TestDatabase
let fresh: TestDatabase
beforeAll(async () => {
  released = await createTestDatabase({ migrate: false })
  const client = new pg.Client({ connectionString: released.url })
  await client.connect()
  try {
    await client.query(await readFile(RELEASE_DUMP, 'utf8'))
  } finally {
    await client.end()
  }
  fresh = await createTestDatabase({ migrate: false })
  await migrateToLatestOrThrow(fresh.db)
})
afterAll(async () => {
  await released?.drop()
  await fresh?.drop()
})

const names = async (database: TestDatabase) =>
  (await sql<{ name: string }>`SELECT name FROM kysely_migration ORDER BY name`.execute(database.db)).rows.map(
    (row) => row.name
  )

it('upgrades a database of release 2d40fdd to the schema an empty database gets', async () => {
  expect(await names(released)).toEqual(FOLDED)
  const results = await migrateToLatestOrThrow(released.db)
  const afterBaseline = Object.keys(migrations).filter((name) => name > '0028_baseline')
  expect(results.map((result) => [result.migrationName, result.status])).toEqual(
    afterBaseline.map((name) => [name, 'Success'])
  )
  expect(await names(released)).toEqual([...FOLDED, ...afterBaseline])

  const committed = await readFile(resolve(ROOT, SCHEMA_FILE), 'utf8')
  expect(await schemaSql(released.db), `the upgraded database differs from ${SCHEMA_FILE}`).toBe(committed)
  expect(await schemaSql(fresh.db), `an empty database migrated to the head differs from ${SCHEMA_FILE}`).toBe(
    committed
  )
})

it('seeds an empty database with the rows the folded migrations left in a database of 2d40fdd', async () => {
  const seeded = async (database: TestDatabase) => ({
    plans: (await sql`SELECT name FROM plans ORDER BY name`.execute(database.db)).rows,
    limits: (
      await sql`SELECT plan, "window", algorithm, "limit", burst FROM plan_limits ORDER BY plan, "window"`.execute(
        database.db
      )
    ).rows,
    retention: (await sql`SELECT days FROM audit_retention`.execute(database.db)).rows,
    secrets: (await sql`SELECT name, octet_length(value) AS bytes FROM service_secrets`.execute(database.db)).rows
  })
  const expected = await seeded(released)
  expect(expected.plans).toHaveLength(4)
  expect(await seeded(fresh)).toEqual(expected)
})

it('refuses a database that ran only part of the folded migrations, naming the release to upgrade through', async () => {
  const partial = await createTestDatabase({ migrate: false })
  try {
    await sql`CREATE TABLE kysely_migration (name varchar(255) PRIMARY KEY, timestamp varchar(255) NOT NULL)`.execute(
      partial.db
    )
    const ran = FOLDED.slice(0, FOLDED.indexOf('0015_accounts_scopes_audit_events') + 1)
    for (const name of ran) {
      await sql`INSERT INTO kysely_migration VALUES (${name}, ${new Date().toISOString()})`.execute(partial.db)
    }
    await expect(migrateToLatestOrThrow(partial.db)).rejects.toThrow(
      'Migration 0016_count_requests_per_account failed: migration 0016_count_requests_per_account is folded into ' +
        '0028_baseline and cannot run here: this database ran the migrations up to 0015_accounts_scopes_audit_events ' +
        'only. Upgrade it with release 2d40fdd first (it runs 0001..0028), then with this one'
    )
    expect(await names(partial)).toEqual(ran)
  } finally {
    await partial.drop()
  }
})
