import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { sql } from 'kysely'
import { ErrorBody } from '../../schemas/error.js'

const RETRY_AFTER_SECONDS = '5'

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
  let pending: Promise<boolean> | undefined

  // One probe of the database at a time however many checks arrive; bounded so a hung connection fails it.
  // A standby not yet promoted answers but cannot count a request: not ready either.
  function databaseAnswers(): Promise<boolean> {
    pending ??= new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), app.config.DATABASE_TIMEOUT_MS)
      sql<{ standby: boolean }>`SELECT pg_is_in_recovery() AS standby`
        .execute(app.db)
        .then(
          ({ rows }) => {
            if (rows[0]?.standby) app.log.warn('readiness: the database is a standby, read-only')
            resolve(rows[0]?.standby === false)
          },
          (err: unknown) => {
            app.log.warn({ err }, 'readiness: the database does not answer')
            resolve(false)
          }
        )
        .finally(() => clearTimeout(timer))
    }).finally(() => (pending = undefined))
    return pending
  }

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
    if (!(await databaseAnswers())) return unavailable(reply, 'The service cannot reach its database; retry later')
    return { status: 'ok' as const }
  })
}

export default fp(health, { name: 'health', decorators: { fastify: ['config', 'db'] } })
