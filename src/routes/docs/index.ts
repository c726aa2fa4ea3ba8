import swaggerUi from '@fastify/swagger-ui'
import type { FastifyPluginAsync, FastifySchema } from 'fastify'

const hidden = { hide: true } as FastifySchema

/** The OpenAPI document and a page to read it, served from installed packages only (no CDN). */
const docs: FastifyPluginAsync = async (app) => {
  // Documentation needs no key, including the asset routes @fastify/swagger-ui adds itself.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true }
  })

  app.get('/openapi.json', { schema: hidden }, async () => app.swagger())
  app.get('/openapi.yaml', { schema: hidden }, async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true }))
  )

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The page's asset links are absolute and must carry the /v1 prefix.
    indexPrefix: app.prefix,
    theme: { title: 'Animal Store API' },
    uiConfig: { deepLinking: true, displayRequestDuration: true }
  })
}

export default docs
