import type { RateLimiter, SubjectLimits } from './rate-limiter.js'

type IncrCallback = (error: Error | null, result?: { current: number; ttl: number }) => void

/**
 * A store for @fastify/rate-limit that counts in Postgres through the RateLimiter, in clock-aligned
 * UTC minutes shared by every instance, instead of per-process windows that start at a client's
 * first request.
 */
export function postgresWindowStore(limiter: RateLimiter, clock: () => number, banSeconds: number) {
  return class PostgresWindowStore {
    incr(key: string, callback: IncrCallback, _timeWindow: number, max: number) {
      const limits: SubjectLimits = { perMinute: max, perDay: null, banAfter: null, banSeconds }
      limiter.consume(`addr:${key}`, limits).then((decision) => {
        const minute = decision.windows[0]!
        // @fastify/rate-limit refuses when current exceeds max.
        const current = decision.outcome === 'admitted' ? max - minute.remaining : max + 1
        callback(null, { current, ttl: minute.resetAt - clock() })
      }, callback)
    }

    child() {
      return this
    }
  }
}
