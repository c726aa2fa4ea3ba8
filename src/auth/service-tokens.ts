import type { Kysely } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { Database } from '../db/schema.js'
import { findOperatorByToken, isWellFormedOperatorToken, type OperatorRecord } from '../repositories/operators.js'

/** Tokens kept at once, least recently used first out. */
const MAX_TOKENS = 1_000
/** How long an operator found is believed: a revocation reaches every instance within it. */
const BELIEVED_MS = 1_000

/**
 * Operator tokens that other services present to the public API (decisions), each looked up at most
 * once a second per instance (overlapping requests share the lookup), so that a service calling for every request of its own costs the
 * database one indexed read a second, and a revoked token is refused within a second. Wrong tokens are
 * not remembered: the caller charges them to the client address's budget, which bounds their lookups.
 */
export class ServiceTokens {
  // fetch() shares one lookup among the requests that ask for a token at once; a miss is not kept.
  readonly #found = new LRUCache<string, OperatorRecord>({
    max: MAX_TOKENS,
    ttl: BELIEVED_MS,
    fetchMethod: (token) => findOperatorByToken(this.db, token)
  })

  constructor(private readonly db: Kysely<Database>) {}

  /** The unrevoked operator whose token this is, if any. */
  async identify(token: string): Promise<OperatorRecord | undefined> {
    if (!isWellFormedOperatorToken(token)) return undefined
    return this.#found.fetch(token)
  }
}
