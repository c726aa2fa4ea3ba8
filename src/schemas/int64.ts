import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox'

export const INT64_MIN = -(2n ** 63n)
export const INT64_MAX = 2n ** 63n - 1n

/**
 * An int64 value. Documented and serialized as `integer`/`int64`; validated by the `int64`
 * keyword (see validation.ts), which accepts only BigInts in range, so nothing is ever rounded.
 * Handlers receive a bigint.
 */
export function Int64(
  options: { description?: string; examples?: unknown[]; minimum?: number; maximum?: number } = {}
): TUnsafe<bigint> {
  return Type.Unsafe<bigint>({ ...options, type: 'integer', format: 'int64' })
}

/**
 * An int64 value or null. `nullable` rather than a union with null: the serializer tells the
 * branches of a union apart with a validator that takes no BigInt for an integer. The OpenAPI 3.1
 * document shows it as `type: ['integer', 'null']`.
 */
export function NullableInt64(options: { description?: string } = {}): TUnsafe<bigint | null> {
  return Type.Unsafe<bigint | null>({ ...options, type: 'integer', format: 'int64', nullable: true })
}

export function isInt64Schema(schema: TSchema | Record<string, unknown>): boolean {
  return schema.type === 'integer' && schema.format === 'int64'
}
