import type { FastifyContextConfig, FastifyInstance, HTTPMethods } from 'fastify'
import { methodNotAllowed } from '../errors.js'

const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/** Answers every other method on a known path with 405 and an Allow header, to callers the route's `config` lets in. */
export function rejectOtherMethods(
  app: FastifyInstance,
  url: string,
  allowed: HTTPMethods[],
  config: FastifyContextConfig = {}
) {
  const allow = allowed.includes('GET') ? [...allowed, 'HEAD' as const] : allowed
  app.route({
    method: METHODS.filter((method) => !allow.includes(method)),
    url,
    schema: { hide: true },
    config,
    handler: async (request) => {
      throw methodNotAllowed(request.method, allow)
    }
  })
}
