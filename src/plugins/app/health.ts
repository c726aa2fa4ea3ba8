import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { sql } from 'kysely'
import { Gauge } from 'prom-client'
import { ErrorBody } from '../../schemas/error.js'
import { rejectOtherMethods } from '../../routes/method-not-allowed.js'

const RETRY_AFTER_SECONDS = '5'

type DatabaseState = 'primary' | 'standby' | 'unreachable'

const Healthy = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false })

function unavailable(reply: FastifyReply, message: string) {
  return reply
    .code(503)
    .header('retry-after', RETRY_AFTER_SECONDS)
    .type('application/json; charset=utf-8')
    .send({ code: 'service_unavailable', message, status: 503 } satisfies ErrorBody)
}

/**
 * Liveness and readiness for the load balancer and the orchestrator, outside /v1 so that neither
 * needs a key nor counts against a limit. Readiness turns 503 as soon as shutdown begins.
 */
const health: FastifyPluginAsyncTypebox = async (app) => {
  let shuttingDown = false
  let pending: Promise<DatabaseState> | undefined
  let lastProbe: DatabaseState | undefined

  // One probe of the database at a time however many checks arrive; bounded so a hung connection fails it.
  // A standby not yet promoted answers but cannot count a request: not ready either.
  function probeDatabase(): Promise<DatabaseState> {
    pending ??= new Promise<DatabaseState>((resolve) => {
      const timer = setTimeout(() => resolve('unreachable'), app.config.DATABASE_TIMEOUT_MS)
      sql<{ standby: boolean }>`SELECT pg_is_in_recovery() AS standby`
        .execute(app.db)
        .then(
          ({ rows }) => {
            if (rows[0]?.standby) app.log.warn('readiness: the database is a standby, read-only')
            resolve(rows[0]?.standby === false ? 'primary' : 'standby')
          },
          (err: unknown) => {
            app.log.warn({ err }, 'readiness: the database does not answer')
            resolve('unreachable')
          }
        )
        .finally(() => clearTimeout(timer))
    })
      .then((state) => (lastProbe = state))
      .finally(() => (pending = undefined))
    return pending
  }

  // What the last probe found, readiness checks' or a scrape's. A scrape starts the next probe and waits
  // only for the first, so /metrics answers at once while the database hangs or the pool is full.
  async function lastDatabaseState(): Promise<DatabaseState> {
    const probing = probeDatabase()
    return lastProbe ?? probing
  }

  const ready = new Gauge({
    name: 'animal_store_ready',
    help: '1 when /health/ready answers 200: not shutting down, and the database a primary at the last probe',
    registers: [],
    async collect() {
      this.set(!shuttingDown && (await lastDatabaseState()) === 'primary' ? 1 : 0)
    }
  })
  const databaseUp = new Gauge({
    name: 'animal_store_db_up',
    help: '1 when the database answered the last probe within DATABASE_TIMEOUT_MS, a standby included',
    registers: [],
    async collect() {
      this.set((await lastDatabaseState()) === 'unreachable' ? 0 : 1)
    }
  })
  app.metrics.registry.registerMetric(ready)
  app.metrics.registry.registerMetric(databaseUp)

  app.addHook('preClose', async () => {
    shuttingDown = true
  })
  // Responses still being served during shutdown close their connection, so the balancer does not reuse
  // it and the server can finish; no database round trip.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (shuttingDown) reply.header('connection', 'close')
    done(null, payload)
  })

  const probe = { hide: true, response: { 200: Healthy, 503: ErrorBody } }

  app.get('/health/live', { schema: probe, logLevel: 'warn' }, async () => ({ status: 'ok' as const }))

  // One database round trip, shared by the checks that arrive while it runs.
  app.get('/health/ready', { schema: probe, logLevel: 'warn' }, async (_request, reply) => {
    if (shuttingDown) return unavailable(reply, 'The service is shutting down')
    const database = await probeDatabase()
    if (database !== 'primary') return unavailable(reply, 'The service cannot reach its database; retry later')
    return { status: 'ok' as const }
  })

  for (const path of ['/health/live', '/health/ready']) rejectOtherMethods(app, path, ['GET'])
}

export default fp(health, { name: 'health', dependencies: ['metrics'], decorators: { fastify: ['config', 'db'] } })
