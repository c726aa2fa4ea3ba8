import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { IssuedApiKey } from '../repositories/api-keys.js'
import { KeyRotation } from '../schemas/keys.js'
import { Int64 } from '../schemas/int64.js'
import { getServiceSecret } from '../repositories/service-secrets.js'
import { Ref } from '../schemas/ref.js'
import {
  changeKey,
  createKey,
  describeKey,
  getKey,
  keyUsage,
  listKeys,
  revokeKey,
  revokeLeakedKeys,
  rotateKey
} from '../services/api-keys.js'
import { actorOf, errors, invalid, json, nextLink, planLimits } from './common.js'
import { listingCursors } from '../pagination.js'
import {
  AuditActorHeaders,
  IssuedKey,
  Key,
  KeyChanges,
  KeyListQuery,
  KeyParams,
  NewKey,
  Usage,
  UsageQuery
} from './schemas.js'

const LeakedKeysReport = Type.Object(
  {
    keys: Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
      minItems: 1,
      // 250 keys fit the 16 KiB body limit.
      maxItems: 250,
      description:
        'Secrets as a secret scanner reports them (`ask_…`); those that are no key are left out of the answer'
    })
  },
  { additionalProperties: false }
)

const LeakedKeysAnswer = Type.Object(
  {
    matched: Type.Array(Int64({ description: 'A key one of the secrets is' }), {
      description: 'The keys the secrets matched (by the current secret, or a previous one still working), ascending'
    }),
    revoked: Type.Array(Int64({ description: 'A key revoked by this report' }), {
      description: 'Those of them this report revoked; the others were revoked already'
    })
  },
  { additionalProperties: false }
)

const keyFields = describeKey
const issuedFields = (record: IssuedApiKey) => ({ ...keyFields(record), key: record.key })

const unknownKey: [number, string] = [404, '`not_found`: no key has this id']
const revoked: [number, string] = [409, '`key_revoked`: the key is revoked']

/** Keys and their usage, under /admin/v1, for sign-up and billing systems. One service call each. */
const keys: FastifyPluginAsyncTypebox = async (app) => {
  const { db, clock, config } = app
  const cursors = listingCursors(await getServiceSecret(db, 'cursor'), 'keys')

  app.post(
    '/keys',
    {
      schema: {
        operationId: 'createKey',
        summary: 'Issue a key; its secret is shown only in this answer',
        description:
          'In the account named by `accountId` or `externalId` (one of them), sharing its plan and windows; ' +
          'without one, in a new account of its own with `plan`. Scopes default to both.',
        headers: AuditActorHeaders,
        body: Ref(NewKey),
        response: {
          201: json('The key, with its secret', Ref(IssuedKey)),
          ...errors(invalid, [409, '`account_closed`: the account is closed'])
        }
      }
    },
    async (request, reply) => {
      const { plan, name, expiresAt, account, accountId, externalId, scopes, allowedAddresses, metadata } = request.body
      const fields = {
        ...{ plan, name, expiresAt, account, accountId, externalId, scopes, allowedAddresses, metadata },
        ...planLimits(request.body)
      }
      const issued = await createKey(db, actorOf(request), fields, clock())
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
        reply.header('link', nextLink(config.ADMIN_PUBLIC_URL, '/keys', { limit: String(limit), cursor: next }))
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
    async (request) => keyFields(await getKey(db, request.params.id))
  )

  app.patch(
    '/keys/:id',
    {
      schema: {
        operationId: 'changeKey',
        summary:
          "Change a key: its name, scopes, expiry, allowed addresses, metadata, or its account's plan and limits",
        description:
          "The plan and limits are the account's: changing them here changes them for all of its keys. " +
          'Every instance applies the change within a second.',
        headers: AuditActorHeaders,
        params: KeyParams,
        body: Ref(KeyChanges),
        response: { 200: json('The key as changed', Ref(Key)), ...errors(invalid, unknownKey, revoked) }
      }
    },
    async (request) => {
      const { plan, name, expiresAt, scopes, allowedAddresses, metadata } = request.body
      const changes = { plan, name, expiresAt, scopes, allowedAddresses, metadata, ...planLimits(request.body) }
      return keyFields(await changeKey(db, actorOf(request), request.params.id, changes, clock()))
    }
  )

  app.post(
    '/keys/:id/revoke',
    {
      schema: {
        operationId: 'revokeKey',
        summary: 'Revoke a key; every instance refuses it within a second',
        headers: AuditActorHeaders,
        params: KeyParams,
        response: { 200: json('The key, revoked', Ref(Key)), ...errors(invalid, unknownKey) }
      }
    },
    async (request) => keyFields(await revokeKey(db, actorOf(request), request.params.id))
  )

  app.post(
    '/keys/leaked',
    {
      schema: {
        operationId: 'reportLeakedKeys',
        summary: 'Revoke the keys whose secrets were found leaked; every instance refuses them within a second',
        description:
          'Each key a secret matches is revoked (with its audit event and `key.revoked`) and gets a `key.leaked` ' +
          'event, revoked before or not. A secret that is no key (a failed checksum among them) matches nothing and ' +
          'is not named in the answer. Needs the role operator or admin.',
        headers: AuditActorHeaders,
        body: LeakedKeysReport,
        response: { 200: json('The keys matched, and those revoked now', LeakedKeysAnswer), ...errors(invalid) }
      }
    },
    async (request) => revokeLeakedKeys(db, actorOf(request), request.body.keys)
  )

  app.post(
    '/keys/:id/rotate',
    {
      config: { optionalBody: true },
      schema: {
        operationId: 'rotateKey',
        summary: 'Give a key a new secret, shown only in this answer',
        description:
          'The secret replaced stops working at once, or keeps working for `graceSeconds` (at most a week) on the ' +
          "same account and windows, so that clients can move over; the answer's `previousSecretExpiresAt` says " +
          'until when. A secret still in an earlier rotation’s grace stops at once.',
        headers: AuditActorHeaders,
        params: KeyParams,
        body: Ref(KeyRotation),
        response: {
          200: json('The key, with its new secret', Ref(IssuedKey)),
          ...errors(invalid, unknownKey, revoked)
        }
      }
    },
    async (request) => {
      const grace = request.body.graceSeconds === undefined ? undefined : Number(request.body.graceSeconds)
      return issuedFields(await rotateKey(db, actorOf(request), request.params.id, grace))
    }
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
      return { days: await keyUsage(db, request.params.id, days, clock()) }
    }
  )
}

export default keys
