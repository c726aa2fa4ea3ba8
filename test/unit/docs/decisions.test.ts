import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BEGIN, END, errorCodesTable, withErrorCodes } from '../../../scripts/error-docs.js'
import { ERRORS } from '../../../src/errors.js'

const ROOT = resolve(import.meta.dirname, '../../..')

describe("docs/decisions.md's table of error codes", () => {
  it('is exactly what src/errors.ts generates', async () => {
    const committed = await readFile(resolve(ROOT, 'docs/decisions.md'), 'utf8')
    expect(committed, 'the table of error codes drifted from src/errors.ts: run npm run docs:errors').toBe(
      withErrorCodes(committed)
    )
  })

  it('has one row per registered code, with its status and description', () => {
    const rows = errorCodesTable()
      .split('\n')
      .filter((line) => /^\| \d{3} \|/.test(line))
    expect(rows.map((row) => row.split('`')[1])).toEqual(Object.keys(ERRORS))
    expect(rows).toContain('| 429 | `key_banned` | the key is banned for a while |')
    for (const code of ['credits_exhausted', 'insufficient_role', 'operator_exists']) {
      expect(rows.some((row) => row.includes(`\`${code}\``))).toBe(true)
    }
  })

  it('replaces only what stands between its markers, and refuses a doc without them', () => {
    const doc = `# Errors\n\n${BEGIN}\n\n| stale |\n\n${END}\n\nAfter.\n`
    const table = errorCodesTable({ gone: { status: 410, when: 'a | b' } })
    expect(withErrorCodes(doc, table)).toBe(
      `# Errors\n\n${BEGIN}\n\n| HTTP | code | when |\n|---|---|---|\n| 410 | \`gone\` | a \\| b |\n\n${END}\n\nAfter.\n`
    )
    expect(() => withErrorCodes('# Errors\n')).toThrow('has no')
  })
})
