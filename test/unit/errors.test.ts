import { describe, expect, it } from 'vitest'
import { ApiError, ConflictError, ERROR_CODES, ERRORS, type ErrorCode } from '../../src/errors.js'
import { ErrorBody } from '../../src/schemas/error.js'

describe('the error registry', () => {
  it('gives each code an error status and a one-line description', () => {
    for (const [code, { status, when }] of Object.entries(ERRORS)) {
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/)
      expect(status >= 400 && status < 600, code).toBe(true)
      expect(when, code).not.toMatch(/\n/)
      expect(when.length, code).toBeGreaterThan(0)
    }
  })

  it("is the Error body's code enum", () => {
    expect(ErrorBody.properties.code.enum).toEqual(Object.keys(ERRORS))
  })

  it('sends each code with its registered status', () => {
    expect(new ApiError('key_banned', 'banned')).toMatchObject({ statusCode: 429, code: 'key_banned' })
    expect(new ApiError('operator_exists', 'taken').statusCode).toBe(409)
    expect(ERROR_CODES.map((code) => new ApiError(code, 'x').statusCode)).toEqual(
      Object.values(ERRORS).map(({ status }) => status)
    )
  })

  it('refuses a code it does not hold, at compile time and at run time', () => {
    // @ts-expect-error: an unregistered code does not compile.
    expect(() => new ApiError('no_such_code', 'x')).toThrow("'no_such_code' is not a registered error code")
    // A code built at run time, as a domain error may carry one.
    const built = ['account', 'gone'].join('_') as ErrorCode
    expect(() => new ApiError(built, 'x')).toThrow(TypeError)
    expect(() => new ApiError('toString' as ErrorCode, 'x')).toThrow(TypeError)
    // @ts-expect-error: a conflict's code is one registered with 409.
    expect(new ConflictError('not_found', 'x').code).toBe('not_found')
  })
})
