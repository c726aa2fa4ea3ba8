import { hash, timingSafeEqual } from 'node:crypto'
// Only its address normal form (an IPv6 client's /64, a mapped IPv4 as IPv4): the budget below is counted here.
import { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import { LRUCache } from 'lru-cache'
import { bearerToken } from '../auth/bearer-token.js'
import { clientAddress } from '../client-address.js'
import { adminTokens } from '../config.js'
import type { OperatorRole } from '../db/schema.js'
import { ApiError } from '../errors.js'
import { findOperatorByToken, isWellFormedOperatorToken } from '../repositories/operators.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the admin request's token is: the bootstrap admin (ADMIN_TOKEN) or a named operator. */
    operator: AdminIdentity | null
  }
  interface FastifyContextConfig {
    /** The least role an admin route needs; without it, viewer for GET and HEAD, operator for the rest. */
    adminRole?: OperatorRole
  }
}

export interface AdminIdentity {
  /** As the audit trail records it: `bootstrap` or `operator:<name>`. */
  actor: string
  name: string
  role: OperatorRole
  /** The SHA-256 of the token presented, which the database asks for to append an event in this actor's name. */
  credential: Buffer
}

const REALM = 'Bearer realm="animal-store-admin"'
/** Failed attempts an address may make in a minute; past them, 429 to everything until the minute is over. */
const FAILURES_PER_MINUTE = 10
/** Addresses whose failures are remembered at once, least recently seen dropped first. */
const FAILING_ADDRESSES = 10_000
const WINDOW_MS = 60_000
// A service's token calls POST /v1/decisions on the public API and nothing here.
const RANK: Record<OperatorRole, number> = { service: -1, viewer: 0, operator: 1, admin: 2 }

const BOOTSTRAP = { actor: 'bootstrap', name: 'bootstrap', role: 'admin' } as const

/** The role a route needs: its own, else by method. */
const requiredRole = (method: string, own: OperatorRole | undefined): OperatorRole =>
  own ?? (method === 'GET' || method === 'HEAD' ? 'viewer' : 'operator')

const throttledAnswer = (seconds: number) => {
  const retry = String(Math.max(1, seconds))
  return new ApiError('rate_limited', `Too many failed admin attempts; retry in ${retry} s`, {
    'retry-after': retry
  })
}

/** One address's attempts in its minute: failures counted, and tokens being looked up now. */
interface Attempts {
  failures: number
  checking: number
  resetAt: number
  /** Requests waiting for a lookup to end, to learn whether it failed. */
  waiting: (() => void)[]
}

/**
 * The guess budget of each address, counted in memory, synchronously: a token to look up takes a
 * place (`checking`) before the lookup and gives it back after, counted as a failure when it was
 * wrong. So failures and lookups in flight together never pass FAILURES_PER_MINUTE, however many
 * guesses arrive at once; past it, a request waits for a lookup to end while failures are fewer,
 * and is refused once they are not.
 */
function guessBudget(clock: () => number) {
  const addresses = new LRUCache<string, Attempts>({ max: FAILING_ADDRESSES })
  const attemptsOf = (address: string) => {
    const now = clock()
    let attempts = addresses.get(address)
    if (!attempts || (attempts.resetAt <= now && attempts.checking === 0)) {
      attempts = { failures: 0, checking: 0, resetAt: now + WINDOW_MS, waiting: [] }
      addresses.set(address, attempts)
    }
    return attempts
  }
  const secondsLeft = (attempts: Attempts) => Math.ceil((attempts.resetAt - clock()) / 1000)
  return {
    /** Seconds to wait when the address has no failure left to spend, else undefined. */
    throttled(address: string): number | undefined {
      const attempts = attemptsOf(address)
      return attempts.failures >= FAILURES_PER_MINUTE ? secondsLeft(attempts) : undefined
    },
    /** A place for one lookup, once one is free; undefined when the failures have spent the budget. */
    async reserve(address: string): Promise<{ release(failed: boolean): void } | undefined> {
      for (;;) {
        const attempts = attemptsOf(address)
        if (attempts.failures >= FAILURES_PER_MINUTE) return undefined
        if (attempts.failures + attempts.checking < FAILURES_PER_MINUTE) {
          attempts.checking++
          return {
            release(failed: boolean) {
              attempts.checking--
              if (failed) attempts.failures++
              for (const wake of attempts.waiting.splice(0)) wake()
            }
          }
        }
        await new Promise<void>((resolve) => attempts.waiting.push(resolve))
      }
    },
    /** Counts a failure that needed no lookup; the number after it. */
    fail(address: string): { failures: number; retryAfter: number } {
      const attempts = attemptsOf(address)
      attempts.failures++
      return { failures: attempts.failures, retryAfter: secondsLeft(attempts) }
    },
    retryAfter: (address: string) => secondsLeft(attemptsOf(address))
  }
}

/**
 * Who may call the admin API, in one onRequest hook on its scope. In order: an address with
 * FAILURES_PER_MINUTE failures in its minute answers 429 to everything, the right token included, so
 * that guessing learns nothing; ADMIN_TOKEN (either of two) is the bootstrap admin, compared as
 * SHA-256 digests in constant time; an operator's token is looked up by its hash on every request,
 * so a revoked one is refused at once on every instance, each lookup counted against the address's
 * budget before it is made (guessBudget); anything else is a failure, counted against its address and
 * logged once. Then the route's role: a weaker one answers 403 `insufficient_role`.
 */
export async function adminAuthentication(admin: FastifyInstance, adminToken: string): Promise<void> {
  const bootstrapDigests = adminTokens(adminToken).map((token) => hash('sha256', token, 'buffer'))
  admin.decorateRequest('operator', null)
  const budget = guessBudget(admin.clock)

  const isBootstrap = (token: string) => {
    const digest = hash('sha256', token, 'buffer')
    let bootstrap = false
    for (const expected of bootstrapDigests) bootstrap = timingSafeEqual(digest, expected) || bootstrap
    return bootstrap
  }

  /** The identity a token names, or undefined; a lookup it needs spends a place of the address's budget first. */
  async function identify(
    token: string | undefined,
    address: string
  ): Promise<AdminIdentity | 'throttled' | undefined> {
    if (token === undefined) return undefined
    const credential = hash('sha256', token, 'buffer')
    if (isBootstrap(token)) return { ...BOOTSTRAP, credential }
    if (!isWellFormedOperatorToken(token)) return undefined
    const place = await budget.reserve(address)
    if (!place) return 'throttled'
    let found: Awaited<ReturnType<typeof findOperatorByToken>>
    try {
      found = await findOperatorByToken(admin.db, token)
    } catch (error) {
      place.release(false)
      throw error
    }
    place.release(found === undefined)
    return found && { actor: `operator:${found.name}`, name: found.name, role: found.role, credential }
  }

  admin.addHook('onRequest', async (request, reply) => {
    const address = normalizeIP(clientAddress(request))
    const waitSeconds = budget.throttled(address)
    if (waitSeconds !== undefined) {
      request.log.warn({ client: address, throttled: true }, 'admin API refused a request from a throttled address')
      throw throttledAnswer(waitSeconds)
    }
    const header = request.headers.authorization
    const token = bearerToken(header)
    const identity = await identify(token, address)
    if (identity === 'throttled') {
      request.log.warn({ client: address, throttled: true }, 'admin API refused a request from a throttled address')
      throw throttledAnswer(budget.retryAfter(address))
    }
    if (!identity) {
      // A wrong operator-shaped token was counted when its lookup ended; anything else is counted here.
      const failures =
        token !== undefined && isWellFormedOperatorToken(token) && !isBootstrap(token)
          ? { failures: 0, retryAfter: 0 }
          : budget.fail(address)
      const throttled = failures.failures > FAILURES_PER_MINUTE
      request.log.warn(
        { client: address, reason: header === undefined ? 'no token' : 'wrong token', throttled },
        'admin API refused a request without a valid token'
      )
      reply.header('www-authenticate', header !== undefined ? `${REALM}, error="invalid_token"` : REALM)
      if (throttled) throw throttledAnswer(failures.retryAfter)
      throw new ApiError('unauthorized', 'The admin API needs Authorization: Bearer <operator token or ADMIN_TOKEN>')
    }
    request.operator = identity
    const needed = requiredRole(request.method, request.routeOptions.config.adminRole)
    if (RANK[identity.role] < RANK[needed]) {
      throw new ApiError('insufficient_role', `This needs the role ${needed}; ${identity.name} is ${identity.role}`)
    }
  })
}
