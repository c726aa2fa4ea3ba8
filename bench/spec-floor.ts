/**
 * What the specification asks of every response, and nothing the service chose on top: added to
 * the baseline when BASELINE=spec (`BENCH_BASELINE=spec npm run bench`). It answers how far below
 * the bare floor any conforming server must stay on these machines, so that the service's ratio to
 * it is the cost of the service's own choices (validation, security headers, request ids, metrics,
 * logging, limits exact across instances).
 *
 * Per request: the bearer key's SHA-256 found in memory (each key read once, on its first request); the
 * request counted in memory against its key's minute and day (one instance's limits: no database
 * round trip); the five rate-limit headers of docs/decisions.md; on GET /v1/pets/{id}, its three
 * deprecation headers; on a list with more to follow, `Link: rel="next"` with a signed cursor (the
 * cursors of recent positions kept, as the service does).
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type pg from 'pg'
import { bearerToken } from '../src/auth/bearer-token.js'
import { loadConfig } from '../src/config.js'
import { rateLimitHeaders } from '../src/limits/headers.js'
import type { Decision } from '../src/limits/rate-limiter.js'
import {
  refusingWindow,
  sameWindows,
  secondsUntil,
  windowStarts,
  windowStates,
  type Limits,
  type WindowStarts
} from '../src/limits/windows.js'
import { createCursorCodec } from '../src/pagination.js'
import { hashApiKeyBase64 } from '../src/repositories/api-keys.js'
import { nextPageLink, petDeprecationHeaders } from '../src/routes/pets/links.js'
import type { PetStatus } from '../src/schemas/pets.js'

interface Key {
  limits: Limits
  windows: WindowStarts
  minuteUsed: number
  dayUsed: number
}

const REALM = 'Bearer realm="animal-store"'

/**
 * A key's limits by its token, looked up in PostgreSQL on its first request and kept in memory, as
 * a fleet that keeps sending would have them: one round trip per key per process.
 */
export function keyLookup(pool: pg.Pool) {
  const known = new Map<string, Limits | null>()
  return async (token: string | undefined): Promise<Limits | undefined> => {
    if (token === undefined) return undefined
    const hash = hashApiKeyBase64(token)
    let limits = known.get(hash)
    if (limits === undefined) {
      const { rows } = await pool.query<{ per_minute: number; per_day: number | null }>(
        `SELECT coalesce(a.per_minute, p.per_minute) AS per_minute, coalesce(a.per_day, p.per_day) AS per_day
         FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN plans p ON p.name = a.plan
         WHERE k.secret_hash = decode($1, 'base64')`,
        [hash]
      )
      limits = rows[0] ? { perMinute: rows[0].per_minute, perDay: rows[0].per_day } : null
      known.set(hash, limits)
    }
    return limits ?? undefined
  }
}

/**
 * Counts the request in memory and sets the headers the service's limiter would (the same window
 * arithmetic and header formatting, src/limits/); false when refused.
 */
function count(key: Key, reply: FastifyReply, now: number): boolean {
  const starts = windowStarts(now)
  if (starts.dayStart !== key.windows.dayStart) key.dayUsed = 0
  if (!sameWindows(starts, key.windows)) [key.windows, key.minuteUsed] = [starts, 0]
  const used = () => ({ minute: key.minuteUsed, day: key.dayUsed })
  if (windowStates(key.limits, starts, used()).every((window) => window.remaining > 0)) {
    key.minuteUsed++
    key.dayUsed++
    const admitted: Decision = { outcome: 'admitted', windows: windowStates(key.limits, starts, used()) }
    reply.headers(rateLimitHeaders(admitted, now))
    return true
  }
  const windows = windowStates(key.limits, starts, used())
  const refused: Decision = { outcome: 'rate_limited', windows, retryAt: refusingWindow(windows).resetAt }
  reply.headers(rateLimitHeaders(refused, now)).header('retry-after', String(secondsUntil(refused.retryAt, now)))
  return false
}

/**
 * Adds the specification's per-request work to the baseline; returns what its list handler calls.
 * The base URL and the deprecation dates are the service's, from the same environment.
 */
export async function addSpecFloor(app: FastifyInstance, pool: pg.Pool) {
  const config = loadConfig()
  const lookup = keyLookup(pool)
  // Each key's limits are one object from the lookup, so they name its counts.
  const keys = new Map<Limits, Key>()
  const deprecation = petDeprecationHeaders(config)
  app.addHook('onRequest', async (request, reply) => {
    const token = bearerToken(request.headers.authorization)
    const limits = await lookup(token)
    if (!limits) {
      reply.code(401).header('www-authenticate', token === undefined ? REALM : `${REALM}, error="invalid_token"`)
      throw new Error('A valid API key is required')
    }
    let key = keys.get(limits)
    if (!key) keys.set(limits, (key = { limits, windows: { minuteStart: 0, dayStart: 0 }, minuteUsed: 0, dayUsed: 0 }))
    if (!count(key, reply, Date.now())) {
      reply.code(429)
      throw new Error('Rate limit exceeded')
    }
    if (request.routeOptions.url === '/v1/pets/:petId') reply.headers(deprecation)
  })

  const cursors = createCursorCodec(randomBytes(32))
  return {
    /** Sets `Link: rel="next"` for a page that ends at `lastId`, with the service's signed cursor. */
    nextPage(reply: FastifyReply, limit: number, status: PetStatus | undefined, lastId: bigint) {
      const cursor = cursors.encode({ afterId: lastId, status })
      reply.header('link', nextPageLink(config.PUBLIC_BASE_URL, limit, status, cursor))
    }
  }
}
