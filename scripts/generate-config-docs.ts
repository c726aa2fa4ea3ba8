import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { configurationDocs } from './config-docs.js'

const TARGET = resolve(import.meta.dirname, '../docs/configuration.md')

await writeFile(TARGET, configurationDocs())
console.log(`Wrote ${TARGET}`)
