import swagger from '@fastify/swagger'
import type { FastifyInstance, HTTPMethods } from 'fastify'
import { baseApp, type AppOptions } from '../app.js'
import errors from '../plugins/app/errors.js'
import securityHeaders from '../plugins/external/helmet.js'
import { optionalBodies } from '../plugins/optional-bodies.js'
import { rejectOtherMethods, routeEveryMethod } from '../routes/method-not-allowed.js'
import accountStanding from './account-standing.js'
import accounts from './accounts.js'
import { adminAuthentication } from './auth.js'
import adminConsole from './console.js'
import events from './events.js'
import keys from './keys.js'
import plans from './plans.js'
import operators from './operators.js'
import { adminComponents } from './schemas.js'
import { webhookComponents } from './webhook-schemas.js'
import usageExport from './usage-export.js'
import webhooks from './webhooks.js'

/**
 * The admin API: accounts, keys, usage and the audit trail over HTTP, for sign-up and billing systems. Its own app on its
 * own listener (ADMIN_HOST:ADMIN_PORT), never the public port; built like the public app (baseApp),
 * with its own OpenAPI document and the public app's security headers, Cache-Control: no-store among
 * them, since its answers carry secrets. Every request carries an operator's token, or ADMIN_TOKEN
 * (the bootstrap admin), as a bearer token; who may do what is in ./auth.ts. Beside it, at /admin/,
 * the operator console that calls it.
 */
export async function buildAdminApp(options: AppOptions): Promise<FastifyInstance> {
  const token = options.config.ADMIN_TOKEN
  if (!token) throw new Error('The admin API needs ADMIN_TOKEN')
  const app = await baseApp({ ...options, components: [...adminComponents, ...webhookComponents] })
  routeEveryMethod(app)
  // Before the token check, so refusals carry the headers too; no admin route is cacheable, so none is cached.
  await app.register(securityHeaders)
  await app.register(errors)
  await app.register(
    async (admin) => {
      await adminAuthentication(admin, token)
      // Each path's methods, as its routes are added, for the 405 routes added after them.
      const methodsByPath = new Map<string, HTTPMethods[]>()
      admin.addHook('onRoute', (route) => {
        const path = route.url.slice(admin.prefix.length)
        const methods = [route.method].flat().filter((method) => method !== 'HEAD')
        methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), ...methods])
      })
      const markOptionalBodies = optionalBodies(admin)
      await admin.register(swagger, {
        transformObject: (document) =>
          'openapiObject' in document ? markOptionalBodies(document.openapiObject) : document.swaggerObject,
        openapi: {
          openapi: '3.1.0',
          info: {
            title: 'Animal Store admin API',
            version: '1.0.0',
            description:
              'Plans (limits and costs per route, as data), accounts (customers whose keys share a plan, with ' +
              'overrides and credits of their own), their scoped API keys, usage, and ' +
              'the audit trail of every change. On its own listener; every request carries an operator token (or ' +
              'ADMIN_TOKEN, the bootstrap admin) as a bearer token. A viewer reads; an operator also changes accounts, ' +
              'keys and plans; an admin also operators. A weaker role answers 403 `insufficient_role`. The audit ' +
              'trail names the authenticated operator; X-Audit-Actor is kept beside it as `onBehalfOf`. Changes reach ' +
              'every instance within a second.'
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
      await admin.register(plans)
      await admin.register(accountStanding)
      await admin.register(events)
      await admin.register(operators)
      await admin.register(webhooks)
      await admin.register(usageExport)
      // Any operator who may read is told the path's methods, whatever the method sent would need.
      for (const [path, methods] of [...methodsByPath]) {
        rejectOtherMethods(admin, path, methods, { adminRole: 'viewer' })
      }
    },
    { prefix: '/admin/v1' }
  )
  // Outside /admin/v1 and its token check: the page holds no data, and its calls carry the token.
  await app.register(adminConsole)
  return app
}
