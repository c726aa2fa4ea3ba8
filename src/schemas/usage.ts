import { Type } from '@sinclair/typebox'
import { Instant } from './instant.js'
import { Int64 } from './int64.js'
import { Ref } from './ref.js'

// A key holder's view of its own account's usage (GET /v1/usage): the admin export's rows.

export const UsageRow = Type.Object(
  {
    start: Instant('The start of the UTC hour or day'),
    accountId: Int64({ description: "The key's account: always the calling key's" }),
    keyId: Int64({ description: 'The key' }),
    admitted: Type.Integer({ description: 'Requests admitted' }),
    refused: Type.Integer({ description: 'Requests refused with 429' }),
    units: Type.Integer({ description: 'Units the admitted requests spent' })
  },
  { $id: 'UsageRow', title: 'UsageRow', additionalProperties: false }
)

export const UsageRows = Type.Array(Ref(UsageRow), { $id: 'UsageRows', title: 'UsageRows' })

export const UsageQuery = Type.Object({
  from: Instant('The first hour (or day) read, its start, inclusive: on a UTC hour (or day) boundary'),
  to: Instant('The end of the range, exclusive: on a UTC hour (or day) boundary'),
  granularity: Type.Optional(
    Type.Union([Type.Literal('hour'), Type.Literal('day')], {
      default: 'hour',
      description: 'A row per key and UTC hour, or per key and UTC day (the sum of its hours)'
    })
  ),
  format: Type.Optional(
    Type.Union([Type.Literal('json'), Type.Literal('csv')], {
      default: 'json',
      description: 'A JSON array of rows, or CSV with a header row (start,accountId,keyId,admitted,refused,units)'
    })
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Maximum number of rows to return' })
  ),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: 512, description: 'Opaque position from a `Link: rel="next"` header' })
  )
})
