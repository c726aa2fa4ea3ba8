import { Type, type Static } from '@sinclair/typebox'
import { ERROR_CODES, type ErrorCode } from '../errors.js'

export const ErrorBody = Type.Object(
  {
    // The registry's codes as an enum: a client can switch over them, and a code the registry lacks cannot be sent.
    code: Type.Unsafe<ErrorCode>(
      Type.String({ enum: ERROR_CODES, description: 'Machine-readable error code', examples: ['invalid_request'] })
    ),
    message: Type.String({ description: 'Human-readable description' }),
    status: Type.Integer({ description: 'The HTTP status code' })
  },
  { $id: 'Error', title: 'Error', additionalProperties: false }
)

export type ErrorBody = Static<typeof ErrorBody>
