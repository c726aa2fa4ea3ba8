import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { countUnits } from '../../src/repositories/rate-limits.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

// Statements of the release before 0029 (2d40fdd), word for word, on this schema: in a rolling
// upgrade it serves on it until its last instance is replaced (docs/deploy.md).
let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.drop()
})

it("appends a key holder's audit event through the call without a credential", async () => {
  const { id, accountId, prefix } = await issueApiKey(database.db, { plan: 'free' })
  const changes = { prefix: { before: prefix, after: prefix } }
  await sql`
    SELECT append_audit_event(${`key:${prefix}`}, ${'key.rotated'}, ${accountId}, ${id},
      ${JSON.stringify(changes)}::jsonb, ${'req-1'}, ${null})
  `.execute(database.db)
  const { rows } = await sql<{ actor: string; action: string }>`
    SELECT actor, action FROM audit_events WHERE key_id = ${id}
  `.execute(database.db)
  expect(rows).toEqual([{ actor: `key:${prefix}`, action: 'key.rotated' }])
})

it('runs its ten-minute clean-up of limit_counters, which deletes nothing: the counters stay in account_counters', async () => {
  const { id, accountId } = await issueApiKey(database.db, { plan: 'free' })
  await countUnits(database.pool, [
    { apiKeyId: id, accountId, cost: 1, want: 1, returned: 0, returnedAt: 0, banAfter: null, banSeconds: 60 }
  ])
  const counters = async () =>
    (await sql<{ rows: string }>`SELECT count(*)::text AS rows FROM limit_counters`.execute(database.db)).rows
  const before = await counters()
  expect(before).not.toEqual([{ rows: '0' }])
  // Every window it finds: the DELETE of 2d40fdd's deleteIdleCounters with a condition that holds for each.
  const deleted = await sql`
    DELETE FROM limit_counters k
    WHERE CASE WHEN k.algorithm = 'fixed' THEN window_end(k."window", k.started_at) > service_now() ELSE true END
  `.execute(database.db)
  expect(Number(deleted.numAffectedRows)).toBe(0)
  expect(await counters()).toEqual(before)
})
