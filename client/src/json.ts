import { isLosslessNumber, parse, stringify } from 'lossless-json'
import { int64Properties } from './schema.js'

/**
 * Parses a response body; the properties the document declares int64 (`int64`, the public API's by
 * default) become exact BigInts, other numbers stay numbers.
 */
export function parseJson<T>(text: string, int64: ReadonlySet<string> = int64Properties): T {
  return parse(text, (key, value) => {
    if (!isLosslessNumber(value)) return value
    return int64.has(key) ? BigInt(value.toString()) : value.valueOf()
  }) as T
}

/** Serializes a request body, writing BigInts as exact JSON integers. */
export function stringifyJson(value: unknown): string {
  const text = stringify(value)
  if (text === undefined) throw new TypeError('The request body cannot be serialized as JSON')
  return text
}
