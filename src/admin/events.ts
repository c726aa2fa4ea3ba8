import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { invalidRequest } from '../errors.js'
import { getServiceSecret } from '../repositories/service-secrets.js'
import { INSTANT_RULE, parseInstant } from '../schemas/instant.js'
import { Ref } from '../schemas/ref.js'
import { describeEvent, listEvents } from '../services/accounts.js'
import { errors, invalid, json, nextLink } from './common.js'
import { listingCursors } from '../pagination.js'
import { AuditEvent, EventListQuery } from './schemas.js'

/** The audit trail, under /admin/v1: every change to an account or a key, newest first. */
const events: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app
  const secret = await getServiceSecret(db, 'cursor')

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
      const sinceAt = since === undefined ? undefined : parseInstant(since)
      if (since !== undefined && sinceAt === undefined) throw invalidRequest(`since ${INSTANT_RULE}`)
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

export default events
