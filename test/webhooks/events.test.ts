import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/services/accounts.js'
import { createKey, revokeKey, rotateKey } from '../../src/services/api-keys.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database?.drop()
})

const outbox = () =>
  database.db.selectFrom('webhook_events').select(['type', 'account_id', 'data']).orderBy('id').execute()

describe('webhook events', () => {
  it('account.created is written with the account, in its transaction', async () => {
    const actor = { actor: 'test', requestId: null }
    const account = await createAccount(database.db, actor, { externalId: 'cus_1', name: 'Acme', plan: 'pro' })
    expect(await outbox()).toEqual([
      {
        type: 'account.created',
        account_id: account.id,
        data: { account: { id: String(account.id), name: 'Acme', externalId: 'cus_1', plan: 'pro' } }
      }
    ])
    // A refused account (its externalId taken) leaves no event behind.
    await expect(createAccount(database.db, actor, { externalId: 'cus_1', plan: 'pro' })).rejects.toThrow(/exists/)
    expect(await outbox()).toHaveLength(1)
  })
})

describe('key events', () => {
  it('key.created, key.rotated and key.revoked carry the key, and a key in a new account its account.created', async () => {
    await database.db.deleteFrom('webhook_events').execute()
    const actor = { actor: 'test', requestId: null }
    const issued = await createKey(database.db, actor, { plan: 'free', name: 'Rex', scopes: ['pets:read'] }, Date.now())
    const rotated = await rotateKey(database.db, actor, issued.id)
    await revokeKey(database.db, actor, issued.id)
    await revokeKey(database.db, actor, issued.id) // revoking again changes nothing, and tells nothing
    const key = (prefix: string) => ({
      key: { id: String(issued.id), prefix, name: 'Rex', accountId: String(issued.accountId), scopes: ['pets:read'] }
    })
    const account = { account: { id: String(issued.accountId), name: null, externalId: null, plan: 'free' } }
    expect(await outbox()).toEqual([
      { type: 'account.created', account_id: issued.accountId, data: account },
      { type: 'key.created', account_id: issued.accountId, data: key(issued.prefix) },
      { type: 'key.rotated', account_id: issued.accountId, data: key(rotated.prefix) },
      { type: 'key.revoked', account_id: issued.accountId, data: key(rotated.prefix) }
    ])
    expect(rotated.prefix).not.toBe(issued.prefix)
  })
})
