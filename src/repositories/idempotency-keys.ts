import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database } from '../db/schema.js'
import type { NewPet, Pet } from '../schemas/pets.js'
import { PET_IDS_IN_COMMIT_ORDER, toPet, type PetRecord } from './pets.js'

type Db = Kysely<Database> | Transaction<Database>

export interface IdempotentCreateRequest {
  apiKeyId: bigint
  key: string
  requestHash: Buffer
  pet: NewPet
  now: Date
  expiresAt: Date
  /** How long to wait for a request with the same key that is still in flight. */
  waitMs: number
}

export type IdempotentCreateOutcome =
  /** This request created the pet; it and its key are committed. */
  | { kind: 'created'; pet: Pet }
  /** The key was used before: the pet its first request created, and that request's hash. */
  | { kind: 'stored'; pet: Pet; requestHash: Buffer }
  /** A request with the key was still in flight after `waitMs`. */
  | { kind: 'in-flight' }
  /** A request with the key committed while this one waited for it, after this statement's snapshot: ask again. */
  | { kind: 'settled' }

const LOCK_NOT_AVAILABLE = '55P03'

/**
 * Creates the pet and its key in one autocommitted statement, so both commit or neither does, or
 * reads what an earlier request stored under the key. A request with the same key still in flight
 * holds the key's advisory lock until it ends: this one waits for it, up to `waitMs` (lock_timeout
 * for that lock only), and goes ahead if it rolls back (its connection dropped). Only then does it
 * take the lock that draws pets' ids in commit order, so that no create waits for another's key while
 * holding it, and draw the pet's id for the key row to name; a request that finds its key stored
 * draws none.
 */
export async function createPetOnce(db: Db, request: IdempotentCreateRequest): Promise<IdempotentCreateOutcome> {
  const { apiKeyId, key, requestHash, pet, now, expiresAt } = request
  try {
    // Raw SQL: the builder has no OVERRIDING SYSTEM VALUE, and set_config must run exactly around the key's lock.
    const { rows } = await sql<PetRecord & { stored: boolean; requestHash: Buffer | null }>`
      WITH bounded AS (
        SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', ${String(request.waitMs)}, true)
      ), stored AS (
        SELECT i.request_hash, p.id, p.name, p.category_id, p.status
        FROM idempotency_keys i JOIN pets p ON p.id = i.pet_id
        WHERE i.api_key_id = ${apiKeyId} AND i.key = ${key} AND i.expires_at > ${now}
      ), keyed AS (
        SELECT previous FROM bounded
        WHERE NOT EXISTS (SELECT FROM stored)
          AND pg_advisory_xact_lock(hashtextextended(${apiKeyId}::text || ':' || ${key}::text, 0)) IS NOT NULL
      ), unbounded AS (
        -- Once the key is held, the rest of the transaction waits on locks as it would otherwise.
        SELECT FROM keyed WHERE set_config('lock_timeout', previous, true) IS NOT NULL
      ), ordered AS (
        SELECT FROM unbounded WHERE ${PET_IDS_IN_COMMIT_ORDER} IS NOT NULL
      ), claim AS (
        INSERT INTO idempotency_keys AS i (api_key_id, key, request_hash, pet_id, created_at, expires_at)
        SELECT ${apiKeyId}::bigint, ${key}::text, ${requestHash}::bytea, nextval(pg_get_serial_sequence('pets', 'id')),
          ${now}::timestamptz, ${expiresAt}::timestamptz
        FROM ordered
        -- An expired key that the clean-up has not deleted yet is used afresh.
        ON CONFLICT (api_key_id, key) DO UPDATE SET
          request_hash = excluded.request_hash, pet_id = excluded.pet_id,
          created_at = excluded.created_at, expires_at = excluded.expires_at
        WHERE i.expires_at <= excluded.created_at
        RETURNING pet_id
      ), pet AS (
        INSERT INTO pets (id, name, category_id, status) OVERRIDING SYSTEM VALUE
        SELECT pet_id, ${pet.name}::text, ${pet.categoryId}::bigint, ${pet.status ?? null}::text FROM claim
        RETURNING id, name, category_id, status
      )
      SELECT false AS stored, NULL::bytea AS "requestHash", id, name, category_id AS "categoryId", status FROM pet
      UNION ALL
      SELECT true, request_hash, id, name, category_id, status FROM stored
    `.execute(db)
    const row = rows[0]
    if (!row) return { kind: 'settled' }
    const { stored, requestHash: storedHash, ...record } = row
    return stored
      ? { kind: 'stored', pet: toPet(record), requestHash: storedHash! }
      : { kind: 'created', pet: toPet(record) }
  } catch (error) {
    if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) return { kind: 'in-flight' }
    throw error
  }
}

/** Deletes keys past their 24 hours; returns how many. */
export async function deleteExpiredIdempotencyKeys(db: Db, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}
