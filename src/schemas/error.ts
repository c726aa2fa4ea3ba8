import { Type, type Static } from '@sinclair/typebox'

export const ErrorBody = Type.Object(
  {
    code: Type.String({ description: 'Machine-readable error code', examples: ['invalid_request'] }),
    message: Type.String({ description: 'Human-readable description' }),
    status: Type.Integer({ description: 'The HTTP status code' })
  },
  { $id: 'Error', title: 'Error', additionalProperties: false }
)

export type ErrorBody = Static<typeof ErrorBody>
