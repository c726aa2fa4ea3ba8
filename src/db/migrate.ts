import { Migrator, sql, type Kysely, type MigrationResult } from 'kysely'
import { migrationsFor } from '../../migrations/index.js'
import { connectDatabase } from './connect.js'

/** The migrations the database has run, as the Migrator records them; none before its first run. */
async function executedMigrations(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ found: boolean }>`SELECT to_regclass('kysely_migration') IS NOT NULL AS found`.execute(
    db
  )
  if (!rows[0]?.found) return []
  return (await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db)).rows.map((row) => row.name)
}

/**
 * A Migrator offered what this database can run: the baseline and what follows it, or, for a database
 * migrated by a release that still had migrations 0001..0028, those as done (migrations/index.ts).
 * Read before the Migrator's lock: a database never moves from one of the two to the other.
 */
async function createMigrator(db: Kysely<any>): Promise<Migrator> {
  const migrations = migrationsFor(await executedMigrations(db))
  return new Migrator({ db, provider: { getMigrations: async () => migrations } })
}

/**
 * Brings the schema up to date. Kysely's Postgres adapter holds an advisory lock for the run,
 * so instances that start together migrate once and the others wait, then find nothing to do.
 */
export async function migrateToLatestOrThrow(db: Kysely<any>): Promise<MigrationResult[]> {
  const { error, results = [] } = await (await createMigrator(db)).migrateToLatest()
  if (error) {
    const failed = results.find((result) => result.status === 'Error')
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${reason}`.replace('  ', ' '))
  }
  return results
}

/** The migrations of this version that the database has not run; reads the migration table only. */
async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const known = await (await createMigrator(db)).getMigrations()
  return known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name)
}

/**
 * The schema step of the server's and the CLI's start: a current schema needs nothing but SELECT on
 * the migration table, so a role without DDL rights can start. Pending migrations run only when
 * `migrate` (MIGRATE_ON_START) allows; otherwise start-up stops, naming the command that runs them.
 */
export async function prepareSchema(db: Kysely<any>, options: { migrate: boolean }): Promise<MigrationResult[]> {
  const pending = await pendingMigrations(db)
  if (pending.length === 0) return []
  if (options.migrate) return migrateToLatestOrThrow(db)
  throw new Error(
    `The database schema is behind this version: migrations ${pending.join(', ')} have not run. ` +
      'Run them as the schema owner: npm run --silent cli -- migrate (in the image: node dist/src/cli.js migrate). ' +
      'MIGRATE_ON_START=false keeps this process from migrating itself.'
  )
}

/**
 * A connection of its own to `url` for `run`: the direct one (DATABASE_DIRECT_URL), since the migrator
 * holds a session advisory lock, and without a query time limit, since migrating may wait for
 * another instance's migration and rewrite tables.
 */
export async function withSchemaConnection<T>(
  url: string,
  timeoutMs: number,
  run: (db: Kysely<any>) => Promise<T>
): Promise<T> {
  const connection = connectDatabase({ url, poolMax: 1, timeoutMs })
  try {
    return await run(connection.db)
  } finally {
    await connection.close()
  }
}
