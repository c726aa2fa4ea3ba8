import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type TSchema } from '@sinclair/typebox'
import { invalidRequest, notFound } from '../errors.js'
import { createCursorCodec } from '../pagination.js'
import { ApiKeyError, type IssuedApiKey } from '../repositories/api-keys.js'
import { getServiceSecret } from '../repositories/service-secrets.js'
import { ErrorBody } from '../schemas/error.js'
import { Ref } from '../schemas/ref.js'
import {
  changeKey,
  createKey,
  describeKey,
  getKey,
  keyUsage,
  KeyNotFoundError,
  listKeys,
  revokeKey,
  rotateKey
} from '../services/api-keys.js'
import { IssuedKey, Key, KeyChanges, KeyListQuery, KeyParams, NewKey, Usage, UsageQuery } from './schemas.js'

const keyFields = describeKey
const issuedFields = (record: IssuedApiKey) => ({ ...keyFields(record), key: record.key })

/** The service's errors as the Error bodies they mean. */
async function answer<T>(work: Promise<T>): Promise<T> {
  try {
    return await work
  } catch (error) {
    if (error instanceof KeyNotFoundError) throw notFound(error.message)
    if (error instanceof ApiKeyError) throw invalidRequest(error.message)
    throw error
  }
}

const limits = (body: { perMinute?: bigint; perDay?: bigint }) => ({
  perMinute: body.perMinute === undefined ? undefined : Number(body.perMinute),
  perDay: body.perDay === undefined ? undefined : Number(body.perDay)
})
const instant = (value: string | null | undefined) => (value === undefined || value === null ? value : new Date(value))

/** A JSON response as both Fastify (which serializes by `content`) and @fastify/swagger read it. */
const json = (description: string, schema: TSchema) => ({ description, content: { 'application/json': { schema } } })

const errors = (...statuses: [number, string][]) =>
  Object.fromEntries([
    ...statuses.map(([status, description]) => [status, json(description, Ref(ErrorBody))]),
    [401, json('`unauthorized`: the admin token is missing or wrong', Ref(ErrorBody))],
    [503, json('`service_unavailable`: the database cannot be reached', Ref(ErrorBody))]
  ])
const invalid: [number, string] = [400, '`invalid_request`: a value fails validation; the message names the field']
const unknownKey: [number, string] = [404, '`not_found`: no key has this id']

/** Keys and their usage, under /admin/v1, for sign-up and billing systems. One service call each. */
const keys: FastifyPluginAsyncTypebox = async (app) => {
  const { db, clock } = app
  const cursors = createCursorCodec(await getServiceSecret(db, 'cursor'))

  app.post(
    '/keys',
    {
      schema: {
        operationId: 'createKey',
        summary: 'Issue a key; its secret is shown only in this answer',
        body: Ref(NewKey),
        response: { 201: json('The key, with its secret', Ref(IssuedKey)), ...errors(invalid) }
      }
    },
    async (request, reply) => {
      const { plan, name, expiresAt } = request.body
      const issued = await answer(createKey(db, { plan, name, expiresAt: instant(expiresAt), ...limits(request.body) }))
      return reply.code(201).send(issuedFields(issued))
    }
  )

  app.get(
    '/keys',
    {
      schema: {
        operationId: 'listKeys',
        summary: 'Keys in ascending id order; while more follow, `Link: rel="next"` gives the next page',
        querystring: KeyListQuery,
        response: { 200: json('A page of keys', Type.Array(Ref(Key))), ...errors(invalid) }
      }
    },
    async (request, reply) => {
      const { limit = 20, cursor } = request.query
      const afterId = cursor === undefined ? undefined : cursors.decode(cursor, undefined)
      const page = await listKeys(db, { limit, afterId })
      if (page.hasMore) {
        const next = cursors.encode({ afterId: page.keys.at(-1)!.id, status: undefined })
        reply.header(
          'link',
          `<${request.protocol}://${request.host}/admin/v1/keys?limit=${limit}&cursor=${next}>; rel="next"`
        )
      }
      return page.keys.map(keyFields)
    }
  )

  app.get(
    '/keys/:id',
    {
      schema: {
        operationId: 'getKey',
        summary: 'One key, never its secret',
        params: KeyParams,
        response: { 200: json('The key', Ref(Key)), ...errors(invalid, unknownKey) }
      }
    },
    async (request) => keyFields(await answer(getKey(db, request.params.id)))
  )

  app.patch(
    '/keys/:id',
    {
      schema: {
        operationId: 'changeKey',
        summary: 'Change a key: its plan, its own limits (enterprise), its name, its expiry',
        description: 'Every instance applies the change within a second.',
        params: KeyParams,
        body: Ref(KeyChanges),
        response: { 200: json('The key as changed', Ref(Key)), ...errors(invalid, unknownKey) }
      }
    },
    async (request) => {
      const { plan, name, expiresAt } = request.body
      const changes = { plan, name, expiresAt: instant(expiresAt), ...limits(request.body) }
      return keyFields(await answer(changeKey(db, request.params.id, changes)))
    }
  )

  app.post(
    '/keys/:id/revoke',
    {
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke a key; every instance refuses it within a second',
        params: KeyParams,
        response: { 200: json('The key, revoked', Ref(Key)), ...errors(invalid, unknownKey) }
      }
    },
    async (request) => keyFields(await answer(revokeKey(db, request.params.id)))
  )

  app.post(
    '/keys/:id/rotate',
    {
      schema: {
        operationId: 'rotateKey',
        summary: 'Give a key a new secret, shown only in this answer; the old secret stops working',
        params: KeyParams,
        response: {
          200: json('The key, with its new secret', Ref(IssuedKey)),
          ...errors(invalid, [404, '`not_found`: no key that may still be used has this id'])
        }
      }
    },
    async (request) => issuedFields(await answer(rotateKey(db, request.params.id)))
  )

  app.get(
    '/keys/:id/usage',
    {
      schema: {
        operationId: 'keyUsage',
        summary: 'Requests admitted and refused on each of the last days (UTC), today first',
        description:
          "Today's figures may lag by what an instance admitted from its current lease and has not yet " +
          'reported: at most one lease per instance, reported within about 5 seconds.',
        params: KeyParams,
        querystring: UsageQuery,
        response: { 200: json('One entry a day', Ref(Usage)), ...errors(invalid, unknownKey) }
      }
    },
    async (request) => {
      const { days = 30 } = request.query
      return { days: await answer(keyUsage(db, request.params.id, days, clock())) }
    }
  )
}

export default keys
