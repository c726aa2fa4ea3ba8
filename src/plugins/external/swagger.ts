import swagger, { type SwaggerTransformObject } from '@fastify/swagger'
import fp from 'fastify-plugin'
import { optionalBodies } from '../optional-bodies.js'

interface SchemaObject {
  type?: string
  items?: { $ref?: string; type?: string }
}

const COMPONENT = '#/components/schemas/'

/**
 * Puts the type of an array's items beside their reference (valid in OpenAPI 3.1), since the docs
 * page names an item type only from `type` and would show `array<any>`.
 */
const typeArrayItems = <T extends object>(openapiObject: T): T => {
  const schemas = (openapiObject as { components?: { schemas?: Record<string, SchemaObject> } }).components?.schemas
  for (const schema of Object.values(schemas ?? {})) {
    const ref = schema.items?.$ref
    const type = ref?.startsWith(COMPONENT) ? schemas?.[ref.slice(COMPONENT.length)]?.type : undefined
    if (type) schema.items = { ...schema.items, type }
  }
  return openapiObject
}

/**
 * The OpenAPI 3.1 document, built from the routes' own schemas. Register it before the routes it
 * describes: it collects them as they are added.
 */
export default fp(
  async (app) => {
    const { PUBLIC_BASE_URL, STAGING_BASE_URL } = app.config
    const servers = [{ url: PUBLIC_BASE_URL, description: 'Production' }]
    if (STAGING_BASE_URL !== PUBLIC_BASE_URL) servers.push({ url: STAGING_BASE_URL, description: 'Staging' })
    const markOptionalBodies = optionalBodies(app)
    const transformObject: SwaggerTransformObject = (document) =>
      'openapiObject' in document ? markOptionalBodies(typeArrayItems(document.openapiObject)) : document.swaggerObject

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
        tags: [
          { name: 'pets', description: 'The animals for sale' },
          { name: 'rate limits', description: "The caller's plan, windows and ban" },
          { name: 'keys', description: "The keys of the caller's account, for a key with the scope keys:manage" },
          { name: 'usage', description: "The usage of the caller's account, for a key with the scope usage:read" },
          {
            name: 'decisions',
            description: "Other services' requests decided and charged against their customers' keys"
          }
        ],
        components: {
          securitySchemes: {
            bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key' },
            serviceAuth: { type: 'http', scheme: 'bearer', description: 'An operator token of the role service' }
          }
        },
        security: [{ bearerAuth: [] }]
      },
      // Components keep their `$id` as their name.
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}`
      },
      // Paths are relative to the servers, whose URLs end in /v1 (whatever path precedes it).
      stripBasePath: false,
      transformObject,
      transform: ({ schema, url }) => ({ schema, url: url.replace(/^\/v1(?=\/)/, '') })
    })
  },
  { name: 'swagger' }
)
