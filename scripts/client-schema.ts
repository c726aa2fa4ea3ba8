import openapiTS, { astToString, type OpenAPI3, type SchemaObject } from 'openapi-typescript'
import ts from 'typescript'

const BIGINT = ts.factory.createKeywordTypeNode(ts.SyntaxKind.BigIntKeyword)
const BIGINT_OR_NULL = ts.factory.createUnionTypeNode([
  BIGINT,
  ts.factory.createLiteralTypeNode(ts.factory.createNull())
])
/** Where a module's document is served: the public API's for the client, the admin API's for the console. */
export type DocumentPath = '/v1/openapi.json' | '/admin/v1/openapi.json'

const header = (path: DocumentPath) =>
  path === '/v1/openapi.json'
    ? '// Generated from the served OpenAPI document by `npm run client:generate`. Do not edit.\n\n'
    : `// Generated from the admin API's served OpenAPI document (${path}) by \`npm run client:generate\`. Do not edit.\n\n`

const isInt64 = (schema: unknown) =>
  typeof schema === 'object' &&
  schema !== null &&
  (schema as SchemaObject).type === 'integer' &&
  (schema as SchemaObject).format === 'int64'

/** An int64 or null, as OpenAPI 3.1 writes a nullable one: `type: ['integer', 'null']`. */
const isNullableInt64 = (schema: unknown) => {
  const { type, format } = (schema ?? {}) as { type?: unknown; format?: unknown }
  return (
    format === 'int64' && Array.isArray(type) && type.length === 2 && type.includes('integer') && type.includes('null')
  )
}

// Names of the object properties declared int64; a name must mean the same everywhere in the document.
function int64Properties(document: unknown): string[] {
  const int64 = new Set<string>()
  const other = new Set<string>()
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (typeof node !== 'object' || node === null) return
    const properties = (node as { properties?: unknown }).properties
    if (typeof properties === 'object' && properties !== null) {
      for (const [name, schema] of Object.entries(properties)) {
        ;(isInt64(schema) || isNullableInt64(schema) ? int64 : other).add(name)
      }
    }
    Object.values(node).forEach(visit)
  }
  visit(document)
  const ambiguous = [...int64].filter((name) => other.has(name))
  if (ambiguous.length) throw new Error(`Properties int64 in one schema but not in another: ${ambiguous.join(', ')}`)
  return [...int64].sort()
}

/**
 * The schema module of a client of a document (the TypeScript client, the console): openapi-typescript's
 * types with int64 as bigint, and the int64 property names the client must read from JSON as exact BigInts.
 */
export async function clientSchemaModule(document: OpenAPI3, path: DocumentPath = '/v1/openapi.json'): Promise<string> {
  const ast = await openapiTS(structuredClone(document), {
    transform: (schema) => (isInt64(schema) ? BIGINT : isNullableInt64(schema) ? BIGINT_OR_NULL : undefined)
  })
  return (
    header(path) +
    astToString(ast) +
    '\n/** Properties the document declares int64: the client reads them from JSON as exact BigInts. */\n' +
    `export const int64Properties: ReadonlySet<string> = new Set(${JSON.stringify(int64Properties(document))})\n`
  )
}
