import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { LRUCache } from 'lru-cache'
import type { Metadata } from '../../db/schema.js'
import { rateLimitHeaders } from '../../limits/headers.js'
import { requestPath, routeCostOf, UNNAMED_ROUTE } from '../../limits/route-costs.js'
import { retryAfterSeconds } from '../../plugins/app/limiter.js'
import { findApiKeyMetadata } from '../../repositories/api-keys.js'
import { Decision, DecisionRequest } from '../../schemas/decisions.js'
import { Ref } from '../../schemas/ref.js'
import { errorResponse } from '../../schemas/responses.js'
import { rejectOtherMethods } from '../method-not-allowed.js'

/** Keys whose metadata is kept, least recently asked first out, each for a second: a change shows within it. */
const METADATA_KEYS = 10_000
const METADATA_MS = 1_000

const serviceOnly = { operatorRole: 'service' } as const

const noHeaders = { 'ratelimit-policy': null, ratelimit: null, 'retry-after': null }

/**
 * Other services' requests decided and charged as the pets API decides and charges its own: the same
 * limiter of this instance, the same key cache, leases, bans and credits. The caller is a service
 * with an operator token of the role `service` (the guard checks it); the key it asks about is its
 * customer's. Database round trips: those of a request to the pets API with that key (none within a
 * lease), and one indexed read of the key's metadata at most once a second per key and instance.
 */
const decisions: FastifyPluginAsyncTypebox = async (app) => {
  const { admission, db } = app
  const metadataOf = new LRUCache<bigint, Metadata>({
    max: METADATA_KEYS,
    ttl: METADATA_MS,
    fetchMethod: async (id) => (await findApiKeyMetadata(db, id)) ?? {}
  })

  app.post(
    '/decisions',
    {
      config: serviceOnly,
      schema: {
        operationId: 'decide',
        tags: ['decisions'],
        summary: "Decides and charges a request that another service received with a customer's key",
        description:
          'For services other than the store: the answer the pets API would give the key for this method and path, ' +
          "charged to the key's account exactly as the pets API charges its own requests, across instances. A " +
          'refusal is not an error: the answer is 200 with `admitted: false` and its `code`, and a key that keeps ' +
          'sending while refused is banned as on the pets API. `headers` holds the values to send the customer. ' +
          'Needs an operator token of the role `service` (`npm run cli -- operators create --role service`); an API ' +
          'key gets 401.',
        security: [{ serviceAuth: [] }],
        body: Ref(DecisionRequest),
        response: {
          200: {
            description: 'The decision',
            content: { 'application/json': { schema: Ref(Decision) } }
          },
          400: errorResponse('`invalid_request`: the body is not a DecisionRequest'),
          401: errorResponse('`unauthorized`: no operator token, or one that is unknown or revoked', {
            'WWW-Authenticate': Type.String({ examples: ['Bearer realm="animal-store", error="invalid_token"'] })
          }),
          403: errorResponse('`insufficient_role`: the operator is not of the role service'),
          429: errorResponse("`rate_limited`: the caller's address sent too many requests without a valid token", {
            'Retry-After': Type.Integer({ minimum: 1 })
          }),
          500: errorResponse('`internal_error`: an unexpected failure'),
          503: errorResponse('`service_unavailable`: the service cannot reach its database', {
            'Retry-After': Type.Integer({ minimum: 1 })
          })
        }
      }
    },
    async (request) => {
      const { key: token, method, path, cost, address } = request.body
      // The calling service is trusted: a token the membership filter rules out is still looked up.
      const found = await admission.authenticate(token, { mayLookUp: async () => true })
      if (!found) return { admitted: false, code: 'invalid_key' as const }
      const { key } = found
      const about = {
        accountId: key.accountId,
        keyId: key.id,
        scopes: key.scopes,
        metadata: (await metadataOf.fetch(key.id)) ?? {}
      }
      // As on the pets API: from an address the key does not allow, nothing is charged.
      if (key.allowedFrom && (address === undefined || !key.allowedFrom.includes(address))) {
        return { ...about, admitted: false, code: 'address_not_allowed' as const, headers: noHeaders }
      }
      const named = routeCostOf(key.costs, method, requestPath(path))
      const decision = await admission.charge(key, named.route ?? UNNAMED_ROUTE, cost ?? named.cost)
      const now = admission.now()
      const headers = rateLimitHeaders(decision, now)
      const retryAfter = decision.outcome === 'admitted' ? undefined : retryAfterSeconds(decision, now)
      return {
        ...about,
        admitted: decision.outcome === 'admitted',
        code: decision.outcome === 'admitted' ? null : decision.outcome,
        headers: {
          'ratelimit-policy': headers?.['ratelimit-policy'] ?? null,
          ratelimit: headers?.ratelimit ?? null,
          'retry-after': retryAfter === undefined ? null : String(retryAfter)
        }
      }
    }
  )

  rejectOtherMethods(app, '/decisions', ['POST'], serviceOnly)
}

export default decisions
