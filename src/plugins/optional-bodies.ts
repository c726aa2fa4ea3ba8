import type { FastifyInstance, preValidationAsyncHookHandler } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body may be left out: a request without one is read as `{}`, so that its fields take their defaults. */
    optionalBody?: boolean
  }
}

type Operation = { operationId?: string; requestBody?: { required?: boolean } }

const emptyBody: preValidationAsyncHookHandler = async (request) => {
  request.body ??= {}
}

/**
 * Lets the routes with `config.optionalBody` be sent without a body (Fastify validates a missing one
 * as no object), and returns what marks their bodies optional in the OpenAPI document
 * (@fastify/swagger marks every body required). Registered before the routes; the hook goes on those
 * routes alone.
 */
export function optionalBodies(app: FastifyInstance): <T extends { paths?: unknown }>(openapiObject: T) => T {
  const operations = new Set<string>()
  app.addHook('onRoute', (route) => {
    if (!route.config?.optionalBody) return
    const operationId = route.schema?.operationId
    if (operationId) operations.add(operationId)
    route.preValidation = [...[route.preValidation ?? []].flat(), emptyBody]
  })
  return (openapiObject) => {
    const paths = (openapiObject.paths ?? {}) as Record<string, Record<string, Operation>>
    for (const path of Object.values(paths)) {
      for (const operation of Object.values(path)) {
        if (operation.operationId && operations.has(operation.operationId) && operation.requestBody) {
          operation.requestBody.required = false
        }
      }
    }
    return openapiObject
  }
}
