import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Batches } from '../../db/batches.js'
import { ApiError, gone, invalidRequest, notFound } from '../../errors.js'
import { createCursorCodec } from '../../pagination.js'
import { findPet, insertPets, listPets } from '../../repositories/pets.js'
import { getServiceSecret } from '../../repositories/service-secrets.js'
import { DEFAULT_PAGE_SIZE, ListPetsQuery, NewPet, Pet, PetParams, Pets } from '../../schemas/pets.js'
import { Ref } from '../../schemas/ref.js'
import {
  commonErrorResponses,
  deprecationHeaders,
  errorResponse,
  IdempotencyHeaders,
  insufficientScopeResponse,
  jsonResponse,
  nextPageHeaders,
  replayHeaders,
  scoped,
  withHeaders
} from '../../schemas/responses.js'
import { rejectOtherMethods } from '../method-not-allowed.js'
import { nextPageLink, petDeprecationHeaders } from './links.js'

/** Creates one instance lets wait for the next statement; past it a create gets 503 at once. */
const CREATES_WAITING_MAX = 10_000
const createsBacklogFull = () =>
  new ApiError('service_unavailable', 'Too many creates are waiting; retry later', { 'retry-after': '1' })

/** How many header lines of the request carry the (lower-case) name. */
function headerLines(rawHeaders: string[], name: string) {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) count++
  return count
}

const pets: FastifyPluginAsyncTypebox = async (app) => {
  const { config, clock, db, database } = app
  // Creates without an Idempotency-Key that come while one statement runs go together in the next:
  // they take the ids' lock, which makes creates commit one at a time, and a commit's flush once
  // (docs/benchmark.md#creates-made-together-against-cc7ce8e).
  const creates = new Batches(
    (batch: NewPet[]) => insertPets(database.pool, batch),
    CREATES_WAITING_MAX,
    createsBacklogFull
  )
  const cursors = createCursorCodec(await getServiceSecret(db, 'cursor'))
  const base = config.PUBLIC_BASE_URL
  const sunsetAt = Date.parse(config.SUNSET_DATE)
  const deprecation = petDeprecationHeaders(config)

  app.get(
    '/pets',
    {
      config: { scope: 'pets:read' },
      schema: {
        operationId: 'listPets',
        tags: ['pets'],
        summary: 'List animals',
        description:
          'Pets in ascending id order. While more follow, `Link: rel="next"` gives the next page. ' +
          'Needs a key with the scope `pets:read`.',
        ...scoped('pets:read'),
        querystring: ListPetsQuery,
        response: {
          200: jsonResponse('A page of pets', Ref(Pets), nextPageHeaders),
          400: errorResponse(
            '`invalid_request`: a query value is invalid, or the cursor is not one this listing issued'
          ),
          ...commonErrorResponses,
          ...insufficientScopeResponse('pets:read')
        }
      }
    },
    async (request, reply) => {
      // Validation has filled in the default; TypeBox types a defaulted property as optional.
      const { limit = DEFAULT_PAGE_SIZE, status, cursor } = request.query
      const afterId = cursor === undefined ? undefined : cursors.decode(cursor, status)
      const page = await listPets(database.pool, { limit, status, afterId })
      if (page.hasMore) {
        const next = cursors.encode({ afterId: page.pets[page.pets.length - 1]!.id, status })
        reply.header('link', nextPageLink(base, limit, status, next))
      }
      return page.pets
    }
  )

  app.post(
    '/pets',
    {
      config: { scope: 'pets:write' },
      schema: {
        operationId: 'addPet',
        tags: ['pets'],
        summary: 'Add an animal',
        description: 'Send an Idempotency-Key to make retrying safe. Needs a key with the scope `pets:write`.',
        ...scoped('pets:write'),
        headers: IdempotencyHeaders,
        body: Ref(NewPet),
        response: {
          201: jsonResponse('The pet as stored, with its assigned id', Ref(Pet), replayHeaders),
          400: errorResponse(
            '`invalid_request`: the body or a header fails validation; `invalid_json`: the body is not JSON'
          ),
          409: errorResponse('`idempotency_key_in_use`: a request with this Idempotency-Key is still running'),
          413: errorResponse('`payload_too_large`: the body is over 16 KiB'),
          415: errorResponse('`unsupported_media_type`: the body is not sent as application/json'),
          422: errorResponse('`idempotency_key_reused`: this Idempotency-Key came with another body'),
          ...commonErrorResponses,
          ...insufficientScopeResponse('pets:write')
        }
      }
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key']
      if (key === undefined) return reply.code(201).send(await creates.add(request.body))
      // Node joins a repeated header's values into one ("a, b"), which would be taken as one key.
      const sent = headerLines(request.raw.rawHeaders, 'idempotency-key')
      if (sent > 1) throw invalidRequest(`Idempotency-Key must be sent once; this request sent it ${sent} times`)
      // The guard has answered 401 to any request without a valid key before this runs.
      const { pet, replayed } = await app.idempotency.createPet(request.apiKey!.id, key, request.body)
      if (replayed) reply.header('idempotent-replayed', 'true')
      return reply.code(201).send(pet)
    }
  )

  app.get(
    '/pets/:petId',
    {
      config: { scope: 'pets:read' },
      schema: {
        operationId: 'getPet',
        tags: ['pets'],
        summary: 'Get an animal',
        description:
          'Deprecated: removed at the Sunset date. Use `GET /pets` with the `status` filter. ' +
          'Needs a key with the scope `pets:read`.',
        ...scoped('pets:read'),
        deprecated: true,
        params: PetParams,
        response: withHeaders(
          {
            200: jsonResponse('The pet', Ref(Pet)),
            400: errorResponse('`invalid_request`: petId is not an int64 integer'),
            404: errorResponse('`not_found`: no pet has this id'),
            410: errorResponse('`gone`: the Sunset date has passed'),
            ...commonErrorResponses,
            ...insufficientScopeResponse('pets:read')
          },
          deprecationHeaders
        )
      },
      onRequest: async () => {
        if (clock() >= sunsetAt) {
          throw gone(`GET /pets/{petId} was removed on ${deprecation.sunset}; use GET /pets`)
        }
      },
      // On every answer of the route, the key's refusals (401, 403, 429) included, which are decided
      // before the route's own hooks run.
      onSend: (_request, reply, payload, done) => {
        reply.headers(deprecation)
        done(null, payload)
      }
    },
    async (request) => {
      const pet = await findPet(database.pool, request.params.petId)
      if (!pet) throw notFound(`No pet with id ${request.params.petId}`)
      return pet
    }
  )

  rejectOtherMethods(app, '/pets', ['GET', 'POST'])
  rejectOtherMethods(app, '/pets/:petId', ['GET'])
}

export default pets
