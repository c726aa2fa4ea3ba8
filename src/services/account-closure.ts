import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'
import { NotFoundError } from '../errors.js'
import {
  closeAccount as closeAccountRow,
  getAccount,
  lockAccount,
  type AccountRecord
} from '../repositories/accounts.js'
import { lockUnrevokedApiKeys } from '../repositories/api-keys.js'
import { appendAuditEvent } from '../repositories/audit-events.js'
import { revokeKeyIn } from './api-keys.js'
import { changedFields, type Actor } from './rules.js'

// Closing an account: above the accounts and the keys services, since each of its keys is revoked as
// the keys service revokes one.

/**
 * Closes the account and revokes each of its keys still unrevoked, with the key's own audit event
 * and `key.revoked`, in one transaction; then the account's `account.closed` names them. Closing it
 * again changes nothing.
 */
export async function closeAccount(db: Kysely<Database>, actor: Actor, id: bigint): Promise<AccountRecord> {
  return db.transaction().execute(async (trx) => {
    const current = await lockAccount(trx, id)
    if (!current) throw new NotFoundError(`No account with id ${id}`)
    if (current.closedAt) return current
    await closeAccountRow(trx, id)
    const revoked = await lockUnrevokedApiKeys(trx, id)
    for (const keyId of revoked) await revokeKeyIn(trx, actor, keyId)
    const closed = (await getAccount(trx, id))!
    await appendAuditEvent(trx, {
      ...actor,
      action: 'account.closed',
      accountId: id,
      keyId: null,
      changes: {
        ...changedFields({ closedAt: current.closedAt }, { closedAt: closed.closedAt }),
        revokedKeys: { before: [], after: revoked.map(String) }
      }
    })
    return closed
  })
}
