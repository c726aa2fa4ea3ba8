import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ERROR_CODES } from '../../src/errors.js'
import { ADMIN_TOKEN, createTestAdminApp, createTestApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { bearer } from '../helpers/traffic.js'

let database: TestDatabase
let app: FastifyInstance
let admin: FastifyInstance
beforeAll(async () => {
  database = await createTestDatabase()
  app = await createTestApp(database)
  admin = await createTestAdminApp(database, { env: { ADMIN_TOKEN } })
})
afterAll(async () => {
  await app?.close()
  await admin?.close()
  await database?.drop()
})

it.each([
  ['public', () => app, '/v1/openapi.json'],
  ['admin', () => admin, '/admin/v1/openapi.json']
])("the %s API's served document enumerates every registered error code", async (_name, served, url) => {
  const response = await served().inject({ method: 'GET', url, headers: bearer(ADMIN_TOKEN) })
  expect(response.statusCode).toBe(200)
  const document = response.json<{ components: { schemas: Record<string, any> } }>()
  expect(document.components.schemas.Error.properties.code.enum).toEqual(ERROR_CODES)
})
