import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../../src/errors.js'
import { createCursorCodec } from '../../src/pagination.js'

// A cursor that carries the deployment's own signature but a position encode never writes: what a
// leaked secret, or a bug in encode, would let through. It must be a 400, never a 500 from BigInt.
describe('cursors signed with the right secret around a position that is not an id', () => {
  const codec = createCursorCodec(randomBytes(32))
  const signed = (afterId: string) => codec.encode({ afterId: afterId as unknown as bigint, status: undefined })

  it.each(['abc', '0x10', ' 7', '1e3', '', '9223372036854775808', '-9223372036854775809', '12345678901234567890'])(
    'refuses %j with 400 invalid_request',
    (afterId) => {
      const decode = () => codec.decode(signed(afterId), undefined)
      expect(decode).toThrow(ApiError)
      expect(decode).toThrow(/cursor is not valid/)
      try {
        decode()
      } catch (error) {
        expect(error).toMatchObject({ statusCode: 400, code: 'invalid_request' })
      }
    }
  )

  it('reads back every id at the edges of int64', () => {
    for (const id of [0n, 1n, 9223372036854775807n, -9223372036854775808n]) {
      expect(codec.decode(codec.encode({ afterId: id, status: undefined }), undefined)).toBe(id)
    }
  })
})
