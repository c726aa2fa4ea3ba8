// A chaos run's report folder: the pets table as CSV, report.json and report.md, the chart, and the summary table.
import type { ChaosReport, PetRow, Violation } from './checker.js'
import type { FaultRecord } from './faults.js'
import { describeEntry, type LedgerEntry } from './ledger.js'
import { describeSchedule, type ScheduledFault } from './schedule.js'
import type { UpgradeRecord } from './upgrade.js'

const csvField = (value: string | null) =>
  value === null ? '' : /[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value

export const petsCsv = (pets: PetRow[]) =>
  [
    'id,name,categoryId,status',
    ...pets.map((pet) => [pet.id, pet.name, pet.categoryId, pet.status].map(csvField).join(','))
  ]
    .join('\n')
    .concat('\n')

/** Reads pets.csv back (quoted fields as petsCsv writes them). */
export function parsePetsCsv(text: string): PetRow[] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') field += text[++i]
      else if (char === '"') quoted = false
      else field += char
    } else if (char === '"') quoted = true
    else if (char === ',') {
      row.push(field)
      field = ''
    } else if (char === '\n') {
      rows.push([...row, field])
      row = []
      field = ''
    } else field += char
  }
  return rows.slice(1).map(([id, name, categoryId, status]) => ({
    id: id!,
    name: name!,
    categoryId: categoryId!,
    status: status || null
  }))
}

const CLASSES = [
  { label: '2xx', color: '#2e7d32', test: (s: number) => s >= 200 && s < 300 },
  { label: '429', color: '#f9a825', test: (s: number) => s === 429 },
  { label: 'other 4xx', color: '#6d4c41', test: (s: number) => s >= 400 && s < 500 && s !== 429 },
  { label: '503', color: '#c62828', test: (s: number) => s === 503 },
  { label: 'other 5xx', color: '#6a1b9a', test: (s: number) => s >= 500 && s !== 503 },
  { label: 'no answer', color: '#000000', test: (s: number) => s === 0 }
]

const escapeXml = (text: string) => text.replace(/[<>&"]/g, (c) => `&#${c.charCodeAt(0)};`)

/** Responses per second by status over the run, each fault a shaded band from injection to recovery. */
export function chartSvg(entries: LedgerEntry[], faults: FaultRecord[], title: string): string {
  const width = 1000
  const height = 380
  const left = 56
  const right = 150
  const top = 40
  const bottom = 40
  const start = Math.min(...entries.map((entry) => entry.sentAt))
  const seconds = Math.max(1, Math.ceil((Math.max(...entries.map((entry) => entry.answeredAt)) - start) / 1000))
  const counts = CLASSES.map(() => new Array<number>(seconds + 1).fill(0))
  for (const entry of entries) {
    const second = Math.floor((entry.answeredAt - start) / 1000)
    const index = CLASSES.findIndex((c) => c.test(entry.status))
    counts[index]![second]!++
  }
  const peak = Math.max(10, ...counts.flat())
  const x = (second: number) => left + (second / seconds) * (width - left - right)
  const y = (count: number) => top + (1 - count / peak) * (height - top - bottom)
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="20" font-size="13">${escapeXml(title)}</text>`
  ]
  faults.forEach((fault, index) => {
    const from = (fault.at - start) / 1000
    const to = (fault.at + (fault.recoveredMs ?? fault.undoneAt - fault.at) - start) / 1000
    parts.push(
      `<rect x="${x(from).toFixed(1)}" y="${top}" width="${Math.max(2, x(to) - x(from)).toFixed(1)}" height="${height - top - bottom}" fill="#90a4ae" fill-opacity="0.25"/>`,
      `<text x="${(x(from) + 2).toFixed(1)}" y="${top + 12 + (index % 3) * 12}" fill="#37474f">${escapeXml(fault.kind)}</text>`
    )
  })
  for (let tick = 0; tick <= 4; tick++) {
    const value = Math.round((peak * tick) / 4)
    parts.push(
      `<line x1="${left}" x2="${width - right}" y1="${y(value)}" y2="${y(value)}" stroke="#e0e0e0"/>`,
      `<text x="${left - 6}" y="${y(value) + 4}" text-anchor="end">${value}</text>`
    )
  }
  const step = seconds > 120 ? 30 : 10
  for (let second = 0; second <= seconds; second += step) {
    parts.push(`<text x="${x(second)}" y="${height - bottom + 16}" text-anchor="middle">${second} s</text>`)
  }
  parts.push(
    `<text x="14" y="${top + (height - top - bottom) / 2}" transform="rotate(-90 14 ${top + (height - top - bottom) / 2})" text-anchor="middle">responses per second</text>`
  )
  CLASSES.forEach((c, index) => {
    const points = counts[index]!.map((count, second) => `${x(second).toFixed(1)},${y(count).toFixed(1)}`).join(' ')
    parts.push(`<polyline fill="none" stroke="${c.color}" stroke-width="1.5" points="${points}"/>`)
    const ly = top + 10 + index * 16
    parts.push(
      `<line x1="${width - right + 12}" x2="${width - right + 32}" y1="${ly}" y2="${ly}" stroke="${c.color}" stroke-width="3"/>`,
      `<text x="${width - right + 38}" y="${ly + 4}">${c.label}</text>`
    )
  })
  parts.push('</svg>', '')
  return parts.join('\n')
}

/** What a run kept in the repository (docs/chaos/runs/) holds: the report without the ledger lines of its violations. */
export type ReportFigures = Omit<ChaosReport, 'violations'> & { violations: { invariant: string; count: number }[] }

export interface RunMeta {
  seed: number
  commit: string
  startedAt: string
  seconds: number
  loadSeconds: number
  databaseClock: { offsetMs: number; roundTripMs: number }
  schedule: ScheduledFault[]
}

export type RunSummary = ReportFigures & RunMeta

/** summary.json: report.json without its violations' ledger line numbers (the ledger is not kept); what docs/history/reliability.md shows. */
export function summarize(full: ChaosReport & RunMeta): RunSummary {
  return { ...full, violations: full.violations.map(({ invariant, count }) => ({ invariant, count })) }
}

const seconds = (value: number | null | undefined) =>
  value === null || value === undefined ? 'never' : `${(value / 1000).toFixed(1)} s`

/** The report as Markdown tables, the ones docs/history/reliability.md carries: the faults, then the measures. */
export function summaryTable(report: ReportFigures): string {
  const start = Math.min(...report.faults.map((fault) => fault.at))
  const { admissions, reads, seen } = report
  const replication = (fault: ChaosReport['faults'][number]) =>
    fault.replication
      ? `${fault.replication.sync ? 'in sync' : 'NOT in sync'}: \`${fault.replication.synchronousStandbyNames}\`, ${fault.replication.standbys}`
      : ''
  const lines = [
    '| # | Fault | Target | At | Took effect | Synchronous standby before | Ready again | First 2xx again | Recovered | First 2xx after the new primary |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...report.faults.map(
      (fault) =>
        `| ${fault.id} | ${fault.kind} | ${fault.target} | +${seconds(fault.at - start)} | ${fault.tookEffect ? 'yes' : 'NO'} | ${replication(fault)} | ${seconds(fault.readyMs)} | ${seconds(fault.firstOkMs)} | ${seconds(fault.recoveredMs)} | ${fault.firstOkAfterWritableMs === undefined ? '' : seconds(fault.firstOkAfterWritableMs)} |`
    ),
    '',
    '| Measure | Value |',
    '|---|---|',
    `| Requests (ledger lines) | ${report.requests.total} |`,
    `| Responses by status | ${Object.entries(report.requests.byStatus)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, count]) => `${status}: ${count}`)
      .join(', ')} |`,
    `| Seen: 201 / 429 / ban refusals | ${seen.created} / ${seen.rateLimited} / ${seen.banned} |`,
    `| Accounts at their minute / day limit, by role | ${Object.entries(report.limitsReached)
      .map(([role, counts]) => `${role}: ${counts.atMinuteLimit} / ${counts.atDayLimit} of ${counts.accounts}`)
      .join('; ')} |`,
    `| Minutes without a fault: 201 / 429 / ban refusals in each | ${
      report.quietMinutes.length
        ? report.quietMinutes
            .map((quiet) => `${quiet.minute.slice(11, 16)}: ${quiet.created} / ${quiet.rateLimited} / ${quiet.banned}`)
            .join('; ')
        : 'none'
    } |`,
    `| Creates acknowledged / missing / duplicated | ${report.creates.acknowledged} / ${report.creates.missing} / ${report.creates.duplicated} |`,
    `| Reads of an acknowledged pet answered 404 | ${reads.notFound} |`,
    `| Read back after the run: pets / wrong by id / not in the list | ${
      reads.readBack
        ? `${reads.readBack.checked} / ${reads.readBack.wrongById} / ${reads.readBack.notListed}${reads.readBack.listComplete ? '' : ' (list incomplete)'}`
        : 'not done'
    } |`,
    `| idempotency_keys rows / disagreeing with the ledger | ${
      report.idempotency ? `${report.idempotency.rows} / ${report.idempotency.disagreeing}` : 'not read'
    } |`,
    `| The two nodes' rows after the run | ${
      report.nodes
        ? `${report.nodes.same ? 'the same' : 'DIFFERENT'}: ${Object.entries(report.nodes.copies[0]?.tables ?? {})
            .map(([table, copy]) => `${table} ${copy.rows}`)
            .join(', ')}`
        : 'not compared'
    } |`,
    `| Admitted | ${admissions.admitted} |`,
    `| Over-admitted outside a database loss | ${admissions.overAdmitted} |`,
    `| Over-admitted after a database loss, within / past its bound | ${admissions.overAdmittedAfterDatabaseLoss} / ${admissions.overAdmittedBeyondLossBound} |`,
    `| Admitted while banned | ${admissions.admittedWhileBanned} |`,
    `| Refused with budget left (under-admitted), of which past the bound | ${admissions.underAdmitted}, ${admissions.underAdmittedBeyondBound} |`,
    ...(report.upgrade
      ? [
          `| Upgrade: migration to \`${report.upgrade.to}\` / 5xx and timeouts while it ran | ${seconds(report.upgrade.migrationMs)} / ${report.upgrade.errorsWhileMigrating} |`,
          `| Upgrade: answers of \`${report.upgrade.from}\` on the new schema / of \`${report.upgrade.to}\` | ${report.upgrade.answeredByPreviousOnNewSchema} / ${report.upgrade.answeredByNew} |`
        ]
      : []),
    `| 5xx and timeouts outside faults | ${report.errorsOutsideFaults} |`,
    `| 5xx and timeouts inside faults without 503 and Retry-After | ${report.errorsInsideFaultsWithoutRetryAfter} |`,
    `| Slowest admitted request | ${report.slowestAdmittedMs} ms (${report.slowestAdmittedOutsideFaultsMs} ms outside faults) |`
  ]
  return lines.join('\n')
}

/** The variables that replay a run. */
const variables = (run: Pick<RunMeta, 'seed' | 'seconds'> & { upgrade?: Pick<UpgradeRecord, 'from'> }) =>
  `${run.upgrade ? `CHAOS_UPGRADE_FROM=${run.upgrade.from} ` : ''}CHAOS_SEED=${run.seed} CHAOS_SECONDS=${run.seconds}`

/** report.md: the seed, the schedule, the faults with their recovery and evidence, the invariants. */
export function reportMarkdown(report: ChaosReport & RunMeta): string {
  return [
    `# Chaos run of ${report.startedAt}`,
    '',
    `\`${variables(report)} npm run chaos\` at commit \`${report.commit}\`; the load ran ${report.loadSeconds.toFixed(0)} s. The database's clock was ${report.databaseClock.offsetMs} ms from the harness's.`,
    '',
    report.violations.length
      ? `**${report.violations.length} invariant(s) broken:**\n\n${report.violations.map((v) => `- ${v.invariant} (${v.count})`).join('\n')}`
      : '**Every invariant held.**',
    '',
    '## Schedule',
    '',
    ...(report.upgrade
      ? [
          `- the migration to \`${report.upgrade.to}\` while \`${report.upgrade.from}\` served: ${report.upgrade.migration?.output ?? 'never ran'}`
        ]
      : []),
    ...describeSchedule({ seed: report.seed, faults: report.schedule }).map((line) => `- ${line}`),
    '',
    '## Faults and invariants',
    '',
    summaryTable(report),
    '',
    '## Evidence',
    '',
    ...report.faults.flatMap((fault) => [
      `- #${fault.id} ${fault.kind}:`,
      ...fault.evidence.map((line) => `  - ${line}`)
    ]),
    ''
  ].join('\n')
}

/** What a broken invariant prints: its name, how many, and the ledger lines that show it. */
export function describeViolations(violations: Violation[]): string {
  return violations
    .map((violation) =>
      [
        `BROKEN: ${violation.invariant} (${violation.count})`,
        ...(violation.detail ?? []).slice(0, 10).map((line) => `  ${line}`),
        ...violation.lines.map((entry) => `  ledger.jsonl:${entry.line} ${describeEntry(entry)}`)
      ].join('\n')
    )
    .join('\n')
}

const BEGIN = '<!-- chaos runs: written by `npm run chaos:docs` from docs/chaos/runs/*.json; edit those, not this -->'
const END = '<!-- end of chaos runs -->'

const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)}`

/** The Runs section of docs/history/reliability.md: a row per kept run, then each run's faults and measures. */
export function runsMarkdown(runs: RunSummary[]): string {
  const sorted = [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt))
  const kinds = (run: RunSummary) => new Set(run.faults.filter((fault) => fault.tookEffect).map((fault) => fault.kind))
  const kills = (run: RunSummary) => run.faults.filter((fault) => fault.kind === 'kill-primary')
  const rows = sorted.map((run) => {
    const { admissions } = run
    const result = run.violations.length
      ? `failed: ${run.violations.map((violation) => `${violation.invariant} (${violation.count})`).join('; ')}`
      : '**passed**'
    const afterWritable = kills(run)
      .map((fault) => seconds(fault.firstOkAfterWritableMs))
      .join(', ')
    const commit = run.upgrade ? `\`${run.upgrade.from}\` to \`${run.commit}\`` : `\`${run.commit}\``
    return `| ${utc(run.startedAt)} | ${commit} | ${run.seed} | ${run.seconds} | ${run.loadSeconds.toFixed(0)} s | ${result} | ${kinds(run).size}: ${[...kinds(run)].join(', ')} | ${kills(run).length} | ${afterWritable} | ${admissions.overAdmitted} / ${admissions.overAdmittedAfterDatabaseLoss} / ${admissions.overAdmittedBeyondLossBound} | ${admissions.admittedWhileBanned} | ${admissions.underAdmitted}, ${admissions.underAdmittedBeyondBound} |`
  })
  return [
    BEGIN,
    '',
    '| Started (UTC) | Commit | `CHAOS_SEED` | `CHAOS_SECONDS` | Load ran | Result | Fault kinds that took effect | Kills of the primary | First 2xx after the new primary, per kill | Over-admitted (outside / within / past the loss bound) | Admitted while banned | Under-admitted, past the bound |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    ...sorted.flatMap((run) => [
      '',
      `#### The run of ${utc(run.startedAt)} UTC: \`${variables(run)}\` at \`${run.commit}\``,
      '',
      summaryTable(run)
    ]),
    '',
    END
  ].join('\n')
}

/** `document` with its generated Runs section replaced by `block`; throws when the markers are missing. */
export function withRuns(document: string, block: string): string {
  const from = document.indexOf(BEGIN)
  const to = document.indexOf(END)
  if (from < 0 || to < from) throw new Error(`the document lacks the markers ${BEGIN} … ${END}`)
  return document.slice(0, from) + block + document.slice(to + END.length)
}
