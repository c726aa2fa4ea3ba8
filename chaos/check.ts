// `npm run chaos:check -- reports/chaos/<time>`: checks a finished run again from its report folder.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { check } from './checker.js'
import type { FaultRecord } from './faults.js'
import type { KeyInfo } from './load.js'
import { readLedger } from './ledger.js'
import type { ReadBack } from './readback.js'
import { describeViolations, parsePetsCsv, summaryTable } from './report.js'
import type { ScheduledFault } from './schedule.js'

const folder = process.argv[2]
if (!folder) {
  console.error('usage: npm run chaos:check -- reports/chaos/<time>')
  process.exit(2)
}
const read = (name: string) => readFileSync(join(folder, name), 'utf8')
const saved = JSON.parse(read('report.json')) as {
  faults: FaultRecord[]
  schedule?: ScheduledFault[]
  databaseClock?: { offsetMs: number }
}
const { report, violations } = check({
  entries: readLedger(join(folder, 'ledger.jsonl')),
  keys: JSON.parse(read('keys.json')) as KeyInfo[],
  pets: parsePetsCsv(read('pets.csv')),
  faults: saved.faults,
  schedule: saved.schedule,
  readBack: existsSync(join(folder, 'readback.json'))
    ? (JSON.parse(read('readback.json')) as ReadBack | null)
    : undefined,
  databaseClockOffsetMs: saved.databaseClock?.offsetMs
})
console.log(summaryTable(report))
if (violations.length) {
  console.log(`\n${describeViolations(violations)}`)
  process.exitCode = 1
}
