// Lint: fails when README.md or a doc in docs/ names, in a code span, a table, SQL function,
// environment variable, package, file or error code that the tree does not have (scripts/docs-names.ts
// says where each kind is read from), or when a generated doc differs from what its command writes.
// Usage: tsx scripts/check-docs.ts
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { configurationDocs } from './config-docs.js'
import { checkDocs } from './docs-names.js'
import { withErrorCodes } from './error-docs.js'

const root = resolve(import.meta.dirname, '..')
const findings = checkDocs(root)
for (const { file, line, name, problem } of findings) process.stderr.write(`${file}:${line}: \`${name}\`: ${problem}\n`)

const generated: Array<[file: string, generate: (committed: string) => string, command: string]> = [
  ['docs/configuration.md', () => configurationDocs(), 'npm run docs:config'],
  ['docs/decisions.md', withErrorCodes, 'npm run docs:errors']
]
const stale = generated.filter(([file, generate]) => {
  const committed = readFileSync(resolve(root, file), 'utf8')
  return generate(committed) !== committed
})
for (const [file, , command] of stale) process.stderr.write(`${file}: stale, generated parts differ: run ${command}\n`)

if (findings.length) process.stderr.write(`${findings.length} name(s) in the docs that the code does not have\n`)
if (findings.length || stale.length) process.exit(1)
