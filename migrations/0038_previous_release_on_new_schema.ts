import type { Kysely } from 'kysely'

/**
 * Empty. It gave the release before 0029 back what 0029 and 0034 take from it (append_audit_event
 * without a credential, and a DELETE on the limit_counters view that deletes nothing); since each
 * migration commits on its own, and that release serves on the schema between two of them, 0029 and
 * 0034 now do so in the transaction that breaks it. It stays in the list, doing nothing, because a
 * database that ran it is refused by the migrator when it is no longer offered.
 */
export async function up(_db: Kysely<any>): Promise<void> {}

export async function down(_db: Kysely<any>): Promise<void> {}
