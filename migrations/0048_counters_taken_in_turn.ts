import type { Kysely } from 'kysely'
import { createCountUnitsPerAccount } from './0040_count_units_decided_per_account.js'

/**
 * count_units makes or locks each account's counters row in turn, in account order, in one insert,
 * where it locked the rows it found and then made the missing ones: a call that made a row before one
 * it had locked could wait for another call making that row while the other waited for the locked one,
 * and one of the two failed with a deadlock after a second. It answers as before and keeps its
 * arguments, result and oid: the release before calls it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows', 'anchored', 'one row', 'in turn')
}

export async function down(db: Kysely<any>): Promise<void> {
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows', 'anchored', 'one row')
}
