import { Migrator, type Kysely, type MigrationResult } from 'kysely'
import { migrations } from '../../migrations/index.js'

export function createMigrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } })
}

/**
 * Brings the schema up to date. Kysely's Postgres adapter holds an advisory lock for the run,
 * so instances that start together migrate once and the others wait, then find nothing to do.
 */
export async function migrateToLatestOrThrow(db: Kysely<any>): Promise<MigrationResult[]> {
  const { error, results = [] } = await createMigrator(db).migrateToLatest()
  if (error) {
    const failed = results.find((result) => result.status === 'Error')
    const reason = error instanceof Error ? error.message : String(error)
    throw new Error(`Migration ${failed?.migrationName ?? ''} failed: ${reason}`.replace('  ', ' '))
  }
  return results
}
