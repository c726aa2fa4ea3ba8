import { randomUUID } from 'node:crypto'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, PetStatus } from '../db/schema.js'
import type { NewPet, Pet } from '../schemas/pets.js'
import { toPet, type PetRecord } from './pets.js'

type Db = Kysely<Database> | Transaction<Database>

export interface ClaimRequest {
  apiKeyId: bigint
  key: string
  requestHash: Buffer
  now: Date
  /** Until when this request holds the key, unless it finishes first. */
  claimedUntil: Date
  expiresAt: Date
}

export interface IdempotencyRecord {
  requestHash: Buffer
  claimedUntil: Date
  expiresAt: Date
  /** The pet the first request created; undefined while that request is still running. */
  pet: Pet | undefined
}

/**
 * Takes the key for one request, in one autocommitted statement: a new key, an expired one, or one
 * whose holder let its claim lapse (a crashed instance) while sending the same body. Returns the
 * claim token, or undefined when another request holds the key or has already used it.
 */
export async function claimIdempotencyKey(db: Db, request: ClaimRequest): Promise<string | undefined> {
  const { rows } = await sql<{ claimToken: string }>`
    INSERT INTO idempotency_keys AS i (api_key_id, key, request_hash, claim_token, claimed_until, created_at, expires_at)
    VALUES (${request.apiKeyId}, ${request.key}, ${request.requestHash}, ${randomUUID()}, ${request.claimedUntil},
      ${request.now}, ${request.expiresAt})
    ON CONFLICT (api_key_id, key) DO UPDATE SET
      request_hash = excluded.request_hash,
      claim_token = excluded.claim_token,
      claimed_until = excluded.claimed_until,
      pet_id = NULL,
      response_status = NULL,
      created_at = excluded.created_at,
      expires_at = excluded.expires_at
    WHERE i.expires_at <= excluded.created_at
      OR (i.pet_id IS NULL AND i.claimed_until <= excluded.created_at AND i.request_hash = excluded.request_hash)
    RETURNING claim_token AS "claimToken"
  `.execute(db)
  return rows[0]?.claimToken
}

/** What is stored under a key, with the pet its first request created. */
export async function findIdempotencyKey(db: Db, apiKeyId: bigint, key: string): Promise<IdempotencyRecord | undefined> {
  const { rows } = await sql<{
    requestHash: Buffer
    claimedUntil: Date
    expiresAt: Date
    id: bigint | null
    name: string
    categoryId: bigint
    status: PetStatus | null
  }>`
    SELECT i.request_hash AS "requestHash", i.claimed_until AS "claimedUntil", i.expires_at AS "expiresAt",
      p.id, p.name, p.category_id AS "categoryId", p.status
    FROM idempotency_keys i LEFT JOIN pets p ON p.id = i.pet_id
    WHERE i.api_key_id = ${apiKeyId} AND i.key = ${key}
  `.execute(db)
  const row = rows[0]
  if (!row) return undefined
  const pet = row.id === null ? undefined : toPet({ id: row.id, name: row.name, categoryId: row.categoryId, status: row.status })
  return { requestHash: row.requestHash, claimedUntil: row.claimedUntil, expiresAt: row.expiresAt, pet }
}

/**
 * Creates the pet and records it as the key's outcome in one statement, so one transaction: both
 * commit or neither does. Nothing is created unless the claim is still this request's (a retry may
 * have taken over a lapsed claim); then the result is undefined.
 */
export async function insertPetUnderClaim(
  db: Db,
  claim: { apiKeyId: bigint; key: string; claimToken: string },
  pet: NewPet
): Promise<Pet | undefined> {
  const { rows } = await sql<PetRecord>`
    WITH claim AS (
      SELECT 1 FROM idempotency_keys
      WHERE api_key_id = ${claim.apiKeyId} AND key = ${claim.key} AND claim_token = ${claim.claimToken}
        AND pet_id IS NULL
      FOR UPDATE
    ), pet AS (
      INSERT INTO pets (name, category_id, status)
      SELECT ${pet.name}::text, ${pet.categoryId}::bigint, ${pet.status ?? null}::text FROM claim
      RETURNING id, name, category_id, status
    ), outcome AS (
      UPDATE idempotency_keys SET pet_id = pet.id, response_status = 201
      FROM pet
      WHERE api_key_id = ${claim.apiKeyId} AND key = ${claim.key}
    )
    SELECT id, name, category_id AS "categoryId", status FROM pet
  `.execute(db)
  return rows[0] && toPet(rows[0])
}

/** Gives up a claim that created nothing, so a retry need not wait for it to lapse. */
export async function releaseIdempotencyClaim(db: Db, claim: { apiKeyId: bigint; key: string; claimToken: string }): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('api_key_id', '=', claim.apiKeyId)
    .where('key', '=', claim.key)
    .where('claim_token', '=', claim.claimToken)
    .where('pet_id', 'is', null)
    .execute()
}

/** Deletes keys past their 24 hours; returns how many. */
export async function deleteExpiredIdempotencyKeys(db: Db, now: Date): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}
