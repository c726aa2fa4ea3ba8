// `npm run chaos:check -- reports/chaos/<time>`: checks a finished run again from its report folder.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { check } from './checker.js'
import type { FaultRecord } from './faults.js'
import type { KeyInfo } from './load.js'
import { readLedger } from './ledger.js'
import { describeViolations, parsePetsCsv, summaryTable } from './report.js'

const folder = process.argv[2]
if (!folder) {
  console.error('usage: npm run chaos:check -- reports/chaos/<time>')
  process.exit(2)
}
const read = (name: string) => readFileSync(join(folder, name), 'utf8')
const { report, violations } = check({
  entries: readLedger(join(folder, 'ledger.jsonl')),
  keys: JSON.parse(read('keys.json')) as KeyInfo[],
  pets: parsePetsCsv(read('pets.csv')),
  faults: (JSON.parse(read('report.json')) as { faults: FaultRecord[] }).faults
})
console.log(summaryTable(report))
if (violations.length) {
  console.log(`\n${describeViolations(violations)}`)
  process.exitCode = 1
}
