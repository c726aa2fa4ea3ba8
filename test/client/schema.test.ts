import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { expect, it } from 'vitest'
import { clientSchemaModule } from '../../scripts/client-schema.js'
import { useTestApp } from '../helpers/app.js'
import { ROOT } from '../../harness/processes.js'

const context = useTestApp()

it('client/src/schema.ts is exactly what the served document generates', async () => {
  const document = (await context.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json()
  const committed = await readFile(resolve(ROOT, 'client/src/schema.ts'), 'utf8')
  const generated = await clientSchemaModule(document)
  expect(generated, 'the client types drifted from the API: run npm run client:generate').toBe(committed)
  expect(committed).toContain('categoryId: bigint;')
  expect(committed).toContain(
    'export const int64Properties: ReadonlySet<string> = new Set(["accountId","categoryId","graceSeconds","id","keyId"])'
  )
})
