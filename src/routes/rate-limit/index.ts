import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { rateLimitHeaders } from '../../limits/headers.js'
import { lessRemaining, reportWindows } from '../../limits/windows.js'
import { readStanding } from '../../repositories/rate-limits.js'
import { RateLimitStatus } from '../../schemas/rate-limit.js'
import { Ref } from '../../schemas/ref.js'
import { commonErrorResponses, jsonResponse } from '../../schemas/responses.js'
import { rejectOtherMethods } from '../method-not-allowed.js'
import { StandingSnapshots } from './standings.js'

/**
 * Where the key stands, without spending a request: its account, plan, every limit (the account's,
 * shared by its keys), credits and the key's ban. The guard authenticates it but neither counts nor
 * refuses it. Database round trips: none within a second of the key's last read here, or once its
 * reads are spent, unless a window has ended since (standings.ts); else 1. What this instance's own
 * statements counted since the read is shown at once.
 */
const rateLimit: FastifyPluginAsyncTypebox = async (app) => {
  const { db, databaseClock, limiter } = app
  const snapshots = new StandingSnapshots((apiKeyId, accountId) => readStanding(db, accountId, apiKeyId))

  app.get(
    '/rate_limit',
    {
      config: { uncounted: true },
      schema: {
        operationId: 'getRateLimit',
        tags: ['rate limits'],
        summary: "The key's account, plan, windows, credits and ban; never counts against them",
        description:
          "The windows are the account's, shared by all of its keys; a ban is the key's own. Answers even while " +
          'the key is refused or banned. `used` counts what every instance has counted, including requests ' +
          'another instance holds in advance and has not yet served: what the answering instance counted shows ' +
          'at once, the others within about a second (3 s for a key that asks more often than that).',
        response: {
          200: jsonResponse('Where the key stands', Ref(RateLimitStatus)),
          ...commonErrorResponses
        }
      }
    },
    async (request, reply) => {
      const key = request.apiKey!
      const now = databaseClock.now()
      const { standing: stored, startedAt } = await snapshots.standing(key.id, key.accountId, now)
      // What this instance counted since the read started shows at once (the order of the two on this
      // process's clock, as the database's clock may not have moved between them); units it holds
      // leased and has not used are counted in the database, not yet spent.
      const mine = limiter.lastCounted(key.accountId)
      const { windows, shadows, credits } =
        mine && mine.settledAt > startedAt
          ? mine
          : {
              windows: lessRemaining(stored.windows, -limiter.unusedLease(key.accountId)),
              shadows: stored.shadows,
              credits: stored.credits
            }
      // A ban only ever ends when it runs out, so the later of the two known ends is the one in force.
      const banEnd = Math.max(stored.bannedUntil, limiter.knownBan(key.id))
      const banned = banEnd > now
      const headers = rateLimitHeaders(
        banned
          ? { outcome: 'key_banned', windows, shadows, credits, retryAt: banEnd, newlyBanned: false }
          : { outcome: 'admitted', windows, shadows, credits },
        now
      )
      if (headers) reply.headers(headers)
      return {
        account: { id: key.accountId, externalId: key.accountExternalId },
        plan: key.plan,
        windows: reportWindows(windows, shadows),
        costs: key.costs,
        credits,
        bannedUntil: banned ? new Date(banEnd).toISOString() : null
      }
    }
  )

  rejectOtherMethods(app, '/rate_limit', ['GET'])
}

export default rateLimit
