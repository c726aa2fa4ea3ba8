import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js'
import { migrateToLatestOrThrow } from '../../src/db/migrate.js'

export interface TestDatabase extends DatabaseHandle {
  url: string
  name: string
  /** Closes the pool and drops the database. */
  drop(): Promise<void>
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

/** A database of this test file's own on the test server, empty or migrated to the latest schema. */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const name = `test_${randomBytes(6).toString('hex')}`
  await admin((client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(inject('adminDatabaseUrl'))
  url.pathname = `/${name}`
  const handle = connectDatabase({ url: url.toString(), poolMax: 10 })
  if (options.migrate !== false) await migrateToLatestOrThrow(handle.db)
  return {
    ...handle,
    url: url.toString(),
    name,
    async drop() {
      await handle.close()
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
  }
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
      if (!text.startsWith('INSERT INTO service_clock')) texts.push(text)
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
