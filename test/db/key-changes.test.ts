import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

// What every instance's key cache is told of a change: the ids it touched, so that it makes stale
// only those keys (src/auth/key-cache.ts).
let database: TestDatabase
let listener: pg.Client
const heard: string[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  listener = new pg.Client({ connectionString: database.url })
  await listener.connect()
  listener.on('notification', (message) => heard.push(message.payload ?? ''))
  await listener.query('LISTEN api_keys_changed')
})
afterAll(async () => {
  await listener?.end()
  await database?.drop()
})

/** What the channel carried for `change`, once its commit has been announced. */
async function announced(change: () => Promise<unknown>): Promise<string[]> {
  await listener.query('SELECT 1')
  heard.length = 0
  await change()
  // A notification is delivered before the answer to a later query on the same session.
  await listener.query('SELECT 1')
  return [...heard]
}

describe('the api key change channel', () => {
  it('names the keys an update or a delete touched, the accounts likewise, and says only that keys were issued', async () => {
    const db = database.db
    let first!: Awaited<ReturnType<typeof issueApiKey>>
    expect(await announced(async () => (first = await issueApiKey(db, { plan: 'free' })))).toEqual(['api_keys+'])
    const second = await issueApiKey(db, { accountId: first.accountId })
    expect(
      await announced(() =>
        db.updateTable('api_keys').set({ name: 'renamed' }).where('id', 'in', [first.id, second.id]).execute()
      )
    ).toEqual([`api_keys:${[first.id, second.id].sort((a, b) => Number(a - b)).join(',')}`])
    expect(
      await announced(() => db.updateTable('api_keys').set({ name: 'none' }).where('id', '=', -1n).execute())
    ).toEqual([])
    expect(
      await announced(() => db.updateTable('accounts').set({ plan: 'pro' }).where('id', '=', first.accountId).execute())
    ).toEqual([`accounts:${first.accountId}`])
    expect(await announced(() => db.deleteFrom('api_keys').where('id', '=', second.id).execute())).toEqual([
      `api_keys:${second.id}`
    ])
    expect(await announced(() => sql`UPDATE plan_costs SET cost = cost`.execute(db))).toEqual(['plan_costs'])
  })

  it('names the table alone when the ids would not fit in a notification', async () => {
    const db = database.db
    const { accountId } = await issueApiKey(db, { plan: 'free' })
    await sql`
      INSERT INTO api_keys (prefix, secret_hash, account_id)
      SELECT 'ask_' || lpad(g::text, 8, '0'), sha256(g::text::bytea), ${accountId} FROM generate_series(1, 2000) g
    `.execute(db)
    expect(
      await announced(() =>
        db.updateTable('api_keys').set({ name: 'many' }).where('account_id', '=', accountId).execute()
      )
    ).toEqual(['api_keys'])
  })
})
