import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { instantIdCursors } from '../../pagination.js'
import { getServiceSecret } from '../../repositories/service-secrets.js'
import type { Scope } from '../../db/schema.js'
import { Ref } from '../../schemas/ref.js'
import {
  commonErrorResponses,
  errorResponse,
  insufficientScopeResponse,
  jsonResponse,
  nextPageHeaders,
  scoped
} from '../../schemas/responses.js'
import { UsageQuery, UsageRows } from '../../schemas/usage.js'
import { accountUsagePage, checkExportRange, formatUsageRows } from '../../services/usage-export.js'
import { rejectOtherMethods } from '../method-not-allowed.js'

const USAGE_SCOPE: Scope = 'usage:read'

const jsonPage = jsonResponse('A page of rows', Ref(UsageRows), nextPageHeaders)
/** The page as JSON (the default) or as CSV, with the rate-limit headers and the next page's link. */
const pageResponse = {
  ...jsonPage,
  content: {
    ...jsonPage.content,
    'text/csv': { schema: Type.String({ description: 'start,accountId,keyId,admitted,refused,units' }) }
  }
}

/**
 * A key holder's own account's usage: the admin export's figures (the same repository and the same
 * rows), for the calling key's account alone, a page at a time. Database round trips: 1 a page.
 */
const usage: FastifyPluginAsyncTypebox = async (app) => {
  const { config, db } = app
  const secret = await getServiceSecret(db, 'cursor')
  const base = config.PUBLIC_BASE_URL

  app.get(
    '/usage',
    {
      config: { scope: USAGE_SCOPE },
      schema: {
        operationId: 'getUsage',
        tags: ['usage'],
        summary: "The usage of the calling key's account, per key and UTC hour or day",
        description:
          'The figures of the admin usage export, for the keys of the calling key’s account alone (never another ' +
          'account’s): requests admitted, refused with 429, and the units the admitted spent. Rows are ordered by ' +
          'period, then key; periods in which a key had no request are left out. While more follow, ' +
          '`Link: rel="next"` gives the next page. An hour shows the requests admitted in it by the database’s ' +
          'clock, each instance reporting within about 5 seconds. Needs a key with the scope `usage:read`.',
        ...scoped(USAGE_SCOPE),
        querystring: UsageQuery,
        response: {
          ...commonErrorResponses,
          200: pageResponse,
          400: errorResponse(
            '`invalid_request`: a query value is invalid, `from` or `to` is not on a boundary of the granularity, ' +
              '`to` is not after `from`, or the cursor is not one this listing issued'
          ),
          ...insufficientScopeResponse(USAGE_SCOPE)
        }
      }
    },
    async (request, reply) => {
      const { from, to, granularity = 'hour', format = 'json', limit = 100, cursor } = request.query
      const accountId = request.apiKey!.accountId
      const range = checkExportRange(from, to, granularity)
      // Signed for the account and the query: a cursor of another account or range is refused.
      const listing = `/v1/usage of account ${accountId} ${granularity} ${range.from.toISOString()} ${range.to.toISOString()}`
      const cursors = instantIdCursors(secret, listing)
      const after = cursor === undefined ? undefined : cursors.decode(cursor)
      const page = await accountUsagePage(db, accountId, { ...range, granularity, after, limit })
      if (page.next) {
        const query = new URLSearchParams({
          from,
          to,
          granularity,
          format,
          limit: String(limit),
          cursor: cursors.encode(page.next)
        })
        reply.header('link', `<${base}/usage?${query}>; rel="next"`)
      }
      reply.header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8')
      return reply.send(formatUsageRows(page.rows, format))
    }
  )

  rejectOtherMethods(app, '/usage', ['GET'])
}

export default usage
