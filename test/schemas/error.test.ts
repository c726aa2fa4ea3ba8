import { expect, it } from 'vitest'
import { ERROR_CODES } from '../../src/errors.js'
import { ADMIN_TOKEN, useTestAdminApp } from '../helpers/app.js'
import { bearer } from '../helpers/traffic.js'

const context = useTestAdminApp({ api: {} })

it.each([
  ['public', () => context.api, '/v1/openapi.json'],
  ['admin', () => context.admin, '/admin/v1/openapi.json']
])("the %s API's served document enumerates every registered error code", async (_name, served, url) => {
  const response = await served().inject({ method: 'GET', url, headers: bearer(ADMIN_TOKEN) })
  expect(response.statusCode).toBe(200)
  const document = response.json<{ components: { schemas: Record<string, any> } }>()
  expect(document.components.schemas.Error.properties.code.enum).toEqual(ERROR_CODES)
})
