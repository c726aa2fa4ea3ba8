import type { Kysely } from 'kysely'
import { createCountUnitsPerAccount } from './0040_count_units_decided_per_account.js'

/**
 * count_units takes an account's credits as stored, where it added the units a request hands back
 * from a lease. Leases are given only to accounts without credits, so those units never came out of
 * credits: an account given credits while it held a lease got the lease's unused units as credits
 * too. They still go back to the windows they were counted in. It keeps its arguments, result and
 * oid: the release before calls it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows', 'anchored', 'one row', 'in turn', 'as stored')
}

export async function down(db: Kysely<any>): Promise<void> {
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows', 'anchored', 'one row', 'in turn')
}
