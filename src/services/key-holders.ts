import type { Kysely, Transaction } from 'kysely'
import { rangesWithin } from '../auth/allowed-addresses.js'
import type { Database, Scope } from '../db/schema.js'
import { InvalidInputError } from '../errors.js'
import { getApiKey, type ApiKeyRecord, type IssuedApiKey } from '../repositories/api-keys.js'
import { createKeyIn, listKeys, revokeKeyIn, rotateKeyIn } from './api-keys.js'
import { checkExpiry, checkGraceSeconds, checkScopes, type Actor } from './rules.js'

// What a key with `keys:manage` does with the keys of its own account (GET, POST /v1/keys, rotate,
// revoke): the admin path's changes, audit events and webhook events, within the calling key's rights.
// Nothing here knows of HTTP.

type Db = Kysely<Database>

/** The scope a key needs to manage its account's keys. */
export const MANAGE_SCOPE: Scope = 'keys:manage'

/** The key that calls, as the guard authenticated it, and the request it sends. */
export interface Holder {
  keyId: bigint
  accountId: bigint
  requestId: string | null
  /** The prefix of the secret the request presented: the key's own, or the one a rotation replaced, in its grace. */
  presentedPrefix?: string
}

/** The calling key is no longer usable (revoked, expired or rotated while its request ran): 401. */
export class HolderUnusableError extends Error {}

/**
 * The change would give the caller more than it has: scopes it lacks (`missing`, 403
 * `insufficient_scope`), or a secret that works after the caller's own has expired (403 `forbidden`).
 */
export class BeyondHolderError extends Error {
  constructor(
    message: string,
    readonly missing: Scope[] = []
  ) {
    super(message)
  }
}

/** The keys of the holder's account, ids ascending, a page of `limit` after `afterId`. */
export function listOwnKeys(db: Db, holder: Holder, page: { limit: number; afterId?: bigint }) {
  return listKeys(db, { ...page, accountId: holder.accountId })
}

/**
 * The calling key as it stands in the transaction of the change, not as an instance's cache last
 * saw it: still usable, still with `keys:manage`, and under the prefix of the secret the request
 * presented for the audit trail.
 */
async function callerIn(trx: Transaction<Database>, holder: Holder, now: number) {
  const caller = await getApiKey(trx, holder.keyId)
  const expired = caller?.expiresAt != null && caller.expiresAt.getTime() <= now
  if (!caller || caller.revokedAt || expired) throw new HolderUnusableError('The calling key is no longer usable')
  if (!caller.scopes.includes(MANAGE_SCOPE)) {
    throw new BeyondHolderError(`This API key lacks the scope ${MANAGE_SCOPE}`, [MANAGE_SCOPE])
  }
  // Under the secret that made the request: a replaced one still in its grace keeps its own prefix.
  const inGrace = caller.previousPrefix !== null && holder.presentedPrefix === caller.previousPrefix
  const actor: Actor = { actor: `key:${inGrace ? caller.previousPrefix : caller.prefix}`, requestId: holder.requestId }
  return { caller, actor }
}

/** Refuses scopes the caller lacks: a key cannot give what it does not have. */
function checkWithinScopes(caller: ApiKeyRecord, scopes: readonly Scope[], what: string) {
  const missing = scopes.filter((scope) => !caller.scopes.includes(scope))
  if (missing.length) {
    throw new BeyondHolderError(`This API key lacks the scope ${missing.join(', ')}, so ${what}`, missing)
  }
}

/** The change under the transaction, once the caller is read afresh and found usable. */
function asHolder<T>(
  db: Db,
  holder: Holder,
  now: number,
  change: (trx: Transaction<Database>, caller: ApiKeyRecord, actor: Actor) => Promise<T>
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const { caller, actor } = await callerIn(trx, holder, now)
    return change(trx, caller, actor)
  })
}

/**
 * Issues a key in the holder's account with scopes the holder has and the holder's allowed addresses.
 * It expires no later than the holder does, and with the holder when no expiry is given; a holder that
 * never expires may give any expiry or none.
 */
export function createOwnKey(
  db: Db,
  holder: Holder,
  fields: { name?: string; scopes: string[]; expiresAt?: string },
  now: number
): Promise<IssuedApiKey> {
  return asHolder(db, holder, now, async (trx, caller, actor) => {
    const scopes = checkScopes(fields.scopes)!
    checkWithinScopes(caller, scopes, 'it cannot give it to a key')
    const asked = checkExpiry(fields.expiresAt, now) ?? undefined
    if (asked && caller.expiresAt && asked > caller.expiresAt) {
      throw new InvalidInputError(
        `expiresAt must be no later than ${caller.expiresAt.toISOString()}, when this API key expires`
      )
    }
    const expiresAt = asked ?? caller.expiresAt ?? undefined
    // The maker's fence goes with what it makes: a key cannot give what it does not have.
    const allowedAddresses = caller.allowedAddresses
    return createKeyIn(
      trx,
      actor,
      { accountId: holder.accountId, name: fields.name, scopes, expiresAt, allowedAddresses },
      now
    )
  })
}

/**
 * Gives a key of the holder's account a new secret, the old one working on for `graceSeconds`, as on
 * the admin path. Its secret is the caller's to hold afterwards, so the key must be within the
 * caller's rights: its scopes the caller's, no later expiry, and usable only from addresses the
 * caller is.
 */
export function rotateOwnKey(
  db: Db,
  holder: Holder,
  id: bigint,
  graceSeconds: number,
  now: number
): Promise<IssuedApiKey> {
  checkGraceSeconds(graceSeconds)
  return asHolder(db, holder, now, (trx, caller, actor) =>
    rotateKeyIn(trx, actor, id, graceSeconds, {
      accountId: holder.accountId,
      allow: (key) => {
        checkWithinScopes(caller, key.scopes, `it cannot hold the secret of key ${id}`)
        const outlives = key.expiresAt === null || key.expiresAt > caller.expiresAt!
        if (caller.expiresAt && outlives) {
          throw new BeyondHolderError(
            `Key ${id} works after this API key expires (${caller.expiresAt.toISOString()}), so this key cannot rotate it`
          )
        }
        if (!rangesWithin(key.allowedAddresses, caller.allowedAddresses)) {
          throw new BeyondHolderError(
            `Key ${id} may be used from addresses this API key may not, so this key cannot rotate it`
          )
        }
      }
    })
  )
}

/** Revokes a key of the holder's account, the holder itself included: taking rights away needs none. */
export function revokeOwnKey(db: Db, holder: Holder, id: bigint, now: number) {
  return asHolder(db, holder, now, (trx, _caller, actor) =>
    revokeKeyIn(trx, actor, id, { accountId: holder.accountId })
  )
}
