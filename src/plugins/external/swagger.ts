import swagger from '@fastify/swagger'
import fp from 'fastify-plugin'

/**
 * The OpenAPI 3.1 document, built from the routes' own schemas. Register it before the routes it
 * describes: it collects them as they are added.
 */
export default fp(
  async (app) => {
    const { PUBLIC_BASE_URL, STAGING_BASE_URL } = app.config
    const servers = [{ url: PUBLIC_BASE_URL, description: 'Production' }]
    if (STAGING_BASE_URL !== PUBLIC_BASE_URL) servers.push({ url: STAGING_BASE_URL, description: 'Staging' })

    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Animal Store API',
          version: '1.0.0',
          description:
            'A store of animals for sale. Every operation needs an API key sent as a bearer token. ' +
            'Every error has the Error body. Over a rate limit the answer is 429: wait Retry-After seconds.'
        },
        servers,
        components: {
          securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key' } }
        },
        security: [{ bearerAuth: [] }]
      },
      // Components keep their `$id` as their name.
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}`
      },
      // Paths are relative to the servers, whose URLs end in /v1 (whatever path precedes it).
      stripBasePath: false,
      transform: ({ schema, url }) => ({ schema, url: url.replace(/^\/v1(?=\/)/, '') })
    })
  },
  { name: 'swagger' }
)
