import { createHash } from 'node:crypto'
import fp from 'fastify-plugin'
import { ApiError } from '../../errors.js'
import { createPetOnce, deleteExpiredIdempotencyKeys } from '../../repositories/idempotency-keys.js'
import type { NewPet, Pet } from '../../schemas/pets.js'

export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60_000
// A request that waited for another with its key reads that one's outcome on its next attempt; a third covers a
// key deleted or re-created in between.
const ATTEMPTS = 3

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
function hashNewPet(pet: NewPet): Buffer {
  const canonical = JSON.stringify([pet.name, pet.categoryId.toString(), pet.status ?? null])
  return createHash('sha256').update(canonical).digest()
}

const inUse = () =>
  new ApiError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry later', {
    'retry-after': '1'
  })
const reused = () =>
  new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request body')

/**
 * Idempotent creation: the pet and its key are written in one autocommitted statement, so one
 * transaction, and the key's unique index decides who creates. A duplicate that arrives while the
 * first is in flight waits for it in Postgres, up to IDEMPOTENCY_WAIT_MS, then replays it (or creates,
 * if the first rolled back); still in flight then: 409. A request that fails leaves nothing behind. One
 * whose instance dies has either committed (a retry replays it) or is rolled back when Postgres sees
 * its connection drop (a retry creates the pet); no lease has to lapse.
 */
export default fp(
  async (app) => {
    const { db, clock, config } = app

    // Database round trips: 1 for a first request, a replay, a 422 or a 409; 2 after waiting for the first to commit.
    async function createPet(apiKeyId: bigint, key: string, pet: NewPet) {
      const requestHash = hashNewPet(pet)
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const now = clock()
        const outcome = await createPetOnce(db, {
          apiKeyId,
          key,
          requestHash,
          pet,
          now: new Date(now),
          expiresAt: new Date(now + IDEMPOTENCY_KEY_TTL_MS),
          waitMs: config.IDEMPOTENCY_WAIT_MS
        })
        switch (outcome.kind) {
          case 'created':
            return { pet: outcome.pet, replayed: false }
          case 'stored':
            if (!outcome.requestHash.equals(requestHash)) throw reused()
            return { pet: outcome.pet, replayed: true }
          case 'in-flight':
            throw inUse()
          case 'settled':
            continue
        }
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
