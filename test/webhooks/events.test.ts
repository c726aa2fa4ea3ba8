import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/services/accounts.js'
import { createKey, revokeKey, rotateKey } from '../../src/services/api-keys.js'
import { issueApiKey, revokeApiKey } from '../../src/repositories/api-keys.js'
import { createTestApp, manualClock } from '../helpers/app.js'
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
    const actor = { actor: 'cli:test', requestId: null }
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
    const actor = { actor: 'cli:test', requestId: null }
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
      {
        type: 'key.rotated',
        account_id: issued.accountId,
        data: { ...key(rotated.prefix), previousPrefix: issued.prefix, previousSecretExpiresAt: null }
      },
      { type: 'key.revoked', account_id: issued.accountId, data: key(rotated.prefix) }
    ])
    expect(rotated.prefix).not.toBe(issued.prefix)
  })
})

describe('key.expiring', () => {
  const DAY = 86_400_000
  const NOON = Date.parse('2027-03-01T12:00:00Z')

  it('goes out KEY_EXPIRING_DAYS before a usable key expires, once per key and expiry, whichever instances look', async () => {
    await database.db.deleteFrom('webhook_events').execute()
    const clock = manualClock(NOON, () => database)
    await clock.set(NOON)
    const issue = (name: string, expiresAt: number | undefined) =>
      issueApiKey(database.db, {
        plan: 'free',
        name,
        scopes: ['pets:read'],
        ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt) })
      })
    const soon = await issue('soon', NOON + 3 * DAY)
    const later = await issue('later', NOON + 10 * DAY)
    const revoked = await issue('revoked', NOON + 2 * DAY)
    await revokeApiKey(database.db, revoked.id)
    await issue('expired', NOON - DAY)
    await issue('forever', undefined)
    const env = { KEY_EXPIRING_DAYS: '7' }
    const [a, b] = await Promise.all([createTestApp(database, { env, clock }), createTestApp(database, { env, clock })])
    const expiring = async () =>
      (await outbox()).filter((event) => event.type === 'key.expiring').map((event) => event.data)
    const event = (key: typeof soon, expiresAt: number) => ({
      key: {
        id: String(key.id),
        prefix: key.prefix,
        name: key.name,
        accountId: String(key.accountId),
        scopes: ['pets:read']
      },
      expiresAt: new Date(expiresAt).toISOString()
    })
    try {
      // Two instances at once write the one event due.
      const runs = await Promise.all([a.housekeeping.run(), b.housekeeping.run()])
      expect(runs.map((run) => run.expiringKeys).sort()).toEqual([0, 1])
      expect(await expiring()).toEqual([event(soon, NOON + 3 * DAY)])
      expect((await a.housekeeping.run()).expiringKeys).toBe(0)

      // Three days on, the later key is 7 days from its expiry: its turn.
      await clock.set(NOON + 3 * DAY)
      expect((await b.housekeeping.run()).expiringKeys).toBe(1)
      expect(await expiring()).toEqual([event(soon, NOON + 3 * DAY), event(later, NOON + 10 * DAY)])

      // A key given a new expiry is told again, for that expiry.
      await database.db
        .updateTable('api_keys')
        .set({ expires_at: new Date(NOON + 5 * DAY) })
        .where('id', '=', soon.id)
        .execute()
      expect((await a.housekeeping.run()).expiringKeys).toBe(1)
      expect((await expiring()).at(-1)).toEqual(event(soon, NOON + 5 * DAY))
    } finally {
      await clock.release()
      await Promise.all([a.close(), b.close()])
    }
  })

  it('is a webhook event an endpoint may subscribe to, and KEY_EXPIRING_DAYS is 7 unless set', async () => {
    const { WEBHOOK_EVENT_TYPES } = await import('../../src/services/webhooks.js')
    expect(WEBHOOK_EVENT_TYPES).toContain('key.expiring')
    const { loadConfig } = await import('../../src/config.js')
    expect(loadConfig({}).KEY_EXPIRING_DAYS).toBe(7)
    expect(() => loadConfig({ KEY_EXPIRING_DAYS: '0' })).toThrow(/KEY_EXPIRING_DAYS/)
  })
})

describe('outbox housekeeping', () => {
  it('deletes finished deliveries past WEBHOOKS_RETENTION_DAYS, then the events none needs; pending ones stay', async () => {
    await database.db.deleteFrom('webhook_events').execute()
    const { id: endpointId } = await database.db
      .insertInto('webhook_endpoints')
      .values({ url: 'https://hooks.example.com/', events: ['account.created'], description: null, secret: 'whsec_x' })
      .returning('id')
      .executeTakeFirstOrThrow()
    const actor = { actor: 'cli:test', requestId: null }
    for (const externalId of ['old_delivered', 'old_failed', 'old_pending', 'recent_delivered']) {
      await createAccount(database.db, actor, { externalId, plan: 'free' })
    }
    const events = await database.db.selectFrom('webhook_events').select('id').orderBy('id').execute()
    const [oldDelivered, oldFailed, oldPending, recentDelivered] = events.map((event) => event.id)
    const finish = (eventId: bigint, status: 'delivered' | 'failed', ago: string) =>
      sql`UPDATE webhook_deliveries SET status = ${status}, finished_at = now() - ${ago}::interval WHERE event_id = ${eventId}`.execute(
        database.db
      )
    await finish(oldDelivered!, 'delivered', '8 days')
    await finish(oldFailed!, 'failed', '8 days')
    await finish(recentDelivered!, 'delivered', '6 days')
    await sql`UPDATE webhook_events SET at = at - interval '8 days'`.execute(database.db)
    // An event no endpoint took, old: nothing needs it.
    await database.db
      .updateTable('webhook_endpoints')
      .set({ events: ['key.created'] })
      .where('id', '=', endpointId)
      .execute()
    await createAccount(database.db, actor, { externalId: 'untaken', plan: 'free' })
    await sql`UPDATE webhook_events SET at = at - interval '8 days' WHERE data -> 'account' ->> 'externalId' = 'untaken'`.execute(
      database.db
    )

    const app = await createTestApp(database, { env: { WEBHOOKS_RETENTION_DAYS: '7' } })
    try {
      expect((await app.housekeeping.run()).webhookDeliveries).toBe(2)
    } finally {
      await app.close()
    }
    const left = await database.db.selectFrom('webhook_deliveries').select('event_id').orderBy('event_id').execute()
    expect(left.map((row) => row.event_id)).toEqual([oldPending, recentDelivered])
    const kept = await database.db.selectFrom('webhook_events').select('id').orderBy('id').execute()
    expect(kept.map((row) => row.id)).toEqual([oldPending, recentDelivered])
  })
})
