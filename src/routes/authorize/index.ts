import { METHODS } from 'node:http'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../../errors.js'
import { Authorization } from '../../schemas/decisions.js'
import { Ref } from '../../schemas/ref.js'
import { commonErrorResponses, errorResponse, jsonResponse } from '../../schemas/responses.js'
import { rejectOtherMethods } from '../method-not-allowed.js'

const errorCode = {
  'X-Error-Code': Type.String({
    description: "The Error body's code, for a proxy that drops the body (nginx's auth_request)",
    examples: ['rate_limited']
  })
}

const withErrorCode = <T extends { headers: object }>(response: T) => ({
  ...response,
  headers: { ...response.headers, ...errorCode }
})

/** nginx keeps the status and headers of a refusal, not its body: the code goes in a header too. */
const codeInHeader = async (_request: FastifyRequest, reply: FastifyReply, error: Error) => {
  if (error instanceof ApiError) reply.header('x-error-code', error.code)
}

const responses = {
  200: jsonResponse('The request may go on, and has been charged', Ref(Authorization), {
    'X-Account-Id': Type.String({ description: "The key's account", examples: ['42'] }),
    'X-Key-Id': Type.String({ description: 'The key', examples: ['7'] }),
    'X-Scopes': Type.String({ description: "The key's scopes, separated by spaces", examples: ['pets:read'] })
  }),
  401: withErrorCode(commonErrorResponses[401]),
  403: withErrorCode(commonErrorResponses[403]),
  429: withErrorCode(commonErrorResponses[429]),
  500: commonErrorResponses[500],
  503: commonErrorResponses[503]
}

/** The guard has charged the request: the key's account, id and scopes, in headers for the service behind. */
async function answer(request: FastifyRequest, reply: FastifyReply) {
  const key = request.apiKey!
  reply.headers({
    'x-account-id': String(key.accountId),
    'x-key-id': String(key.id),
    'x-scopes': key.scopes.join(' ')
  })
  return { accountId: key.accountId, keyId: key.id, scopes: key.scopes }
}

/**
 * The check nginx's `auth_request` and Envoy's `ext_authz` make before a request reaches the service
 * they guard: the guard authenticates the customer's key and charges it for the request named by
 * X-Original-Method and X-Original-URI, or by this request's own method and its path behind
 * `/authorize` (route config `original`), refusing as the pets API would; here the key's account, id
 * and scopes are told in headers for the proxy to pass on. Database round trips: the guard's, for a
 * request to that route.
 */
const authorize: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/authorize',
    {
      config: { original: 'headers' },
      onError: codeInHeader,
      schema: {
        operationId: 'authorize',
        tags: ['decisions'],
        summary: 'Authorizes and charges the request a proxy holds (nginx auth_request, Envoy ext_authz)',
        description:
          "Send the customer's Authorization header and the request's method and URI in X-Original-Method and " +
          'X-Original-URI. The key is charged for that request as the pets API charges its own (its cost is what ' +
          "the plan's costs name for the method and path, or a template matching it, else 1). 200 carries the key's " +
          'account, id and scopes in headers for the proxy to pass to the service behind it, with the rate-limit ' +
          'headers for the client; a refusal is 401, 403 or 429 with the Error body and its code also in ' +
          'X-Error-Code. docs/deploy.md has the nginx configuration that carries a 429 to the client. A proxy that ' +
          "checks with the request's own method on its path behind a prefix (Envoy's ext_authz) calls " +
          '/v1/authorize/{path} with any method instead, and is answered the same.',
        headers: Type.Object({
          'x-original-method': Type.String({ pattern: '^[A-Z]{1,16}$', examples: ['GET'] }),
          'x-original-uri': Type.String({ pattern: '^/', examples: ['/v1/orders?page=2'] })
        }),
        response: {
          ...responses,
          400: withErrorCode(
            errorResponse('`invalid_request`: X-Original-Method or X-Original-URI is missing or malformed')
          )
        }
      }
    },
    answer
  )

  // Envoy's ext_authz sends its check with the request's own method, on its path behind the prefix it
  // is given, and names nothing in headers: any method, charged as the path after `/authorize`.
  app.route({
    method: METHODS,
    url: '/authorize/*',
    config: { original: 'path' },
    onError: codeInHeader,
    schema: { hide: true, response: responses },
    handler: answer
  })

  // Another method names no request to charge: it is charged as any request to the path, and its 405
  // carries the code as the route's refusals do.
  rejectOtherMethods(app, '/authorize', ['GET'], {}, { onError: codeInHeader })
}

export default authorize
