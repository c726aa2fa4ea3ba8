import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { migrations } from '../../migrations/index.js'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import { getAccount } from '../../src/repositories/accounts.js'
import { issueApiKey } from '../../src/repositories/api-keys.js'
import { countUnits, type QuotaRequest } from '../../src/repositories/rate-limits.js'
import { createTestDatabase, createTestDatabaseAt, migrateTo, type TestDatabase } from '../helpers/database.js'
import { holdDatabaseClock } from '../helpers/traffic.js'
import { addPlan } from '../helpers/plans.js'

// The migrations after 0029 run while the release before them counts (docs/deploy.md, "Upgrades while
// the previous release runs"): its count_units, as 0034's down() brings it back, on sessions of its own.
let database: TestDatabase
let key: { id: bigint; accountId: bigint }
beforeAll(async () => {
  database = await createTestDatabase()
  await addPlan(database.db, 'ten-a-minute', [
    ['minute', 10],
    ['day', 100]
  ])
  key = await issueApiKey(database.db, { plan: 'ten-a-minute' })
})
afterAll(async () => {
  await database?.drop()
})

const ask = (): QuotaRequest => ({
  apiKeyId: key.id,
  accountId: key.accountId,
  cost: 1,
  want: 1,
  returned: 0,
  returnedAt: 0,
  banAfter: null,
  banSeconds: 60
})

/** Waits until a session waits for `mode` on limit_counters (as it is named now). */
async function waitsFor(mode: string, relation: number) {
  await vi.waitFor(
    async () => {
      const { rows } = await database.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_locks WHERE relation = $1 AND mode = $2 AND NOT granted',
        [relation, mode]
      )
      if (rows[0]!.n === 0) throw new Error(`no session waits for ${mode}`)
    },
    { timeout: 20_000, interval: 20 }
  )
}

async function session(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  return client
}

it('runs while the previous release counts: no deadlock, no call failing on limit_counters, every count kept', async () => {
  // Every count in one minute.
  await holdDatabaseClock(database)
  await migrateTo(database.db, '0029_operators_by_credential')
  // Counted by the previous release before the upgrade begins.
  expect((await countUnits(database.pool, [ask()]))[0]!.admitted).toBe(true)
  const { rows: table } = await sql<{ oid: number }>`SELECT 'limit_counters'::regclass::oid AS oid`.execute(database.db)
  const limitCounters = table[0]!.oid

  const holder = await session()
  const waiter = await session()
  try {
    // A call of the previous release under way: it holds limit_counters, and reads accounts later on.
    await holder.query('BEGIN')
    await holder.query('LOCK TABLE limit_counters IN ROW EXCLUSIVE MODE')
    const migration = migrateToLatestOrThrow(database.db, { lockTimeoutMs: 60_000 })
    // 0034 waits for it; 0030, which locked accounts and api_keys, has committed by then.
    await waitsFor('AccessExclusiveLock', limitCounters)
    // Another call of the previous release waits behind 0034 with the body of count_units it started
    // with, and goes on with it once 0034 has made limit_counters a view.
    const late = countUnits(waiter, [ask()])
    await waitsFor('RowExclusiveLock', limitCounters)
    const [held] = await countUnits(holder, [ask()])
    await holder.query('COMMIT')
    expect(held!.admitted).toBe(true)

    const results = await migration
    expect(results.map((result) => result.status)).toEqual(
      Object.keys(migrations)
        .filter((name) => name > '0029_operators_by_credential')
        .map(() => 'Success')
    )
    const [counted] = await late
    expect(counted!.admitted).toBe(true)
    expect(counted!.windows.map((window) => window.remaining)).toEqual([7, 97])
  } finally {
    await Promise.all([holder.end(), waiter.end()])
  }

  const { rows } = await sql<{ windows: string[]; used: string[] }>`
    SELECT windows, used::text[] AS used FROM account_counters WHERE account_id = ${key.accountId}
  `.execute(database.db)
  expect(rows).toEqual([{ windows: ['minute', 'day'], used: ['3', '3'] }])
  // The current count_units counts on from there.
  const [next] = await countUnits(database.pool, [ask()])
  expect(next!.windows.map((window) => window.remaining)).toEqual([6, 96])
})

it("keeps the previous release's audit call from 0029's commit on, and its clean-up from 0034's", async () => {
  const scratch = await createTestDatabase()
  try {
    const { id, accountId, prefix } = await issueApiKey(scratch.db, { plan: 'free' })
    await countUnits(scratch.pool, [{ ...ask(), apiKeyId: id, accountId }])
    await migrateTo(scratch.db, '0028_baseline')
    await migrateTo(scratch.db, '0029_operators_by_credential')
    // 2d40fdd's call for a key rotated over /v1/keys, word for word.
    await sql`
      SELECT append_audit_event(${`key:${prefix}`}, ${'key.rotated'}, ${accountId}, ${id}, ${'{}'}::jsonb, ${'req-1'},
        ${null})
    `.execute(scratch.db)
    await migrateTo(scratch.db, '0034_counters_one_row_per_account')
    const windows = async () =>
      (
        await sql<{ n: number }>`SELECT count(*)::int AS n FROM limit_counters WHERE account_id = ${accountId}`.execute(
          scratch.db
        )
      ).rows[0]!.n
    const before = await windows()
    expect(before).toBeGreaterThan(0)
    // 2d40fdd's ten-minute clean-up, on every window it finds.
    const deleted = await sql`DELETE FROM limit_counters k WHERE k.account_id = ${accountId}`.execute(scratch.db)
    expect(Number(deleted.numAffectedRows)).toBe(0)
    expect(await windows()).toBe(before)
  } finally {
    await scratch.drop()
  }
})

it('waits for a lock at most lock_timeout, then rolls the migration back whole and tries it again', async () => {
  const scratch = await createTestDatabase()
  const holder = new pg.Client({ connectionString: scratch.url })
  await holder.connect()
  try {
    await migrateTo(scratch.db, '0033_usage_read_scope')
    // A count of the previous release that takes its time.
    await holder.query('BEGIN')
    await holder.query('LOCK TABLE limit_counters IN ROW EXCLUSIVE MODE')
    const retries: string[] = []
    const migration = migrateToLatestOrThrow(scratch.db, {
      lockTimeoutMs: 100,
      onRetry: (name, attempt) => retries.push(`${name} ${attempt}`)
    })
    await vi.waitFor(() => expect(retries.length).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 20 })
    // Nothing of a try that could not take its lock is left, its kysely_migration row included, and
    // another session's statement on the table waits at most that long.
    const started = performance.now()
    const { rows } = await scratch.pool.query<{ table: string | null; recorded: boolean }>(
      `SELECT to_regclass('account_counters')::text AS table,
        EXISTS (SELECT 1 FROM kysely_migration WHERE name = '0034_counters_one_row_per_account') AS recorded,
        (SELECT count(*) FROM limit_counters) AS counters`
    )
    expect(performance.now() - started).toBeLessThan(1000)
    expect(rows.map(({ table, recorded }) => ({ table, recorded }))).toEqual([{ table: null, recorded: false }])
    await holder.query('COMMIT')

    const results = await migration
    expect(results.map((result) => [result.migrationName, result.status])).toEqual(
      Object.keys(migrations)
        .filter((name) => name > '0033_usage_read_scope')
        .map((name) => [name, 'Success'])
    )
    expect(retries.slice(0, 2)).toEqual(['0034_counters_one_row_per_account 1', '0034_counters_one_row_per_account 2'])
  } finally {
    await holder.end()
    await scratch.drop()
  }
})

it('keeps every function and type the release before calls from 0041 on: later migrations replace bodies, never drop', async () => {
  const scratch = await createTestDatabaseAt('0041_count_units_clock_once_locked')
  try {
    // A statement prepared before a migration holds the oids it planned with; a function dropped and
    // made again under it fails it with "cache lookup failed for function".
    const objects = async () =>
      (
        await sql<{ name: string; oid: number }>`
          SELECT p.oid::regprocedure::text AS name, p.oid::int AS oid FROM pg_proc p
          WHERE p.pronamespace = 'public'::regnamespace
          UNION ALL
          -- A composite type by its attributes too: a function returning it fails once they change.
          SELECT t.oid::regtype::text || ' (' || string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', '
              ORDER BY a.attnum) || ')', t.oid::int
          FROM pg_type t JOIN pg_class c ON c.oid = t.typrelid AND c.relkind = 'c'
          JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
          WHERE t.typnamespace = 'public'::regnamespace
          GROUP BY t.oid
          ORDER BY 1
        `.execute(scratch.db)
      ).rows
    const before = await objects()
    expect(before.map((object) => object.name)).toContain('account_limits(bigint,timestamp with time zone)')
    await migrateToLatestOrThrow(scratch.db)
    const after = new Map((await objects()).map((object) => [object.name, object.oid]))
    expect(before.filter((object) => after.get(object.name) !== object.oid).map((object) => object.name)).toEqual([])
  } finally {
    await scratch.drop()
  }
})

it("starts the months of an account made before 0043 at its creation, writing none of the accounts' rows", async () => {
  const scratch = await createTestDatabaseAt('0042_shadow_limits')
  try {
    const { accountId } = await issueApiKey(scratch.db, { plan: 'free' })
    await sql`UPDATE accounts SET created_at = '2026-01-31T10:00:00Z' WHERE id = ${accountId}`.execute(scratch.db)
    const version = async () =>
      (await sql<{ xmin: string }>`SELECT xmin::text FROM accounts WHERE id = ${accountId}`.execute(scratch.db))
        .rows[0]!.xmin
    const before = await version()
    await migrateToLatestOrThrow(scratch.db)
    expect(await version()).toBe(before)
    expect((await getAccount(scratch.db, accountId))!.cycleAnchor.toISOString()).toBe('2026-01-31T10:00:00.000Z')
    const made = await issueApiKey(scratch.db, { plan: 'free' })
    const { rows } = await sql<{ same: boolean }>`
      SELECT cycle_anchor = created_at AS same FROM accounts WHERE id = ${made.accountId}
    `.execute(scratch.db)
    expect(rows).toEqual([{ same: true }])
  } finally {
    await scratch.drop()
  }
})
