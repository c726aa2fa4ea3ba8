import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import { ApiError } from '../../errors.js'
import {
  claimIdempotencyKey,
  deleteExpiredIdempotencyKeys,
  findIdempotencyKey,
  insertPetUnderClaim,
  releaseIdempotencyClaim
} from '../../repositories/idempotency-keys.js'
import type { NewPet, Pet } from '../../schemas/pets.js'

export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60_000
// A claim lost to a race (cleanup, a takeover) is tried again this many times before answering 409.
const CLAIM_ATTEMPTS = 3

export interface IdempotentCreation {
  /** Creates the pet once per (API key, Idempotency-Key); a repeat with the same body gets the same pet. */
  createPet(apiKeyId: bigint, key: string, pet: NewPet): Promise<{ pet: Pet; replayed: boolean }>
  /** Deletes expired keys now; also run every IDEMPOTENCY_CLEANUP_INTERVAL_MS. */
  deleteExpired(): Promise<number>
}

declare module 'fastify' {
  interface FastifyInstance {
    idempotency: IdempotentCreation
  }
}

/** SHA-256 of the validated body in one canonical form, so key order and spacing do not matter. */
export function hashNewPet(pet: NewPet): Buffer {
  const canonical = JSON.stringify([pet.name, pet.categoryId.toString(), pet.status ?? null])
  return createHash('sha256').update(canonical).digest()
}

const inUse = () =>
  new ApiError(409, 'idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry later', {
    'retry-after': '1'
  })
const reused = () =>
  new ApiError(422, 'idempotency_key_reused', 'This Idempotency-Key was already used with a different request body')

/**
 * Idempotent creation: the key is claimed in one statement, then the pet and the key's outcome are
 * written together in a second, so an acknowledged 201 is always exactly one committed pet. A
 * duplicate that arrives while the first runs finds the claim (409); after it, the outcome (replay).
 * A claim whose create failed is given up at once; one whose instance died lapses after
 * IDEMPOTENCY_CLAIM_MS and a retry takes it over.
 * Database round trips: 2 for a first request (claim, create), +1 when the create fails (release);
 * 2 for a replay, 409 or 422 (claim, read).
 */
export default fp(
  async (app) => {
    const { db, clock, config } = app

    async function createPet(apiKeyId: bigint, key: string, pet: NewPet) {
      const requestHash = hashNewPet(pet)
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const now = clock()
        const claimToken = await claimIdempotencyKey(db, {
          apiKeyId,
          key,
          requestHash,
          now: new Date(now),
          claimedUntil: new Date(now + config.IDEMPOTENCY_CLAIM_MS),
          expiresAt: new Date(now + IDEMPOTENCY_KEY_TTL_MS)
        })
        if (claimToken) {
          const claim = { apiKeyId, key, claimToken }
          const created = await insertPetUnderClaim(db, claim, pet).catch(async (error: unknown) => {
            // Best effort: if the database is gone too, the claim lapses after IDEMPOTENCY_CLAIM_MS instead.
            await releaseIdempotencyClaim(db, claim).catch(() => {})
            throw error
          })
          // Our claim lapsed and a retry took it over: that request creates the pet.
          if (!created) throw inUse()
          return { pet: created, replayed: false }
        }
        const stored = await findIdempotencyKey(db, apiKeyId, key)
        // Deleted or expired since the claim was refused: claim again.
        if (!stored || stored.expiresAt.getTime() <= clock()) continue
        if (!stored.requestHash.equals(requestHash)) throw reused()
        if (stored.pet) return { pet: stored.pet, replayed: true }
        // Still running, unless the claim lapsed just now: then the next attempt takes it over.
        if (stored.claimedUntil.getTime() > clock()) throw inUse()
      }
      throw inUse()
    }

    const deleteExpired = () => deleteExpiredIdempotencyKeys(db, new Date(clock()))
    app.decorate('idempotency', { createPet, deleteExpired } satisfies IdempotentCreation)

    const cleanup = setInterval(() => {
      deleteExpired().catch((error) => app.log.warn({ err: error }, 'idempotency key clean-up failed'))
    }, config.IDEMPOTENCY_CLEANUP_INTERVAL_MS)
    cleanup.unref()
    app.addHook('onClose', async () => clearInterval(cleanup))
  },
  { name: 'idempotency' }
)
