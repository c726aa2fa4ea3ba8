import { hash, timingSafeEqual } from 'node:crypto'
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
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
}

const REALM = 'Bearer realm="animal-store-admin"'
/** Failed attempts an address may make in a minute; past them, 429 to everything until the minute is over. */
const FAILURES_PER_MINUTE = 10
/** Addresses whose failures are remembered at once, least recently seen dropped first. */
const FAILING_ADDRESSES = 10_000
const RANK: Record<OperatorRole, number> = { viewer: 0, operator: 1, admin: 2 }

const BOOTSTRAP: AdminIdentity = { actor: 'bootstrap', name: 'bootstrap', role: 'admin' }

/** The role a route needs: its own, else by method. */
const requiredRole = (method: string, own: OperatorRole | undefined): OperatorRole =>
  own ?? (method === 'GET' || method === 'HEAD' ? 'viewer' : 'operator')

const throttledAnswer = (seconds: number) => {
  const retry = String(Math.max(1, seconds))
  return new ApiError(429, 'rate_limited', `Too many failed admin attempts; retry in ${retry} s`, {
    'retry-after': retry
  })
}

/**
 * Who may call the admin API, in one onRequest hook on its scope. In order: an address with
 * FAILURES_PER_MINUTE failures in its minute answers 429 to everything, the right token included, so
 * that guessing learns nothing; ADMIN_TOKEN (either of two) is the bootstrap admin, compared as
 * SHA-256 digests in constant time; an operator's token is looked up by its hash on every request,
 * so a revoked one is refused at once on every instance; anything else is a failure, counted against
 * its address and logged once. Then the route's role: a weaker one answers 403 `insufficient_role`.
 */
export async function adminAuthentication(admin: FastifyInstance, adminToken: string): Promise<void> {
  const bootstrapDigests = adminTokens(adminToken).map((token) => hash('sha256', token, 'buffer'))
  admin.decorateRequest('operator', null)
  await admin.register(rateLimit, {
    global: false,
    max: FAILURES_PER_MINUTE,
    timeWindow: 60_000,
    cache: FAILING_ADDRESSES,
    keyGenerator: (request: FastifyRequest) => normalizeIP(clientAddress(request)),
    skipOnError: false
  })
  const failures = admin.createRateLimit()

  async function identify(token: string | undefined): Promise<AdminIdentity | undefined> {
    if (token === undefined) return undefined
    const digest = hash('sha256', token, 'buffer')
    let bootstrap = false
    for (const expected of bootstrapDigests) bootstrap = timingSafeEqual(digest, expected) || bootstrap
    if (bootstrap) return BOOTSTRAP
    if (!isWellFormedOperatorToken(token)) return undefined
    const found = await findOperatorByToken(admin.db, token)
    return found && { actor: `operator:${found.name}`, name: found.name, role: found.role }
  }

  admin.addHook('onRequest', async (request, reply) => {
    const standing = await failures(request, { increment: false })
    if (!standing.isAllowed && standing.remaining === 0) {
      request.log.warn(
        { client: standing.key, throttled: true },
        'admin API refused a request from a throttled address'
      )
      throw throttledAnswer(standing.ttlInSeconds)
    }
    const header = request.headers.authorization
    const identity = await identify(bearerToken(header))
    if (!identity) {
      const result = await failures(request)
      const throttled = !result.isAllowed && result.isExceeded
      request.log.warn(
        { client: result.key, reason: header === undefined ? 'no token' : 'wrong token', throttled },
        'admin API refused a request without a valid token'
      )
      reply.header('www-authenticate', header !== undefined ? `${REALM}, error="invalid_token"` : REALM)
      if (throttled) throw throttledAnswer(result.ttlInSeconds)
      throw new ApiError(
        401,
        'unauthorized',
        'The admin API needs Authorization: Bearer <operator token or ADMIN_TOKEN>'
      )
    }
    request.operator = identity
    const needed = requiredRole(request.method, request.routeOptions.config.adminRole)
    if (RANK[identity.role] < RANK[needed]) {
      throw new ApiError(
        403,
        'insufficient_role',
        `This needs the role ${needed}; ${identity.name} is ${identity.role}`
      )
    }
  })
}
