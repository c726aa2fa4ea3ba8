import type { TObject, TSchema } from '@sinclair/typebox'
import { ConfigSchema, ISO_DATE_TIME } from '../src/config.js'

const HEADER = `<!-- Generated from src/config.ts by \`npm run docs:config\`. Do not edit. -->

# Configuration

All configuration comes from environment variables, read once and validated at start-up against the
TypeBox schema in \`src/config.ts\`; nothing else reads \`process.env\`. A bad value stops the process
with a one-line message naming the variable. The CLI reads the same variables as the server.

| Variable | Default | Accepts | Meaning |
|---|---|---|---|
`

const code = (value: unknown) => `\`${String(value)}\``

// What a value must look like, in the schema's own terms.
function accepts(schema: TSchema): string {
  if (schema.anyOf) return (schema.anyOf as TSchema[]).map((option) => code(option.const)).join(', ')
  const range = (kind: string) => {
    const { minimum, maximum } = schema as { minimum?: number; maximum?: number }
    if (minimum !== undefined && maximum !== undefined) return `${kind}, ${minimum} to ${maximum}`
    if (minimum !== undefined) return `${kind}, at least ${minimum}`
    return kind
  }
  switch (schema.type) {
    case 'integer':
      return range('integer')
    case 'number':
      return range('number')
    case 'boolean':
      return '`true`, `false`'
    case 'string':
      if (schema.pattern === ISO_DATE_TIME) return 'an RFC 3339 date and time'
      if (schema.pattern) return `string matching ${code(schema.pattern)}`
      if (schema.minLength === 1) return 'non-empty string'
      if (schema.minLength) return `string, at least ${schema.minLength} characters`
      return 'string'
    default:
      throw new Error(`No rendering for a schema of type ${String(schema.type)}`)
  }
}

const cell = (text: string) => text.replaceAll('|', '\\|')

/** docs/configuration.md as the schema describes it; throws when a variable has no description. */
export function configurationDocs(schema: TObject = ConfigSchema): string {
  const rows = Object.entries(schema.properties).map(([name, property]: [string, TSchema]) => {
    if (!property.description) throw new Error(`${name} in src/config.ts has no description`)
    const byDefault = property.default === undefined ? 'unset' : code(property.default)
    return `| \`${name}\` | ${byDefault} | ${cell(accepts(property))} | ${cell(property.description)} |`
  })
  return `${HEADER}${rows.join('\n')}\n`
}
