import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { rateLimitHeaders } from '../../limits/headers.js'
import { reportWindow, usedIn, windowStarts, windowStates } from '../../limits/windows.js'
import { accountSubject, readCounter, readKeyBan } from '../../repositories/rate-limits.js'
import { RateLimitStatus } from '../../schemas/rate-limit.js'
import { Ref } from '../../schemas/ref.js'
import { commonErrorResponses, jsonResponse } from '../../schemas/responses.js'
import { rejectOtherMethods } from '../method-not-allowed.js'

/**
 * Where the key stands, without spending a request: its account, plan, both windows (the account's,
 * shared by its keys) and the key's ban. The guard authenticates it but neither counts nor refuses it.
 * 2 round trips.
 */
const rateLimit: FastifyPluginAsyncTypebox = async (app) => {
  const { db, clock, limiter } = app

  app.get(
    '/rate_limit',
    {
      config: { uncounted: true },
      schema: {
        operationId: 'getRateLimit',
        tags: ['rate limits'],
        summary: "The key's account, plan, windows and ban; never counts against them",
        description:
          "The windows are the account's, shared by all of its keys; a ban is the key's own. Answers even while " +
          'the key is refused or banned. `used` counts what every instance has counted, including requests ' +
          'another instance holds in advance and has not yet served.',
        response: {
          200: jsonResponse('Where the key stands', Ref(RateLimitStatus)),
          ...commonErrorResponses
        }
      }
    },
    async (request, reply) => {
      const key = request.apiKey!
      const now = clock()
      const starts = windowStarts(now)
      const subject = accountSubject(key.accountId)
      const [counter, ban] = await Promise.all([readCounter(db, subject), readKeyBan(db, key.id, new Date(now))])
      // What this instance holds in a lease is counted but not yet used.
      const windows = windowStates(key, starts, usedIn(starts, counter, limiter.held(subject, now)))
      const bannedUntil = ban ?? null
      reply.headers(
        rateLimitHeaders(
          bannedUntil
            ? { outcome: 'key_banned', windows, retryAt: bannedUntil.getTime(), newlyBanned: false }
            : { outcome: 'admitted', windows },
          now
        )
      )
      return {
        account: { id: key.accountId, externalId: key.accountExternalId },
        plan: key.plan,
        windows: windows.map(reportWindow),
        bannedUntil: bannedUntil?.toISOString() ?? null
      }
    }
  )

  rejectOtherMethods(app, '/rate_limit', ['GET'])
}

export default rateLimit
