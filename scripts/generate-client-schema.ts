import { randomBytes } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { OpenAPI3 } from 'openapi-typescript'
import { buildAdminApp } from '../src/admin/app.js'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { connectDatabase } from '../src/db/connect.js'
import { migrateToLatestOrThrow } from '../src/db/migrate.js'
import { openDatabaseLocation } from '../src/db/open.js'
import { clientSchemaModule, type DocumentPath } from './client-schema.js'

// The types of the TypeScript client, from the public API's document, and the console's, from the admin API's.
const TARGETS = [
  { build: buildApp, path: '/v1/openapi.json', file: '../client/src/schema.ts' },
  { build: buildAdminApp, path: '/admin/v1/openapi.json', file: '../console/src/schema.ts' }
] satisfies { build: typeof buildApp; path: DocumentPath; file: string }[]

// The apps need their database to start, so this runs on the same one `npm start` would use; the admin
// app needs a token, which nothing here uses.
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', ADMIN_TOKEN: randomBytes(24).toString('hex') })
const location = await openDatabaseLocation(config)
const database = connectDatabase({ url: location.url, poolMax: 2, timeoutMs: config.DATABASE_TIMEOUT_MS })
try {
  await migrateToLatestOrThrow(database.db)
  for (const { build, path, file } of TARGETS) {
    const app: FastifyInstance = await build({ config, database })
    try {
      const response = await app.inject({ method: 'GET', url: path, headers: bearer(config.ADMIN_TOKEN!) })
      if (response.statusCode !== 200) throw new Error(`GET ${path} answered ${response.statusCode}`)
      const target = resolve(import.meta.dirname, file)
      await writeFile(target, await clientSchemaModule(response.json<OpenAPI3>(), path))
      console.log(`Wrote ${target}`)
    } finally {
      await app.close()
    }
  }
} finally {
  await database.close()
  await location.stop()
}

function bearer(token: string) {
  return { authorization: `Bearer ${token}` }
}
