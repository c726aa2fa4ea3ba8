import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import { SCHEMA_FILE, schemaSql } from '../../scripts/schema-sql.js'
import { schemaTypes, TYPES_FILE } from '../../scripts/schema-types.js'
import { ROOT } from '../../harness/processes.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase({ migrate: false })
  await migrateToLatestOrThrow(database.db)
})
afterAll(async () => {
  await database.drop()
})

it(`${SCHEMA_FILE} is the schema that the migrations make`, async () => {
  const committed = await readFile(resolve(ROOT, SCHEMA_FILE), 'utf8')
  expect(await schemaSql(database.db), `${SCHEMA_FILE} differs from the migrated schema: run npm run db:schema`).toBe(
    committed
  )
})

it(`${TYPES_FILE} is what kysely-codegen reads from the migrated database`, async () => {
  const path = resolve(ROOT, TYPES_FILE)
  const committed = await readFile(path, 'utf8')
  expect(
    await schemaTypes(database.db, path),
    `${TYPES_FILE} differs from the migrated schema: run npm run db:schema`
  ).toBe(committed)
})
