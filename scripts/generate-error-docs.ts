import { readFile, writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { withErrorCodes } from './error-docs.js'

const TARGET = resolve(import.meta.dirname, '../docs/decisions.md')

await writeFile(TARGET, withErrorCodes(await readFile(TARGET, 'utf8')))
console.log(`Wrote ${TARGET}`)
