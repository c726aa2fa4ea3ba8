import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // Counts and bans must survive a database crash and reach a promoted replica, so the table is
  // written to the WAL; each count commits asynchronously instead, sparing it the flush wait.
  await sql`ALTER TABLE rate_limit_counters SET LOGGED`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE rate_limit_counters SET UNLOGGED`.execute(db)
}
