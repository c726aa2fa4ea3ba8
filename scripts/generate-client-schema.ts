import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { OpenAPI3 } from 'openapi-typescript'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { connectDatabase } from '../src/db/connect.js'
import { migrateToLatestOrThrow } from '../src/db/migrate.js'
import { openDatabaseLocation } from '../src/db/open.js'
import { clientSchemaModule } from './client-schema.js'

const TARGET = resolve(import.meta.dirname, '../client/src/schema.ts')

// The app needs its database to start, so this runs on the same one `npm start` would use.
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' })
const location = await openDatabaseLocation(config)
const database = connectDatabase({ url: location.url, poolMax: 2, timeoutMs: config.DATABASE_TIMEOUT_MS })
try {
  await migrateToLatestOrThrow(database.db)
  const app = await buildApp({ config, database })
  try {
    const response = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
    if (response.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${response.statusCode}`)
    await writeFile(TARGET, await clientSchemaModule(response.json<OpenAPI3>()))
    console.log(`Wrote ${TARGET}`)
  } finally {
    await app.close()
  }
} finally {
  await database.close()
  await location.stop()
}
