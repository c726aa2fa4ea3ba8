import bearerAuth from '@fastify/bearer-auth'
import rateLimit from '@fastify/rate-limit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiKeyCache } from '../../auth/key-cache.js'
import { ApiError } from '../../errors.js'
import { postgresWindowStore } from '../../limits/address-store.js'
import { RateLimiter, rateLimitHeaders, type Decision, type SubjectLimits, type WindowState } from '../../limits/rate-limiter.js'
import type { ApiKeyRecord } from '../../repositories/api-keys.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key, with its plan's limits. */
    apiKey: ApiKeyRecord | null
  }
  interface FastifyContextConfig {
    /** Served without a key, on the client address's budget (documentation). */
    public?: boolean
  }
}

const REALM = 'Bearer realm="animal-store"'
const CLEANUP_INTERVAL_MS = 10 * 60_000

function refusal(reason: 'rate_limited' | 'key_banned', retryAfterSeconds: number): ApiError {
  const message =
    reason === 'key_banned'
      ? `This API key is banned for sending requests while rate limited; retry in ${retryAfterSeconds} s`
      : `Rate limit exceeded; retry in ${retryAfterSeconds} s`
  return new ApiError(429, reason, message, { 'retry-after': String(retryAfterSeconds) })
}

/**
 * Authentication and rate limits for every request under /v1, in one onRequest hook.
 * Database round trips: 0 when the key is cached and a lease covers the request; +1 for a key not
 * yet cached; +1 when the lease runs out; 1 for a request without a valid key (address budget).
 */
export default fp(
  async (app) => {
    const { config, clock, database } = app
    const keys = new ApiKeyCache(database.pool, database.url, app.log)
    const limiter = new RateLimiter(database, clock)
    app.decorateRequest('apiKey', null)

    await app.register(bearerAuth, {
      keys: [],
      addHook: false,
      specCompliance: 'rfc6749', // the scheme word is case-insensitive
      verifyErrorLogLevel: 'debug',
      // A boolean at once when the key is cached; a promise of one when it has to be looked up.
      auth: (key: string, request: FastifyRequest) => {
        const found = (record: ApiKeyRecord | undefined) => {
          request.apiKey = record ?? null
          return record !== undefined
        }
        const record = keys.authenticate(key, new Date(clock()))
        return record instanceof Promise ? record.then(found) : found(record)
      }
    })

    // Cached records are reused from request to request, and so are their limits.
    const limitsOfKey = new WeakMap<ApiKeyRecord, SubjectLimits>()
    const keyLimits = (key: ApiKeyRecord): SubjectLimits => {
      let limits = limitsOfKey.get(key)
      if (!limits) {
        limits = { perMinute: key.perMinute, perDay: key.perDay, banAfter: config.BAN_AFTER, banSeconds: config.BAN_SECONDS }
        limitsOfKey.set(key, limits)
      }
      return limits
    }

    // The budget of requests without a valid key: @fastify/rate-limit derives the client key from
    // the address (trusting X-Forwarded-For only per TRUST_PROXY, grouping IPv6 by /64), and its
    // store counts in Postgres. Its own headers are off: they carry a relative reset.
    await app.register(rateLimit, {
      global: false,
      max: config.UNAUTHENTICATED_PER_MINUTE,
      timeWindow: 60_000,
      store: postgresWindowStore(limiter, clock, config.BAN_SECONDS),
      skipOnError: false
    })
    const checkAddress = app.createRateLimit()
    async function chargeAddress(request: FastifyRequest, reply: FastifyReply) {
      const result = await checkAddress(request)
      if (result.isAllowed) return
      const now = clock()
      // Windows end on whole seconds, so rounding undoes the store's relative ttl exactly.
      const minute: WindowState = {
        name: 'minute',
        limit: result.max,
        remaining: result.remaining,
        resetAt: Math.round((now + result.ttl) / 1000) * 1000,
        seconds: 60
      }
      reply.headers(rateLimitHeaders([minute], minute, now))
      if (!result.isExceeded) return
      app.metrics.rateLimitRefusals.inc({ reason: 'rate_limited' })
      throw refusal('rate_limited', Math.max(1, Math.ceil((minute.resetAt - now) / 1000)))
    }

    function applyDecision(reply: FastifyReply, decision: Decision): ApiError | undefined {
      reply.headers(decision.headers)
      if (decision.allowed) return undefined
      app.metrics.rateLimitRefusals.inc({ reason: decision.reason })
      if (decision.newlyBanned) app.metrics.rateLimitBans.inc()
      return refusal(decision.reason, decision.retryAfterSeconds)
    }

    function afterAuthentication(request: FastifyRequest, reply: FastifyReply, isPublic: boolean, done: (error?: Error) => void) {
      const key = request.apiKey
      if (key) {
        const decision = limiter.consume(`key:${key.id}`, keyLimits(key))
        if (decision instanceof Promise) decision.then((settled) => done(applyDecision(reply, settled)), done)
        else done(applyDecision(reply, decision))
        return
      }
      chargeAddress(request, reply).then(() => {
        if (isPublic) return done()
        reply.header('www-authenticate', request.headers.authorization ? `${REALM}, error="invalid_token"` : REALM)
        done(new ApiError(401, 'unauthorized', 'A valid API key is required: send Authorization: Bearer <key>'))
      }, done)
    }

    // Callback style, and synchronous while the key is cached and a lease covers the request.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.config.public === true) return afterAuthentication(request, reply, true, done)
      app.verifyBearerAuth!(request, reply, (failure) => {
        // A failure that is not about the key (the database, say) is the error handler's to answer.
        if (failure && !(failure as { code?: string }).code?.startsWith('FST_BEARER_AUTH')) return done(failure)
        afterAuthentication(request, reply, false, done)
      })
    })

    await keys.start()
    const cleanup = setInterval(() => {
      limiter.deleteExpired().catch((error) => app.log.warn({ err: error }, 'rate limit clean-up failed'))
    }, CLEANUP_INTERVAL_MS)
    cleanup.unref()
    app.addHook('onClose', async () => {
      clearInterval(cleanup)
      await keys.stop()
    })
  },
  { name: 'guard', dependencies: ['metrics'] }
)
