import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { bearerToken } from '../../auth/bearer-token.js'
import { ApiKeyCache, type AuthenticatedKey, type CachedKeyState } from '../../auth/key-cache.js'
import { clientAddress } from '../../client-address.js'
import { ApiError } from '../../errors.js'
import { localAddressStore } from '../../limits/address-store.js'
import { rateLimitHeaders } from '../../limits/headers.js'
import { countingBacklogFull, QuotaCounter } from '../../limits/quota-counter.js'
import { RateLimiter, type Decision } from '../../limits/rate-limiter.js'
import { refusingWindow, secondsUntil, type WindowState } from '../../limits/windows.js'
import type { Scope } from '../../db/schema.js'
import type { Metrics } from '../external/metrics.js'
import {
  findUsableApiKeysAndCount,
  hashApiKeyBase64,
  isWellFormedApiKey,
  type ApiKeyRecord,
  type FirstRequest,
  type KeyLookup
} from '../../repositories/api-keys.js'
import { readDatabaseNow, type QuotaState } from '../../repositories/rate-limits.js'
import { Batches } from '../../db/batches.js'
import type { UnkeyedCeiling } from './shedding.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The rate limiter of this instance, for what it knows without asking the database. */
    limiter: RateLimiter
  }
  interface FastifyRequest {
    /** The authenticated key, with its account's plan and limits. */
    apiKey: ApiKeyRecord | null
  }
  interface FastifyContextConfig {
    /** Served without a key, on the client address's budget (documentation). */
    keyless?: boolean
    /** Needs a valid key, but neither counts against its windows nor is refused by them. */
    uncounted?: boolean
    /** The scope a key needs here; a key without it is refused with 403 after it is counted. */
    scope?: Scope
  }
}

const REALM = 'Bearer realm="animal-store"'

/** The request's bearer key: its secret's digest, and what the key cache knew of it at `now`. */
interface PresentedKey {
  digest: string
  now: number
  cached: CachedKeyState
}
const USAGE_REPORT_INTERVAL_MS = 5_000

/** The limit a refusal waits for, as its message names it: `60 a minute`, `the minute bucket of 10`. */
function refusingLimit(decision: Exclude<Decision, { outcome: 'admitted' }>): string {
  const { windows, retryAt } = decision
  if (windows.length === 0) return ''
  const window = windows.find((candidate) => candidate.resetAt === retryAt) ?? refusingWindow(windows)
  return window.algorithm === 'bucket'
    ? `: the ${window.name} bucket of ${window.limit}`
    : `: ${window.limit} a ${window.name}`
}

function refusal(decision: Exclude<Decision, { outcome: 'admitted' }>, now: number): ApiError {
  const seconds = decision.retryAt === null ? undefined : secondsUntil(decision.retryAt, now)
  const retry = seconds === undefined ? '' : `; retry in ${seconds} s`
  const message = {
    key_banned: `This API key is banned for sending requests while rate limited${retry}`,
    rate_limited: `Rate limit exceeded${refusingLimit(decision)}${retry}`,
    credits_exhausted: `This account's credits are spent${seconds === undefined ? '' : `; they refill in ${seconds} s`}`
  }[decision.outcome]
  return new ApiError(429, decision.outcome, message, seconds === undefined ? {} : { 'retry-after': String(seconds) })
}

/** `POST /v1/pets/{petId}`: a route as the OpenAPI document and a plan's costs name it. */
const routeNames = new Map<string, string>()
function routeName(request: FastifyRequest): string {
  const id = `${request.method} ${request.routeOptions.url ?? ''}`
  let name = routeNames.get(id)
  if (name === undefined) {
    name = id.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    routeNames.set(id, name)
  }
  return name
}

/** The client address as the budget of requests without a valid key knows it; IPv6 grouped by /64. */
const addressKey = (request: FastifyRequest) => normalizeIP(clientAddress(request))

/** RFC 6750, section 3.1: the request needs scopes its key does not carry (the challenge lists them). */
export const insufficientScope = (
  scopes: readonly Scope[],
  message = `This API key lacks the scope ${scopes.join(', ')}`
) =>
  new ApiError(403, 'insufficient_scope', message, {
    'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scopes.join(' ')}"`
  })

const unauthorized = (headers: Record<string, string> = {}) =>
  new ApiError(401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>', headers)

/** The answer to a key found unusable after the guard let it through (revoked while its request ran). */
export const invalidToken = () => unauthorized({ 'www-authenticate': `${REALM}, error="invalid_token"` })

const addressNotAllowed = (address: string) =>
  new ApiError(403, 'address_not_allowed', `This API key may not be used from ${address}`)

/**
 * The budget of requests without a valid key, counted in this instance's memory: @fastify/rate-limit
 * keys it by the client address (X-Forwarded-For only from TRUST_PROXY's peers and only when an IP
 * address; IPv6 grouped by /64) in its local store, least recently seen addresses dropped past the
 * cap. Its own headers are off: the service's carry an absolute reset.
 */
async function addressBudget(app: FastifyInstance, ceiling: UnkeyedCeiling) {
  const { config, metrics } = app
  await app.register(rateLimit, {
    global: false,
    max: config.UNAUTHENTICATED_PER_MINUTE,
    timeWindow: 60_000,
    store: localAddressStore(config.UNAUTHENTICATED_ADDRESSES),
    keyGenerator: addressKey,
    skipOnError: false
  })
  const checkAddress = app.createRateLimit()
  metrics.watchShedding(ceiling)

  return {
    /** Counts the request against its client address's budget; throws the 429 when that is spent. */
    async charge(request: FastifyRequest, reply: FastifyReply) {
      // Past the instance's ceiling a request is shed before its address is counted.
      await ceiling.pass(request.raw)
      const result = await checkAddress(request)
      // `isAllowed` means "on the allow list", which is empty here: every result carries the figures.
      if (result.isAllowed) return
      // The store's windows run on the process's clock, from an address's first request.
      const now = Date.now()
      const resetAt = now + result.ttl
      const minute: WindowState = {
        name: 'minute',
        algorithm: 'fixed',
        limit: result.max,
        remaining: result.remaining,
        resetAt
      }
      const decision: Decision = result.isExceeded
        ? { outcome: 'rate_limited', windows: [minute], credits: null, retryAt: resetAt, newlyBanned: false }
        : { outcome: 'admitted', windows: [minute], credits: null }
      reply.headers(rateLimitHeaders(decision, now)!)
      if (decision.outcome !== 'admitted') {
        metrics.rateLimitRefusals.inc({ reason: decision.outcome })
        throw refusal(decision, now)
      }
    },

    /** Whether the address has spent its budget, without counting this request. */
    async spent(request: FastifyRequest) {
      const result = await checkAddress(request, { increment: false })
      return !result.isAllowed && result.remaining === 0
    }
  }
}

/**
 * The usable key a request carries, if any. A token that cannot be a key or one that just missed
 * costs no lookup, and neither does one the membership filter rules out once the instance's ceiling
 * sheds it or its address is spent;
 * a miss is charged to the address (by the hook), a valid key never is.
 */
function keyAuthentication(
  keys: ApiKeyCache,
  firstRequests: Batches<KeyLookup, Awaited<ReturnType<typeof findUsableApiKeysAndCount>>[number]>,
  ceiling: UnkeyedCeiling,
  clock: () => number,
  addressSpent: (request: FastifyRequest) => Promise<boolean>,
  holdsUnits: (accountId: bigint) => boolean
) {
  /** The request's bearer key as this instance knows it without I/O; undefined when the token cannot be a key. */
  function presentedKey(request: FastifyRequest): PresentedKey | undefined {
    const token = bearerToken(request.headers.authorization)
    if (token === undefined || !isWellFormedApiKey(token)) return undefined
    const digest = hashApiKeyBase64(token)
    const now = clock()
    return { digest, now, cached: keys.cachedState(digest, now) }
  }

  /**
   * The request's usable key, if any; with `count`, a key not cached here without allowed addresses
   * comes with its request counted: what the limiter decided in the same round trip as the lookup.
   */
  return async function authenticate(
    request: FastifyRequest,
    count?: FirstRequest
  ): Promise<{ key: AuthenticatedKey; counted?: QuotaState } | undefined> {
    const presented = presentedKey(request)
    if (!presented) return undefined
    const { digest, now, cached } = presented
    const lookUp = async (counting: FirstRequest | undefined) => {
      if (counting === undefined) {
        const key = await keys.lookUp(digest, now)
        return key && { key }
      }
      return keys.lookUpWith(digest, now, (secretHash, at) => firstRequests.add({ secretHash, now: at, ...counting }))
    }
    switch (cached.state) {
      case 'usable':
        return { key: cached.key }
      case 'missed':
        return undefined
      case 'unlisted':
        // The instance's ceiling first: what it sheds costs no lookup (the hook answers it).
        if (!ceiling.admit(request.raw) || (await addressSpent(request))) return undefined
        return lookUp(count)
      case 'unknown':
        return lookUp(count)
      case 'stale':
        // Known here: when its account holds units here (a lease whose unused units go back with its
        // next count), looked up alone, then counted as usual; else as a key not known.
        return lookUp(holdsUnits(cached.accountId) ? undefined : count)
    }
  }
}

/**
 * Applies the limiter's decision to the reply: sets the rate-limit headers and counts the outcome.
 * Returns the refusal to throw (the 429, or the 403 for a key without the route's scope), or
 * undefined when the request goes on.
 */
function decisionApplier(metrics: Metrics, clock: () => number) {
  return (request: FastifyRequest, reply: FastifyReply, key: ApiKeyRecord, decision: Decision) => {
    const now = clock()
    const headers = rateLimitHeaders(decision, now)
    if (headers) reply.headers(headers)
    if (decision.outcome === 'admitted') {
      metrics.countKeyRequest(key.plan, 'admitted')
      const scope = request.routeOptions.config.scope
      return scope === undefined || key.scopes.includes(scope) ? undefined : insufficientScope([scope])
    }
    metrics.countKeyRequest(key.plan, 'refused')
    metrics.rateLimitRefusals.inc({ reason: decision.outcome })
    if (decision.outcome === 'key_banned' && decision.newlyBanned) metrics.rateLimitBans.inc()
    return refusal(decision, now)
  }
}

/**
 * Authentication and rate limits for every request under /v1, in one onRequest hook: authenticate,
 * charge, set the headers, refuse.
 */
export default fp<{ ceiling: UnkeyedCeiling }>(
  async (app, { ceiling }) => {
    const { config, databaseClock, metrics } = app
    // Keys' expiry, leases and bans are read on the database's clock, as this instance measures it.
    const clock = () => databaseClock.now()
    const counter = new QuotaCounter(
      app.database.counting,
      databaseClock,
      metrics.observeCountingStatement,
      config.COUNTING_QUEUE_MAX
    )
    const limiter = new RateLimiter(app.database.counting, databaseClock, { counter })
    app.decorate('limiter', limiter)
    const keys = new ApiKeyCache({
      pool: app.database.pool,
      listenUrl: app.database.directUrl,
      log: app.log,
      onBan: (apiKeyId, bannedUntil) => limiter.noteBan(apiKeyId, bannedUntil)
    })
    app.decorateRequest('apiKey', null)

    const address = await addressBudget(app, ceiling)
    // First requests of keys not cached here, found and counted together, one statement at a time.
    const firstRequests = new Batches(
      (lookups: KeyLookup[]) => findUsableApiKeysAndCount(app.database.counting, lookups),
      config.COUNTING_QUEUE_MAX,
      countingBacklogFull
    )
    metrics.watchCountingQueue(() => counter.depth + firstRequests.depth)
    const authenticate = keyAuthentication(keys, firstRequests, ceiling, clock, address.spent, (accountId) =>
      limiter.holds(accountId)
    )
    const applyDecision = decisionApplier(metrics, clock)

    // Database round trips: none for a cached key within its lease; a share of one counting statement
    // when the lease runs out; for a key not cached here that the membership filter admits, a share of
    // one statement that finds and counts the first requests due (a key with allowed addresses is
    // found there, and counted after its address is checked);
    // without a valid key, or from an address its key does not allow, none (the address's budget is in memory).
    app.addHook('onRequest', async (request, reply) => {
      const route = request.routeOptions.config
      if (route.keyless === true) return address.charge(request, reply)

      const { BAN_AFTER: banAfter, BAN_SECONDS: banSeconds } = config
      const counted = route.uncounted !== true
      const found = await authenticate(
        request,
        counted ? { route: routeName(request), banAfter, banSeconds } : undefined
      )
      if (!found) {
        await address.charge(request, reply)
        const presented = request.headers.authorization !== undefined
        reply.header('www-authenticate', presented ? `${REALM}, error="invalid_token"` : REALM)
        throw unauthorized()
      }
      const { key } = found
      request.apiKey = key
      // Before anything is counted: from elsewhere the key spends nothing, and its address pays as for no key.
      if (key.allowedFrom && !key.allowedFrom.includes(clientAddress(request))) {
        await address.charge(request, reply)
        throw addressNotAllowed(clientAddress(request))
      }
      if (!counted) return

      const ask = {
        accountId: key.accountId,
        apiKeyId: key.id,
        cost: key.costs[routeName(request)] ?? 1,
        banAfter,
        banSeconds
      }
      const decision =
        found.counted === undefined ? await limiter.consume(ask) : limiter.decideCounted(ask, found.counted)
      const refused = applyDecision(request, reply, key, decision)
      if (refused) throw refused
    })

    // Closing waits for in-flight requests: the shed ones held are answered now.
    app.addHook('preClose', async () => ceiling.hold.release())
    await keys.start()
    // A first reading of the database's clock, before any lease or ban is taken from it.
    const sentAt = databaseClock.localNow()
    databaseClock.observe(await readDatabaseNow(app.db), sentAt, databaseClock.localNow())
    const reportUsage = () =>
      limiter.reportUsage().catch((error: unknown) => app.log.warn({ err: error }, 'usage report failed'))
    const reporting = setInterval(() => {
      void reportUsage()
    }, USAGE_REPORT_INTERVAL_MS)
    reporting.unref()
    app.addHook('onClose', async () => {
      clearInterval(reporting)
      await keys.stop()
      await reportUsage()
    })
  },
  { name: 'guard', dependencies: ['metrics'] }
)
