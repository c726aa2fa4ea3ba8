import { sql, type Kysely } from 'kysely'

/**
 * The rows every counting statement updates leave half of each page free, so that an update finds
 * room beside its row and stays a heap-only update: no new index entry, less WAL. PostgreSQL applies
 * a fill factor to pages written from now on; `VACUUM FULL limit_counters, api_key_usage` in a
 * maintenance window applies it to the pages already written. docs/benchmark.md has the figures.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE limit_counters SET (fillfactor = 50)`.execute(db)
  await sql`ALTER TABLE api_key_usage SET (fillfactor = 50)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE limit_counters RESET (fillfactor)`.execute(db)
  await sql`ALTER TABLE api_key_usage RESET (fillfactor)`.execute(db)
}
