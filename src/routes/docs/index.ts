import swaggerUi from '@fastify/swagger-ui'
import type { FastifyError, FastifyPluginAsync, FastifySchema } from 'fastify'
import { sendError, sendNotFound } from '../../plugins/app/errors.js'

const hidden = { hide: true } as FastifySchema

/** The OpenAPI document and a page to read it, served from installed packages only (no CDN). */
const docs: FastifyPluginAsync = async (app) => {
  // Documentation needs no key, including the asset routes @fastify/swagger-ui adds itself, and
  // its page has a Content-Security-Policy of its own.
  app.addHook('onRoute', (route) => {
    route.config = {
      ...route.config,
      keyless: true,
      cacheable: true,
      documentation: true
    }
  })

  // @fastify/static refuses an asset path with dot segments or doubled slashes with 403; such a path names no asset.
  app.setErrorHandler((error: FastifyError, request, reply) =>
    error.statusCode === 403 ? sendNotFound(request, reply) : sendError(request, reply, error)
  )

  app.get('/openapi.json', { schema: hidden }, async () => app.swagger())
  // The page's own settings, fetched before the document: it reads the document served above, and
  // links it under the title, rather than the copy the UI plugin serves beside the page.
  app.get('/docs/settings.json', { schema: hidden }, async () => ({ url: `${app.prefix}/openapi.json` }))
  app.get('/openapi.yaml', { schema: hidden }, async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true }))
  )

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The page's asset links are absolute and must carry the /v1 prefix.
    indexPrefix: app.prefix,
    theme: { title: 'Animal Store API' },
    // No top bar: it only offers to explore other documents, and its logo is an SVG with an inline
    // style that the page's policy refuses.
    uiConfig: {
      deepLinking: true,
      displayRequestDuration: true,
      layout: 'BaseLayout',
      configUrl: `${app.prefix}/docs/settings.json`
    }
  })
}

export default docs
