import bearerAuth from '@fastify/bearer-auth'
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { baseApp, type AppOptions } from '../app.js'
import { clientAddress } from '../client-address.js'
import { adminTokens } from '../config.js'
import { ApiError } from '../errors.js'
import errors from '../plugins/app/errors.js'
import securityHeaders from '../plugins/external/helmet.js'
import accountStanding from './account-standing.js'
import accounts from './accounts.js'
import adminConsole from './console.js'
import events from './events.js'
import keys from './keys.js'
import { adminComponents } from './schemas.js'
import { webhookComponents } from './webhook-schemas.js'
import webhooks from './webhooks.js'

const REALM = 'Bearer realm="animal-store-admin"'
/** Failed attempts an address may make in a minute; past them, 429 until the minute is over. */
const FAILURES_PER_MINUTE = 10
/** Addresses whose failures are remembered at once, least recently seen dropped first. */
const FAILING_ADDRESSES = 10_000

/**
 * The admin API: accounts, keys, usage and the audit trail over HTTP, for sign-up and billing systems. Its own app on its
 * own listener (ADMIN_HOST:ADMIN_PORT), never the public port; built like the public app (baseApp),
 * with its own OpenAPI document and the public app's security headers, Cache-Control: no-store among
 * them, since its answers carry secrets. Every request carries one of ADMIN_TOKEN's tokens (two while
 * one replaces the other) as a bearer token, which @fastify/bearer-auth compares in constant time.
 * Failures are counted per client address in memory, each logged once, and past FAILURES_PER_MINUTE
 * answered 429; the right token is never refused for its address. Beside it, at /admin/, the operator
 * console that calls it.
 */
export async function buildAdminApp(options: AppOptions): Promise<FastifyInstance> {
  const token = options.config.ADMIN_TOKEN
  if (!token) throw new Error('The admin API needs ADMIN_TOKEN')
  const app = await baseApp({ ...options, components: [...adminComponents, ...webhookComponents] })
  // Before the token check, so refusals carry the headers too; no admin route is cacheable, so none is cached.
  await app.register(securityHeaders)
  await app.register(errors)
  await app.register(
    async (admin) => {
      await admin.register(bearerAuth, {
        keys: adminTokens(token),
        addHook: false,
        specCompliance: 'rfc6749', // the scheme word in any case
        verifyErrorLogLevel: 'trace' // the hook below logs each failure once, at warn, with its address and outcome
      })
      // Counts only failures: the hook asks it after a wrong or missing token, never before the check.
      await admin.register(rateLimit, {
        global: false,
        max: FAILURES_PER_MINUTE,
        timeWindow: 60_000,
        cache: FAILING_ADDRESSES,
        keyGenerator: (request: FastifyRequest) => normalizeIP(clientAddress(request)),
        skipOnError: false
      })
      const countFailure = admin.createRateLimit()

      /** Counts a failed attempt against its address and logs it once; the 401, or the 429 past the limit. */
      async function refusal(request: FastifyRequest, failure: Error): Promise<ApiError> {
        const result = await countFailure(request)
        const throttled = !result.isAllowed && result.isExceeded
        request.log.warn(
          { client: result.key, reason: failure.message, throttled },
          'admin API refused a request without a valid token'
        )
        if (throttled) {
          const seconds = String(Math.max(1, result.ttlInSeconds))
          return new ApiError(429, 'rate_limited', `Too many failed admin attempts; retry in ${seconds} s`, {
            'retry-after': seconds
          })
        }
        return new ApiError(401, 'unauthorized', 'The admin API needs Authorization: Bearer <ADMIN_TOKEN>')
      }

      // @fastify/bearer-auth's own check, answered with the Error body and a bearer challenge.
      admin.addHook('onRequest', (request, reply, done) => {
        admin.verifyBearerAuth!(request, reply, (failure) => {
          if (!failure) return done()
          const presented = request.headers.authorization !== undefined
          reply.header('www-authenticate', presented ? `${REALM}, error="invalid_token"` : REALM)
          refusal(request, failure).then(done, done)
        })
      })
      await admin.register(swagger, {
        openapi: {
          openapi: '3.1.0',
          info: {
            title: 'Animal Store admin API',
            version: '1.0.0',
            description:
              'Accounts (customers whose keys share a plan and its windows), their scoped API keys, usage, and ' +
              'the audit trail of every change. On its own listener; every request carries ADMIN_TOKEN as a ' +
              'bearer token; X-Audit-Actor names who makes a change. Changes reach every instance within a second.'
          },
          components: { securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } } },
          security: [{ adminToken: [] }]
        },
        refResolver: {
          buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}`
        }
      })
      admin.get('/openapi.json', { schema: { hide: true } }, async () => admin.swagger())
      await admin.register(keys)
      await admin.register(accounts)
      await admin.register(accountStanding)
      await admin.register(events)
      await admin.register(webhooks)
    },
    { prefix: '/admin/v1' }
  )
  // Outside /admin/v1 and its token check: the page holds no data, and its calls carry the token.
  await app.register(adminConsole)
  return app
}
