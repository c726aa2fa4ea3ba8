import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { getServiceSecret } from '../repositories/service-secrets.js'
import { Ref } from '../schemas/ref.js'
import { closeAccount } from '../services/account-closure.js'
import {
  changeAccount,
  changeCredits,
  createAccount,
  describeAccount,
  describeCredits,
  removeCredits,
  getAccountById,
  listAccounts
} from '../services/accounts.js'
import { describeKey, listKeys } from '../services/api-keys.js'
import { actorOf, errors, invalid, json, nextLink, planLimits, unknownAccount } from './common.js'
import { listingCursors } from '../pagination.js'
import {
  Account,
  AccountChanges,
  AccountListQuery,
  AccountParams,
  AuditActorHeaders,
  CreditChange,
  Credits,
  Key,
  NewAccount
} from './schemas.js'

const closed: [number, string] = [409, '`account_closed`: the account is closed']

/** Accounts and their keys, under /admin/v1: made, listed, read, changed and closed. One service call each. */
const accounts: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app
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
      const { externalId, name, plan, overrides, metadata, cycleAnchor } = request.body
      const fields = { externalId, name, plan, overrides, metadata, cycleAnchor, ...planLimits(request.body) }
      const account = await createAccount(db, actorOf(request), fields)
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
    async (request) => describeAccount(await getAccountById(db, request.params.id))
  )

  app.patch(
    '/accounts/:id',
    {
      schema: {
        operationId: 'changeAccount',
        summary: 'Change an account: its name, its metadata, its plan, its overrides, its cycleAnchor',
        description:
          "`overrides` replaces the account's overrides ([] removes them); `perMinute` and `perDay` set the minute's " +
          "and the day's for good. A move to another plan without either drops them. Every key of the account " +
          'follows, on every instance within a second.',
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
      const { name, plan, overrides, metadata, cycleAnchor } = request.body
      const changes = { name, plan, overrides, metadata, cycleAnchor, ...planLimits(request.body) }
      return describeAccount(await changeAccount(db, actorOf(request), request.params.id, changes))
    }
  )

  app.post(
    '/accounts/:id/credits',
    {
      schema: {
        operationId: 'changeCredits',
        summary: "Add to the account's credits, set them, or set their refill",
        description:
          '`add` adds to the balance in one statement, so that adds sent at once all count; an account without ' +
          'credits starts at 0. A balance holds at most 10^15 units: an `add` past it is 400. Each admitted request ' +
          'spends its cost; at 0 the answer is 429 `credits_exhausted`.',
        headers: AuditActorHeaders,
        params: AccountParams,
        body: Ref(CreditChange),
        response: {
          200: json('The credits as changed', Ref(Credits)),
          ...errors(invalid, unknownAccount, closed)
        }
      }
    },
    async (request) => {
      const { add, set, refill } = request.body
      const credits = await changeCredits(db, actorOf(request), request.params.id, { add, set, refill })
      return describeCredits(credits)
    }
  )

  app.delete(
    '/accounts/:id/credits',
    {
      schema: {
        operationId: 'removeCredits',
        summary: "Remove the account's credits: it has no balance to spend down",
        headers: AuditActorHeaders,
        params: AccountParams,
        response: {
          204: { description: 'Removed, or there were none', type: 'null' },
          ...errors(invalid, unknownAccount)
        }
      }
    },
    async (request, reply) => {
      await removeCredits(db, actorOf(request), request.params.id)
      return reply.code(204).send()
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
    async (request) => describeAccount(await closeAccount(db, actorOf(request), request.params.id))
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
      await getAccountById(db, id)
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
}

export default accounts
