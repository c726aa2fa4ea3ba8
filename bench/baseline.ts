/**
 * The servers the service is compared with. BASELINE=bare: Fastify and `pg` running the SQL the
 * service's repository generates (src/repositories/pets.ts, as Kysely compiles it), with no
 * authentication, limits, validation or pagination links, and Fastify's own logging at LOG_LEVEL.
 * BASELINE=redis: bare plus `@fastify/rate-limit` counting each key's minute in Redis (REDIS_URL),
 * the peer a user would pick.
 * Configured like the service: HOST, PORT, DATABASE_URL, DATABASE_POOL_MAX, LOG_LEVEL.
 *
 * int8 is parsed as BigInt, as the service does, and the response schemas let Fastify's serializer
 * write it as exact JSON integers, so that every server sends the same bytes. Request bodies go
 * through Fastify's JSON parser, exact only up to 2^53; the bench sends small category ids.
 */
import rateLimit from '@fastify/rate-limit'
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

/**
 * Each key's minute counted in Redis by @fastify/rate-limit. A key's limit is looked up in PostgreSQL
 * on its first request and kept in memory, as a process that keeps serving would have it.
 */
async function addRedisLimits(app: FastifyInstance) {
  // By the key's SHA-256, as the service finds its keys.
  const known = new Map<string, number | null>()
  const keys = new WeakMap<FastifyRequest, { token: string; limit: number }>()
  // Before the limiter's own hook: an unknown key is refused without a count.
  app.addHook('onRequest', async (request, reply) => {
    const token = bearerToken(request.headers.authorization) ?? ''
    const secretHash = hashApiKeyBase64(token)
    if (!known.has(secretHash)) {
      const { rows } = await pool.query<{ per_minute: number }>(
        `SELECT l."limit" AS per_minute
         FROM api_keys k JOIN account_limits(k.account_id, now()) l ON l."window" = 'minute'
         WHERE k.secret_hash = decode($1, 'base64')`,
        [secretHash]
      )
      known.set(secretHash, rows[0]?.per_minute ?? null)
    }
    const limit = known.get(secretHash)
    if (!limit) {
      return reply.code(401).send({ code: 'unauthorized', message: 'A valid API key is required', status: 401 })
    }
    keys.set(request, { token, limit })
  })
  await app.register(rateLimit, {
    redis: new Redis(process.env.REDIS_URL!, { enableOfflineQueue: true }),
    timeWindow: 60_000,
    keyGenerator: (request) => keys.get(request)!.token,
    max: (request) => keys.get(request)!.limit
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

// SIGTERM's default action ends the process: nothing here needs closing.
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3000) })
