import { isUtf8 } from 'node:buffer'
import { parse } from 'lossless-json'

const INTEGER_LITERAL = /^-?(?:0|[1-9][0-9]*)$/

export class JsonSyntaxError extends Error {}

// Integer literals become BigInts so that int64 fields keep every digit; fractions and exponents
// become numbers, which an int64 field refuses rather than rounding.
function parseNumber(text: string): bigint | number {
  return INTEGER_LITERAL.test(text) ? BigInt(text) : Number(text)
}

/**
 * Parses a JSON request body losslessly. Keys such as `__proto__` stay plain own properties
 * (strict schemas then refuse them by name) and nesting too deep to parse is a syntax error.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new JsonSyntaxError('The request body is empty')
  try {
    return parse(text, null, parseNumber)
  } catch (error) {
    if (error instanceof RangeError) throw new JsonSyntaxError('The request body is nested too deeply')
    throw new JsonSyntaxError(`The request body is not valid JSON: ${(error as Error).message}`)
  }
}

/**
 * A request body as JSON text, which must be UTF-8 (RFC 8259, section 8.1), whatever charset its
 * Content-Type names: bytes that are not UTF-8 are refused rather than stored as U+FFFD.
 */
export function decodeJsonBody(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw new JsonSyntaxError('The request body is not valid UTF-8')
  return bytes.toString('utf8')
}
