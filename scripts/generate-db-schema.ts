// Writes db/schema.sql and src/db/tables.generated.ts from a fresh database migrated to the head, on a
// throwaway embedded PostgreSQL.
// Usage: npm run db:schema
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { connectDatabase } from '../src/db/connect.js'
import { startEmbeddedPostgres } from '../src/db/embedded.js'
import { migrateToLatestOrThrow } from '../src/db/migrate.js'
import { SCHEMA_FILE, schemaSql } from './schema-sql.js'
import { schemaTypes, TYPES_FILE } from './schema-types.js'

const root = resolve(import.meta.dirname, '..')
const dataDir = await mkdtemp(join(tmpdir(), 'animal-store-schema-'))
const server = await startEmbeddedPostgres({ dataDir, database: 'animal_store', ephemeral: true })
try {
  const database = connectDatabase({ url: server.url, poolMax: 1 })
  try {
    await migrateToLatestOrThrow(database.db)
    await writeFile(join(root, SCHEMA_FILE), await schemaSql(database.db))
    const typesFile = join(root, TYPES_FILE)
    await writeFile(typesFile, await schemaTypes(database.db, typesFile))
    console.log(`Wrote ${SCHEMA_FILE} and ${TYPES_FILE}`)
  } finally {
    await database.close()
  }
} finally {
  await server.stop()
  await rm(dataDir, { recursive: true, force: true })
}
