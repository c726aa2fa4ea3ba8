import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Ref } from '../schemas/ref.js'
import { accountUsage, accountWindows } from '../services/accounts.js'
import { errors, invalid, json, unknownAccount } from './common.js'
import { AccountParams, AccountWindows, Usage, UsageQuery } from './schemas.js'

/** Where an account stands, under /admin/v1: its usage per day and its windows now. One service call each. */
const accountStanding: FastifyPluginAsyncTypebox = async (app) => {
  const { db, clock } = app

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
      return { days: await accountUsage(db, request.params.id, days, clock()) }
    }
  )

  app.get(
    '/accounts/:id/windows',
    {
      schema: {
        operationId: 'accountWindows',
        summary: "The account's windows and credits as they stand, and the keys of it banned now",
        description:
          "Read from the database, never counted: the same windows as `GET /v1/rate_limit`, shared by all of the account's " +
          'keys. `used` includes what instances have leased ahead and not yet served.',
        params: AccountParams,
        response: { 200: json('The windows and bans', Ref(AccountWindows)), ...errors(invalid, unknownAccount) }
      }
    },
    async (request) => accountWindows(db, request.params.id)
  )
}

export default accountStanding
