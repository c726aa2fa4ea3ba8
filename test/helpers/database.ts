import { randomBytes } from 'node:crypto'
import { Migrator, sql, type Kysely } from 'kysely'
import pg from 'pg'
import { inject, vi } from 'vitest'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js'
import { migrations } from '../../migrations/index.js'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'
import type { Database } from '../../src/db/schema.js'

export interface TestDatabase extends DatabaseHandle {
  url: string
  name: string
  /** Closes the pool; the database is dropped in the background (or before it returns, with `wait`), or at the end of the run. */
  drop(options?: { wait?: boolean }): Promise<void>
}

/** Runs statements as the test server's superuser, outside any test database. */
export async function admin<T>(statement: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminDatabaseUrl') })
  await client.connect()
  try {
    return await statement(client)
  } finally {
    await client.end()
  }
}

const urlOf = (name: string) => {
  const url = new URL(inject('adminDatabaseUrl'))
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * The run's migrated template (its name from test/global-setup.ts, which drops it after the run),
 * made by the first file that needs it while the others wait on an advisory lock: every migrated test
 * database is a copy of it, which is much faster than migrating each. Copies carry the schema, data
 * and grants; a database's own settings (`ALTER DATABASE ... SET`, the last line of db/schema.sql) are not copied,
 * so `copyDatabaseSettings` sets them on each copy.
 */
async function migratedTemplate(client: pg.Client): Promise<string> {
  const template = inject('templateDatabase')
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [template])
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [template])
    if (!rowCount) {
      // Made under another name and renamed once migrated, so no file ever copies a half-migrated template.
      const building = `${template}_building`
      await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`)
      await client.query(`CREATE DATABASE ${building}`)
      const handle = connectDatabase({ url: urlOf(building), poolMax: 1 })
      try {
        await migrateToLatestOrThrow(handle.db)
      } finally {
        await handle.close()
      }
      await client.query(`ALTER DATABASE ${building} RENAME TO ${template}`)
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [template])
  }
  return template
}

/** Gives `target` the per-database settings (for every role, or one) that `source` has. */
async function copyDatabaseSettings(client: pg.Client, source: string, target: string) {
  const { rows } = await client.query<{ role: string | null; setting: string }>(
    `SELECT r.rolname AS role, unnest(s.setconfig) AS setting
     FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
     LEFT JOIN pg_roles r ON r.oid = s.setrole
     WHERE d.datname = $1`,
    [source]
  )
  for (const { role, setting } of rows) {
    const at = setting.indexOf('=')
    const assignment = `${pg.escapeIdentifier(setting.slice(0, at))} = ${pg.escapeLiteral(setting.slice(at + 1))}`
    const scope = role === null ? `DATABASE ${target}` : `ROLE ${pg.escapeIdentifier(role)} IN DATABASE ${target}`
    await client.query(`ALTER ${scope} SET ${assignment}`)
  }
}

/** A fresh name under this run's prefix, which test/global-setup.ts drops whatever is left of at the end. */
const freshName = () => `${inject('databasePrefix')}${randomBytes(6).toString('hex')}`

async function migratedCopy(): Promise<string> {
  const name = freshName()
  await admin(async (client) => {
    const template = await migratedTemplate(client)
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`)
    await copyDatabaseSettings(client, template, name)
  })
  return name
}

/**
 * The next file's migrated copy, made while this file runs: a copy takes a few hundred milliseconds
 * of the server's work, which no file then waits for. A failure here is the next file's to report.
 */
let nextCopy: Promise<string> | undefined

/** A database of this test file's own on the test server, empty or migrated to the latest schema. */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  let name: string
  if (options.migrate === false) {
    name = freshName()
    await admin((client) => client.query(`CREATE DATABASE ${name}`))
  } else {
    // Taken before the next is started, so that two calls at once never get the same copy.
    const copy = nextCopy ?? migratedCopy()
    nextCopy = migratedCopy()
    nextCopy.catch(() => {})
    name = await copy
  }
  const url = urlOf(name)
  const handle = connectDatabase({ url, poolMax: 10 })
  return {
    ...handle,
    url,
    name,
    // Closes the pool and, unless asked to wait, leaves the drop to the server: DROP DATABASE waits for a
    // checkpoint (a second and more on a busy server), which few files need to wait for. The run drops what is left.
    async drop(options = {}) {
      await handle.close()
      const dropped = admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      if (options.wait) await dropped
      else dropped.catch(() => {})
    }
  }
}

/** Migrates a test database up or down to `migration`: the schema a release ran on. */
export async function migrateTo(db: Kysely<Database>, migration: string): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error } = await migrator.migrateTo(migration)
  if (error) throw error
}

/** A test database migrated to the head and then down to `migration`: the schema an earlier release ran on. */
export async function createTestDatabaseAt(migration: string): Promise<TestDatabase> {
  const database = await createTestDatabase()
  await migrateTo(database.db, migration)
  return database
}

/** How often `run` called each function of the database, on one connection in a transaction rolled back after. */
export async function functionCalls(
  database: TestDatabase,
  run: (client: pg.PoolClient) => Promise<unknown>
): Promise<Record<string, number>> {
  const client = await database.pool.connect()
  try {
    await client.query("BEGIN; SET LOCAL track_functions = 'all'")
    await run(client)
    const { rows } = await client.query<{ name: string; calls: number }>(
      'SELECT funcname AS name, calls::int FROM pg_stat_xact_user_functions ORDER BY funcname'
    )
    return Object.fromEntries(rows.map((row) => [row.name, row.calls]))
  } finally {
    await client.query('ROLLBACK')
    client.release()
  }
}

/** Every row count_units writes (counters, bans, webhook events, usage, credits), each table in a fixed order. */
export async function rowsOfCounting(db: Kysely<Database>): Promise<unknown[][]> {
  const results = await Promise.all([
    sql`SELECT * FROM account_counters ORDER BY account_id`.execute(db),
    sql`SELECT * FROM api_key_bans ORDER BY api_key_id`.execute(db),
    sql`SELECT type, at, account_id, data FROM webhook_events ORDER BY id`.execute(db),
    sql`SELECT * FROM api_key_usage ORDER BY api_key_id, hour`.execute(db),
    sql`SELECT * FROM account_credits ORDER BY account_id`.execute(db)
  ])
  return results.map((result) => result.rows)
}

/**
 * Holds a lock on the pets table while `during` runs, so requests that touch it pile up in flight
 * (to signal or kill a process while it is busy); releases it after.
 */
export async function whilePetsLocked(
  database: TestDatabase,
  mode: 'SHARE' | 'ACCESS EXCLUSIVE',
  during: () => Promise<void>
): Promise<void> {
  const locker = await database.pool.connect()
  try {
    await locker.query('BEGIN')
    await locker.query(`LOCK TABLE pets IN ${mode} MODE`)
    await during()
    await locker.query('COMMIT')
  } finally {
    locker.release()
  }
}

/** Waits until `count` sessions on the database wait for a lock: requests stuck behind one, in flight. */
export async function lockWaiters(database: TestDatabase, count = 1): Promise<void> {
  await vi.waitFor(
    async () => {
      const { rows } = await database.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
      )
      if (rows[0]!.n < count) throw new Error(`${rows[0]!.n} of ${count} sessions wait for a lock`)
    },
    { timeout: 10_000, interval: 20 }
  )
}

/**
 * Records the text of every query sent on any connection to the named database (every pool's
 * connections and every session of its own, such as a LISTEN), until stopped.
 */
export function recordQueries(databaseName: string) {
  const texts: string[] = []
  const original = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (this.database === databaseName) {
      const [query] = args as [string | { text: string }]
      const text = typeof query === 'string' ? query : query.text
      // The test's own moves of the database's clock (manualClock) are not the service's queries.
      // Nor is the setting a counting connection sends once, as it opens (src/db/connect.ts).
      if (!text.startsWith('INSERT INTO service_clock') && !text.startsWith('SET plan_cache_mode')) texts.push(text)
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof original
  return {
    texts,
    stop() {
      pg.Client.prototype.query = original
    }
  }
}
