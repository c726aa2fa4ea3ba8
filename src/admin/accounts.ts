import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { invalidRequest } from '../errors.js'
import { getServiceSecret } from '../repositories/service-secrets.js'
import { Ref } from '../schemas/ref.js'
import {
  accountUsage,
  accountWindows,
  changeAccount,
  closeAccount,
  createAccount,
  describeAccount,
  describeEvent,
  getAccountById,
  listAccounts,
  listEvents
} from '../services/accounts.js'
import { describeKey, listKeys } from '../services/api-keys.js'
import { actorOf, answer, errors, invalid, json, listingCursors, nextLink } from './common.js'
import {
  Account,
  AccountChanges,
  AccountListQuery,
  AccountParams,
  AccountWindows,
  AuditActorHeaders,
  AuditEvent,
  EventListQuery,
  Key,
  NewAccount,
  Usage,
  UsageQuery
} from './schemas.js'

const limits = (body: { perMinute?: bigint; perDay?: bigint }) => ({
  perMinute: body.perMinute === undefined ? undefined : Number(body.perMinute),
  perDay: body.perDay === undefined ? undefined : Number(body.perDay)
})

const unknownAccount: [number, string] = [404, '`not_found`: no account has this id']
const closed: [number, string] = [409, '`account_closed`: the account is closed']

/** Accounts, their keys and usage, and the audit trail, under /admin/v1. One service call each. */
const accounts: FastifyPluginAsyncTypebox = async (app) => {
  const { db, clock, config } = app
  const secret = await getServiceSecret(db, 'cursor')

  app.post(
    '/accounts',
    {
      schema: {
        operationId: 'createAccount',
        summary: 'Make an account: a customer whose keys share its plan and windows',
        headers: AuditActorHeaders,
        body: Ref(NewAccount),
        response: {
          201: json('The account', Ref(Account)),
          ...errors(invalid, [409, '`account_exists`: an account has this externalId already'])
        }
      }
    },
    async (request, reply) => {
      const { externalId, name, plan } = request.body
      const fields = { externalId, name, plan, ...limits(request.body) }
      const account = await answer(createAccount(db, actorOf(request), fields))
      return reply.code(201).send(describeAccount(account))
    }
  )

  app.get(
    '/accounts',
    {
      schema: {
        operationId: 'listAccounts',
        summary: 'Accounts in ascending id order; while more follow, `Link: rel="next"` gives the next page',
        querystring: AccountListQuery,
        response: { 200: json('A page of accounts', Type.Array(Ref(Account))), ...errors(invalid) }
      }
    },
    async (request, reply) => {
      const { limit = 20, cursor, externalId } = request.query
      // A cursor belongs to its filter as well as to its listing.
      const cursors = listingCursors(secret, `accounts?externalId=${externalId ?? ''}`)
      const afterId = cursor === undefined ? undefined : cursors.decode(cursor, undefined)
      const page = await listAccounts(db, { limit, afterId, externalId })
      if (page.hasMore) {
        const next = cursors.encode({ afterId: page.accounts.at(-1)!.id, status: undefined })
        reply.header(
          'link',
          nextLink(config.ADMIN_PUBLIC_URL, '/accounts', { limit: String(limit), externalId, cursor: next })
        )
      }
      return page.accounts.map(describeAccount)
    }
  )

  app.get(
    '/accounts/:id',
    {
      schema: {
        operationId: 'getAccount',
        summary: 'One account',
        params: AccountParams,
        response: { 200: json('The account', Ref(Account)), ...errors(invalid, unknownAccount) }
      }
    },
    async (request) => describeAccount(await answer(getAccountById(db, request.params.id)))
  )

  app.patch(
    '/accounts/:id',
    {
      schema: {
        operationId: 'changeAccount',
        summary: 'Change an account: its name, its plan, its own limits (enterprise)',
        description: 'Every key of the account follows, on every instance within a second.',
        headers: AuditActorHeaders,
        params: AccountParams,
        body: Ref(AccountChanges),
        response: {
          200: json('The account as changed', Ref(Account)),
          ...errors(invalid, unknownAccount, closed)
        }
      }
    },
    async (request) => {
      const { name, plan } = request.body
      const changes = { name, plan, ...limits(request.body) }
      return describeAccount(await answer(changeAccount(db, actorOf(request), request.params.id, changes)))
    }
  )

  app.post(
    '/accounts/:id/close',
    {
      schema: {
        operationId: 'closeAccount',
        summary: 'Close an account and revoke all of its keys at once; every instance refuses them within a second',
        headers: AuditActorHeaders,
        params: AccountParams,
        response: { 200: json('The account, closed', Ref(Account)), ...errors(invalid, unknownAccount) }
      }
    },
    async (request) => describeAccount(await answer(closeAccount(db, actorOf(request), request.params.id)))
  )

  app.get(
    '/accounts/:id/keys',
    {
      schema: {
        operationId: 'listAccountKeys',
        summary: 'The account\'s keys in ascending id order; while more follow, `Link: rel="next"` gives the next page',
        params: AccountParams,
        querystring: Type.Object({
          limit: AccountListQuery.properties.limit,
          cursor: AccountListQuery.properties.cursor
        }),
        response: { 200: json('A page of keys', Type.Array(Ref(Key))), ...errors(invalid, unknownAccount) }
      }
    },
    async (request, reply) => {
      const { id } = request.params
      const { limit = 20, cursor } = request.query
      await answer(getAccountById(db, id))
      const cursors = listingCursors(secret, `accounts/${id}/keys`)
      const afterId = cursor === undefined ? undefined : cursors.decode(cursor, undefined)
      const page = await listKeys(db, { limit, afterId, accountId: id })
      if (page.hasMore) {
        const next = cursors.encode({ afterId: page.keys.at(-1)!.id, status: undefined })
        reply.header(
          'link',
          nextLink(config.ADMIN_PUBLIC_URL, `/accounts/${id}/keys`, { limit: String(limit), cursor: next })
        )
      }
      return page.keys.map(describeKey)
    }
  )

  app.get(
    '/accounts/:id/usage',
    {
      schema: {
        operationId: 'accountUsage',
        summary: "Requests admitted and refused on each of the last days (UTC), all of the account's keys together",
        params: AccountParams,
        querystring: UsageQuery,
        response: { 200: json('One entry a day', Ref(Usage)), ...errors(invalid, unknownAccount) }
      }
    },
    async (request) => {
      const { days = 30 } = request.query
      return { days: await answer(accountUsage(db, request.params.id, days, clock())) }
    }
  )

  app.get(
    '/accounts/:id/windows',
    {
      schema: {
        operationId: 'accountWindows',
        summary: "The account's minute and day windows as they stand, and the keys of it banned now",
        description:
          "Read from the database, never counted: the same windows as `GET /v1/rate_limit`, shared by all of the account's " +
          'keys. `used` includes what instances have leased ahead and not yet served.',
        params: AccountParams,
        response: { 200: json('The windows and bans', Ref(AccountWindows)), ...errors(invalid, unknownAccount) }
      }
    },
    async (request) => answer(accountWindows(db, request.params.id, clock()))
  )

  app.get(
    '/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: 'The audit trail, newest first; while more follow, `Link: rel="next"` gives the next page',
        description:
          'One event for every change to an account or a key, written in the same transaction as the change.',
        querystring: EventListQuery,
        response: { 200: json('A page of events', Type.Array(Ref(AuditEvent))), ...errors(invalid) }
      }
    },
    async (request, reply) => {
      const { accountId, keyId, since, limit = 20, cursor } = request.query
      const cursors = listingCursors(
        secret,
        `events?accountId=${accountId ?? ''}&keyId=${keyId ?? ''}&since=${since ?? ''}`
      )
      const beforeId = cursor === undefined ? undefined : cursors.decode(cursor, undefined)
      const sinceAt = since === undefined ? undefined : new Date(since)
      if (sinceAt && Number.isNaN(sinceAt.getTime())) {
        throw invalidRequest(`since must be a real instant, not '${since}'`)
      }
      const page = await listEvents(db, { limit, beforeId, accountId, keyId, since: sinceAt })
      if (page.hasMore) {
        const next = cursors.encode({ afterId: page.events.at(-1)!.id, status: undefined })
        const query = {
          accountId: accountId?.toString(),
          keyId: keyId?.toString(),
          since,
          limit: String(limit),
          cursor: next
        }
        reply.header('link', nextLink(config.ADMIN_PUBLIC_URL, '/events', query))
      }
      return page.events.map(describeEvent)
    }
  )
}

export default accounts
