import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Kysely } from 'kysely'
import { trustProxySetting, type Config } from './config.js'
import type { DatabaseHandle } from './db/connect.js'
import type { Database } from './db/schema.js'
import { parseJsonBody } from './json.js'
import { loggerOptions, requestLoggerFactory } from './logging.js'
import errors, { sendClientError, sendError, sendNotFound } from './plugins/app/errors.js'
import guard from './plugins/app/guard.js'
import health from './plugins/app/health.js'
import idempotency from './plugins/app/idempotency.js'
import requestId, { REQUEST_ID_HEADER, requestIdGenerator } from './plugins/app/request-id.js'
import metrics from './plugins/external/metrics.js'
import swagger from './plugins/external/swagger.js'
import underPressure from './plugins/external/under-pressure.js'
import docs from './routes/docs/index.js'
import pets from './routes/pets/index.js'
import { components } from './schemas/components.js'
import { serverTimeouts } from './timeouts.js'
import { createValidatorCompiler } from './validation.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    database: DatabaseHandle
    db: Kysely<Database>
    /** Milliseconds since the epoch; injectable so tests can cross dates. */
    clock: () => number
  }
}

export const BODY_LIMIT_BYTES = 16 * 1024

export interface AppOptions {
  config: Config
  database: DatabaseHandle
  clock?: () => number
  logger?: FastifyServerOptions['logger']
}

/** The one way to make the app, for the server and the tests alike. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config),
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: trustProxySetting(config.TRUST_PROXY),
    requestIdHeader: false,
    genReqId: requestIdGenerator(config.TRUST_PROXY),
    ...serverTimeouts(config),
    // During shutdown, requests already on an open connection are served rather than refused.
    return503OnClosing: false,
    // Requests Node cannot parse, and slow or oversized ones, get the Error body too.
    clientErrorHandler: sendClientError,
    // Errors raised before routing (a malformed URL, say) get the same Error body and request id as the rest.
    frameworkErrors: (error, request, reply) => sendError(request, reply.header(REQUEST_ID_HEADER, request.id), error)
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.decorate('config', config)
  app.decorate('database', options.database)
  app.decorate('db', options.database.db)
  app.decorate('clock', options.clock ?? Date.now)

  for (const schema of components) app.addSchema(schema)
  app.setValidatorCompiler(createValidatorCompiler(components))
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string))
    } catch (error) {
      done(error as Error, undefined)
    }
  })

  await app.register(metrics, { pool: options.database.pool })
  await app.register(requestId)
  await app.register(errors)
  await app.register(health)
  await app.register(idempotency)
  await app.register(
    async (v1) => {
      await v1.register(underPressure)
      await v1.register(guard)
      v1.setNotFoundHandler((request, reply) => sendNotFound(request, reply))
      await v1.register(swagger)
      await v1.register(docs)
      await v1.register(pets)
    },
    { prefix: '/v1' }
  )
  return app
}
