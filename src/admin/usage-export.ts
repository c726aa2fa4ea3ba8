import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Int64 } from '../schemas/int64.js'
import { checkExportRange, usageExport } from '../services/usage-export.js'
import { errors, invalid } from './common.js'
import { Instant } from '../schemas/instant.js'

const UsageExportQuery = Type.Object({
  from: Instant('The first hour (or day) exported, its start, inclusive'),
  to: Instant('The end of the range, exclusive'),
  granularity: Type.Optional(
    Type.Union([Type.Literal('hour'), Type.Literal('day')], {
      default: 'hour',
      description: 'A row per key and UTC hour, or per key and UTC day (the sum of its hours)'
    })
  ),
  accountId: Type.Optional(Int64({ description: "Only this account's keys" })),
  format: Type.Optional(
    Type.Union([Type.Literal('csv'), Type.Literal('json'), Type.Literal('ndjson')], {
      default: 'csv',
      description: 'csv (a header row first), a JSON array, or one JSON object a line'
    })
  )
})

const UsageExportRow = Type.Object(
  {
    start: Instant('The start of the UTC hour or day'),
    accountId: Int64({ description: "The key's account" }),
    keyId: Int64({ description: 'The key' }),
    admitted: Type.Integer({ description: 'Requests admitted' }),
    refused: Type.Integer({ description: 'Requests refused with 429' }),
    units: Type.Integer({ description: 'Units the admitted requests spent' })
  },
  { additionalProperties: false }
)

const CONTENT_TYPES = { csv: 'text/csv; charset=utf-8', json: 'application/json', ndjson: 'application/x-ndjson' }

/** Usage per key by UTC hour or day, for billing: every key, any range, streamed. */
const usageExportRoute: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app

  app.get(
    '/usage',
    {
      schema: {
        operationId: 'exportUsage',
        summary: 'Usage of every key (or one account’s) per UTC hour or day over any range, streamed',
        description:
          'Rows are ordered by period, then key; periods in which a key had no request are left out. The answer ' +
          'is written as the rows are read, a few thousand at a time, never held whole. An hour shows the requests ' +
          'admitted in it by the database’s clock, each instance reporting within about 5 seconds.',
        querystring: UsageExportQuery,
        response: {
          200: {
            description: 'The rows',
            content: {
              'text/csv': { schema: Type.String({ description: 'start,accountId,keyId,admitted,refused,units' }) },
              'application/json': { schema: Type.Array(UsageExportRow) },
              'application/x-ndjson': { schema: Type.String({ description: 'One row object a line' }) }
            }
          },
          ...errors(invalid)
        }
      }
    },
    async (request, reply) => {
      const { granularity = 'hour', format = 'csv', accountId } = request.query
      const range = await Promise.resolve().then(() =>
        checkExportRange(request.query.from, request.query.to, granularity)
      )
      reply.header('content-type', CONTENT_TYPES[format])
      if (format === 'csv') reply.header('content-disposition', `attachment; filename="usage-${granularity}.csv"`)
      return reply.send(Readable.from(usageExport(db, { ...range, granularity, accountId, format })))
    }
  )
}

export default usageExportRoute
