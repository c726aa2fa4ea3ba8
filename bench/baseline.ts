/**
 * The servers the service is compared with. BASELINE=bare: Fastify and `pg` running the SQL the
 * service's repository generates (src/repositories/pets.ts, as Kysely compiles it), with no
 * authentication, limits, validation or pagination links, and Fastify's own logging at LOG_LEVEL.
 * BASELINE=redis: bare plus each key's plan counted in Redis (REDIS_URL), the peer a user would
 * pick: every window of the plan and the route's cost, as the service counts them.
 * Configured like the service: HOST, PORT, DATABASE_URL, DATABASE_POOL_MAX, LOG_LEVEL.
 *
 * int8 is parsed as BigInt, as the service does, and the response schemas let Fastify's serializer
 * write it as exact JSON integers, so that every server sends the same bytes. Request bodies go
 * through Fastify's JSON parser, exact only up to 2^53; the bench sends small category ids.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { Redis } from 'ioredis'
import pg from 'pg'
import { bearerToken } from '../src/auth/bearer-token.js'
import { hashApiKeyBase64 } from '../src/repositories/api-keys.js'

pg.types.setTypeParser(pg.types.builtins.INT8, BigInt)

const SELECT = 'select "id", "name", "category_id" as "categoryId", "status" from "pets"'
const LIST = `${SELECT} order by "id" limit $1`
const LIST_BY_STATUS = `${SELECT} where "status" = $1 order by "id" limit $2`
const FIND = `${SELECT} where "id" = $1`
const INSERT =
  'insert into "pets" ("name", "category_id", "status") values ($1, $2, $3) ' +
  'returning "id", "name", "category_id" as "categoryId", "status"'

interface PetRow {
  id: bigint
  name: string
  categoryId: bigint
  status?: string | null
}

const pet = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    categoryId: { type: 'integer' },
    status: { type: 'string' }
  }
} as const

const notFound = {
  type: 'object',
  properties: { code: { type: 'string' }, message: { type: 'string' }, status: { type: 'integer' } }
} as const

// As the service does, a pet without a status has no `status` property.
const toPet = (row: PetRow) => (row.status === null ? { ...row, status: undefined } : row)

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_MAX ?? 10),
  idleTimeoutMillis: 30_000,
  keepAlive: true,
  application_name: 'animal-store-baseline'
})
pool.on('error', () => {})

/** A key's plan as the peer keeps it: its limits, shortest window first, and its routes' costs. */
interface KeyPlan {
  token: string
  limits: { window: 'second' | 'minute' | 'hour' | 'day' | 'month'; limit: number }[]
  costs: Record<string, number>
}

/** `POST /v1/pets/{petId}`: a route as a plan's costs name it. */
const routeNames = new Map<string, string>()
function routeName(request: FastifyRequest): string {
  const id = `${request.method} ${request.routeOptions.url ?? ''}`
  let name = routeNames.get(id)
  if (name === undefined) routeNames.set(id, (name = id.replace(/:(\w+)/g, '{$1}')))
  return name
}

const FIXED_MS = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 }

/** The UTC window, a calendar month included, that holds `at`: its start and its end in epoch ms. */
function windowOf(window: KeyPlan['limits'][number]['window'], at: number): [number, number] {
  if (window === 'month') {
    const day = new Date(at)
    return [Date.UTC(day.getUTCFullYear(), day.getUTCMonth()), Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1)]
  }
  const start = at - (at % FIXED_MS[window])
  return [start, start + FIXED_MS[window]]
}

/**
 * @fastify/rate-limit's Redis store (a Lua script: INCR, then expire with the window), widened to
 * what a plan asks: every window's counter checked, then each raised by the route's cost, in one
 * script call, so one round trip a request. @fastify/rate-limit itself counts one window, one unit a
 * request. Answers whether it admitted and what the shortest window has used.
 */
const COUNT_PLAN = `
  local cost = tonumber(ARGV[1])
  for i, key in ipairs(KEYS) do
    if tonumber(redis.call('GET', key) or '0') + cost > tonumber(ARGV[2 * i]) then
      return {0, tonumber(redis.call('GET', KEYS[1]) or '0')}
    end
  end
  local used = 0
  for i, key in ipairs(KEYS) do
    local now = redis.call('INCRBY', key, cost)
    if now == cost then redis.call('PEXPIREAT', key, ARGV[2 * i + 1]) end
    if i == 1 then used = now end
  end
  return {1, used}
`

/**
 * Each key's plan counted in Redis, per key and window, refusing past any limit with 429 and the
 * headers @fastify/rate-limit sets for the shortest window. A key's plan is looked up in PostgreSQL
 * on its first request and kept in memory, as a process that keeps serving would have it.
 */
async function addRedisLimits(app: FastifyInstance) {
  const redis = new Redis(process.env.REDIS_URL!, { enableOfflineQueue: true }) as Redis & {
    countPlan(...args: (string | number)[]): Promise<[number, number]>
  }
  redis.defineCommand('countPlan', { lua: COUNT_PLAN })
  // By the key's SHA-256, as the service finds its keys.
  const known = new Map<string, KeyPlan | null>()
  app.addHook('onRequest', async (request, reply) => {
    const token = bearerToken(request.headers.authorization) ?? ''
    const secretHash = hashApiKeyBase64(token)
    if (!known.has(secretHash)) {
      const { rows } = await pool.query<Omit<KeyPlan, 'token'>>(
        `SELECT (SELECT json_agg(json_build_object('window', l."window", 'limit', l."limit")
             ORDER BY window_seconds(l."window")) FROM account_limits(k.account_id, now()) l) AS limits,
           (SELECT coalesce(json_object_agg(c.route, c.cost), '{}') FROM plan_costs c
             JOIN accounts a ON a.plan = c.plan WHERE a.id = k.account_id) AS costs
         FROM api_keys k WHERE k.secret_hash = decode($1, 'base64')`,
        [secretHash]
      )
      known.set(secretHash, rows[0] ? { token, ...rows[0] } : null)
    }
    const plan = known.get(secretHash)
    if (!plan) {
      return reply.code(401).send({ code: 'unauthorized', message: 'A valid API key is required', status: 401 })
    }
    const now = Date.now()
    const windows = plan.limits.map(({ window }) => windowOf(window, now))
    const cost = plan.costs[routeName(request)] ?? 1
    const [admitted, used] = await redis.countPlan(
      plan.limits.length,
      ...plan.limits.map(({ window }, i) => `rl:${plan.token}:${window}:${windows[i]![0]}`),
      cost,
      ...plan.limits.flatMap(({ limit }, i) => [limit, windows[i]![1]])
    )
    const [shortest] = plan.limits
    reply.headers({
      'x-ratelimit-limit': shortest!.limit,
      'x-ratelimit-remaining': Math.max(0, shortest!.limit - used),
      'x-ratelimit-reset': Math.ceil((windows[0]![1] - now) / 1000)
    })
    if (!admitted) {
      return reply.code(429).send({ code: 'rate_limited', message: 'Rate limit exceeded', status: 429 })
    }
  })
}

// Fastify's own logger at LOG_LEVEL (pino to stdout: a line on arrival, one on completion), none when silent.
const level = process.env.LOG_LEVEL ?? 'silent'
const app = Fastify({ logger: level === 'silent' ? false : { level } })
if (process.env.BASELINE === 'redis') await addRedisLimits(app)

app.get('/v1/pets', { schema: { response: { 200: { type: 'array', items: pet } } } }, async (request) => {
  const query = request.query as { limit?: string; status?: string }
  const limit = Number(query.limit ?? 20)
  // limit + 1, as the service asks for one more row to know whether a next page exists.
  const { rows } =
    query.status === undefined
      ? await pool.query<PetRow>(LIST, [limit + 1])
      : await pool.query<PetRow>(LIST_BY_STATUS, [query.status, limit + 1])
  return rows.slice(0, limit).map(toPet)
})

app.get('/v1/pets/:petId', { schema: { response: { 200: pet, 404: notFound } } }, async (request, reply) => {
  const { petId } = request.params as { petId: string }
  const { rows } = await pool.query<PetRow>(FIND, [petId])
  if (rows.length === 0) return reply.code(404).send({ code: 'not_found', message: 'No such pet', status: 404 })
  return toPet(rows[0]!)
})

app.post('/v1/pets', { schema: { response: { 201: pet } } }, async (request, reply) => {
  const body = request.body as { name: string; categoryId: number; status?: string }
  const { rows } = await pool.query<PetRow>(INSERT, [body.name, body.categoryId, body.status ?? null])
  return reply.code(201).send(toPet(rows[0]!))
})

// Nothing here needs closing, but an exit of its own lets node --cpu-prof write its profile (BENCH_CPU_PROFILE).
process.once('SIGTERM', () => process.exit(0))
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3000) })
