/**
 * What the specification asks of every response, and nothing the service chose on top: added to
 * the baseline when BASELINE=spec (`BENCH_BASELINE=spec npm run bench`). It answers how far below
 * the bare floor any conforming server must stay on these machines, so that the service's ratio to
 * it is the cost of the service's own choices (validation, security headers, request ids, metrics,
 * logging, limits exact across instances).
 *
 * Per request: the bearer key's SHA-256 found in memory (every key is read once at start-up); the
 * request counted in memory against its key's minute and day (one instance's limits: no database
 * round trip); the five rate-limit headers of decisions.md; on GET /v1/pets/{id}, its three
 * deprecation headers; on a list with more to follow, `Link: rel="next"` with a signed cursor (the
 * cursors of recent positions kept, as the service does).
 */
import { createHmac, hash, randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type pg from 'pg'

interface Key {
  perMinute: number
  perDay: number | null
  /** The RateLimit-Policy text of its limits. */
  policy: string
  minute: number
  minuteUsed: number
  day: number
  dayUsed: number
}

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i
const REALM = 'Bearer realm="animal-store"'

async function loadKeys(pool: pg.Pool): Promise<Map<string, Key>> {
  const { rows } = await pool.query<{ hash: string; per_minute: number; per_day: number | null }>(`
    SELECT encode(k.secret_hash, 'base64') AS hash,
           coalesce(k.per_minute, p.per_minute) AS per_minute, coalesce(k.per_day, p.per_day) AS per_day
    FROM api_keys k JOIN plans p ON p.name = k.plan`)
  const keys = new Map<string, Key>()
  for (const row of rows) {
    const policy =
      `"minute";q=${row.per_minute};w=60` + (row.per_day === null ? '' : `, "day";q=${row.per_day};w=86400`)
    keys.set(row.hash, {
      perMinute: row.per_minute,
      perDay: row.per_day,
      policy,
      minute: 0,
      minuteUsed: 0,
      day: 0,
      dayUsed: 0
    })
  }
  return keys
}

/** Counts the request and sets the rate-limit headers of its binding window; false when refused. */
function count(key: Key, reply: FastifyReply, now: number): boolean {
  const minute = now - (now % MINUTE_MS)
  const day = now - (now % DAY_MS)
  if (key.minute !== minute) [key.minute, key.minuteUsed] = [minute, 0]
  if (key.day !== day) [key.day, key.dayUsed] = [day, 0]
  const minuteLeft = key.perMinute - key.minuteUsed
  const dayLeft = key.perDay === null ? Infinity : key.perDay - key.dayUsed
  const admitted = minuteLeft > 0 && dayLeft > 0
  if (admitted) {
    key.minuteUsed++
    key.dayUsed++
  }
  const byDay = dayLeft < minuteLeft
  const limit = byDay ? key.perDay! : key.perMinute
  const remaining = Math.max(0, (byDay ? dayLeft : minuteLeft) - (admitted ? 1 : 0))
  const resetAt = byDay ? day + DAY_MS : minute + MINUTE_MS
  const seconds = Math.ceil((resetAt - now) / 1000)
  reply.headers({
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(resetAt / 1000),
    'ratelimit-policy': key.policy,
    ratelimit: `"${byDay ? 'day' : 'minute'}";r=${remaining};t=${seconds}`
  })
  if (!admitted) reply.header('retry-after', String(seconds))
  return admitted
}

/** Adds the specification's per-request work to the baseline; returns what its list handler calls. */
export async function addSpecFloor(app: FastifyInstance, pool: pg.Pool, base: string) {
  const keys = await loadKeys(pool)
  const deprecation = {
    deprecation: '@1795305600',
    sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
    link: `<${base}/pets>; rel="successor-version"`
  }
  app.addHook('onRequest', (request, reply, done) => {
    const token = BEARER.exec(request.headers.authorization ?? '')?.[1]
    const key = token === undefined ? undefined : keys.get(hash('sha256', token, 'base64'))
    if (!key) {
      reply.code(401).header('www-authenticate', token === undefined ? REALM : `${REALM}, error="invalid_token"`)
      return done(new Error('A valid API key is required'))
    }
    if (!count(key, reply, Date.now())) {
      reply.code(429)
      return done(new Error('Rate limit exceeded'))
    }
    if (request.routeOptions.url === '/v1/pets/:petId') reply.headers(deprecation)
    done()
  })

  const secret = randomBytes(32)
  const cursors = new Map<string, string>()
  return {
    /** Sets `Link: rel="next"` for a page that ends at `lastId`. */
    nextPage(reply: FastifyReply, limit: number, status: string | undefined, lastId: bigint) {
      const payload = `${lastId}.${status ?? ''}`
      let cursor = cursors.get(payload)
      if (cursor === undefined) {
        const mac = createHmac('sha256', secret).update(payload).digest().subarray(0, 16)
        cursor = `${Buffer.from(payload).toString('base64url')}.${mac.toString('base64url')}`
        if (cursors.size >= 1_024) cursors.clear()
        cursors.set(payload, cursor)
      }
      const filter = status === undefined ? '' : `&status=${status}`
      reply.header('link', `<${base}/pets?limit=${limit}${filter}&cursor=${cursor}>; rel="next"`)
    }
  }
}
