import fp from 'fastify-plugin'
import { ApiKeyCache, type AuthenticatedKey } from '../../auth/key-cache.js'
import { Batches } from '../../db/batches.js'
import { countingBacklogFull, QuotaCounter } from '../../limits/quota-counter.js'
import { RateLimiter, type Decision } from '../../limits/rate-limiter.js'
import { RouteUsageTally } from '../../limits/route-usage.js'
import { hourStart, secondsUntil } from '../../limits/windows.js'
import {
  apiKeyFormat,
  findUsableApiKeysAndCount,
  hashApiKeyBase64,
  type FirstRequest,
  type KeyLookup
} from '../../repositories/api-keys.js'
import { readDatabaseNow, type QuotaState } from '../../repositories/rate-limits.js'
import { addRouteUsage } from '../../repositories/usage.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The rate limiter of this instance, for what it knows without asking the database. */
    limiter: RateLimiter
    /** This instance's cache of keys; `caughtUp()` resolves once it holds every change committed before. */
    keyCache: Pick<ApiKeyCache, 'caughtUp' | 'generation'>
    /** Keys authenticated and their accounts charged: the one way into this instance's limiter. */
    admission: Admission
  }
}

/** A usable key, and its request when it was counted in the same round trip as its lookup. */
export interface FoundKey {
  key: AuthenticatedKey
  counted?: QuotaState
}

export interface Admission {
  /**
   * The usable key a bearer token is, if any. A token that cannot be a key (its checksum fails) or
   * one that just missed costs no lookup; one the membership filter rules out is looked up only when
   * `mayLookUp` says so. With `count`, a key not cached here comes with its request counted: what the
   * limiter decided in the same round trip as the lookup (a key with allowed addresses is not counted).
   */
  authenticate(
    token: string | undefined,
    options: { count?: FirstRequest; mayLookUp: () => Promise<boolean> }
  ): Promise<FoundKey | undefined>
  /**
   * Charges `cost` units of `route` (the name usage is reported by) to the key's account, or settles
   * what its lookup counted, and counts the outcome.
   */
  charge(key: AuthenticatedKey, route: string, cost: number, counted?: QuotaState): Promise<Decision>
  /** The database's clock as this instance measures it: what keys' expiry, leases and bans are read on. */
  now(): number
  /** Refusals past the first that ban a key, and for how long (BAN_AFTER, BAN_SECONDS). */
  readonly banAfter: number
  readonly banSeconds: number
}

const USAGE_REPORT_INTERVAL_MS = 5_000

/** Whole seconds until a refused request can succeed (at least 1); undefined when waiting cannot help. */
export const retryAfterSeconds = (decision: Exclude<Decision, { outcome: 'admitted' }>, now: number) =>
  decision.retryAt === null ? undefined : secondsUntil(decision.retryAt, now)

/**
 * The limiter of this instance, one for every route that charges a key (the /v1 guard, decisions):
 * the counter, the rate limiter, the key cache told of changes by the database, and the batches of
 * first requests found and counted together.
 */
export default fp(
  async (app) => {
    const { config, databaseClock, metrics } = app
    // Keys' expiry, leases and bans are read on the database's clock, as this instance measures it.
    const clock = () => databaseClock.now()
    const counter = new QuotaCounter(app.database.counting, databaseClock, {
      observe: metrics.observeCountingStatement,
      maxDue: config.COUNTING_QUEUE_MAX
    })
    const limiter = new RateLimiter(app.database.counting, databaseClock, { counter })
    app.decorate('limiter', limiter)
    const keys = new ApiKeyCache({
      pool: app.database.pool,
      listenUrl: app.database.directUrl,
      log: app.log,
      // An announced ban is acted on once the synchronous standby holds it; until then the key's
      // statements read it (and confirm it) as usual.
      onBan: (apiKeyId) => {
        limiter
          .announcedBan(apiKeyId)
          .catch((error: unknown) => app.log.warn({ err: error }, 'could not confirm a ban'))
      }
    })
    app.decorate('keyCache', keys)
    // First requests of keys not cached here, found and counted together, one statement at a time.
    const firstRequests = new Batches(
      (lookups: KeyLookup[]) => findUsableApiKeysAndCount(app.database.counting, lookups),
      config.COUNTING_QUEUE_MAX,
      countingBacklogFull
    )
    metrics.watchCountingQueue(() => counter.depth + firstRequests.depth)

    async function authenticate(
      token: string | undefined,
      { count, mayLookUp }: { count?: FirstRequest; mayLookUp: () => Promise<boolean> }
    ): Promise<FoundKey | undefined> {
      // A made-up or mistyped key of today's format fails its checksum here, before any cache.
      const format = token === undefined ? undefined : apiKeyFormat(token)
      if (token === undefined || format === undefined) return undefined
      const digest = hashApiKeyBase64(token)
      const now = clock()
      const cached = keys.cachedState(digest, now)
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
          // No key of the old format is issued any more: one the filter rules out is none, unless the
          // filter may lack it (an instance of the previous version issued it a moment ago).
          if (format === 'legacy' && !keys.mayLackNewKeys()) return undefined
          if (!(await mayLookUp())) return undefined
          return lookUp(count)
        case 'unknown':
          return lookUp(count)
        case 'stale':
          // Known here: when its account holds units here (a lease whose unused units go back with its
          // next count), looked up alone, then counted as usual; else as a key not known.
          return lookUp(limiter.holds(cached.accountId) ? undefined : count)
      }
    }

    const routeUsage = new RouteUsageTally()
    async function charge(key: AuthenticatedKey, route: string, cost: number, counted?: QuotaState): Promise<Decision> {
      const ask = {
        accountId: key.accountId,
        apiKeyId: key.id,
        cost,
        banAfter: config.BAN_AFTER,
        banSeconds: config.BAN_SECONDS
      }
      const decision = counted === undefined ? await limiter.consume(ask) : await limiter.decideCounted(ask, counted)
      const hour = hourStart(clock())
      if (decision.outcome === 'admitted') {
        routeUsage.count(key.id, hour, route, 'admitted', cost)
        metrics.countKeyRequest(key.plan, 'admitted')
        // A shadow window that an admitted request took below 0 had no room for it.
        if (decision.shadows?.length && cost > 0) {
          for (const shadow of decision.shadows) {
            if (shadow.remaining < 0) metrics.rateLimitWouldRefuse.inc({ window: shadow.name })
          }
        }
      } else {
        routeUsage.count(key.id, hour, route, 'refused', 0)
        metrics.countKeyRequest(key.plan, 'refused')
        metrics.rateLimitRefusals.inc({ reason: decision.outcome })
        if (decision.outcome === 'key_banned' && decision.newlyBanned) metrics.rateLimitBans.inc()
      }
      return decision
    }

    app.decorate('admission', {
      authenticate,
      charge,
      now: clock,
      banAfter: config.BAN_AFTER,
      banSeconds: config.BAN_SECONDS
    } satisfies Admission)

    await keys.start()
    // A first reading of the database's clock, before any lease or ban is taken from it.
    const sentAt = databaseClock.localNow()
    databaseClock.observe(await readDatabaseNow(app.db), sentAt, databaseClock.localNow())
    const reportRouteUsage = async () => {
      const usage = routeUsage.take()
      try {
        await addRouteUsage(app.db, usage)
      } catch (error) {
        routeUsage.restore(usage)
        throw error
      }
    }
    const reportUsage = () =>
      Promise.all([limiter.reportUsage(), reportRouteUsage()]).catch((error: unknown) =>
        app.log.warn({ err: error }, 'usage report or hand-back of leased units failed')
      )
    const reporting = setInterval(() => {
      void reportUsage()
    }, USAGE_REPORT_INTERVAL_MS)
    reporting.unref()
    app.addHook('onClose', async () => {
      clearInterval(reporting)
      await keys.stop()
      // The server is closed: every unit held here goes back, running leases' too, before the last report.
      await limiter
        .handBackAll()
        .catch((error: unknown) => app.log.warn({ err: error }, 'could not hand back the units leased here'))
      await reportUsage()
    })
  },
  { name: 'limiter', dependencies: ['metrics'] }
)
