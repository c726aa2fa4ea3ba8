import { userInfo } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { runCli } from '../../harness/processes.js'
import { createTestAdminApp } from '../helpers/app.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
let admin: FastifyInstance
beforeAll(async () => {
  database = await createTestDatabase()
  admin = await createTestAdminApp(database, {
    env: { ADMIN_TOKEN: 'admin-token-of-the-cli-operator-test-0123456789' }
  })
})
afterAll(async () => {
  await admin?.close()
  await database?.drop()
})

describe('operators on the CLI', () => {
  it('makes an operator whose token signs in to the admin API, recorded as cli:<user>', async () => {
    const made = await runCli(['operators', 'create', '--name', 'first-admin', '--role', 'admin', '--json'], {
      DATABASE_URL: database.url
    })
    expect(made.stderr).toBe('')
    const operator = JSON.parse(made.stdout) as { token: string; role: string }
    expect(operator.role).toBe('admin')
    const me = await admin.inject({
      method: 'GET',
      url: '/admin/v1/whoami',
      headers: { authorization: `Bearer ${operator.token}` }
    })
    expect(me.json()).toEqual({ actor: 'operator:first-admin', name: 'first-admin', role: 'admin' })
    const { rows } = await database.pool.query("SELECT actor FROM audit_events WHERE action = 'operator.created'")
    expect(rows).toEqual([{ actor: `cli:${userInfo().username}` }])
  })
})
