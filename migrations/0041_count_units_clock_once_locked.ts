import type { Kysely } from 'kysely'
import { createCountUnitsPerAccount } from './0040_count_units_decided_per_account.js'

/**
 * count_units reads the database's clock once it holds the counters of its accounts, not on entry.
 * A call that read it and then waited for another call's locks could decide in the window before
 * the one the other had counted in, and write that older window back: the newer window's count was
 * lost, and its requests admitted again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await createCountUnitsPerAccount(db, 'once locked')
}

export async function down(db: Kysely<any>): Promise<void> {
  await createCountUnitsPerAccount(db, 'on entry')
}
