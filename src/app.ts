import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { Logger } from 'pino'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { TSchema } from '@sinclair/typebox'
import type { Kysely } from 'kysely'
import { capConnections } from './connection-cap.js'
import { DatabaseClock } from './db/clock.js'
import { trustedProxies, type Config } from './config.js'
import type { DatabaseHandle } from './db/connect.js'
import type { Database } from './db/schema.js'
import { decodeJsonBody, parseJsonBody } from './json.js'
import { AccessLog, createLogger, requestLoggerFactory } from './logging.js'
import errors, { sendClientError, sendError, sendNotFound } from './plugins/app/errors.js'
import guard from './plugins/app/guard.js'
import limiter from './plugins/app/limiter.js'
import health from './plugins/app/health.js'
import housekeeping from './plugins/app/housekeeping.js'
import idempotency from './plugins/app/idempotency.js'
import requestId, { REQUEST_ID_HEADER, requestIdGenerator } from './plugins/app/request-id.js'
import { isShed, unkeyedCeiling } from './plugins/app/shedding.js'
import securityHeaders from './plugins/external/helmet.js'
import metrics from './plugins/external/metrics.js'
import swagger from './plugins/external/swagger.js'
import underPressure from './plugins/external/under-pressure.js'
import authorize from './routes/authorize/index.js'
import decisions from './routes/decisions/index.js'
import docs from './routes/docs/index.js'
import keys from './routes/keys/index.js'
import usage from './routes/usage/index.js'
import pets from './routes/pets/index.js'
import rateLimit from './routes/rate-limit/index.js'
import { routeEveryMethod } from './routes/method-not-allowed.js'
import { components } from './schemas/components.js'
import { serverTimeouts } from './timeouts.js'
import { buildSerializer } from './serialization.js'
import { createValidatorCompiler } from './validation.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    database: DatabaseHandle
    db: Kysely<Database>
    /** This process's clock, milliseconds since the epoch; injectable so tests can cross dates. */
    clock: () => number
    /** The database's clock as this instance measures it: what every limit is decided on. */
    databaseClock: DatabaseClock
  }
}

const BODY_LIMIT_BYTES = 16 * 1024
/** Where the public API's routes, its key guard and its unkeyed ceiling apply. */
const API_PREFIX = '/v1'

export interface AppOptions {
  config: Config
  database: DatabaseHandle
  clock?: () => number
  /** The app's logger; by default `createLogger`'s, on stdout. */
  logger?: Logger
  /** Runs once every plugin has closed: where a caller closes what it passed in, such as the database. */
  afterClose?: () => Promise<void>
}

/**
 * What the public app and the admin app share: the logger, limits and timeouts, the JSON parser that
 * keeps int64 exact, the validator, the schemas in `components`, and the one Error body from every
 * layer. The public and admin apps are made only through buildApp and buildAdminApp.
 */
export async function baseApp(
  options: AppOptions & {
    components: TSchema[]
    trustProxy?: string[]
    serverFactory?: FastifyServerOptions['serverFactory']
  }
) {
  const { config } = options
  const logger = options.logger ?? createLogger(config)
  // As Fastify's own logger type, so that the app's type does not depend on pino's.
  const loggerInstance: FastifyBaseLogger = logger
  const app = Fastify({
    loggerInstance,
    logController: new AccessLog(logger),
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: BODY_LIMIT_BYTES,
    trustProxy: options.trustProxy ?? [],
    requestIdHeader: false,
    genReqId: requestIdGenerator(config.TRUST_PROXY),
    ...serverTimeouts(config),
    serverFactory: options.serverFactory,
    // During shutdown, requests already on an open connection are served rather than refused.
    return503OnClosing: false,
    schemaController: { compilersFactory: { buildSerializer } },
    // The key cache reads every key's hash before the instance is ready: seconds for a million keys,
    // longer on a busy machine than Fastify's default of 10 s for a plugin.
    pluginTimeout: 60_000,
    // Requests Node cannot parse, and slow or oversized ones, get the Error body too.
    clientErrorHandler: sendClientError,
    // Errors raised before routing (a malformed URL, say) run no hook: the same Error body, request id and
    // nosniff as the rest are set here.
    frameworkErrors: (error, request, reply) => {
      sendError(request, reply.header(REQUEST_ID_HEADER, request.id).header('x-content-type-options', 'nosniff'), error)
    }
  }).withTypeProvider<TypeBoxTypeProvider>()

  // Registered first, so it runs last: Fastify runs onClose hooks last in, first out.
  if (options.afterClose) app.addHook('onClose', options.afterClose)
  app.decorate('config', config)
  app.decorate('database', options.database)
  app.decorate('db', options.database.db)
  app.decorate('clock', options.clock ?? Date.now)
  app.decorate('databaseClock', new DatabaseClock(options.clock ?? Date.now))

  for (const schema of options.components) app.addSchema(schema)
  app.setValidatorCompiler(createValidatorCompiler(options.components))
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(decodeJsonBody(body as Buffer)))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
  await app.register(requestId)
  return app
}

/** The one way to make the public app, for the server and the tests alike. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options
  const { ceiling, serverFactory } = unkeyedCeiling(config, options.clock ?? Date.now, API_PREFIX)
  const app = await baseApp({ ...options, components, trustProxy: trustedProxies(config.TRUST_PROXY), serverFactory })
  capConnections(app.server, config.MAX_CONNECTIONS, isShed)
  routeEveryMethod(app)
  await app.register(metrics, { pool: options.database.pool, counting: options.database.counting })
  // Before the hooks that may refuse a request, so refusals carry the headers too.
  await app.register(securityHeaders)
  await app.register(errors)
  await app.register(health)
  await app.register(idempotency)
  await app.register(housekeeping)
  // One limiter and key cache per instance, for the /v1 guard and the decisions route alike.
  await app.register(limiter)
  await app.register(
    async (v1) => {
      await v1.register(underPressure)
      await v1.register(guard, { ceiling })
      v1.setNotFoundHandler((request, reply) => sendNotFound(request, reply))
      await v1.register(swagger)
      await v1.register(docs)
      await v1.register(pets)
      await v1.register(rateLimit)
      await v1.register(keys)
      await v1.register(usage)
      await v1.register(decisions)
      await v1.register(authorize)
    },
    { prefix: API_PREFIX }
  )
  return app
}
