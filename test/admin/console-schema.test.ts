import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { expect, it } from 'vitest'
import { ROOT } from '../../harness/processes.js'
import { clientSchemaModule } from '../../scripts/client-schema.js'
import { ADMIN_TOKEN, useTestAdminApp } from '../helpers/app.js'
import { bearer } from '../helpers/traffic.js'

const context = useTestAdminApp()

it("console/src/schema.ts is exactly what the admin API's served document generates", async () => {
  const served = await context.admin.inject({
    method: 'GET',
    url: '/admin/v1/openapi.json',
    headers: bearer(ADMIN_TOKEN)
  })
  expect(served.statusCode).toBe(200)
  const committed = await readFile(resolve(ROOT, 'console/src/schema.ts'), 'utf8')
  const generated = await clientSchemaModule(served.json(), '/admin/v1/openapi.json')
  expect(generated, 'the console types drifted from the admin API: run npm run client:generate').toBe(committed)
  // Ids, nullable ones included, are BigInts in the console: read exactly, never rounded.
  expect(committed).toContain('accountId: bigint | null;')
  expect(committed).toContain(
    'export const int64Properties: ReadonlySet<string> = new Set(["accountId","eventId","graceSeconds","id","keyId","perDay","perMinute"])'
  )
})
