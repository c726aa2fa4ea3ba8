/**
 * The floor the benchmark compares the service against: bare Fastify and `pg`, running the SQL the
 * service's repository generates (src/repositories/pets.ts, as Kysely compiles it), with no
 * authentication, rate limits, validation, pagination links or logging.
 *
 * int8 columns are parsed as BigInt, as the service does, and the response schemas below let
 * Fastify's default serializer (fast-json-stringify) write them as exact JSON integers, so both
 * servers send the same bytes. Request bodies go through Fastify's default JSON parser, which is
 * exact only up to 2^53; the benchmark sends small category ids.
 *
 * Configured like the service: HOST, PORT, DATABASE_URL, DATABASE_POOL_MAX. BASELINE=spec adds what the
 * specification asks of every response (spec-floor.ts); BASELINE=redis is the peer a user would
 * pick instead of the service: `@fastify/rate-limit` counting each key's minute in Redis (REDIS_URL).
 */
import rateLimit from '@fastify/rate-limit'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { Redis } from 'ioredis'
import pg from 'pg'
import { bearerToken } from '../src/auth/bearer-token.js'
import type { Limits } from '../src/limits/windows.js'
import type { PetStatus } from '../src/schemas/pets.js'
import { addSpecFloor, keyLookup } from './spec-floor.js'

const INT8_OID = 20
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (value: string) => BigInt(value)
    return pg.types.getTypeParser(oid, format)
  }
}

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
function toPet(row: PetRow): PetRow {
  if (row.status === null) delete row.status
  return row
}

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_MAX ?? 10),
  idleTimeoutMillis: 30_000,
  keepAlive: true,
  application_name: 'animal-store-baseline',
  types
})
pool.on('error', () => {})

/** Each key's minute counted in Redis by @fastify/rate-limit, the key's limits found as the spec floor finds them. */
async function addRedisLimits(app: FastifyInstance, pool: pg.Pool) {
  const lookup = keyLookup(pool)
  const keys = new WeakMap<FastifyRequest, { token: string; limits: Limits }>()
  // Before the limiter's own hook: an unknown key is refused without a count.
  app.addHook('onRequest', async (request, reply) => {
    const token = bearerToken(request.headers.authorization)
    const limits = await lookup(token)
    if (!limits) {
      return reply.code(401).send({ code: 'unauthorized', message: 'A valid API key is required', status: 401 })
    }
    keys.set(request, { token: token!, limits })
  })
  const redis = new Redis(process.env.REDIS_URL!, { enableOfflineQueue: true })
  app.addHook('onClose', async () => {
    await redis.quit()
  })
  await app.register(rateLimit, {
    redis,
    timeWindow: 60_000,
    keyGenerator: (request) => keys.get(request)!.token,
    max: (request) => keys.get(request)!.limits.perMinute
  })
}

const app = Fastify()
const kind = process.env.BASELINE
const floor = kind === 'spec' ? await addSpecFloor(app, pool) : undefined
if (kind === 'redis') await addRedisLimits(app, pool)

app.get('/v1/pets', { schema: { response: { 200: { type: 'array', items: pet } } } }, async (request, reply) => {
  const query = request.query as { limit?: string; status?: string }
  const limit = Number(query.limit ?? 20)
  // limit + 1, as the service asks for one more row to know whether a next page exists.
  const { rows } =
    query.status === undefined
      ? await pool.query<PetRow>(LIST, [limit + 1])
      : await pool.query<PetRow>(LIST_BY_STATUS, [query.status, limit + 1])
  if (rows.length > limit) {
    rows.pop()
    floor?.nextPage(reply, limit, query.status as PetStatus | undefined, rows[rows.length - 1]!.id)
  }
  return rows.map(toPet)
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

async function close() {
  await app.close()
  await pool.end()
  process.exit(0)
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void close()
  })
}

await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3000) })
