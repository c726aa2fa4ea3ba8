import { METHODS } from 'node:http'
import type { FastifyContextConfig, FastifyInstance, FastifyRequest, HTTPMethods, RouteOptions } from 'fastify'
import { methodNotAllowed } from '../errors.js'
import { sendNotFound } from '../plugins/app/errors.js'

/**
 * Makes every method Node's HTTP parser reads routable, so that rejectOtherMethods can answer it:
 * Fastify routes only the common ones, and answers the others (PROPFIND, SEARCH, COPY, …) with 404.
 */
export function routeEveryMethod(app: FastifyInstance) {
  for (const method of METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method)
}

/**
 * Answers every other method on a known path with 405 and an Allow header, to callers the route's
 * `config` lets in. A path with an id left empty (`/pets/` for `/pets/:petId`) is no route, and is
 * answered 404 for every method: the router would otherwise match it with an empty id.
 */
export function rejectOtherMethods(
  app: FastifyInstance,
  url: string,
  allowed: HTTPMethods[],
  config: FastifyContextConfig = {},
  hooks: Pick<RouteOptions, 'onError'> = {}
) {
  const allow: string[] = allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed
  const refuse = async (request: FastifyRequest) => {
    throw methodNotAllowed(request.method, allow)
  }
  app.route({
    method: METHODS.filter((method) => !allow.includes(method)),
    url,
    schema: { hide: true },
    config,
    // After the guard's check of the key and before the body is read: a wrong method is a 405 whatever
    // body it carries, so the handler is never reached.
    onRequest: refuse,
    handler: refuse,
    ...hooks
  })
  const withoutIds = url.replace(/:\w+/g, '')
  if (withoutIds !== url) {
    app.route({ method: METHODS, url: withoutIds, schema: { hide: true }, config, handler: sendNotFound, ...hooks })
  }
}
