// `npm run chaos:check -- reports/chaos/<time>`: checks a finished run again from its report folder.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { check, type IdempotencyRow, type NodeCopy } from './checker.js'
import type { FaultRecord } from './faults.js'
import type { KeyInfo } from './load.js'
import { readLedger } from './ledger.js'
import type { ReadBack } from './readback.js'
import { describeViolations, parsePetsCsv, summaryTable } from './report.js'
import type { ScheduledFault } from './schedule.js'
import type { UpgradeRecord } from './upgrade.js'

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
  load?: { from: number; to: number }
  upgrade?: UpgradeRecord
}
/** A file the run wrote after the load, absent from the folders of runs older than it. */
const optional = <T>(name: string) => (existsSync(join(folder, name)) ? (JSON.parse(read(name)) as T) : undefined)
const entries = readLedger(join(folder, 'ledger.jsonl'))
const { report, violations } = check({
  entries,
  load: saved.load ?? {
    from: Math.min(...entries.map((entry) => entry.sentAt)),
    to: Math.max(...entries.map((entry) => entry.answeredAt))
  },
  idempotency: optional<IdempotencyRow[] | null>('idempotency.json'),
  nodes: optional<NodeCopy[] | null>('nodes.json'),
  keys: JSON.parse(read('keys.json')) as KeyInfo[],
  pets: parsePetsCsv(read('pets.csv')),
  faults: saved.faults,
  schedule: saved.schedule,
  readBack: optional<ReadBack | null>('readback.json'),
  databaseClockOffsetMs: saved.databaseClock?.offsetMs,
  upgrade: saved.upgrade
})
console.log(summaryTable(report))
if (violations.length) {
  console.log(`\n${describeViolations(violations)}`)
  process.exitCode = 1
}
