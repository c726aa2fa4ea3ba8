import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // Units an instance leased in an earlier minute of the day and never used, handed back to the day.
  await sql`ALTER TABLE rate_limit_counters ADD COLUMN returned integer NOT NULL DEFAULT 0`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE rate_limit_counters DROP COLUMN returned`.execute(db)
}
