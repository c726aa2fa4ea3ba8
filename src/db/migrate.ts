import { setTimeout as sleep } from 'node:timers/promises'
import { Migrator, sql, type Kysely, type Migration, type MigrationResult } from 'kysely'
import { migrationsFor } from '../../migrations/index.js'
import { connectDatabase } from './connect.js'

/**
 * How long a migration's statement waits for a lock before its migration is rolled back and tried
 * again. While DDL waits for a table, every statement of the service on that table queues behind it,
 * and the service answers 503 after DATABASE_TIMEOUT_MS (2 s by default): a wait well short of that
 * keeps the queue short.
 */
const MIGRATION_LOCK_TIMEOUT_MS = 300
/** How many times one migration is tried when it could not take its locks (a lock timeout or a deadlock). */
const MIGRATION_ATTEMPTS = 40

export interface MigrateOptions {
  /** The lock_timeout of each migration's transaction; MIGRATION_LOCK_TIMEOUT_MS unless given. */
  lockTimeoutMs?: number
  /** Tries of one migration before giving up; MIGRATION_ATTEMPTS unless given. */
  attempts?: number
  /** Told of each try that could not take its locks, before the next. */
  onRetry?: (migration: string, attempt: number, reason: string) => void
}

// lock_not_available (lock_timeout) and deadlock_detected: the migration's transaction was rolled back
// whole, its kysely_migration row with it, so it may run again.
const RETRYABLE = new Set(['55P03', '40P01'])
const isRetryable = (error: unknown) =>
  typeof error === 'object' && error !== null && RETRYABLE.has((error as { code?: unknown }).code as string)

/** A migration whose transaction waits at most `lockTimeoutMs` for each lock. */
function withLockTimeout(migration: Migration, lockTimeoutMs: number): Migration {
  return {
    async up(db) {
      await sql`SELECT set_config('lock_timeout', ${`${lockTimeoutMs}ms`}, true)`.execute(db)
      await migration.up(db)
    },
    ...(migration.down ? { down: migration.down } : {})
  }
}

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
async function createMigrator(db: Kysely<any>, lockTimeoutMs = MIGRATION_LOCK_TIMEOUT_MS): Promise<Migrator> {
  const migrations = Object.fromEntries(
    Object.entries(migrationsFor(await executedMigrations(db))).map(([name, migration]) => [
      name,
      withLockTimeout(migration, lockTimeoutMs)
    ])
  )
  return new Migrator({ db, provider: { getMigrations: async () => migrations } })
}

/**
 * Brings the schema up to date, one migration per transaction: each is committed together with its
 * kysely_migration row (Kysely's `migrateUp` runs the next pending migration and writes its row in
 * one transaction), so a crash leaves every migration either applied and recorded or neither, and
 * the locks a migration takes are held until its own commit, not until the last one's. A migration
 * that could not take a lock within `lockTimeoutMs` (or lost a deadlock) was rolled back whole and
 * runs again after a pause, up to `attempts` times. Kysely's Postgres adapter holds an advisory lock
 * for each step, so instances that start together migrate once: each step reads what is pending
 * under the lock, and the others find nothing left to do.
 */
export async function migrateToLatestOrThrow(
  db: Kysely<any>,
  options: MigrateOptions = {}
): Promise<MigrationResult[]> {
  const attempts = options.attempts ?? MIGRATION_ATTEMPTS
  const migrator = await createMigrator(db, options.lockTimeoutMs)
  const applied: MigrationResult[] = []
  for (let attempt = 1; ;) {
    const { error, results = [] } = await migrator.migrateUp()
    if (!error) {
      if (results.length === 0) return applied
      applied.push(...results)
      attempt = 1
      continue
    }
    const failed = results.find((result) => result.status === 'Error')
    const reason = error instanceof Error ? error.message : String(error)
    if (isRetryable(error) && attempt < attempts) {
      options.onRetry?.(failed?.migrationName ?? '', attempt, reason)
      // Up to a second between tries, longer as they fail, so that the statements queued behind the
      // last try drain first.
      await sleep(Math.min(1000, 50 * 2 ** attempt) * (0.5 + Math.random() / 2))
      attempt += 1
      continue
    }
    const tries = isRetryable(error) ? ` (tried ${attempt} times)` : ''
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed${tries}: ${reason}`.replace('  ', ' '))
  }
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
