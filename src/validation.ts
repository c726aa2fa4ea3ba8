import { Ajv, type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import { parseInstant } from './schemas/instant.js'
import { INT64_MAX, INT64_MIN, isInt64Schema } from './schemas/int64.js'
import { STORABLE_TEXT } from './schemas/pets.js'

/** Every format character, those beyond the BMP (tags, musical format controls) included. */
const FORMAT_CHARACTER = /\p{Cf}/u

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv
const DECIMAL_INT64 = /^-?(?:0|[1-9][0-9]{0,18})$/

type Int64Mode = 'bigint' | 'decimal-string'

/** How the int64 and wholeNumber keywords read a value, and the bounds of the schema they replace (ajv's own skip BigInts). */
interface Int64Setting {
  mode: Int64Mode
  minimum?: number
  maximum?: number
}

function int64Error(message: string): Partial<ErrorObject> {
  return { keyword: 'int64', message, params: {} }
}

function createAjv(options: { coerceTypes: boolean }): Ajv {
  const ajv = new Ajv({
    coerceTypes: options.coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false
  })
  addFormats(ajv)
  // Every instant a client sends, in bodies, queries and paths alike: one the database stores and a
  // response serves back (schemas/instant.ts), not all that RFC 3339 allows.
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => parseInstant(text) !== undefined })
  ajv.addKeyword({
    keyword: 'int64',
    modifying: true,
    errors: true,
    validate: function validateInt64(
      this: unknown,
      setting: Int64Setting,
      data: unknown,
      _schema?: unknown,
      context?: { parentData: Record<string | number, unknown>; parentDataProperty: string | number }
    ): boolean {
      const self = validateInt64 as unknown as { errors: Partial<ErrorObject>[] }
      let value: bigint | undefined
      if (typeof data === 'bigint') value = data
      else if (setting.mode === 'decimal-string' && typeof data === 'string' && DECIMAL_INT64.test(data)) {
        value = BigInt(data)
      }
      if (value === undefined) {
        self.errors = [int64Error('must be an integer')]
        return false
      }
      const lowest = setting.minimum === undefined ? INT64_MIN : BigInt(setting.minimum)
      const highest = setting.maximum === undefined ? INT64_MAX : BigInt(setting.maximum)
      if (value < lowest || value > highest) {
        self.errors = [int64Error(`must be an integer from ${lowest} to ${highest}`)]
        return false
      }
      if (context && data !== value) context.parentData[context.parentDataProperty] = value
      return true
    }
  })
  // A body's integer literals arrive as BigInts (json.ts), and a query's or path's integers as text, which
  // ajv's coercion would read as Number() does (`0x10`, `1e1`, ` 5`): a plain `integer` takes a BigInt, or
  // decimal digits alone, within its bounds and hands the handler a number, as its type says.
  ajv.addKeyword({
    keyword: 'wholeNumber',
    modifying: true,
    errors: true,
    validate: function validateWholeNumber(
      this: unknown,
      setting: Int64Setting,
      data: unknown,
      _schema?: unknown,
      context?: { parentData: Record<string | number, unknown>; parentDataProperty: string | number }
    ): boolean {
      const self = validateWholeNumber as unknown as { errors: Partial<ErrorObject>[] }
      let value: bigint | undefined
      if (typeof data === 'bigint') value = data
      // A default the schema fills in is a number.
      else if (Number.isInteger(data)) value = BigInt(data as number)
      else if (setting.mode === 'decimal-string' && typeof data === 'string' && DECIMAL_INT64.test(data)) {
        value = BigInt(data)
      }
      if (value === undefined) {
        self.errors = [int64Error('must be an integer')]
        return false
      }
      const lowest = BigInt(setting.minimum ?? Number.MIN_SAFE_INTEGER)
      const highest = BigInt(setting.maximum ?? Number.MAX_SAFE_INTEGER)
      if (value < lowest || value > highest) {
        self.errors = [int64Error(`must be an integer from ${lowest} to ${highest}`)]
        return false
      }
      if (context) context.parentData[context.parentDataProperty] = Number(value)
      return true
    }
  })
  // STORABLE_TEXT is a pattern the serializer's compiler (no `u` flag) takes too, so it can name only
  // the BMP's format characters; beside it, this refuses every one, as the services' checkName does.
  ajv.addKeyword({
    keyword: 'storableText',
    errors: true,
    validate: function validateStorableText(_setting: true, data: unknown): boolean {
      if (typeof data !== 'string' || !FORMAT_CHARACTER.test(data)) return true
      const self = validateStorableText as unknown as { errors: Partial<ErrorObject>[] }
      self.errors = [
        { keyword: 'pattern', message: 'must not contain format characters', params: { pattern: STORABLE_TEXT } }
      ]
      return false
    }
  })
  return ajv
}

// Rewrites `integer`/`int64` nodes to the int64 keyword, and plain `integer` nodes to the wholeNumber
// keyword; adds storableText beside the STORABLE_TEXT pattern; leaves every other node as written.
function withInt64Keyword(schema: unknown, mode: Int64Mode): unknown {
  if (Array.isArray(schema)) return schema.map((item) => withInt64Keyword(item, mode))
  if (schema === null || typeof schema !== 'object') return schema
  const node = schema as Record<string, unknown>
  if (isInt64Schema(node)) {
    const {
      type: _type,
      format: _format,
      minimum,
      maximum,
      ...rest
    } = node as Record<string, unknown> & {
      minimum?: number
      maximum?: number
    }
    return { ...rest, int64: { mode, minimum, maximum } satisfies Int64Setting }
  }
  if (node.type === 'integer') {
    const {
      type: _type,
      minimum,
      maximum,
      ...rest
    } = node as Record<string, unknown> & {
      minimum?: number
      maximum?: number
    }
    return {
      ...(withInt64Keyword(rest, mode) as object),
      wholeNumber: { mode, minimum, maximum } satisfies Int64Setting
    }
  }
  const rewritten = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withInt64Keyword(value, mode)]))
  return node.pattern === STORABLE_TEXT ? { ...rewritten, storableText: true } : rewritten
}

// Node lowercases received header names, so a headers schema is matched in lowercase, as Fastify's
// own compiler does (it leaves custom compilers' schemas alone).
function withLowercaseHeaderNames(schema: SchemaObject): SchemaObject {
  const { properties, required } = schema as { properties?: Record<string, unknown>; required?: string[] }
  return {
    ...schema,
    ...(properties && {
      properties: Object.fromEntries(Object.entries(properties).map(([name, value]) => [name.toLowerCase(), value]))
    }),
    ...(required && { required: required.map((name) => name.toLowerCase()) })
  }
}

/** What one set of shared schemas compiled, by part and route schema. */
interface Compiled {
  bodyAjv: Ajv
  textAjv: Ajv
  validators: Map<string, ValidateFunction>
}

// Every app built in one process on the same shared schemas reuses what an earlier one compiled: a
// server builds two apps, a test process many more, each compiling its routes' schemas again. Bounded
// by the schemas the code defines, not by anything a request sends.
const compiledBySharedSchemas = new Map<string, Compiled>()

function compiledFor(sharedSchemas: readonly SchemaObject[]): Compiled {
  const key = JSON.stringify(sharedSchemas)
  let compiled = compiledBySharedSchemas.get(key)
  if (!compiled) {
    const bodyAjv = createAjv({ coerceTypes: false })
    const textAjv = createAjv({ coerceTypes: true })
    for (const schema of sharedSchemas) {
      bodyAjv.addSchema(withInt64Keyword(schema, 'bigint') as SchemaObject)
      textAjv.addSchema(withInt64Keyword(schema, 'decimal-string') as SchemaObject)
    }
    compiled = { bodyAjv, textAjv, validators: new Map() }
    compiledBySharedSchemas.set(key, compiled)
  }
  return compiled
}

/**
 * Bodies are validated as sent (no type coercion: `"5"` is not a number), while path and query
 * values, which are always text, are coerced. int64 values reach handlers as BigInts. Shared
 * schemas, which routes reach by `$ref`, get the same int64 rewrite as the routes' own.
 */
export function createValidatorCompiler(
  sharedSchemas: readonly SchemaObject[] = []
): FastifySchemaCompiler<SchemaObject> {
  const { bodyAjv, textAjv, validators } = compiledFor(sharedSchemas)
  return ({ schema, httpPart }) => {
    const isBody = httpPart === 'body'
    const key = `${isBody ? 'body' : httpPart === 'headers' ? 'headers' : 'text'} ${JSON.stringify(schema)}`
    let validate = validators.get(key)
    if (!validate) {
      const ajv = isBody ? bodyAjv : textAjv
      const named = httpPart === 'headers' ? withLowercaseHeaderNames(schema) : schema
      validate = ajv.compile(withInt64Keyword(named, isBody ? 'bigint' : 'decimal-string') as SchemaObject)
      validators.set(key, validate)
    }
    return validate as ReturnType<FastifySchemaCompiler<SchemaObject>>
  }
}
