import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { bearerToken } from '../../auth/bearer-token.js'
import { invalidRequest } from '../../errors.js'
import { listingCursors } from '../../pagination.js'
import type { ApiKeyDetails, IssuedApiKey } from '../../repositories/api-keys.js'
import { getServiceSecret } from '../../repositories/service-secrets.js'
import {
  ApiKey,
  KeyRotation,
  ApiKeyParams,
  ApiKeys,
  IssuedApiKey as IssuedApiKeySchema,
  ListApiKeysQuery,
  NewApiKey
} from '../../schemas/keys.js'
import { Ref } from '../../schemas/ref.js'
import {
  addressNotAllowed,
  commonErrorResponses,
  errorResponse,
  insufficientScopeResponse,
  jsonResponse,
  nextPageHeaders,
  scoped
} from '../../schemas/responses.js'
import {
  createOwnKey,
  listOwnKeys,
  MANAGE_SCOPE,
  revokeOwnKey,
  rotateOwnKey,
  type Holder
} from '../../services/key-holders.js'
import { rejectOtherMethods } from '../method-not-allowed.js'

/** A key as its holders see it: never its secret or its hash, nor the account's plan (GET /v1/rate_limit has that). */
const holderView = (record: ApiKeyDetails) => ({
  id: record.id,
  prefix: record.prefix,
  name: record.name,
  scopes: record.scopes,
  createdAt: record.createdAt.toISOString(),
  expiresAt: record.expiresAt?.toISOString() ?? null,
  revokedAt: record.revokedAt?.toISOString() ?? null,
  previousPrefix: record.previousPrefix,
  previousSecretExpiresAt: record.previousSecretExpiresAt?.toISOString() ?? null
})
const issuedView = (record: IssuedApiKey) => ({ ...holderView(record), key: record.key })

const noSuchKey = errorResponse("`not_found`: no key of the calling key's account has this id")
const beyondScopes = `\`insufficient_scope\`: the API key lacks \`keys:manage\`, or a scope the change would give it; ${addressNotAllowed}`

/**
 * Keys their holders manage: a key with `keys:manage` lists, issues, rotates and revokes the keys of
 * its own account, within its own scopes and expiry. Another account's key is "no such key". Each
 * change is the admin path's (audit event with the actor `key:PREFIX`, webhook event) in one
 * transaction, which reads the calling key afresh. Database round trips: 1 to list; 7 to rotate or revoke
 * (3 for a key already revoked) and 8 to create, between BEGIN and COMMIT.
 */
const keys: FastifyPluginAsyncTypebox = async (app) => {
  const { config, databaseClock, db } = app
  const secret = await getServiceSecret(db, 'cursor')
  const base = config.PUBLIC_BASE_URL
  const holder = (request: FastifyRequest): Holder => ({
    keyId: request.apiKey!.id,
    accountId: request.apiKey!.accountId,
    requestId: request.id,
    // The guard authenticated this token; its readable start (`ask_` and 8 characters) is its prefix.
    presentedPrefix: bearerToken(request.headers.authorization)?.slice(0, 12)
  })

  app.get(
    '/keys',
    {
      config: { scope: MANAGE_SCOPE },
      schema: {
        operationId: 'listKeys',
        tags: ['keys'],
        summary: "The keys of the calling key's account",
        description:
          'In ascending id order, revoked ones included; never a secret. While more follow, `Link: rel="next"` ' +
          'gives the next page. Needs a key with the scope `keys:manage`.',
        ...scoped(MANAGE_SCOPE),
        querystring: ListApiKeysQuery,
        response: {
          ...commonErrorResponses,
          200: jsonResponse('A page of keys', Ref(ApiKeys), nextPageHeaders),
          400: errorResponse(
            '`invalid_request`: a query value is invalid, or the cursor is not one this listing issued'
          ),
          ...insufficientScopeResponse(MANAGE_SCOPE)
        }
      }
    },
    async (request, reply) => {
      const { limit = 20, cursor } = request.query
      const caller = holder(request)
      // Signed for the caller's account: another account's cursor is refused, not followed.
      const cursors = listingCursors(secret, `/v1/keys of account ${caller.accountId}`)
      const afterId = cursor === undefined ? undefined : cursors.decode(cursor, undefined)
      const page = await listOwnKeys(db, caller, { limit, afterId })
      if (page.hasMore) {
        const next = cursors.encode({ afterId: page.keys.at(-1)!.id, status: undefined })
        reply.header('link', `<${base}/keys?limit=${limit}&cursor=${next}>; rel="next"`)
      }
      return page.keys.map(holderView)
    }
  )

  app.post(
    '/keys',
    {
      config: { scope: MANAGE_SCOPE },
      schema: {
        operationId: 'createKey',
        tags: ['keys'],
        summary: "Issue a key in the calling key's account; its secret is shown only in this answer",
        description:
          'With scopes the calling key has, expiring no later than it does (with it, when `expiresAt` is not ' +
          'given), usable only from the addresses the calling key is. Idempotency-Key is refused here: a replay would have to show the secret again, and it is ' +
          'never stored; after a failure, look for the key by its name in `GET /keys`. Needs a key with the ' +
          'scope `keys:manage`.',
        ...scoped(MANAGE_SCOPE),
        body: Ref(NewApiKey),
        response: {
          ...commonErrorResponses,
          201: jsonResponse('The key, with its secret', Ref(IssuedApiKeySchema)),
          400: errorResponse(
            '`invalid_request`: the body fails validation, `expiresAt` is past or later than the calling key ' +
              'expires, or the request carries an Idempotency-Key; `invalid_json`: the body is not JSON'
          ),
          403: { ...insufficientScopeResponse(MANAGE_SCOPE)[403], description: beyondScopes },
          409: errorResponse("`account_closed`: the calling key's account is closed"),
          413: errorResponse('`payload_too_large`: the body is over 16 KiB'),
          415: errorResponse('`unsupported_media_type`: the body is not sent as application/json')
        }
      }
    },
    async (request, reply) => {
      if (request.headers['idempotency-key'] !== undefined) {
        throw invalidRequest(
          'Idempotency-Key is not honoured on POST /v1/keys: a replay would have to show the secret again, which ' +
            'is never stored. Send the request without it; after a failure, look for the key by its name in GET /v1/keys'
        )
      }
      const { name, scopes, expiresAt } = request.body
      const issued = await createOwnKey(db, holder(request), { name, scopes, expiresAt }, databaseClock.now())
      return reply.code(201).send(issuedView(issued))
    }
  )

  app.post(
    '/keys/:id/rotate',
    {
      config: { scope: MANAGE_SCOPE, optionalBody: true },
      schema: {
        operationId: 'rotateKey',
        tags: ['keys'],
        summary: 'Give a key of the account a new secret, shown only in this answer',
        description:
          'The secret replaced stops working at once, or keeps working for `graceSeconds` (at most a week), as on ' +
          "the admin API; the answer's `previousSecretExpiresAt` says until when. The calling key itself included. " +
          "The key must be within the calling key's rights: no scope it lacks, no later expiry, and no address " +
          'the calling key may not be used from. The body may ' +
          'be left out. Needs a key with the scope `keys:manage`.',
        ...scoped(MANAGE_SCOPE),
        params: ApiKeyParams,
        body: Ref(KeyRotation),
        response: {
          ...commonErrorResponses,
          200: jsonResponse('The key, with its new secret', Ref(IssuedApiKeySchema)),
          400: errorResponse('`invalid_request`: id is not an int64 integer, or graceSeconds is out of range'),
          403: {
            ...insufficientScopeResponse(MANAGE_SCOPE)[403],
            description: `${beyondScopes}; \`forbidden\`: the key works after the calling key expires, or from an address it may not be used from`
          },
          404: noSuchKey,
          409: errorResponse('`key_revoked`: the key is revoked')
        }
      }
    },
    async (request) => {
      const grace = Number(request.body.graceSeconds ?? 0)
      return issuedView(await rotateOwnKey(db, holder(request), request.params.id, grace, databaseClock.now()))
    }
  )

  app.delete(
    '/keys/:id',
    {
      config: { scope: MANAGE_SCOPE },
      schema: {
        operationId: 'revokeKey',
        tags: ['keys'],
        summary: 'Revoke a key of the account; every instance refuses it within a second',
        description:
          'The calling key itself included. Revoking a revoked key changes nothing and answers the same. Needs a ' +
          'key with the scope `keys:manage`.',
        ...scoped(MANAGE_SCOPE),
        params: ApiKeyParams,
        response: {
          ...commonErrorResponses,
          200: jsonResponse('The key, revoked', Ref(ApiKey)),
          400: errorResponse('`invalid_request`: id is not an int64 integer'),
          ...insufficientScopeResponse(MANAGE_SCOPE),
          404: noSuchKey
        }
      }
    },
    async (request) => holderView(await revokeOwnKey(db, holder(request), request.params.id, databaseClock.now()))
  )

  rejectOtherMethods(app, '/keys', ['GET', 'POST'])
  rejectOtherMethods(app, '/keys/:id', ['DELETE'])
  rejectOtherMethods(app, '/keys/:id/rotate', ['POST'])
}

export default keys
