import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { Type } from '@sinclair/typebox'
import { describe, expect, it } from 'vitest'
import { configurationDocs } from '../../../scripts/config-docs.js'
import { ConfigSchema } from '../../../src/config.js'

const ROOT = resolve(import.meta.dirname, '../../..')

describe('docs/configuration.md', () => {
  it('is exactly what src/config.ts generates', async () => {
    const committed = await readFile(resolve(ROOT, 'docs/configuration.md'), 'utf8')
    expect(committed, 'the configuration reference drifted from src/config.ts: run npm run docs:config').toBe(
      configurationDocs()
    )
  })

  it('has one row per variable, with its default and its description', () => {
    const rows = configurationDocs()
      .split('\n')
      .filter((line) => line.startsWith('| `'))
    expect(rows.map((row) => row.split('`')[1])).toEqual(Object.keys(ConfigSchema.properties))
    expect(rows).toContain('| `PORT` | `3000` | integer, 0 to 65535 | Port of the public listener. |')
    expect(rows.find((row) => row.startsWith('| `DATABASE_URL`'))).toMatch(/^\| `DATABASE_URL` \| unset \| /)
  })

  it('refuses a variable without a description', () => {
    const schema = Type.Object({ EXAMPLE_PORT: Type.Integer({ default: 1 }) })
    expect(() => configurationDocs(schema)).toThrow('EXAMPLE_PORT in src/config.ts has no description')
  })

  it('keeps a | inside a cell from splitting the row', () => {
    const schema = Type.Object({ EXAMPLE: Type.String({ default: 'a', description: 'one | two' }) })
    expect(configurationDocs(schema)).toContain('| `EXAMPLE` | `a` | string | one \\| two |')
  })
})
