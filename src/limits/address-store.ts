import type { Decision, RateLimiter, SubjectLimits } from './rate-limiter.js'

type IncrCallback = (error: Error | null, result?: { current: number; ttl: number }) => void

/**
 * A store for @fastify/rate-limit that counts in Postgres through the RateLimiter, in clock-aligned
 * UTC minutes shared by every instance, instead of per-process windows that start at a client's
 * first request.
 */
export function postgresWindowStore(limiter: RateLimiter, clock: () => number, banSeconds: number) {
  // One limits object per budget, reused from request to request as the limiter expects.
  const limitsFor = new Map<number, SubjectLimits>()
  return class PostgresWindowStore {
    incr(key: string, callback: IncrCallback, _timeWindow: number, max: number) {
      let limits = limitsFor.get(max)
      if (!limits) {
        limits = { perMinute: max, perDay: null, banAfter: null, banSeconds }
        limitsFor.set(max, limits)
      }
      const answer = (decision: Decision) => {
        const minute = decision.windows[0]!
        // @fastify/rate-limit refuses when current exceeds max.
        const current = decision.allowed ? max - minute.remaining : max + 1
        callback(null, { current, ttl: minute.resetAt - clock() })
      }
      const decision = limiter.consume(`addr:${key}`, limits)
      if (decision instanceof Promise) decision.then(answer, callback)
      else answer(decision)
    }

    child() {
      return this
    }
  }
}
